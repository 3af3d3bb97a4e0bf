/** Cluster scope: a gated pod of group k is released once groups 0..k-1 are satisfied cluster-wide. */

import type { Phase } from '../../apis/scheduling.example.com/v1alpha1.ts';
import { rfc3339 } from '../../kube/conditions.ts';
import { formatGoDuration } from '../../kube/duration.ts';
import { conflictFailure, escapedFailure, missingCheck, releaseFor, taintChanges } from './checks.ts';
import { withEvents } from './events.ts';
import { groupFacts } from './group-facts.ts';
import type { Membership } from './membership.ts';
import type { Pod } from './objects.ts';
import { type Ctx, capped, type Failure, listNames, type Plan, podName, type Release } from './plan.ts';
import { groupLabel } from './spec.ts';
import { baseStatus, conditions, waitingMessage } from './status.ts';
import { sooner, timeline } from './timeline.ts';

export function decideCluster(ctx: Ctx, m: Membership): Plan {
  const { spec, n } = ctx;
  const facts = m.groups.map((g) => groupFacts(ctx, g));
  const satisfied = m.groups.map(
    (g, k) => g.missing.length === 0 && g.members.length > 0 && facts[k]!.done === g.members.length,
  );
  let current = satisfied.indexOf(false);
  if (current < 0) current = n;
  // Which groups may be released now: waitDuration holds the next group back for a while
  // after a group is Ready; a timeout with policy Continue lets it go anyway.
  const tl = timeline(ctx, m.groups, satisfied);
  const released = Math.min(tl.limit, n - 1);

  const releases: Release[] = [];
  for (let k = 0; k <= released; k++) {
    for (const pod of facts[k]!.gated)
      if (!m.conflicts.has(podName(pod))) releases.push(releaseFor(ctx, pod, k));
  }
  ctx.released = new Set(releases.map((r) => r.name));

  const failures: Failure[] = [];
  const failedPods: { pod: Pod; group: number }[] = [];
  for (let k = 0; k <= Math.min(current, n - 1); k++) {
    for (const pod of facts[k]!.failed) failedPods.push({ pod, group: k });
  }
  if (failedPods.length > 0) {
    const names = failedPods.map(
      ({ pod, group }) => `${podName(pod)} (group ${groupLabel(spec.groups[group]!, n)})`,
    );
    failures.push({
      reason: 'PodFailed',
      message: `Pod ${listNames(names, 3)} failed; later groups cannot start until it is replaced`,
    });
  }
  const escapes: { pod: Pod; group: number }[] = [];
  for (let k = Math.max(current, released) + 1; k < n; k++)
    for (const pod of facts[k]!.escaped) escapes.push({ pod, group: k });
  const esc = escapedFailure(ctx, escapes);
  if (esc) failures.push(esc);
  const conflict = conflictFailure(m.conflicts);
  if (conflict) failures.push(conflict);
  const missing = missingCheck(
    ctx,
    m.groups.map((g) => g.missing),
    current,
  );
  if (missing.failure) failures.push(missing.failure);
  if (tl.failed) {
    failures.push({
      reason: 'GroupTimeout',
      message: `Group ${groupLabel(spec.groups[tl.failed.group]!, n)} was not Ready within its timeout of ${formatGoDuration(tl.failed.timeoutMs)}`,
    });
  }

  const completed = current === n;
  const anyoneReleased = releases.length > 0 || facts.some((f) => f.ungated);
  let phase: Phase;
  if (failures.length > 0) phase = 'Failed';
  else if (completed) phase = 'Completed';
  else if (!anyoneReleased) phase = 'Pending';
  else phase = 'InProgress';

  const totalPods = m.groups.reduce((s, g) => s + g.members.length, 0);
  let message: string;
  let currentPods: string[] = [];
  let readyCount = 0;
  let readyText: string | undefined;
  if (completed) {
    message = `All ${n} groups are Ready (${totalPods} pods)`;
  } else {
    const g = m.groups[current]!;
    const label = groupLabel(spec.groups[current]!, n);
    const names = [...g.members.map(podName), ...g.missing];
    currentPods = names;
    readyCount = facts[current]!.done;
    readyText = `${readyCount}/${names.length}`;
    message = waitingMessage(ctx, current, g.members, g.missing, label);
    if (tl.waiting && tl.waiting.group > 0) {
      // Upstream's words while it waits (internal/controller/podsequence_controller.go).
      const prevGroup = spec.groups[tl.waiting.group - 1]!;
      message = `All pods in ${prevGroup.name} ready, waiting ${formatGoDuration(prevGroup.waitMs)} before next group (${label} is released at ${rfc3339(new Date(tl.waiting.untilMs))})`;
    }
  }
  if (failures.length > 0) message = `${failures.map((f) => f.message).join('; ')}. ${message}`;

  const status = baseStatus(ctx, {
    phase,
    currentIndex: current,
    message,
    groupName: completed ? spec.groups[n - 1]?.name : spec.groups[current]!.name,
    ready: completed
      ? `${m.groups[n - 1]?.members.length ?? 0}/${m.groups[n - 1]?.members.length ?? 0}`
      : readyText,
  });
  const max = ctx.input.options.maxListedPods;
  status.currentGroupPods = capped(currentPods, max);
  status.readyPodsInCurrentGroup = readyCount;
  const processed: string[] = [];
  for (let k = 0; k < current && processed.length < max; k++)
    processed.push(...m.groups[k]!.members.map(podName));
  status.processedPods = capped(processed, max);
  status.conditions = conditions(ctx, { valid: true, missing: missing.missing, completed, phase, message });
  if (tl.waiting && !completed) status.waitingUntil = rfc3339(new Date(tl.waiting.untilMs));
  if (tl.timedOut.length > 0) status.timedOutGroups = tl.timedOut.map((k) => spec.groups[k]!.name);
  const clockMs = tl.nextMs !== undefined ? Math.max(tl.nextMs - ctx.input.now.getTime(), 1) : undefined;
  const requeueAfterMs = sooner(missing.requeueAfterMs, clockMs);

  return withEvents(ctx, {
    spec,
    currentIndex: current,
    releases,
    taints: ctx.input.nodes ? taintChanges(ctx, new Map(), true) : [],
    status,
    failures,
    nodes: [],
    unplaced: [],
    requeueAfterMs,
  });
}
