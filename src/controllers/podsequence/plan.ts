/**
 * The PodSequence decision's vocabulary: its input, the plan it answers with, the context
 * one pass carries through its pieces, and how messages name pods.
 */

import type { Phase, PodSequence, PodSequenceStatus } from '../../apis/scheduling.example.com/v1alpha1.ts';
import type { DecisionMemo } from './decision-memo.ts';
import type { MembershipTracker, OtherSequence } from './membership.ts';
import type { Node, Pod, Taint } from './objects.ts';
import type { ResolvedOptions } from './options.ts';
import { describePod, isDone } from './pods.ts';
import type { ResolvedSpec } from './spec.ts';

export interface CoreInput {
  seq: PodSequence;
  /** `seq`'s spec resolved, when the caller has it already (else decide resolves it). */
  spec?: ResolvedSpec;
  /** Pods of the sequence's namespace (others are ignored). */
  pods: Pod[];
  /**
   * The membership of `pods`, when the caller keeps it current pod event by pod event:
   * the decision then skips re-deriving it, and `pods` is not read.
   */
  tracker?: MembershipTracker;
  /** Full mode: every node, for taints. */
  nodes?: Node[];
  /** Other sequences, to refuse pods two sequences would release through one gate. */
  others?: OtherSequence[];
  now: Date;
  options: ResolvedOptions;
  /** Set when the pods could not be read (a namespace outside the controller's scope). */
  readError?: string;
  /** Per-node results kept between node-scoped passes of this sequence (see DecisionMemo). */
  memo?: DecisionMemo;
}

export interface Release {
  name: string;
  group: number;
  /** The pod's resourceVersion the release was decided on (the patch's precondition). */
  fromResourceVersion: string | undefined;
  /** Node scope: the node the pod runs on or is pinned to. */
  node?: string;
  /** Node scope: nodes the pod's affinity was narrowed to. */
  narrowTo?: string[];
  patch: Record<string, unknown>;
}

export interface TaintChange {
  node: string;
  /** This sequence's taints the node should carry (others' are left alone). */
  desired: Taint[];
}

export interface CoreEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  action: string;
  note: string;
}

export interface NodeView {
  name: string;
  /** First group not satisfied on the node. */
  index: number;
  /** Every member pod on the node is done. */
  completed: boolean;
  phase: Phase;
  /** Members per group, on the node (placed or pinned). */
  byGroup: readonly (readonly Pod[])[];
  /** Why the node waits, when it does. */
  waiting?: string;
  /** Node scope: the group the previous group's waitDuration holds on this node, and until when. */
  wait?: { group: number; untilMs: number };
}

export interface Failure {
  reason: 'InvalidSpec' | 'PodNotFound' | 'PodFailed' | 'PodNotGated' | 'Conflict' | 'GroupTimeout';
  message: string;
}

export interface Plan {
  spec: ResolvedSpec;
  /** Group index of the first group not satisfied (cluster-wide, or the least across nodes). */
  currentIndex: number;
  releases: Release[];
  taints: TaintChange[];
  status: PodSequenceStatus;
  /**
   * Every event of this plan, `releaseEvents` then `statusEvents`, joined when read (by
   * tests and tools: the controller records the two at different moments).
   */
  readonly events: CoreEvent[];
  /** The releases this plan sends, by group: recorded when they are sent. */
  releaseEvents: CoreEvent[];
  /**
   * Transitions from the previous status to `status` (group Ready, Completed, failures):
   * recorded when that status is written, so a status write put off (to space them out)
   * puts these off too rather than repeating them.
   */
  statusEvents: CoreEvent[];
  failures: Failure[];
  nodes: NodeView[];
  /** Pods of each group waiting for a node (node scope, node not known before release). */
  unplaced: Pod[][];
  requeueAfterMs?: number;
}

export const LIST_IN_MESSAGE = 5;

export function podName(p: Pod): string {
  return p.metadata.name ?? '';
}

export function listNames(names: readonly string[], max = LIST_IN_MESSAGE): string {
  if (names.length <= max) return names.join(', ');
  return `${names.slice(0, max).join(', ')} and ${names.length - max} more`;
}

export function capped<T>(list: T[], max: number): T[] {
  return list.length > max ? list.slice(0, max) : list;
}

export function notDoneDetail(
  ctx: Ctx,
  pods: readonly Pod[],
  released: ReadonlySet<string> = ctx.released,
): string {
  const bad = pods.filter((p) => !isDone(p));
  const shown = bad
    .slice(0, LIST_IN_MESSAGE)
    .map((p) => `${podName(p)} ${describePod(p, ctx.spec.gate, released.has(podName(p)))}`);
  const more = bad.length > LIST_IN_MESSAGE ? ` and ${bad.length - LIST_IN_MESSAGE} more` : '';
  return `${shown.join('; ')}${more}`;
}

export interface Ctx {
  input: CoreInput;
  seq: PodSequence;
  spec: ResolvedSpec;
  n: number;
  key: string;
  prev: PodSequenceStatus;
  hostnames?: Map<string, string>;
  /** Pods this plan releases: status messages describe them as released. */
  released: Set<string>;
}

/**
 * A decision in two steps: what to do (release pods, set taints), then the report (status,
 * events), which the shell derives once the API server has answered the release patches,
 * so that the report never stands between a Ready pod and the next release.
 */
export interface Decision {
  spec: ResolvedSpec;
  releases: Release[];
  taints: TaintChange[];
  /** The whole plan, from the same observation; derived on the first call. */
  plan(): Plan;
}

/** The parts of a plan its events are derived from. */
export type PlanFacts = Omit<Plan, 'events' | 'releaseEvents' | 'statusEvents'>;
