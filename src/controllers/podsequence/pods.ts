/** What the sequence needs to know about one pod: gated, done, where it will run. Pure. */

import { isPodReady } from '../../kube/pod.ts';
import type { NodeSelectorTerm, Pod } from './objects.ts';

export function hasGate(pod: Pod, gate: string): boolean {
  return (pod.spec?.schedulingGates ?? []).some((g) => g.name === gate);
}

export function isTerminating(pod: Pod): boolean {
  return !!pod.metadata.deletionTimestamp;
}

export function isFailed(pod: Pod): boolean {
  return pod.status?.phase === 'Failed';
}

/**
 * A pod that let its successors go: Ready, or run to completion (an init or migration
 * pod). A pod being deleted is not done: it is going away.
 */
export function isDone(pod: Pod): boolean {
  if (isTerminating(pod)) return false;
  return pod.status?.phase === 'Succeeded' || isPodReady(pod);
}

function requiredTerms(pod: Pod): NodeSelectorTerm[] | undefined {
  const req = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  return req?.nodeSelectorTerms ?? undefined;
}

function namesOfTerm(t: NodeSelectorTerm): string[] | undefined {
  for (const f of t.matchFields ?? []) {
    if (f.key === 'metadata.name' && f.operator === 'In') return f.values ?? [];
  }
  return undefined;
}

/**
 * The nodes a pod may land on, when its required node affinity names them (the way the
 * DaemonSet controller pins its pods, and the way this controller narrows pods it
 * releases): every term restricts `metadata.name` with `In`. Undefined: anywhere.
 */
export function candidateNodes(pod: Pod): ReadonlySet<string> | undefined {
  if (pod.spec?.nodeName) return new Set([pod.spec.nodeName]);
  const terms = requiredTerms(pod);
  if (!terms || terms.length === 0) return undefined;
  const out = new Set<string>();
  for (const t of terms) {
    const names = namesOfTerm(t);
    if (!names) return undefined;
    for (const n of names) out.add(n);
  }
  return out;
}

/** The node a pod runs on or is pinned to before scheduling (DaemonSet pods), if exactly one. */
export function podNode(pod: Pod): string | undefined {
  if (pod.spec?.nodeName) return pod.spec.nodeName;
  const c = candidateNodes(pod);
  if (c && c.size === 1) for (const only of c) return only;
  return undefined;
}

/**
 * A few words on where a pod stands, for status messages and `troupe explain`. `released`:
 * describe it as it will be once the release patch being sent removes the gate, so that the
 * status written along with a release already reads as the next pass will (one status
 * write per release, not two).
 */
export function describePod(pod: Pod, gate: string, released = false): string {
  if (isTerminating(pod)) return 'terminating';
  const phase = pod.status?.phase ?? 'Pending';
  if (phase === 'Succeeded') return 'Succeeded';
  if (phase === 'Failed') return 'Failed';
  if (!released && hasGate(pod, gate)) return 'gated';
  if (isPodReady(pod)) return 'Ready';
  if (!pod.spec?.nodeName) {
    const sched = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
    if (sched?.status === 'False' && sched.reason && sched.reason !== 'SchedulingGated') {
      return `not scheduled (${sched.reason})`;
    }
    const other = (pod.spec?.schedulingGates ?? []).map((g) => g.name).filter((g) => g !== gate);
    if (other.length > 0) return `held by another gate (${other.join(', ')})`;
    return 'not scheduled yet';
  }
  return `${phase}, not Ready`;
}
