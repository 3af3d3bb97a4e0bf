/**
 * The JSON Schema of a `troupe simulate` scenario file (YAML or JSON), checked with ajv.
 * docs/simulate.md documents every field; the `workload` list is also the trace format that
 * `troupe simulate --record` writes.
 */

/** Go-style duration strings: 90s, 10m, 1h30m, 250ms. */
const DURATION = { type: 'string', pattern: '^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$|^0$' } as const;

const QUANTITY = { type: ['string', 'number'] } as const;

/** `{value: weight}` maps for generated workloads: `{1: 50, 8: 30, 64: 5}`. */
const WEIGHTS = {
  type: 'object',
  minProperties: 1,
  propertyNames: { pattern: '^[0-9]+$' },
  additionalProperties: { type: 'number', exclusiveMinimum: 0 },
} as const;

const FAILURE = {
  type: 'object',
  additionalProperties: false,
  required: ['after'],
  properties: {
    after: DURATION,
    exitCode: { type: 'integer', minimum: 1, maximum: 255 },
  },
} as const;

const TIER = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'size'],
  properties: {
    name: { type: 'string', minLength: 1 },
    size: { type: 'integer', minimum: 1 },
    readySeconds: { type: 'integer', minimum: 0 },
  },
} as const;

const KINDS = ['Job', 'StatefulSet', 'Pods', 'AppWrapper', 'PodSequence'] as const;
const POD_GROUPS = ['troupe', 'scheduler-plugins', 'none'] as const;

/** Fields every workload entry and every generator share. */
const SHAPE = {
  kind: { enum: KINDS },
  podGroup: { enum: POD_GROUPS },
  gpus: { type: 'integer', minimum: 0 },
  cpu: QUANTITY,
  memory: QUANTITY,
  priority: { type: 'integer', minimum: -1000000000, maximum: 1000000000 },
  orderedReady: { type: 'boolean' },
  startupSeconds: { type: 'integer', minimum: 0 },
} as const;

const WORKLOAD_ITEM = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'at'],
  properties: {
    name: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$' },
    at: DURATION,
    size: { type: 'integer', minimum: 1, maximum: 100000 },
    duration: DURATION,
    fail: FAILURE,
    tiers: { type: 'array', minItems: 1, items: TIER },
    ...SHAPE,
  },
} as const;

const GENERATOR = {
  type: 'object',
  additionalProperties: false,
  required: ['count', 'namePrefix', 'sizes', 'duration'],
  properties: {
    count: { type: 'integer', minimum: 1, maximum: 100000 },
    namePrefix: { type: 'string', pattern: '^[a-z]([-a-z0-9]{0,18}[a-z0-9])?$' },
    from: DURATION,
    to: DURATION,
    sizes: WEIGHTS,
    gpusPerMember: WEIGHTS,
    priorities: WEIGHTS,
    duration: {
      type: 'object',
      additionalProperties: false,
      required: ['min', 'max'],
      properties: { min: DURATION, max: DURATION },
    },
    failureRate: { type: 'number', minimum: 0, maximum: 1 },
    ...SHAPE,
  },
} as const;

const POLICY = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$' },
    description: { type: 'string' },
    gangScheduling: { type: 'boolean' },
    scoring: { enum: ['LeastAllocated', 'MostAllocated'] },
    podManagementPolicy: { enum: ['OrderedReady', 'Parallel'] },
    deadlockPolicy: {
      type: 'object',
      additionalProperties: false,
      required: ['timeoutSeconds'],
      properties: {
        timeoutSeconds: { type: 'integer', minimum: 1 },
        maxTimeoutSeconds: { type: 'integer', minimum: 1 },
      },
    },
    queues: { type: 'boolean' },
    // Kueue's Configuration section; the CLI checks it as --kueue-config does.
    waitForPodsReady: { type: 'object' },
    offload: {
      type: 'object',
      additionalProperties: false,
      properties: {
        maxPendingTime: { type: 'integer', minimum: 0 },
        pendingJobThreshold: { type: 'integer', minimum: 0 },
        maxGpuPrice: { type: 'number', exclusiveMinimum: 0 },
      },
    },
  },
} as const;

export const SCENARIO_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'nodes', 'policies', 'end'],
  properties: {
    name: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$' },
    description: { type: 'string' },
    seed: { type: 'integer', minimum: 0, maximum: 4294967295 },
    end: DURATION,
    /** How often simulated nodes renew their Leases (default 5m; a kubelet's is 10s). */
    nodeLeaseRenewInterval: DURATION,
    /** The embedded cluster's node pools, exactly as `--node-config` takes them. */
    nodes: {
      type: 'object',
      required: ['pools'],
      properties: { pools: { type: 'array', minItems: 1 } },
    },
    workload: { type: 'array', items: WORKLOAD_ITEM },
    generate: { type: 'array', items: GENERATOR },
    policies: { type: 'array', minItems: 2, items: POLICY },
  },
} as const;

/** What to do about each schema keyword, said to the user after the problem. */
export const FIXES: Record<string, string> = {
  end: 'give the simulated time the run stops at as a duration, e.g. end: 2h',
  nodeLeaseRenewInterval: 'use a Go duration such as 10s or 5m',
  at: 'give the arrival time since the start as a duration, e.g. at: 90s',
  duration: 'use a Go duration such as 45s, 10m or 1h30m',
  after: 'use a Go duration such as 45s, 10m or 1h30m',
  min: 'use a Go duration such as 45s, 10m or 1h30m',
  max: 'use a Go duration such as 45s, 10m or 1h30m',
  from: 'use a Go duration such as 0s or 2h',
  to: 'use a Go duration such as 0s or 2h',
  policies:
    'list two or more policies to compare, e.g. - {name: default} and - {name: gang, gangScheduling: true}',
  sizes: 'map gang sizes to weights, e.g. sizes: {1: 50, 8: 30, 64: 5}',
  gpusPerMember: 'map GPUs per member to weights, e.g. gpusPerMember: {1: 3, 8: 1}',
  priorities: 'map priorities to weights, e.g. priorities: {0: 9, 1000: 1}',
  name: 'use lower-case letters, digits and dashes (a DNS label), starting and ending with a letter or digit',
  namePrefix: 'use lower-case letters, digits and dashes, at most 20 characters',
  kind: `use one of ${KINDS.join(', ')}`,
  podGroup: `use one of ${POD_GROUPS.join(', ')}`,
  nodes:
    'give node pools as --node-config takes them, e.g. nodes: {pools: [{name: gpu, count: 2, capacity: {cpu: 16, memory: 64Gi, nvidia.com/gpu: 2}}]}',
};
