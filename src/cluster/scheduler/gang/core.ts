/**
 * Coscheduling's decisions, pure: which gang a pod belongs to, the PodGroup fields that
 * matter, the queue order that keeps a gang together, pre-filter (enough members, enough
 * free resources for minResources) and the gang's verdict message. Semantics of the
 * scheduler-plugins coscheduling plugin (pkg/coscheduling/coscheduling.go and
 * pkg/coscheduling/core/core.go of kubernetes-sigs/scheduler-plugins).
 */
import { claimOf, gangVerdict } from '../../../apis/scheduling.incubator.k8s.io/v1alpha1.ts';
import { X_POD_GROUP_LABEL } from '../../../apis/scheduling.x-k8s.io/v1alpha1.ts';
import type { ResourceList } from '../../../kube/builtin.ts';
import { jsonEqual } from '../../../lib/json.ts';
import type { KubeObject } from '../../apiserver/types.ts';
import type { NodeInfo } from '../core/cluster-state.ts';
import { resourcesFromList } from '../core/requests.ts';

export type GangApi = 'scheduling.x-k8s.io' | 'scheduling.incubator.k8s.io';

export interface GangRef {
  namespace: string;
  name: string;
  /** The API group of its PodGroup. */
  api: GangApi;
  /** `namespace/name` plus the API, unique across both kinds of PodGroup. */
  key: string;
}

/**
 * The pod's gang: scheduler-plugins' label first, then troupe's group (its label, else the
 * kube-batch `scheduling.k8s.io/group-name` annotation, as troupe's PodGroup controller reads it).
 */
export function gangOf(pod: Pick<KubeObject, 'metadata'>): GangRef | undefined {
  const namespace = pod.metadata.namespace ?? '';
  const x = pod.metadata.labels?.[X_POD_GROUP_LABEL];
  if (x) return gangRef(namespace, x, 'scheduling.x-k8s.io');
  const troupe = claimOf(pod).group;
  return troupe ? gangRef(namespace, troupe, 'scheduling.incubator.k8s.io') : undefined;
}

export function gangRef(namespace: string, name: string, api: GangApi): GangRef {
  return { namespace, name, api, key: `${api}:${namespace}/${name}` };
}

export interface GangSpec {
  minMember: number;
  minResources: ResourceList | undefined;
  /** Permit's wait; undefined: the scheduler's default. */
  scheduleTimeoutSeconds: number | undefined;
  /** PodGroup creation time (epoch ms): the queue orders gangs by it. */
  created: number;
}

export function gangSpec(pg: KubeObject): GangSpec {
  const spec = (pg.spec ?? {}) as {
    minMember?: number;
    minResources?: ResourceList;
    scheduleTimeoutSeconds?: number;
  };
  const created = Date.parse(pg.metadata.creationTimestamp ?? '');
  return {
    minMember: typeof spec.minMember === 'number' && spec.minMember > 0 ? spec.minMember : 1,
    minResources: spec.minResources ?? undefined,
    scheduleTimeoutSeconds:
      typeof spec.scheduleTimeoutSeconds === 'number' && spec.scheduleTimeoutSeconds > 0
        ? spec.scheduleTimeoutSeconds
        : undefined,
    created: Number.isFinite(created) ? created : 0,
  };
}

export function sameGangSpec(a: GangSpec, b: GangSpec): boolean {
  return (
    a.minMember === b.minMember &&
    a.scheduleTimeoutSeconds === b.scheduleTimeoutSeconds &&
    a.created === b.created &&
    jsonEqual(a.minResources, b.minResources)
  );
}

/**
 * Queue order within one priority (Coscheduling.Less): the gang's time (its PodGroup's
 * creation, or the last failure so a failed gang does not block the head of the queue),
 * else the pod's first attempt; then the gang's or pod's key. Members of one gang share
 * time and key, so they come out of the queue together.
 */
export interface SortKey {
  time: number;
  key: string;
}

export function compareSortKeys(a: SortKey, b: SortKey): number {
  if (a.time !== b.time) return a.time - b.time;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/**
 * PodGroupManager.PreFilter's member checks: enough sibling pods, not too many gated.
 * Upstream walks the members adding one per gated pod to the gap; the gap only grows, so
 * the walk fails exactly when the gap with every gated member counted is positive.
 */
export function memberVerdict(
  podName: string,
  minMember: number,
  total: number,
  gated: number,
): string | undefined {
  const gap = minMember - total;
  if (gap > 0) {
    return `pre-filter pod ${podName} cannot find enough sibling pods, current pods number: ${total}, minMember of group: ${minMember}`;
  }
  if (gap + gated > 0)
    return `pre-filter pod ${podName} cannot proceed due to gated pods in the same PodGroup`;
  return undefined;
}

/**
 * CheckClusterResource: minResources (plus `pods: minMember`) must fit in the nodes' free
 * room summed node by node, not counting what the gang's own pods already hold. Returns
 * the remaining gap, or undefined when it fits.
 */
export function resourceGap(
  nodes: readonly NodeInfo[],
  minResources: ResourceList,
  minMember: number,
  isOwnPod: (uid: string) => boolean,
): Record<string, number> | undefined {
  const { res } = resourcesFromList(minResources);
  const want = new Map<string, number>([
    ['cpu', res.milliCPU],
    ['memory', res.memory],
    ['ephemeral-storage', res.ephemeralStorage],
    ['pods', minMember],
  ]);
  for (const [k, v] of res.scalar ?? []) want.set(k, v);
  for (const [k, v] of want) if (v <= 0) want.delete(k);
  for (const n of nodes) {
    if (!n.node || want.size === 0) break;
    let own = { milliCPU: 0, memory: 0, eph: 0, pods: 0, scalar: new Map<string, number>() };
    for (const p of n.pods.values()) {
      if (!isOwnPod(p.uid)) continue;
      const q = p.requests.requests;
      own = {
        milliCPU: own.milliCPU + q.milliCPU,
        memory: own.memory + q.memory,
        eph: own.eph + q.ephemeralStorage,
        pods: own.pods + 1,
        scalar: own.scalar,
      };
      for (const [k, v] of q.scalar ?? []) own.scalar.set(k, (own.scalar.get(k) ?? 0) + v);
    }
    const free = (name: string): number => {
      switch (name) {
        case 'cpu':
          return n.allocMilliCPU - n.reqMilliCPU + own.milliCPU;
        case 'memory':
          return n.allocMemory - n.reqMemory + own.memory;
        case 'ephemeral-storage':
          return n.allocEphemeralStorage - n.reqEphemeralStorage + own.eph;
        case 'pods':
          return n.allowedPodNumber - n.podCount + own.pods;
        default:
          return n.scalarAllocatable(name) - n.scalarRequested(name) + (own.scalar.get(name) ?? 0);
      }
    };
    for (const [k, v] of want) {
      const left = v - free(k);
      if (left <= 0) want.delete(k);
      else want.set(k, left);
    }
  }
  if (want.size === 0) return undefined;
  return Object.fromEntries([...want].map(([k, v]) => [k, k === 'cpu' ? v / 1000 : v]));
}

/** The gang's verdict, on every member's FailedScheduling event and PodScheduled condition. */
export const gangMessage = gangVerdict;
