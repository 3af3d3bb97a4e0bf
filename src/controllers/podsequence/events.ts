/** The Events a plan records: the releases it sends, and the transitions its status reports. */

import { rfc3339 } from '../../kube/conditions.ts';
import { formatGoDuration } from '../../kube/duration.ts';
import { type CoreEvent, type Ctx, listNames, type Plan, type PlanFacts, type Release } from './plan.ts';
import { groupLabel, type ResolvedSpec } from './spec.ts';

/** The plan with its events: the releases it sends, and the transitions its status reports. */
export function withEvents(ctx: Ctx, facts: PlanFacts, nodesAdvanced?: ReadonlyMap<number, string[]>): Plan {
  const released = releaseEvents(ctx.spec, facts.releases);
  const transitions = transitionEvents(ctx, facts, nodesAdvanced);
  return {
    ...facts,
    releaseEvents: released,
    statusEvents: transitions,
    get events() {
      return [...released, ...transitions];
    },
  };
}

/** The Released events of `releases`, one per group. */
export function releaseEvents(spec: ResolvedSpec, releases: Release[]): CoreEvent[] {
  const n = spec.groups.length;
  const byGroup = new Map<number, Release[]>();
  for (const r of releases) {
    const list = byGroup.get(r.group) ?? [];
    list.push(r);
    byGroup.set(r.group, list);
  }
  const events: CoreEvent[] = [];
  for (const [k, rs] of [...byGroup].sort(([a], [b]) => a - b)) {
    const label = groupLabel(spec.groups[k]!, n);
    const where = rs.map((r) =>
      r.node ? `${r.name} on ${r.node}` : r.narrowTo ? `${r.name} (to ${listNames(r.narrowTo, 3)})` : r.name,
    );
    const why =
      k === 0
        ? 'it is the first group'
        : spec.scope === 'Node'
          ? 'every earlier group is Ready on its node'
          : 'every earlier group is Ready';
    events.push({
      type: 'Normal',
      reason: 'Released',
      action: 'RemoveSchedulingGate',
      note: `Released ${rs.length} pod${rs.length === 1 ? '' : 's'} of group ${label} because ${why}: ${listNames(where)}`,
    });
  }
  return events;
}

/** `nodesAdvanced` (node scope): the nodes whose turn moved on since `prev`, by the group they finished. */
export function transitionEvents(
  ctx: Ctx,
  plan: PlanFacts,
  nodesAdvanced?: ReadonlyMap<number, string[]>,
): CoreEvent[] {
  const { prev, spec, n } = ctx;
  const next = plan.status;
  const events: CoreEvent[] = [];
  const sameSpec = prev.observedGeneration === next.observedGeneration;
  if (
    sameSpec &&
    spec.scope === 'Cluster' &&
    prev.currentIndex !== undefined &&
    next.currentIndex! > prev.currentIndex
  ) {
    for (let k = prev.currentIndex; k < next.currentIndex! && k < n; k++) {
      const waits = spec.groups[k]!.waitMs > 0;
      const following =
        k + 1 < n
          ? waits
            ? `; group ${groupLabel(spec.groups[k + 1]!, n)} follows after ${formatGoDuration(spec.groups[k]!.waitMs)}`
            : `; releasing group ${groupLabel(spec.groups[k + 1]!, n)}`
          : '';
      events.push({
        type: 'Normal',
        reason: 'GroupReady',
        action: 'Progress',
        note: `Group ${groupLabel(spec.groups[k]!, n)} is Ready${following}`,
      });
    }
  }
  if (sameSpec && nodesAdvanced) {
    for (const [k, nodes] of [...nodesAdvanced].sort(([a], [b]) => a - b)) {
      events.push({
        type: 'Normal',
        reason: 'GroupReady',
        action: 'Progress',
        note: `Group ${groupLabel(spec.groups[k]!, n)} is Ready on node${nodes.length === 1 ? '' : 's'} ${listNames(nodes)}`,
      });
    }
  }
  if (spec.scope === 'Cluster' && next.waitingUntil && next.waitingUntil !== prev.waitingUntil) {
    const k = next.currentIndex ?? 0;
    const before = spec.groups[k - 1];
    if (before && spec.groups[k]) {
      events.push({
        type: 'Normal',
        reason: 'Waiting',
        action: 'Progress',
        note: `All pods in ${before.name} ready, waiting ${formatGoDuration(before.waitMs)} before next group: ${groupLabel(spec.groups[k]!, n)} is released at ${next.waitingUntil}`,
      });
    }
  }
  if (spec.scope === 'Node' && next.waitingUntil && next.waitingUntil !== prev.waitingUntil) {
    // The nodes whose wait ends first (the one status.waitingUntil shows), by group.
    const byGroup = new Map<number, string[]>();
    for (const v of plan.nodes) {
      if (!v.wait || rfc3339(new Date(v.wait.untilMs)) !== next.waitingUntil) continue;
      const list = byGroup.get(v.wait.group);
      if (list) list.push(v.name);
      else byGroup.set(v.wait.group, [v.name]);
    }
    for (const [k, nodes] of byGroup) {
      const before = spec.groups[k - 1]!;
      events.push({
        type: 'Normal',
        reason: 'Waiting',
        action: 'Progress',
        note: `All pods in ${before.name} ready on node${nodes.length === 1 ? '' : 's'} ${listNames(nodes, 3)}, waiting ${formatGoDuration(before.waitMs)} before next group: ${groupLabel(spec.groups[k]!, n)} is released there at ${next.waitingUntil}`,
      });
    }
  }
  for (const name of next.timedOutGroups ?? []) {
    if ((prev.timedOutGroups ?? []).includes(name)) continue;
    const g = spec.groups.find((x) => x.name === name);
    const following = g ? spec.groups[g.index + 1] : undefined;
    events.push({
      type: 'Warning',
      reason: 'GroupTimeout',
      action: 'Progress',
      note: `Group ${g ? groupLabel(g, n) : name} was not Ready within its timeout of ${formatGoDuration(g?.timeoutMs ?? 0)}${following ? `; releasing group ${groupLabel(following, n)} anyway (timeoutPolicy Continue)` : ''}`,
    });
  }
  if (next.phase === 'Completed' && prev.phase !== 'Completed') {
    events.push({
      type: 'Normal',
      reason: 'Completed',
      action: 'Progress',
      note: next.message ?? 'All groups are Ready',
    });
  }
  for (const f of plan.failures) {
    if (prev.phase !== 'Failed' || !(prev.message ?? '').includes(f.message)) {
      events.push({ type: 'Warning', reason: f.reason, action: 'Progress', note: f.message });
    }
  }
  // Named pods missing for a moment are normal (`kubectl apply` creates the sequence before
  // its pods): the status says so at once, a Warning comes only when the grace period ends.
  return events;
}
