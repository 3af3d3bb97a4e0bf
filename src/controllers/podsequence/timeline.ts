/**
 * When each group of a sequence (Cluster scope, or on one node in Node scope) may be
 * released, from what is observed: the first group at the sequence's creation; the next one `waitDuration` after the previous
 * group became Ready (the latest Ready transition of its pods, or the finish of a Succeeded
 * one); or, when a group has a `timeout` with `timeoutPolicy: Continue` and is not Ready
 * within it, once that timeout has passed. Nothing is remembered between passes, so the
 * timeline holds across restarts, as the rest of the decision does. Pure.
 *
 * Upstream (github.com/alvinli222/podsequencing, "adding a wait duration") waits
 * waitDuration after a group's pods are Ready before the next group starts; `timeout` is
 * troupe's own.
 */

import type { GroupMembers } from './membership.ts';
import type { Pod } from './objects.ts';
import type { Ctx } from './plan.ts';
import { isDone } from './pods.ts';

export interface Timeline {
  /** The last group that may be released now (-1: none). */
  limit: number;
  /** The group whose release waits for the previous group's waitDuration, and until when. */
  waiting?: { group: number; untilMs: number };
  /** Groups released past without being Ready (timeout, policy Continue). */
  timedOut: number[];
  /** A group not Ready within its timeout (policy Fail). */
  failed?: { group: number; timeoutMs: number };
  /** When something changes by the clock alone (a wait or a timeout ends). */
  nextMs?: number;
}

function at(s: string | undefined | null): number | undefined {
  const t = s ? Date.parse(s) : Number.NaN;
  return Number.isNaN(t) ? undefined : t;
}

/** When a done pod became done: its Ready transition, or its containers' finish when it Succeeded. */
export function doneAt(pod: Pod): number {
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready') as
    | { status: string; lastTransitionTime?: string }
    | undefined;
  let t = ready?.status === 'True' ? at(ready.lastTransitionTime) : undefined;
  if (pod.status?.phase === 'Succeeded') {
    const statuses = (pod.status.containerStatuses ?? []) as {
      state?: { terminated?: { finishedAt?: string } };
    }[];
    for (const cs of statuses) {
      const f = at(cs.state?.terminated?.finishedAt);
      if (f !== undefined && (t === undefined || f > t)) t = f;
    }
  }
  return t ?? 0;
}

export function timeline(ctx: Ctx, groups: readonly GroupMembers[], satisfied: readonly boolean[]): Timeline {
  return timelineOf(
    ctx,
    groups.map((g) => g.members),
    satisfied,
    at(ctx.seq.metadata.creationTimestamp),
  );
}

/**
 * Node scope: one node's timeline, from its own pods (a group is Ready on the node when it
 * has a pod there and every one of them is done), so each node waits on its own clock.
 * `limit` is the node's index: n once every group is Ready there and nothing waits.
 */
export function nodeTimeline(ctx: Ctx, byGroup: readonly (readonly Pod[])[]): Timeline {
  const satisfied = byGroup.map((pods) => pods.length > 0 && pods.every(isDone));
  // Group 0 is released on a node when its pods there are created (a node may join long
  // after the sequence): its timeout runs from then, not from the sequence's creation.
  const created = (byGroup[0] ?? [])
    .map((p) => at(p.metadata.creationTimestamp))
    .filter((t) => t !== undefined);
  const seqCreated = at(ctx.seq.metadata.creationTimestamp);
  const start =
    created.length === 0 ? seqCreated : Math.max(seqCreated ?? 0, Math.min(...(created as number[])));
  const tl = timelineOf(ctx, byGroup, satisfied, start);
  if (!tl.waiting && !tl.failed && tl.limit === byGroup.length - 1 && satisfied.every(Boolean))
    tl.limit = byGroup.length;
  return tl;
}

function timelineOf(
  ctx: Ctx,
  groups: readonly (readonly Pod[])[],
  satisfied: readonly boolean[],
  firstRelease: number | undefined,
): Timeline {
  const now = ctx.input.now.getTime();
  const out: Timeline = { limit: -1, timedOut: [] };
  const soon = (ms: number) => {
    if (out.nextMs === undefined || ms < out.nextMs) out.nextMs = ms;
  };
  let start = firstRelease ?? now;
  for (let k = 0; k < groups.length; k++) {
    if (now < start) {
      out.waiting = { group: k, untilMs: start };
      soon(start);
      return out;
    }
    out.limit = k;
    const g = ctx.spec.groups[k]!;
    if (satisfied[k]) {
      const readyAt = Math.max(0, ...groups[k]!.map(doneAt));
      start = readyAt + g.waitMs;
      continue;
    }
    if (g.timeoutMs === undefined) return out;
    const deadline = start + g.timeoutMs;
    if (now < deadline) {
      soon(deadline);
      return out;
    }
    if (g.timeoutPolicy === 'Fail') {
      out.failed = { group: k, timeoutMs: g.timeoutMs };
      return out;
    }
    out.timedOut.push(k);
    start = deadline;
  }
  return out;
}
