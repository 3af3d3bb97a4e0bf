/**
 * Kueue's CustomResourceDefinitions (kueue.x-k8s.io/v1beta2): ResourceFlavor, ClusterQueue,
 * LocalQueue, Workload and WorkloadPriorityClass, with Kueue's short names and printer
 * columns, so Kueue manifests and `kubectl get localqueues,clusterqueues -o wide` work as
 * against real Kueue. The schemas spell out the fields the stand-in reads, with Kueue's
 * enums and defaults (apis/kueue/v1beta2); fields it does not act on (fair sharing,
 * admission checks, topology) are accepted as written and left alone.
 */

import type { KubeObject } from '../apiserver/types.ts';
import { type ClusterClient, isConflict } from '../client.ts';
import { KGVR, KUEUE_GROUP, KUEUE_VERSION } from './api.ts';

type Schema = Record<string, unknown>;

const str = (description: string, extra: Schema = {}): Schema => ({ type: 'string', description, ...extra });
const open = (description: string): Schema => ({
  type: 'object',
  description,
  'x-kubernetes-preserve-unknown-fields': true,
});
const stringMap = (description: string): Schema => ({
  type: 'object',
  description,
  additionalProperties: { type: 'string' },
});
const quantity = (description: string): Schema => ({
  description,
  anyOf: [{ type: 'integer' }, { type: 'string' }],
  pattern:
    '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$',
  'x-kubernetes-int-or-string': true,
});
const labelSelector = (description: string): Schema => ({
  type: 'object',
  description,
  'x-kubernetes-map-type': 'atomic',
  properties: {
    matchLabels: stringMap('Labels the object must carry.'),
    matchExpressions: {
      type: 'array',
      items: {
        type: 'object',
        required: ['key', 'operator'],
        properties: {
          key: { type: 'string' },
          operator: { type: 'string' },
          values: { type: 'array', items: { type: 'string' } },
        },
      },
    },
  },
});
const tolerations: Schema = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      effect: { type: 'string' },
      key: { type: 'string' },
      operator: { type: 'string' },
      tolerationSeconds: { type: 'integer', format: 'int64' },
      value: { type: 'string' },
    },
  },
};
const stopPolicy = (what: string): Schema =>
  str(`None admits; Hold stops new reservations; HoldAndDrain also evicts what the ${what} admitted.`, {
    enum: ['None', 'Hold', 'HoldAndDrain'],
    default: 'None',
  });

function crd(opts: {
  plural: string;
  kind: string;
  singular: string;
  shortNames: string[];
  scope: 'Namespaced' | 'Cluster';
  status: boolean;
  columns?: Schema[];
  spec: Schema;
  description: string;
}): KubeObject {
  const properties: Schema = {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: opts.spec,
  };
  if (opts.status) properties.status = open('Observed state, written by Kueue.');
  const version: Schema = {
    name: KUEUE_VERSION,
    served: true,
    storage: true,
    schema: { openAPIV3Schema: { type: 'object', description: opts.description, properties } },
  };
  if (opts.status) version.subresources = { status: {} };
  if (opts.columns) version.additionalPrinterColumns = opts.columns;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${opts.plural}.${KUEUE_GROUP}`,
      labels: { 'app.kubernetes.io/name': 'kueue', 'app.kubernetes.io/managed-by': 'troupe' },
    },
    spec: {
      group: KUEUE_GROUP,
      scope: opts.scope,
      names: {
        plural: opts.plural,
        singular: opts.singular,
        kind: opts.kind,
        listKind: `${opts.kind}List`,
        shortNames: opts.shortNames,
      },
      versions: [version],
    },
  };
}

export function kueueCRDs(): KubeObject[] {
  return [
    crd({
      plural: 'resourceflavors',
      singular: 'resourceflavor',
      kind: 'ResourceFlavor',
      shortNames: ['flavor', 'flavors', 'rf'],
      scope: 'Cluster',
      status: false,
      description: 'ResourceFlavor is the Schema for the resourceflavors API.',
      spec: {
        type: 'object',
        description: 'The nodes a flavor stands for.',
        properties: {
          nodeLabels: stringMap(
            'Labels of the nodes of this flavor; injected into the pods admitted with it.',
          ),
          nodeTaints: {
            type: 'array',
            description: 'Taints of the nodes of this flavor; pod sets must tolerate them.',
            items: {
              type: 'object',
              required: ['key', 'effect'],
              properties: { key: { type: 'string' }, value: { type: 'string' }, effect: { type: 'string' } },
            },
          },
          tolerations: {
            ...tolerations,
            description: 'Tolerations added to the pods admitted with this flavor.',
          },
          topologyName: str('Topology of a topology-aware flavor (not acted on by the stand-in).'),
        },
      },
    }),
    crd({
      plural: 'clusterqueues',
      singular: 'clusterqueue',
      kind: 'ClusterQueue',
      shortNames: ['cq'],
      scope: 'Cluster',
      status: true,
      description: 'ClusterQueue is the Schema for the clusterQueue API.',
      columns: [
        {
          name: 'Cohort',
          type: 'string',
          jsonPath: '.spec.cohortName',
          description: 'Cohort that this ClusterQueue belongs to',
        },
        {
          name: 'Strategy',
          type: 'string',
          jsonPath: '.spec.queueingStrategy',
          description: 'The queueing strategy used to prioritize workloads',
          priority: 1,
        },
        {
          name: 'Pending Workloads',
          type: 'integer',
          jsonPath: '.status.pendingWorkloads',
          description: 'Number of pending workloads',
        },
        {
          name: 'Admitted Workloads',
          type: 'integer',
          jsonPath: '.status.admittedWorkloads',
          description: "Number of admitted workloads that haven't finished yet",
          priority: 1,
        },
      ],
      spec: {
        type: 'object',
        description: 'Quota and queueing policy.',
        properties: {
          resourceGroups: {
            type: 'array',
            maxItems: 16,
            items: {
              type: 'object',
              required: ['coveredResources', 'flavors'],
              properties: {
                coveredResources: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 64 },
                flavors: {
                  type: 'array',
                  minItems: 1,
                  maxItems: 64,
                  'x-kubernetes-list-type': 'map',
                  'x-kubernetes-list-map-keys': ['name'],
                  items: {
                    type: 'object',
                    required: ['name', 'resources'],
                    properties: {
                      name: str('A ResourceFlavor.'),
                      resources: {
                        type: 'array',
                        minItems: 1,
                        maxItems: 64,
                        'x-kubernetes-list-type': 'map',
                        'x-kubernetes-list-map-keys': ['name'],
                        items: {
                          type: 'object',
                          required: ['name', 'nominalQuota'],
                          properties: {
                            name: str('A resource name (cpu, memory, nvidia.com/gpu, pods...).'),
                            nominalQuota: quantity('What workloads of this queue may use of it at once.'),
                            borrowingLimit: quantity(
                              'The most this queue may borrow from its cohort past its nominal quota (unset: no limit).',
                            ),
                            lendingLimit: quantity(
                              'The most of its nominal quota this queue lends to its cohort (unset: all of it).',
                            ),
                          },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
          cohortName: str('The cohort whose ClusterQueues lend each other unused quota.'),
          queueingStrategy: str('StrictFIFO or BestEffortFIFO.', {
            enum: ['StrictFIFO', 'BestEffortFIFO'],
            default: 'BestEffortFIFO',
          }),
          namespaceSelector: labelSelector('Namespaces allowed to submit; unset allows none, {} allows all.'),
          stopPolicy: stopPolicy('ClusterQueue'),
          flavorFungibility: {
            type: 'object',
            description: 'Whether to try the next flavor when this one needs borrowing or preemption.',
            default: {},
            properties: {
              whenCanBorrow: str('Default MayStopSearch.', {
                enum: ['MayStopSearch', 'TryNextFlavor'],
                default: 'MayStopSearch',
              }),
              whenCanPreempt: str('Default TryNextFlavor.', {
                enum: ['MayStopSearch', 'TryNextFlavor'],
                default: 'TryNextFlavor',
              }),
              preference: str('Not acted on by the stand-in.', {
                enum: ['BorrowingOverPreemption', 'PreemptionOverBorrowing'],
              }),
            },
          },
          preemption: {
            type: 'object',
            description: 'Which admitted workloads a pending one may preempt.',
            default: {},
            properties: {
              withinClusterQueue: str('Candidates in the same ClusterQueue.', {
                enum: ['Never', 'LowerPriority', 'LowerOrNewerEqualPriority'],
                default: 'Never',
              }),
              reclaimWithinCohort: str('Candidates in ClusterQueues of the cohort that borrow.', {
                enum: ['Never', 'LowerPriority', 'Any'],
                default: 'Never',
              }),
              borrowWithinCohort: {
                type: 'object',
                default: {},
                properties: {
                  policy: str('Whether to preempt in the cohort while borrowing.', {
                    enum: ['Never', 'LowerPriority'],
                    default: 'Never',
                  }),
                  maxPriorityThreshold: { type: 'integer', format: 'int32' },
                },
              },
            },
          },
          admissionChecksStrategy: open('Admission checks (not acted on by the stand-in).'),
          fairSharing: open('Fair sharing (not acted on by the stand-in).'),
          admissionScope: open('Admission fair sharing (not acted on by the stand-in).'),
        },
      },
    }),
    crd({
      plural: 'localqueues',
      singular: 'localqueue',
      kind: 'LocalQueue',
      shortNames: ['queue', 'queues', 'lq'],
      scope: 'Namespaced',
      status: true,
      description: 'LocalQueue is the Schema for the localQueues API',
      columns: [
        {
          name: 'ClusterQueue',
          type: 'string',
          jsonPath: '.spec.clusterQueue',
          description: 'Backing ClusterQueue',
        },
        {
          name: 'Pending Workloads',
          type: 'integer',
          jsonPath: '.status.pendingWorkloads',
          description: 'Number of pending workloads',
        },
        {
          name: 'Admitted Workloads',
          type: 'integer',
          jsonPath: '.status.admittedWorkloads',
          description: "Number of admitted workloads that haven't finished yet.",
        },
      ],
      spec: {
        type: 'object',
        description: 'Which ClusterQueue backs this queue.',
        properties: {
          clusterQueue: str('The ClusterQueue that admits the workloads of this queue.'),
          stopPolicy: stopPolicy('LocalQueue'),
          fairSharing: open('Fair sharing (not acted on by the stand-in).'),
        },
      },
    }),
    crd({
      plural: 'workloads',
      singular: 'workload',
      kind: 'Workload',
      shortNames: ['wl'],
      scope: 'Namespaced',
      status: true,
      description: 'Workload is the Schema for the workloads API',
      columns: [
        {
          name: 'Queue',
          type: 'string',
          jsonPath: '.spec.queueName',
          description: 'Name of the queue this workload was submitted to',
        },
        {
          name: 'Reserved in',
          type: 'string',
          jsonPath: '.status.admission.clusterQueue',
          description: 'Name of the ClusterQueue where the workload is reserving quota',
        },
        {
          name: 'Admitted',
          type: 'string',
          jsonPath: ".status.conditions[?(@.type=='Admitted')].status",
          description: 'Admission status',
        },
        {
          name: 'Finished',
          type: 'string',
          jsonPath: ".status.conditions[?(@.type=='Finished')].status",
          description: 'Workload finished',
        },
        {
          name: 'Age',
          type: 'date',
          jsonPath: '.metadata.creationTimestamp',
          description: 'Time this workload was created',
        },
      ],
      spec: {
        type: 'object',
        description: 'The pods a job needs and where it queues.',
        properties: {
          podSets: {
            type: 'array',
            minItems: 1,
            maxItems: 8,
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name'],
            items: {
              type: 'object',
              required: ['template'],
              properties: {
                name: str('The pod set name.', { default: 'main', maxLength: 63 }),
                count: { type: 'integer', format: 'int32', minimum: 0, default: 1 },
                minCount: { type: 'integer', format: 'int32', minimum: 1 },
                template: open('The pod template.'),
                topologyRequest: open('Topology request (not acted on by the stand-in).'),
              },
            },
          },
          queueName: str('The LocalQueue.'),
          priorityClassRef: open('Where the priority comes from.'),
          priority: { type: 'integer', format: 'int32', description: 'Higher is admitted first.' },
          active: {
            type: 'boolean',
            default: true,
            description: 'false evicts the workload and keeps it from being admitted.',
          },
          maximumExecutionTimeSeconds: { type: 'integer', format: 'int32', minimum: 1 },
        },
      },
    }),
    workloadPriorityClassCRD(),
  ];
}

/** WorkloadPriorityClass: `value` and `description` at the top level, like PriorityClass. */
function workloadPriorityClassCRD(): KubeObject {
  const obj = crd({
    plural: 'workloadpriorityclasses',
    singular: 'workloadpriorityclass',
    kind: 'WorkloadPriorityClass',
    shortNames: ['wpc'],
    scope: 'Cluster',
    status: false,
    description: 'WorkloadPriorityClass is the Schema for the workloadPriorityClass API',
    columns: [
      {
        name: 'Value',
        type: 'integer',
        jsonPath: '.value',
        description: "Value of workloadPriorityClass's Priority",
      },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
    spec: { type: 'object' },
  });
  const version = (obj.spec as { versions: { schema: { openAPIV3Schema: Schema } }[] }).versions[0]!;
  const schema = version.schema.openAPIV3Schema as { properties: Schema; required?: string[] };
  delete schema.properties.spec;
  schema.properties.value = {
    type: 'integer',
    format: 'int32',
    description:
      'The priority of workloads whose job names this class in its kueue.x-k8s.io/priority-class label.',
  };
  schema.properties.description = { type: 'string', maxLength: 2048 };
  schema.required = ['value'];
  return obj;
}

/** Creates the Kueue CRDs that are missing (Kueue's own, when installed, are kept). */
export async function ensureKueueCRDs(client: ClusterClient): Promise<void> {
  for (const c of kueueCRDs()) {
    if (client.get(KGVR.crds, '', c.metadata.name!)) continue;
    try {
      await client.create(KGVR.crds, c);
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }
}
