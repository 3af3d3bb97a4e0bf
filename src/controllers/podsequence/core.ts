/**
 * The PodSequence decision: observed sequence, pods (and, in full mode, nodes) in; the
 * pods to release, the node taints to set, the status to write and the events to record
 * out. Pure: no I/O, the clock is an input.
 *
 * The rule, in both scopes: a group is *satisfied* when it has at least one pod, no named
 * pod is missing, and every pod is done (Ready, or Succeeded for run-to-completion pods).
 * A gated pod of group k is released only while groups 0..k-1 are all satisfied, judged
 * on the whole cluster (Cluster scope) or on the pod's node (Node scope). The decision is
 * made from what is observed now, never from remembered progress, so it holds across
 * restarts and edits; released pods stay released (gates cannot be put back).
 *
 * This file is the entry; the parts live beside it: plan.ts (the input, the plan and the
 * pass's context), cluster-scope.ts, node-scope.ts with node-report.ts, status.ts,
 * events.ts, checks.ts (what both scopes judge pods with), and the memos, kept apart from
 * the decision: group-facts.ts and decision-memo.ts.
 */

import { objectKey } from '../../kube/keys.ts';
import { taintChanges } from './checks.ts';
import { decideCluster } from './cluster-scope.ts';
import { withEvents } from './events.ts';
import { trackerOf } from './membership.ts';
import { decideNode } from './node-scope.ts';
import type { CoreInput, Ctx, Decision, Failure, Plan } from './plan.ts';
import { DURATION_ERROR, resolveSpec } from './spec.ts';
import { baseStatus, conditions } from './status.ts';

export { DecisionMemo } from './decision-memo.ts';
export { releaseEvents } from './events.ts';
export type {
  CoreEvent,
  CoreInput,
  Decision,
  Failure,
  NodeView,
  Plan,
  Release,
  TaintChange,
} from './plan.ts';

export function decideReleases(input: CoreInput): Decision {
  const seq = input.seq;
  const spec = input.spec ?? resolveSpec(seq, input.options.defaultGateName);
  const ctx: Ctx = {
    input,
    seq,
    spec,
    n: spec.groups.length,
    key: objectKey(seq),
    prev: seq.status ?? {},
    released: new Set(),
  };
  const invalid = [...spec.errors];
  if (input.readError) invalid.push(input.readError);
  if (invalid.length > 0) return decided(invalidPlan(ctx, invalid));
  const tracker = input.tracker ?? trackerOf(spec, input.pods, input.others);
  return spec.scope === 'Node' ? decideNode(ctx, tracker) : decided(decideCluster(ctx, tracker.membership()));
}

/** The whole decision at once. */
export function decide(input: CoreInput): Plan {
  return decideReleases(input).plan();
}

function decided(plan: Plan): Decision {
  return { spec: plan.spec, releases: plan.releases, taints: plan.taints, plan: () => plan };
}

function invalidPlan(ctx: Ctx, errors: string[]): Plan {
  // A lone malformed duration reads as upstream writes it (podsequence_controller.go:
  // "Invalid wait duration in <group>: <ParseDuration's error>"), not under a second prefix.
  const message =
    errors.length === 1 && DURATION_ERROR.test(errors[0]!)
      ? errors[0]!
      : `Invalid PodSequence: ${errors.join('; ')}`;
  const failures: Failure[] = [{ reason: 'InvalidSpec', message }];
  const status = baseStatus(ctx, {
    phase: 'Failed',
    currentIndex: 0,
    message,
    groupName: ctx.spec.groups[0]?.name,
    ready: undefined,
  });
  status.conditions = conditions(ctx, {
    valid: false,
    validMessage: errors.join('; '),
    missing: [],
    completed: false,
    phase: 'Failed',
    message,
  });
  return withEvents(ctx, {
    spec: ctx.spec,
    currentIndex: 0,
    releases: [],
    // A broken spec cannot say which nodes may admit which group: lift the taints it set.
    taints: ctx.input.nodes ? taintChanges(ctx, new Map(), true) : [],
    status,
    failures,
    nodes: [],
    unplaced: [],
  });
}
