import type {
  NodeLike,
  PodLike,
  TaintLike,
  TolerationLike,
} from '../../../src/cluster/scheduler/core/index.ts';

export function node(
  name: string,
  allocatable: Record<string, string>,
  opts: { labels?: Record<string, string>; taints?: TaintLike[]; unschedulable?: boolean } = {},
): NodeLike {
  return {
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...opts.labels } },
    spec: { unschedulable: opts.unschedulable, taints: opts.taints },
    status: { allocatable: { pods: '110', ...allocatable }, capacity: { pods: '110', ...allocatable } },
  };
}

let uid = 0;

export function pod(
  name: string,
  requests: Record<string, string> = {},
  opts: {
    nodeName?: string;
    tolerations?: TolerationLike[];
    nodeSelector?: Record<string, string>;
    affinity?: NonNullable<PodLike['spec']>['affinity'];
    priority?: number;
    preemptionPolicy?: string;
    limits?: Record<string, string>;
  } = {},
): PodLike {
  uid++;
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}-${uid}` },
    spec: {
      nodeName: opts.nodeName,
      tolerations: opts.tolerations,
      nodeSelector: opts.nodeSelector,
      affinity: opts.affinity,
      priority: opts.priority,
      preemptionPolicy: opts.preemptionPolicy,
      containers: [{ name: 'c', resources: { requests, limits: opts.limits } }],
    },
  };
}
