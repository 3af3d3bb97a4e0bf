/** Pod states as the dashboard draws them, and the cluster-wide pod summary. */

import { findCondition } from '../../kube/conditions.ts';
import { isPodReady, type PodLike } from '../../kube/pod.ts';
import type { KubeObject } from '../../runtime/index.ts';
import type { PodCell, PodState, PodSummary, StateCounts, StuckPod } from '../view-model.ts';

export type Pod = KubeObject & PodLike;

/**
 * One state per pod, in the order a pod normally goes through them: gated (scheduling
 * gates left), pending (not bound, or bound and not started), running (started, not Ready),
 * ready, then succeeded or failed. A deletion in progress wins over all of them.
 */
export function podState(pod: Pod): PodState {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded') return 'succeeded';
  if (phase === 'Failed') return 'failed';
  if (pod.metadata.deletionTimestamp) return 'terminating';
  const gates = (pod.spec as { schedulingGates?: unknown[] } | undefined)?.schedulingGates;
  if (Array.isArray(gates) && gates.length > 0) return 'gated';
  if (phase !== 'Running' || !pod.spec?.nodeName) return 'pending';
  return isPodReady(pod) ? 'ready' : 'running';
}

/** Why a pod is where it is, when that is worth a tooltip. */
export function podDetail(pod: Pod, state: PodState): string | undefined {
  if (state === 'gated') {
    const gates = (pod.spec as { schedulingGates?: { name?: string }[] }).schedulingGates ?? [];
    return `gated by ${gates.map((g) => g.name ?? '').join(', ')}`;
  }
  if (state === 'pending') {
    const sched = findCondition(pod.status?.conditions, 'PodScheduled');
    if (sched?.status === 'False') return [sched.reason, sched.message].filter(Boolean).join(': ');
    const waiting = pod.status?.containerStatuses?.find((c) => c.state?.waiting)?.state?.waiting;
    if (waiting?.reason) return waiting.reason;
    return pod.spec?.nodeName ? `starting on ${pod.spec.nodeName}` : 'waiting for a node';
  }
  if (state === 'failed')
    return [pod.status?.reason, pod.status?.message].filter(Boolean).join(': ') || undefined;
  return undefined;
}

export function podCell(pod: Pod): PodCell {
  const state = podState(pod);
  const cell: PodCell = { name: pod.metadata.name ?? '', state };
  if (pod.spec?.nodeName) cell.node = pod.spec.nodeName;
  const detail = podDetail(pod, state);
  if (detail) cell.detail = detail;
  return cell;
}

export function missingCell(name: string): PodCell {
  return { name, state: 'missing', detail: 'not found in the cluster' };
}

export function countStates(cells: readonly { state: PodState }[]): StateCounts {
  const out: StateCounts = {};
  for (const c of cells) out[c.state] = (out[c.state] ?? 0) + 1;
  return out;
}

const STUCK_LIMIT = 50;

export function podSummary(pods: readonly Pod[]): PodSummary {
  const byState: StateCounts = {};
  const byNs = new Map<string, StateCounts & { total?: number }>();
  const stuck: StuckPod[] = [];
  for (const pod of pods) {
    const state = podState(pod);
    byState[state] = (byState[state] ?? 0) + 1;
    const ns = pod.metadata.namespace ?? '';
    const counts = byNs.get(ns) ?? {};
    counts[state] = (counts[state] ?? 0) + 1;
    byNs.set(ns, counts);
    if (state === 'failed' || (state === 'pending' && !pod.spec?.nodeName)) {
      const sched = findCondition(pod.status?.conditions, 'PodScheduled');
      stuck.push({
        namespace: ns,
        name: pod.metadata.name ?? '',
        state,
        reason: (state === 'failed' ? pod.status?.reason : sched?.reason) ?? '',
        message: String((state === 'failed' ? pod.status?.message : sched?.message) ?? ''),
        since: sched?.lastTransitionTime || pod.metadata.creationTimestamp || undefined,
      });
    }
  }
  stuck.sort((a, b) => (b.since ?? '').localeCompare(a.since ?? ''));
  return {
    total: pods.length,
    byState,
    byNamespace: [...byNs]
      .map(([namespace, counts]) => ({
        namespace,
        total: Object.values(counts).reduce((a, b) => a + (b ?? 0), 0),
        byState: counts,
      }))
      .sort((a, b) => a.namespace.localeCompare(b.namespace)),
    stuck: stuck.slice(0, STUCK_LIMIT),
  };
}
