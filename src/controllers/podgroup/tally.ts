/**
 * What the controller sees of a group's members, counted once per reconcile: how many run,
 * finished, failed, wait, are being deleted, are placed on a node, or were reported
 * unschedulable by the scheduler.
 */

import {
  isGangVerdict,
  type PodObject,
  READY_LABEL,
} from '../../apis/scheduling.incubator.k8s.io/v1alpha1.ts';

export interface Member {
  pod: PodObject;
  name: string;
  uid: string;
  phase: string;
  /** Being deleted while not finished: a member the group is losing. */
  terminating: boolean;
  /** Bound to a node and not finished: it holds node resources. */
  placed: boolean;
  /** The scheduler's PodScheduled=False/Unschedulable message, when it reported one. */
  unschedulable: string | undefined;
  ready: boolean;
  /** Has a controller owner (Job, ReplicaSet, StatefulSet...) that recreates it when deleted. */
  controlled: boolean;
  /** When the controller first saw it (ms). */
  joinedAt: number;
}

export interface Tally {
  members: Member[];
  running: number;
  succeeded: number;
  failed: number;
  /** Not running yet and not being deleted (Pending or Unknown). */
  pending: number;
  unschedulable: number;
  terminating: number;
  placed: number;
  /** Members that can still count: running, pending or succeeded, and not being deleted. */
  live: number;
  /** The first scheduler message of an unschedulable member, for status messages. */
  schedulerMessage: string | undefined;
  /** A coscheduling scheduler's verdict on the whole gang, when a member carries one. */
  gangVerdict: string | undefined;
  /** The newest join time among live members (ms). */
  newestJoin: number;
  /** Members Running at the previous observation that are gone now (0 without one). */
  vanishedRunning: number;
  /** Members Running now that were not Running at the previous observation (0 without one). */
  newlyRunning: number;
}

export function toMember(pod: PodObject, joinedAt: number): Member {
  const phase = pod.status?.phase || 'Pending';
  const finished = phase === 'Succeeded' || phase === 'Failed';
  const terminating = !finished && !!pod.metadata.deletionTimestamp;
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  const unschedulable =
    !finished && !terminating && scheduled?.status === 'False' && scheduled.reason === 'Unschedulable'
      ? scheduled.message || 'the scheduler reports it unschedulable'
      : undefined;
  return {
    pod,
    name: pod.metadata.name ?? '',
    uid: pod.metadata.uid ?? '',
    phase,
    terminating,
    placed: !finished && !!pod.spec?.nodeName,
    unschedulable,
    ready: pod.metadata.labels?.[READY_LABEL] === 'true',
    controlled: (pod.metadata.ownerReferences ?? []).some((r) => r.controller === true),
    joinedAt,
  };
}

/** What the previous observation remembers of a member: its phase, or Terminating. */
export function observedPhase(m: Member): string {
  return m.terminating ? 'Terminating' : m.phase;
}

/**
 * Counts the members. `previous` (uid → phase at the controller's previous observation, if it
 * made one) lets it see members that were deleted and replaced between two observations.
 */
export function tally(members: Member[], previous?: ReadonlyMap<string, string>, group?: string): Tally {
  const t: Tally = {
    members,
    running: 0,
    succeeded: 0,
    failed: 0,
    pending: 0,
    unschedulable: 0,
    terminating: 0,
    placed: 0,
    live: 0,
    schedulerMessage: undefined,
    gangVerdict: undefined,
    newestJoin: 0,
    vanishedRunning: 0,
    newlyRunning: 0,
  };
  for (const m of members) {
    if (m.placed) t.placed++;
    if (m.phase === 'Succeeded') t.succeeded++;
    else if (m.phase === 'Failed') t.failed++;
    else if (m.terminating) t.terminating++;
    else if (m.phase === 'Running') t.running++;
    else t.pending++;
    if (m.unschedulable !== undefined) {
      t.unschedulable++;
      t.schedulerMessage ??= m.unschedulable;
      if (group !== undefined && isGangVerdict(m.unschedulable, group)) t.gangVerdict ??= m.unschedulable;
    }
    const live = m.phase === 'Succeeded' || (!m.terminating && m.phase !== 'Failed');
    if (live) {
      t.live++;
      if (m.joinedAt > t.newestJoin) t.newestJoin = m.joinedAt;
    }
  }
  if (previous) {
    const now = new Set(members.map((m) => m.uid));
    for (const [uid, phase] of previous) if (phase === 'Running' && !now.has(uid)) t.vanishedRunning++;
    for (const m of members) {
      if (m.phase === 'Running' && !m.terminating && previous.get(m.uid) !== 'Running') t.newlyRunning++;
    }
  }
  return t;
}

/** Highest pod priority among the members (0 when none is set): the group's priority. */
export function groupPriority(pods: readonly PodObject[]): number {
  let p: number | undefined;
  for (const pod of pods) {
    const v = pod.spec?.priority;
    if (typeof v === 'number' && (p === undefined || v > p)) p = v;
  }
  return p ?? 0;
}
