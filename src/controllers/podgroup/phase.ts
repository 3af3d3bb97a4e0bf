/**
 * The PodGroup lifecycle: the next phase, reason and message from the previous state and
 * what the members look like now. This is the transition table of the PodGroup Status
 * Enhancement design, made precise (docs/podgroup.md has the full table):
 *
 *   Pending       → Running        the required members run (or have succeeded)
 *   Pending       → Recovering     a member failed before the group ran (PodFailed)
 *   Running       → Recovering     a member failed (PodFailed) or was deleted (PodDeleted)
 *   Recovering    → Running        the replaced members run again
 *   Recovering    → Unschedulable  a replacement cannot be scheduled (NotEnoughResources)
 *   Unschedulable → Pending        every placed member is gone (deleted, e.g. restarted)
 *   Unschedulable → Running        the missing members got placed and run
 * troupe adds: Pending → Unschedulable (partly placed, the rest unschedulable: the deadlock
 * shape the design's definition of Unschedulable describes), Unschedulable → Recovering (a
 * member failed), any → Completed (every member finished, enough succeeded) and Completed →
 * Running/Recovering when new members arrive.
 *
 * Deletions are seen two ways: a member with a deletionTimestamp, or fewer members running
 * or succeeded than the last status recorded with no new failure (a running pod only stops
 * running by finishing, failing or being deleted), so a deletion is noticed even when the
 * pod vanished between two observations.
 */

import { type PodGroupPhase, Reasons } from '../../apis/scheduling.incubator.k8s.io/v1alpha1.ts';
import type { Tally } from './tally.ts';

export interface PreviousState {
  phase: PodGroupPhase;
  reason?: string;
  running: number;
  succeeded: number;
  failed: number;
}

export interface Requirement {
  /** Members that must run or have succeeded. */
  required: number;
  /** minMember is set (false: every live member is required, the seed's rule). */
  minMemberMode: boolean;
  /** Without minMember: no member joined within the formation window. */
  formed: boolean;
}

export interface PhaseResult {
  phase: PodGroupPhase;
  reason: string;
  message: string;
  /** The gang is complete: its running members may be released. */
  satisfied: boolean;
}

export function requirementOf(t: Tally, minMember: number | undefined, formed: boolean): Requirement {
  if (minMember !== undefined && minMember > 0)
    return { required: minMember, minMemberMode: true, formed: true };
  return { required: t.live, minMemberMode: false, formed };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export function nextPhase(prev: PreviousState | undefined, t: Tally, req: Requirement): PhaseResult {
  const made = t.running + t.succeeded;
  const satisfied = req.required >= 1 && made >= req.required && req.formed;
  const progress = req.minMemberMode
    ? `${made} of ${req.required} required members running or succeeded`
    : `${made} of ${plural(req.required, 'member')} running or succeeded`;
  const result = (phase: PodGroupPhase, reason: string, message: string): PhaseResult => ({
    phase,
    reason,
    message,
    satisfied,
  });
  const from = prev?.phase;
  const active = t.running + t.pending + t.terminating;

  if (t.members.length === 0) {
    if (from === 'Completed') return result('Completed', Reasons.MembersFinished, 'every member finished');
    return result(
      'Pending',
      Reasons.NotEnoughTasks,
      req.minMemberMode ? `0 of ${req.required} required members exist` : 'no member pods exist',
    );
  }
  if (active === 0 && t.succeeded >= Math.max(req.required, 1)) {
    return result('Completed', Reasons.MembersFinished, `every member finished: ${succeededFailed(t)}`);
  }
  if (from === 'Completed' && active === 0) {
    return result(
      'Completed',
      prev?.reason ?? Reasons.MembersFinished,
      `every member finished: ${succeededFailed(t)}`,
    );
  }
  const newFailures = t.failed > (prev?.failed ?? 0);
  const lostMembers =
    t.terminating > 0 || t.vanishedRunning > 0 || made < (prev?.running ?? 0) + (prev?.succeeded ?? 0);
  const failed = `${plural(t.failed, 'member')} failed; ${progress}`;
  const deleted = `${
    t.terminating > 0
      ? `${plural(t.terminating, 'member')} being deleted`
      : t.vanishedRunning > 0
        ? `${plural(t.vanishedRunning, 'running member')} deleted`
        : 'members were deleted'
  }; ${progress}`;
  // A running group that lost a member is Recovering even when the loss was already made
  // good by the time we look (a controller replaced the pod at once): without the newcomers
  // it was short. Without minMember every member is required, so any loss counts; the group
  // runs again on the next observation when the survivors (and newcomers) all run.
  const shortMeanwhile = made - t.newlyRunning < req.required;
  if ((from === 'Running' || from === 'Completed') && (!req.minMemberMode || shortMeanwhile)) {
    if (newFailures) return result('Recovering', Reasons.PodFailed, failed);
    if (lostMembers) return result('Recovering', Reasons.PodDeleted, deleted);
  }
  if (satisfied) return result('Running', Reasons.MembersRunning, progress);

  const tooFew = req.minMemberMode && t.live < req.required;
  // A gang scheduler's verdict already says how many members could not be placed and why.
  const unschedulable =
    t.gangVerdict ?? `${plural(t.unschedulable, 'member')} cannot be scheduled: ${t.schedulerMessage ?? ''}`;

  switch (from) {
    case undefined:
    case 'Pending': {
      // Only a failure not seen before: a group back to Pending after recovering from an old
      // one (Recovering → Unschedulable → Pending) would otherwise cycle without end.
      if (newFailures) return result('Recovering', Reasons.PodFailed, failed);
      if (t.placed > 0 && t.unschedulable > 0) {
        return result('Unschedulable', Reasons.NotEnoughResources, `${unschedulable}; ${progress}`);
      }
      return pending(result, t, req, progress, unschedulable);
    }
    case 'Running':
    case 'Completed': {
      if (newFailures) return result('Recovering', Reasons.PodFailed, failed);
      if (lostMembers) return result('Recovering', Reasons.PodDeleted, deleted);
      if (tooFew)
        return result(
          'Recovering',
          Reasons.NotEnoughTasks,
          `${t.live} of ${req.required} required members exist`,
        );
      if (req.minMemberMode) return result('Recovering', Reasons.NotEnoughTasks, progress);
      // Without minMember a member that joins a running group is not a loss: the group keeps
      // running and the newcomer is released once it runs too.
      return result('Running', Reasons.MembersRunning, `${progress}; waiting for new members to run`);
    }
    case 'Recovering': {
      if (t.unschedulable > 0)
        return result('Unschedulable', Reasons.NotEnoughResources, `${unschedulable}; ${progress}`);
      if (newFailures) return result('Recovering', Reasons.PodFailed, failed);
      if (lostMembers) return result('Recovering', Reasons.PodDeleted, deleted);
      const reason = prev?.reason ?? Reasons.PodFailed;
      return result('Recovering', reason, reason === Reasons.PodFailed && t.failed > 0 ? failed : progress);
    }
    case 'Unschedulable': {
      if (newFailures) return result('Recovering', Reasons.PodFailed, failed);
      if (t.placed === 0) return pending(result, t, req, progress, unschedulable);
      if (t.unschedulable > 0)
        return result('Unschedulable', Reasons.NotEnoughResources, `${unschedulable}; ${progress}`);
      return result('Unschedulable', Reasons.NotEnoughResources, `every member is placed; ${progress}`);
    }
  }
}

function pending(
  result: (phase: PodGroupPhase, reason: string, message: string) => PhaseResult,
  t: Tally,
  req: Requirement,
  progress: string,
  unschedulable: string,
): PhaseResult {
  if (req.minMemberMode && t.live < req.required) {
    return result('Pending', Reasons.NotEnoughTasks, `${t.live} of ${req.required} required members exist`);
  }
  if (t.live === 0) return result('Pending', Reasons.NotEnoughTasks, 'no live member pods exist');
  if (t.unschedulable > 0) return result('Pending', Reasons.NotEnoughResources, unschedulable);
  return result('Pending', Reasons.MembersStarting, progress);
}

function succeededFailed(t: Tally): string {
  return `${t.succeeded} succeeded, ${t.failed} failed`;
}
