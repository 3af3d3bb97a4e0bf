/** Kueue objects for the pure admission tests: flavors, queues, workloads and snapshots. */
import type { Snapshot } from '../../../src/cluster/kueue/admission.ts';
import type { ClusterQueue, LocalQueue, ResourceFlavor, Workload } from '../../../src/cluster/kueue/api.ts';
import type { Toleration } from '../../../src/kube/builtin.ts';

export function flavor(name: string, spec: ResourceFlavor['spec'] = {}): ResourceFlavor {
  return { apiVersion: 'kueue.x-k8s.io/v1beta2', kind: 'ResourceFlavor', metadata: { name }, spec };
}

export function cq(name: string, spec: Partial<NonNullable<ClusterQueue['spec']>> = {}): ClusterQueue {
  return {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'ClusterQueue',
    metadata: { name },
    spec: {
      namespaceSelector: {},
      queueingStrategy: 'BestEffortFIFO',
      resourceGroups: [
        {
          coveredResources: ['cpu'],
          flavors: [{ name: 'default-flavor', resources: [{ name: 'cpu', nominalQuota: 4 }] }],
        },
      ],
      ...spec,
    },
  };
}

export function lq(name: string, clusterQueue: string, ns = 'default'): LocalQueue {
  return {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'LocalQueue',
    metadata: { name, namespace: ns },
    spec: { clusterQueue },
  };
}

let n = 0;
export function wl(
  name: string,
  cpu: string,
  opts: {
    count?: number;
    queue?: string;
    ns?: string;
    created?: number;
    priority?: number;
    nodeSelector?: Record<string, string>;
    tolerations?: Toleration[];
    memory?: string;
  } = {},
): Workload {
  const requests: Record<string, string> = { cpu };
  if (opts.memory) requests.memory = opts.memory;
  return {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'Workload',
    metadata: {
      name,
      namespace: opts.ns ?? 'default',
      uid: `uid-${name}-${++n}`,
      creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, opts.created ?? 0))
        .toISOString()
        .replace('.000', ''),
    },
    spec: {
      queueName: opts.queue ?? 'user-queue',
      priority: opts.priority ?? 0,
      active: true,
      podSets: [
        {
          name: 'main',
          count: opts.count ?? 1,
          template: {
            spec: {
              nodeSelector: opts.nodeSelector,
              tolerations: opts.tolerations,
              containers: [{ name: 'c', resources: { requests } }],
            },
          },
        },
      ],
    },
  };
}

export function snap(workloads: Workload[], over: Partial<Snapshot> = {}): Snapshot {
  return {
    flavors: new Map([['default-flavor', flavor('default-flavor')]]),
    clusterQueues: new Map([['cluster-queue', cq('cluster-queue')]]),
    localQueues: new Map([['default/user-queue', lq('user-queue', 'cluster-queue')]]),
    namespaces: new Map([['default', { 'kubernetes.io/metadata.name': 'default' }]]),
    workloads,
    ...over,
  };
}

/** `w` holding `cpu` of default-flavor in `cqName`, reserved at second `reservedAt` of 2026. */
export function admittedWith(w: Workload, cqName = 'cluster-queue', cpu = '1', reservedAt = 0): Workload {
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, reservedAt)).toISOString().replace('.000', '');
  return {
    ...w,
    status: {
      admission: {
        clusterQueue: cqName,
        podSetAssignments: [
          { name: 'main', flavors: { cpu: 'default-flavor' }, resourceUsage: { cpu }, count: 1 },
        ],
      },
      conditions: [
        {
          type: 'QuotaReserved',
          status: 'True',
          reason: 'QuotaReserved',
          message: '',
          lastTransitionTime: at,
        },
        {
          type: 'Admitted',
          status: 'True',
          reason: 'Admitted',
          message: '',
          lastTransitionTime: at,
        },
      ],
    },
  };
}
