/** Node scope: a gated pod of group k is released once groups 0..k-1 are satisfied on its node. */

import type { NodeSequenceStatus } from '../../apis/scheduling.example.com/v1alpha1.ts';
import { rfc3339 } from '../../kube/conditions.ts';
import { formatGoDuration } from '../../kube/duration.ts';
import { escaped, releasable, releaseFor, taintChanges } from './checks.ts';
import { DecisionMemo, type Inbound, type NodePass } from './decision-memo.ts';
import type { MembershipTracker, NodePlacement } from './membership.ts';
import { nodeReport } from './node-report.ts';
import type { Pod } from './objects.ts';
import { type Ctx, type Decision, type NodeView, type Plan, podName, type Release } from './plan.ts';
import { candidateNodes, hasGate, isDone, isFailed, isTerminating } from './pods.ts';
import { groupLabel } from './spec.ts';
import { nodeStatus, nodeWaiting, sameNodeEntry } from './status.ts';
import { nodeTimeline, type Timeline } from './timeline.ts';

/**
 * Node scope. The releases come first and, in lite mode, cost what the nodes a change
 * touched cost: the tracker says which nodes' pods changed, the memo keeps every other
 * node's part of the last pass. Some passes still walk every node: after a status write
 * (each node's entry is compared with the written one), in full mode (node list and
 * taints), and when pods waiting for a node are released. The report (status, events)
 * walks every node, and is derived only when asked.
 */
export function decideNode(ctx: Ctx, tracker: MembershipTracker): Decision {
  const { spec, n } = ctx;
  const memo = ctx.input.memo ?? new DecisionMemo();
  memo.reset(spec.gate, ctx.key, n, tracker);
  const placement = tracker.placement();
  const totals = tracker.totals();
  const inFlight: { pod: Pod; group: number; nodes: ReadonlySet<string> | undefined }[] = [];
  const unplaced: Pod[][] = Array.from({ length: n }, () => []);
  placement.unplaced.forEach((pods, k) => {
    for (const pod of pods) {
      if (hasGate(pod, spec.gate)) unplaced[k]!.push(pod);
      else if (!isDone(pod) && !isTerminating(pod) && !isFailed(pod))
        inFlight.push({ pod, group: k, nodes: candidateNodes(pod) });
    }
  });
  const inbound: Inbound = {
    anywhere: Array.from({ length: n }, () => 0),
    headingTo: Array.from({ length: n }, () => new Map()),
  };
  const arrive = (group: number, pod: Pod, nodes: Iterable<string> | undefined) => {
    if (!nodes) {
      inbound.anywhere[group]!++;
      return;
    }
    for (const node of nodes) {
      const list = inbound.headingTo[group]!.get(node);
      if (list) list.push(podName(pod));
      else inbound.headingTo[group]!.set(node, [podName(pod)]);
    }
  };
  for (const f of inFlight) arrive(f.group, f.pod, f.nodes);

  // Full mode knows every node; lite mode knows the nodes its pods name.
  const nodeSetChanged = memo.syncNodes(placement, ctx.input.nodes);
  const placementOf = (name: string) => placement.nodes.get(name) ?? memo.empty(name);
  // Inbound blockers: the first group with released pods that may still land on the node.
  let anyMin = inbound.anywhere.findIndex((c) => c > 0);
  if (anyMin < 0) anyMin = n;
  const headingMin = new Map<string, number>();
  for (let k = n - 1; k >= 0; k--) for (const node of inbound.headingTo[k]!.keys()) headingMin.set(node, k);
  // waitDuration / timeout: each node runs its own timeline (see timeline.ts), from its own
  // pods' Ready transitions, so it holds across restarts; its limit replaces the node's own
  // blocker. Derived once per node and pass (it depends on the clock).
  const timed = spec.groups.some((g) => g.waitMs > 0 || g.timeoutMs !== undefined);
  const clocks = new Map<string, Timeline>();
  const clockOf = (name: string): Timeline => {
    let tl = clocks.get(name);
    if (!tl) {
      tl = nodeTimeline(ctx, placementOf(name).byGroup);
      clocks.set(name, tl);
    }
    return tl;
  };
  // A node's own blocker (the first group with no pod on it or a pod not done), or an inbound one.
  const indexNow = (name: string) =>
    Math.min(
      timed ? clockOf(name).limit : memo.localIndex(placementOf(name)),
      headingMin.get(name) ?? n,
      anyMin,
    );

  /**
   * Pods that may go to any node are meant per node, like the pinned ones: group k's share
   * of a node is its pods divided by the nodes that carry (or await) a pod of group k-1, the
   * nodes where group k can ever start. A pass releases only what the nodes ready for group
   * k have room for, each pod eligible for every such node, so the first node to become
   * ready does not receive the whole group while the others become ready a moment later.
   */
  const perNodeShares = (k: number, eligible: readonly string[]) => {
    let placedTotal = 0;
    let carriers = inbound.anywhere[k - 1]!;
    for (const name of memo.names) {
      const here = placementOf(name).byGroup;
      placedTotal += here[k]!.length;
      if (here[k - 1]!.length > 0 || inbound.headingTo[k - 1]!.has(name)) carriers++;
    }
    const inFlightK = inFlight.filter((f) => f.group === k);
    const total = unplaced[k]!.length + inFlightK.length + placedTotal;
    const share = Math.ceil(total / Math.max(1, Math.min(carriers, memo.names.length)));
    // Pods on their way to one node count against it; pods that may land on several count
    // against the room of all the open ones together.
    const onlyTo = new Map<string, number>();
    let shared = 0;
    for (const f of inFlightK) {
      if (f.nodes?.size === 1) {
        const [only] = f.nodes;
        onlyTo.set(only!, (onlyTo.get(only!) ?? 0) + 1);
      } else shared++;
    }
    const open: string[] = [];
    let room = 0;
    for (const name of eligible) {
      const left = share - placementOf(name).byGroup[k]!.length - (onlyTo.get(name) ?? 0);
      if (left > 0) {
        open.push(name);
        room += left;
      }
    }
    return { open, budget: room - shared };
  };

  // Pods waiting for a node go in group order: pods of group k released in this pass (to
  // the nodes where every group before k is Ready) then count as not-yet-Ready members of
  // group k on each of those nodes, before group k+1 is judged there.
  const releases: Release[] = [];
  const waitingUnplaced: Pod[][] = Array.from({ length: n }, () => []);
  for (let k = 0; k < n; k++) {
    const pods = unplaced[k]!.filter((p) => releasable(ctx, totals.conflicts, p));
    if (pods.length === 0) continue;
    if (k === 0) {
      for (const pod of pods) {
        releases.push(releaseFor(ctx, pod, 0));
        arrive(0, pod, undefined);
      }
      anyMin = 0;
      continue;
    }
    const eligible = memo.names.filter((name) => indexNow(name) >= k);
    const { open, budget } = perNodeShares(k, eligible);
    if (open.length === 0 || budget <= 0) {
      waitingUnplaced[k]!.push(...pods);
      continue;
    }
    for (const [i, pod] of pods.entries()) {
      if (i >= budget) {
        waitingUnplaced[k]!.push(pod);
        continue;
      }
      releases.push(releaseFor(ctx, pod, k, { narrowTo: open }));
      arrive(k, pod, open);
    }
    for (const name of open) if (!headingMin.has(name)) headingMin.set(name, k);
  }

  // The nodes whose part may differ from the last pass's: their pods changed or pods may be
  // heading to them. Every node when the nodes themselves changed, when pods that may land
  // anywhere changed, or when the written status is another object (then most nodes'
  // parts are reused after a comparison with their entry).
  const headingChanged = memo.inboundChanges(inbound, anyMin);
  const prevMoved = memo.syncPrev(ctx.prev.nodeStatus);
  // With waits or timeouts a node's turn also moves by the clock alone: look at every node.
  const check =
    timed || nodeSetChanged || !headingChanged || prevMoved
      ? memo.names
      : new Set([...placement.changed, ...headingChanged]);
  for (const name of check) {
    const i = memo.position(name);
    if (i === undefined) continue;
    const here = placementOf(name);
    const index = indexNow(name);
    const heading = anyMin < n || headingMin.has(name);
    const k = Math.min(index, n - 1);
    const tl = timed ? clockOf(name) : undefined;
    const clockKey = tl
      ? `|${tl.waiting?.untilMs}|${tl.timedOut.join(',')}|${tl.failed?.group}|${tl.nextMs}`
      : '';
    const inboundKey = `${heading}|${inbound.anywhere[k]}|${(inbound.headingTo[k]!.get(name) ?? []).join(',')}${clockKey}`;
    const conflicted = totals.conflicts.size === 0 ? '' : conflictedOn(here, totals.conflicts);
    const prev = memo.prevOf(name);
    const old = memo.passes[i];
    let entry: NodePass;
    if (
      old &&
      old.index === index &&
      old.inboundKey === inboundKey &&
      old.conflicted === conflicted &&
      old.placement === here &&
      sameNodeEntry(old.prev, prev)
    ) {
      // The written status comes back as new objects (the server's answer, then the cache's
      // copy): remember this one, so the next pass matches it by identity. A new part, not
      // an edit of the old one, which an earlier decision's report may still read.
      entry = old.prev === prev ? old : { ...old, prev };
      memo.passes[i] = entry;
    } else {
      const pass = passForNode(ctx, totals.conflicts, prev, {
        name,
        byGroup: here.byGroup,
        index,
        heading,
        inbound,
        clock: tl,
      });
      entry = { ...pass, placement: here, index, inboundKey, conflicted, prev, clock: tl };
      memo.passes[i] = entry;
    }
    if (entry.releases.length > 0) memo.releasing.add(name);
    else memo.releasing.delete(name);
  }
  memo.settle();
  for (const name of memo.releasingInOrder()) releases.push(...memo.passes[memo.position(name)!]!.releases);
  ctx.released = new Set(releases.map((r) => r.name));
  // Every node has its part by now (a new node list has every node checked). A copy: the
  // report may be asked for after the next pass has moved the memo on.
  const passes = memo.passes.slice() as NodePass[];
  // Once the sequence is complete its taints go from every node, as upstream's cleanupTaints
  // does on completion: a node that never had a pod of it would otherwise keep them forever.
  const complete =
    totals.members > 0 &&
    inFlight.length === 0 &&
    waitingUnplaced.every((w) => w.length === 0) &&
    unplaced.every((u) => u.length === 0) &&
    passes.every((p) => p.view.completed || p.view.byGroup.every((g) => g.length === 0));
  const taints = ctx.input.nodes
    ? taintChanges(ctx, new Map(passes.map((p) => [p.view.name, p.view.index])), complete)
    : [];
  let plan: Plan | undefined;
  return {
    spec,
    releases,
    taints,
    plan: () => {
      plan ??= nodeReport(ctx, { totals, passes, releases, taints, inFlight, waitingUnplaced });
      return plan;
    },
  };
}

/** The names of a node's pods another group or sequence also claims. */
function conflictedOn(here: NodePlacement, conflicts: ReadonlyMap<string, string>): string {
  const names: string[] = [];
  for (const list of here.byGroup)
    for (const p of list) if (conflicts.has(podName(p))) names.push(podName(p));
  return names.join(',');
}

interface NodeInput {
  name: string;
  byGroup: readonly (readonly Pod[])[];
  index: number;
  heading: boolean;
  inbound: Inbound;
  /** The node's timeline, when the spec has waits or timeouts. */
  clock?: Timeline;
}

/** One node's part of a node-scoped pass. */
function passForNode(
  ctx: Ctx,
  conflicts: ReadonlyMap<string, string>,
  prev: NodeSequenceStatus | undefined,
  node: NodeInput,
): Pick<NodePass, 'view' | 'releases' | 'failed' | 'escapes' | 'status'> {
  const { spec, n } = ctx;
  const { name, byGroup, index } = node;
  const all = byGroup.flat();
  const completed = all.length > 0 && all.every(isDone) && !node.heading;
  const view: NodeView = { name, index, completed, phase: 'InProgress', byGroup };
  const releases: Release[] = [];
  for (let k = 0; k <= Math.min(index, n - 1); k++) {
    for (const pod of byGroup[k]!)
      if (releasable(ctx, conflicts, pod)) releases.push(releaseFor(ctx, pod, k, { node: name }));
  }
  const released = new Set(releases.map((r) => r.name));
  const failed: NodePass['failed'] = [];
  for (let k = 0; k <= Math.min(index, n - 1); k++) {
    for (const pod of byGroup[k]!) if (isFailed(pod)) failed.push({ pod, group: k, node: name });
  }
  const escapes: NodePass['escapes'] = [];
  for (let k = index + 1; k < n; k++)
    for (const pod of byGroup[k]!) if (escaped(ctx, pod)) escapes.push({ pod, group: k });
  const anyReleased = all.some((p) => !hasGate(p, spec.gate) || released.has(podName(p)));
  if (failed.length > 0) view.phase = 'Failed';
  else if (completed) view.phase = 'Completed';
  else if (!anyReleased) view.phase = 'Pending';
  else view.phase = 'InProgress';
  if (!completed && index < n) view.waiting = nodeWaiting(ctx, view, node.inbound, released);
  const wait = node.clock?.waiting;
  if (!completed && wait && wait.group > 0 && wait.group === index + 1 && index < n) {
    // Group `index` is Ready here; its waitDuration holds the next group on this node.
    const before = spec.groups[index]!;
    view.wait = wait;
    view.waiting = `group ${groupLabel(spec.groups[wait.group]!, n)}: released on this node at ${rfc3339(new Date(wait.untilMs))}, ${formatGoDuration(before.waitMs)} (waitDuration of ${groupLabel(before, n)}) after ${before.name} became Ready here`;
  }
  return { view, releases, failed, escapes, status: nodeStatus(ctx, view, prev) };
}
