/**
 * JSON Schema of the node pool config (`troupe cluster --node-config nodes.yaml`). Shape and
 * types only; the rules that need arithmetic or Kubernetes syntax (quantities, allocatable ≤
 * capacity, label syntax, unique names, address ranges) are checked in config.ts.
 */

const stringMap = {
  type: 'object',
  additionalProperties: { type: 'string' },
} as const;

const resourceList = {
  type: 'object',
  additionalProperties: { type: ['string', 'number'] },
} as const;

const taint = {
  type: 'object',
  additionalProperties: false,
  required: ['key', 'effect'],
  properties: {
    key: { type: 'string', minLength: 1 },
    value: { type: 'string' },
    effect: { enum: ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] },
  },
} as const;

const pool = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'count', 'capacity'],
  properties: {
    name: { type: 'string', minLength: 1 },
    /** Node names are `<namePrefix>-<index>`; the prefix defaults to the pool name. */
    namePrefix: { type: 'string', minLength: 1 },
    count: { type: 'integer', minimum: 0 },
    capacity: resourceList,
    allocatable: resourceList,
    labels: stringMap,
    annotations: stringMap,
    taints: { type: 'array', items: taint },
    /** IPv4 range the pool's InternalIP addresses come from (default: the config's nodeCIDR). */
    cidr: { type: 'string' },
  },
} as const;

export const NODE_CONFIG_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'troupe node pools',
  type: 'object',
  additionalProperties: false,
  required: ['pools'],
  properties: {
    nodeCIDR: { type: 'string' },
    pools: { type: 'array', items: pool },
  },
} as const;
