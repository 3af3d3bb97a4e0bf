/** The node-scope report: the sequence's status and events, from every node's part of a pass. */

import type { Phase } from '../../apis/scheduling.example.com/v1alpha1.ts';
import { rfc3339 } from '../../kube/conditions.ts';
import { formatGoDuration } from '../../kube/duration.ts';
import { conflictFailure, escapedFailure, missingCheck } from './checks.ts';
import type { NodePass } from './decision-memo.ts';
import { withEvents } from './events.ts';
import type { GroupTotals } from './membership.ts';
import type { Pod } from './objects.ts';
import {
  type Ctx,
  capped,
  type Failure,
  listNames,
  type Plan,
  podName,
  type Release,
  type TaintChange,
} from './plan.ts';
import { groupLabel } from './spec.ts';
import { baseStatus, conditions } from './status.ts';

export interface NodeFacts {
  totals: GroupTotals;
  /** Every node's part, by node name. */
  passes: readonly NodePass[];
  releases: Release[];
  taints: TaintChange[];
  inFlight: { group: number }[];
  waitingUnplaced: Pod[][];
}

/** The node-scope status and events, from every node's part of the pass. */
export function nodeReport(ctx: Ctx, f: NodeFacts): Plan {
  const { spec, n } = ctx;
  const { passes, releases, totals } = f;
  const failures: Failure[] = [];
  const failedPods: NodePass['failed'] = [];
  const escapes: NodePass['escapes'] = [];
  for (const p of passes) {
    if (p.failed.length > 0) failedPods.push(...p.failed);
    if (p.escapes.length > 0) escapes.push(...p.escapes);
  }
  if (failedPods.length > 0) {
    const names = failedPods.map(
      ({ pod, group, node }) => `${podName(pod)} (group ${groupLabel(spec.groups[group]!, n)}, node ${node})`,
    );
    failures.push({
      reason: 'PodFailed',
      message: `Pod ${listNames(names, 3)} failed; later groups on its node cannot start until it is replaced`,
    });
  }
  const esc = escapedFailure(ctx, escapes);
  if (esc) failures.push(esc);
  const conflict = conflictFailure(totals.conflicts);
  if (conflict) failures.push(conflict);
  // Each node's timeline: a timeout with policy Fail fails the sequence; Continue is
  // recorded (timedOutGroups, GroupTimeout event); the earliest wait shows as waitingUntil,
  // and the earliest clock change requeues the sequence.
  const timedOut = new Set<number>();
  const timeoutFailed = new Map<number, string[]>();
  let waitingUntil: number | undefined;
  let nextMs: number | undefined;
  for (const p of passes) {
    const c = p.clock;
    if (!c) continue;
    for (const k of c.timedOut) timedOut.add(k);
    if (p.view.completed) continue;
    if (c.failed) {
      const list = timeoutFailed.get(c.failed.group);
      if (list) list.push(p.view.name);
      else timeoutFailed.set(c.failed.group, [p.view.name]);
    }
    if (c.waiting && c.waiting.group > 0 && (waitingUntil === undefined || c.waiting.untilMs < waitingUntil))
      waitingUntil = c.waiting.untilMs;
    if (c.nextMs !== undefined && (nextMs === undefined || c.nextMs < nextMs)) nextMs = c.nextMs;
  }
  for (const [k, nodes] of [...timeoutFailed].sort((a, b) => a[0] - b[0])) {
    failures.push({
      reason: 'GroupTimeout',
      message: `Group ${groupLabel(spec.groups[k]!, n)} was not Ready within its timeout of ${formatGoDuration(spec.groups[k]!.timeoutMs ?? 0)} on node${nodes.length === 1 ? '' : 's'} ${listNames(nodes.sort(), 3)}`,
    });
  }

  const members = passes.filter((p) => p.view.byGroup.some((g) => g.length > 0));
  let current = n;
  for (const p of members) current = Math.min(current, p.view.completed ? n : p.view.index);
  f.waitingUnplaced.forEach((pods, k) => {
    if (pods.length > 0) current = Math.min(current, k);
  });
  for (const { group } of f.inFlight) current = Math.min(current, group);
  const totalMembers = totals.members;
  if (totalMembers === 0) current = 0;
  const missing = missingCheck(ctx, totals.missing, current);
  if (missing.failure) failures.push(missing.failure);

  const completed = totalMembers > 0 && current === n && members.every((p) => p.view.completed);
  const anyoneReleased = releases.length > 0 || totals.anyUngated;
  let phase: Phase;
  if (failures.length > 0) phase = 'Failed';
  else if (completed) phase = 'Completed';
  else if (!anyoneReleased) phase = 'Pending';
  else phase = 'InProgress';

  const doneNodes = members.filter((p) => p.view.completed).length;
  let message: string;
  if (completed) {
    message = `All ${n} groups are Ready on ${members.length} node${members.length === 1 ? '' : 's'} (${totalMembers} pods)`;
  } else if (totalMembers === 0) {
    const g = spec.groups[0]!;
    message = g.pods
      ? `Waiting for group ${groupLabel(g, n)}: ${listNames(g.pods)} not found in namespace ${spec.namespace}`
      : `Waiting for group ${groupLabel(g, n)}: no pod in namespace ${spec.namespace} matches ${g.selectorText ?? ''}`;
  } else {
    const parts: string[] = [`${doneNodes}/${members.length} nodes completed`];
    const waiting = members.filter((p) => !p.view.completed && p.view.waiting);
    for (const p of waiting.slice(0, 3)) parts.push(`node ${p.view.name} waits for ${p.view.waiting}`);
    if (waiting.length > 3) parts.push(`${waiting.length - 3} more nodes waiting`);
    for (let k = 0; k < n; k++) {
      const pods = f.waitingUnplaced[k]!;
      if (pods.length > 0) {
        parts.push(
          `${listNames(pods.map(podName))} of group ${groupLabel(spec.groups[k]!, n)} wait for a node where every earlier group is Ready and the group's per-node share has room`,
        );
      }
    }
    if (missing.missing.length > 0)
      parts.push(`${listNames(missing.missing)} not found in namespace ${spec.namespace}`);
    message = parts.join('; ');
  }
  if (failures.length > 0) message = `${failures.map((x) => x.message).join('; ')}. ${message}`;

  const status = baseStatus(ctx, {
    phase,
    currentIndex: current,
    message,
    groupName: spec.groups[Math.min(current, n - 1)]?.name,
    ready: `${doneNodes}/${members.length} nodes`,
  });
  status.nodeStatus = members.map((p) => p.status);
  const max = ctx.input.options.maxListedPods;
  const processed: string[] = [];
  for (const { view: v } of members) {
    const upTo = v.completed ? n : v.index;
    for (let k = 0; k < upTo && processed.length < max; k++) processed.push(...v.byGroup[k]!.map(podName));
    if (processed.length >= max) break;
  }
  status.processedPods = capped(processed.sort(), max);
  status.conditions = conditions(ctx, { valid: true, missing: missing.missing, completed, phase, message });
  if (waitingUntil !== undefined && !completed) status.waitingUntil = rfc3339(new Date(waitingUntil));
  if (timedOut.size > 0)
    status.timedOutGroups = [...timedOut].sort((a, b) => a - b).map((k) => spec.groups[k]!.name);
  const clockMs = nextMs !== undefined ? Math.max(nextMs - ctx.input.now.getTime(), 1) : undefined;
  const requeueAfterMs =
    missing.requeueAfterMs === undefined
      ? clockMs
      : clockMs === undefined
        ? missing.requeueAfterMs
        : Math.min(missing.requeueAfterMs, clockMs);

  // Nodes whose turn moved on since the written status, by the group they finished. A
  // group with no pod on a node is not reported Ready there: nothing of it ran.
  const advanced = new Map<number, string[]>();
  for (const p of members) {
    const was = p.prev?.currentIndex;
    if (was === undefined || p.status === p.prev) continue;
    for (let k = was; k < p.status.currentIndex && k < n; k++) {
      if (p.view.byGroup[k]!.length === 0) continue;
      const list = advanced.get(k);
      if (list) list.push(p.view.name);
      else advanced.set(k, [p.view.name]);
    }
  }
  return withEvents(
    ctx,
    {
      spec,
      currentIndex: current,
      releases,
      taints: f.taints,
      status,
      failures,
      nodes: passes.map((p) => p.view),
      unplaced: f.waitingUnplaced,
      requeueAfterMs,
    },
    advanced,
  );
}
