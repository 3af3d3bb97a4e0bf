/** The cluster-scope decision's memo: what it needs of one group, derived once per change of the group. */

import { escaped } from './checks.ts';
import type { GroupMembers } from './membership.ts';
import type { Pod } from './objects.ts';
import type { Ctx } from './plan.ts';
import { hasGate, isDone, isFailed, isTerminating } from './pods.ts';

/** What the cluster-scope decision needs of one group, derived from its members alone. */
export interface GroupFacts {
  done: number;
  /** Members carrying the gate and not being deleted, in member order. */
  gated: Pod[];
  failed: Pod[];
  /** Members running ahead of their turn (see `escaped`). */
  escaped: Pod[];
  /** Some member carries no gate. */
  ungated: boolean;
}

/**
 * Facts per group, memoized on the group's identity: a MembershipTracker hands the same
 * GroupMembers object back until one of its pods changes, so a reconcile after one pod
 * event derives the facts of one group, not of every pod of the sequence. The memo holds
 * the gate and the sequence key the facts were derived with.
 */
const factsMemo = new WeakMap<GroupMembers, { gate: string; key: string; facts: GroupFacts }>();

export function groupFacts(ctx: Ctx, g: GroupMembers): GroupFacts {
  const memo = factsMemo.get(g);
  if (memo && memo.gate === ctx.spec.gate && memo.key === ctx.key) return memo.facts;
  const facts: GroupFacts = { done: 0, gated: [], failed: [], escaped: [], ungated: false };
  for (const pod of g.members) {
    if (isDone(pod)) facts.done++;
    const gated = hasGate(pod, ctx.spec.gate);
    if (gated && !isTerminating(pod)) facts.gated.push(pod);
    if (!gated) facts.ungated = true;
    if (isFailed(pod)) facts.failed.push(pod);
    if (escaped(ctx, pod)) facts.escaped.push(pod);
  }
  factsMemo.set(g, { gate: ctx.spec.gate, key: ctx.key, facts });
  return facts;
}
