/**
 * `troupe explain podseq/<name>` and `troupe explain pod/<name>`: why pods are still gated,
 * in plain text, from the same decision the controller makes. Pure.
 */

import type { PodSequence } from '../../apis/scheduling.example.com/v1alpha1.ts';
import { formatGoDuration } from '../../kube/duration.ts';
import { objectKey } from '../../kube/keys.ts';
import { realClock } from '../../lib/clock.ts';
import { type CoreInput, decide, type Plan } from './core.ts';
import { type Membership, trackerOf } from './membership.ts';
import type { Node, Pod } from './objects.ts';
import { type PodSequenceOptions, resolveOptions } from './options.ts';
import { describePod, hasGate, isDone, podNode } from './pods.ts';
import { releasedBy } from './release.ts';
import { groupLabel, groupSelects, resolveSpec } from './spec.ts';

const MAX_PODS_PER_GROUP = 20;

export interface ExplainInput {
  seq: PodSequence;
  pods: Pod[];
  nodes?: Node[];
  /** Every sequence (for conflicts); `seq` may be among them. */
  sequences?: PodSequence[];
  options?: PodSequenceOptions;
  now?: Date;
}

/** The plan, and the membership it was made on (undefined for an invalid sequence). */
function planFor(input: ExplainInput): { plan: Plan; membership?: Membership } {
  const options = resolveOptions(input.options);
  const key = objectKey(input.seq);
  const others = (input.sequences ?? [])
    .filter((s) => objectKey(s) !== key)
    .map((s) => ({
      key: objectKey(s),
      spec: resolveSpec(s, options.defaultGateName),
    }));
  const spec = resolveSpec(input.seq, options.defaultGateName);
  const tracker = spec.errors.length === 0 ? trackerOf(spec, input.pods, others) : undefined;
  const core: CoreInput = {
    seq: input.seq,
    spec,
    pods: input.pods,
    tracker,
    nodes: input.nodes,
    others,
    now: input.now ?? new Date(realClock.now()),
    options,
  };
  return { plan: decide(core), membership: tracker?.membership() };
}

/** A report of the whole sequence: every group, its pods and what holds them. */
export function explainSequence(input: ExplainInput): string {
  const { plan, membership: m } = planFor(input);
  const { spec } = plan;
  const n = spec.groups.length;
  const seq = input.seq;
  const lines: string[] = [];
  lines.push(
    `PodSequence ${seq.metadata.namespace}/${seq.metadata.name}: ${plan.status.phase}, scope ${spec.scope}, gate ${spec.gate}, pods in namespace ${spec.namespace}`,
  );
  lines.push(`  ${plan.status.message}`);
  if (spec.errors.length > 0 || !m) return lines.join('\n');
  for (const g of spec.groups) {
    const gm = m.groups[g.index]!;
    const state =
      spec.scope === 'Cluster'
        ? g.index < plan.currentIndex
          ? 'Ready'
          : g.index === plan.currentIndex
            ? 'current'
            : 'waiting'
        : '';
    const how = g.pods ? `pods ${g.pods.length}` : `selector ${g.selectorText}`;
    const timing = [
      g.waitMs > 0 ? `then waits ${formatGoDuration(g.waitMs)}` : '',
      g.timeoutMs !== undefined ? `timeout ${formatGoDuration(g.timeoutMs)} (${g.timeoutPolicy})` : '',
      plan.status.timedOutGroups?.includes(g.name) ? 'timed out' : '',
    ]
      .filter(Boolean)
      .join(', ');
    lines.push(
      `Group ${groupLabel(g, n)}${state ? ` [${state}]` : ''}, ${how}${timing ? `, ${timing}` : ''}:`,
    );
    if (gm.members.length === 0 && gm.missing.length === 0) lines.push('  (no pods)');
    for (const pod of gm.members.slice(0, MAX_PODS_PER_GROUP)) {
      const where = spec.scope === 'Node' ? ` on ${podNode(pod) ?? '(no node yet)'}` : '';
      const conflict = m.conflicts.get(pod.metadata.name ?? '');
      lines.push(
        `  ${pod.metadata.name}${where}: ${describePod(pod, spec.gate)}${conflict ? ` — not released: ${conflict}` : ''}`,
      );
    }
    if (gm.members.length > MAX_PODS_PER_GROUP)
      lines.push(`  ... and ${gm.members.length - MAX_PODS_PER_GROUP} more`);
    for (const name of gm.missing) lines.push(`  ${name}: not found in namespace ${spec.namespace}`);
    for (const pod of gm.ignoredFailed)
      lines.push(`  ${pod.metadata.name}: Failed (left out: other pods match)`);
  }
  if (spec.scope === 'Node') {
    for (const v of plan.nodes) {
      if (!v.byGroup.some((g) => g.length > 0)) continue;
      lines.push(`Node ${v.name}: ${v.phase}${v.waiting ? `, waiting for ${v.waiting}` : ''}`);
    }
  }
  return lines.join('\n');
}

/** Why one pod is (or is no longer) gated, for every sequence that selects it. */
export function explainPod(
  pod: Pod,
  input: { sequences: PodSequence[]; pods: Pod[]; nodes?: Node[]; options?: PodSequenceOptions; now?: Date },
): string {
  const options = resolveOptions(input.options);
  const name = pod.metadata.name ?? '';
  const ns = pod.metadata.namespace ?? 'default';
  const lines: string[] = [];
  const gates = (pod.spec?.schedulingGates ?? []).map((g) => g.name);
  lines.push(
    `Pod ${ns}/${name}: ${gates.length > 0 ? `gated by ${gates.join(', ')}` : 'not gated'}${isDone(pod) ? ', done' : ''}`,
  );
  let found = false;
  for (const seq of input.sequences) {
    const spec = resolveSpec(seq, options.defaultGateName);
    if (spec.namespace !== ns) continue;
    const groups = spec.groups.filter((g) => groupSelects(g, name, pod.metadata.labels));
    if (groups.length === 0) continue;
    found = true;
    const { plan, membership } = planFor({
      seq,
      pods: input.pods,
      nodes: input.nodes,
      sequences: input.sequences,
      options: input.options,
      now: input.now,
    });
    const n = spec.groups.length;
    const k = groups[0]!.index;
    const head = `PodSequence ${seq.metadata.namespace}/${seq.metadata.name} (${plan.status.phase}), group ${groupLabel(groups[0]!, n)}`;
    if (spec.errors.length > 0) {
      lines.push(`${head}: the sequence is invalid, nothing is released: ${spec.errors.join('; ')}`);
      continue;
    }
    const conflict = membership?.conflicts.get(name);
    if (conflict) {
      lines.push(`${head}: not released: ${conflict}`);
      continue;
    }
    if (!hasGate(pod, spec.gate)) {
      const by = releasedBy(pod);
      lines.push(
        `${head}: released${by ? ` by ${by}` : ' (it does not carry the gate)'}; ${describePod(pod, spec.gate)}`,
      );
      continue;
    }
    if (plan.releases.some((r) => r.name === name)) {
      lines.push(`${head}: releasable now (the controller removes its gate on its next pass)`);
      continue;
    }
    lines.push(`${head}: gated by ${spec.gate}, waiting:`);
    const until = plan.status.waitingUntil;
    if (spec.scope === 'Cluster' && until && plan.currentIndex > 0) {
      const before = spec.groups[plan.currentIndex - 1]!;
      lines.push(
        `  group ${groupLabel(before, n)} is Ready; its waitDuration ${formatGoDuration(before.waitMs)} holds group ${groupLabel(spec.groups[plan.currentIndex]!, n)} until ${until}`,
      );
    } else if (spec.scope === 'Cluster') {
      const wait = membership?.groups[plan.currentIndex];
      if (wait) {
        const label = groupLabel(spec.groups[plan.currentIndex]!, n);
        const notDone = wait.members
          .filter((p) => !isDone(p))
          .map((p) => `${p.metadata.name} ${describePod(p, spec.gate)}`);
        lines.push(
          `  group ${label} must be Ready first${notDone.length > 0 ? `: ${notDone.slice(0, 10).join('; ')}` : ''}`,
        );
        for (const missing of wait.missing) lines.push(`  ${missing} of group ${label} does not exist`);
        if (wait.members.length === 0 && wait.missing.length === 0)
          lines.push(`  group ${label} has no pods yet`);
      }
    } else {
      const node = podNode(pod);
      const view = node ? plan.nodes.find((v) => v.name === node) : undefined;
      if (view)
        lines.push(`  on node ${node}: ${view.waiting ?? `group ${view.index + 1} is not Ready yet`}`);
      else if (k > 0) {
        lines.push(
          `  no node has every group before ${groupLabel(groups[0]!, n)} Ready yet; it will be released to the first such node`,
        );
      }
    }
  }
  if (!found) lines.push('No PodSequence selects this pod.');
  return lines.join('\n');
}
