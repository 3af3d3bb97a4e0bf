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
 */

import { type Condition, withCondition } from '../../kube/conditions.ts';
import {
  type GroupMembers,
  type GroupTotals,
  type Membership,
  type MembershipTracker,
  type NodePlacement,
  type OtherSequence,
  type Placement,
  trackerOf,
} from './membership.ts';
import type { ResolvedOptions } from './options.ts';
import { candidateNodes, describePod, hasGate, isDone, isFailed, isTerminating } from './pods.ts';
import { releasedBy, releasePatch } from './release.ts';
import { groupLabel, type ResolvedSpec, resolveSpec } from './spec.ts';
import { desiredTaints, reconcileTaints, tolerationsFor } from './taints.ts';
import type { Node, NodeSequenceStatus, Phase, Pod, PodSequence, PodSequenceStatus, Taint } from './types.ts';

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
}

export interface Failure {
  reason: 'InvalidSpec' | 'PodNotFound' | 'PodFailed' | 'PodNotGated' | 'Conflict';
  message: string;
}

export interface Plan {
  spec: ResolvedSpec;
  /** Group index of the first group not satisfied (cluster-wide, or the least across nodes). */
  currentIndex: number;
  releases: Release[];
  taints: TaintChange[];
  status: PodSequenceStatus;
  /** Every event of this plan: `releaseEvents` then `statusEvents`. */
  events: CoreEvent[];
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

const LIST_IN_MESSAGE = 5;

function podName(p: Pod): string {
  return p.metadata.name ?? '';
}

function listNames(names: readonly string[], max = LIST_IN_MESSAGE): string {
  if (names.length <= max) return names.join(', ');
  return `${names.slice(0, max).join(', ')} and ${names.length - max} more`;
}

function capped<T>(list: T[], max: number): T[] {
  return list.length > max ? list.slice(0, max) : list;
}

function notDoneDetail(ctx: Ctx, pods: readonly Pod[], released: ReadonlySet<string> = ctx.released): string {
  const bad = pods.filter((p) => !isDone(p));
  const shown = bad
    .slice(0, LIST_IN_MESSAGE)
    .map((p) => `${podName(p)} ${describePod(p, ctx.spec.gate, released.has(podName(p)))}`);
  const more = bad.length > LIST_IN_MESSAGE ? ` and ${bad.length - LIST_IN_MESSAGE} more` : '';
  return `${shown.join('; ')}${more}`;
}

interface Ctx {
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

export function decideReleases(input: CoreInput): Decision {
  const seq = input.seq;
  const spec = input.spec ?? resolveSpec(seq, input.options.defaultGateName);
  const ctx: Ctx = {
    input,
    seq,
    spec,
    n: spec.groups.length,
    key: `${seq.metadata.namespace ?? ''}/${seq.metadata.name ?? ''}`,
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

// ---- shared pieces ------------------------------------------------------------

function invalidPlan(ctx: Ctx, errors: string[]): Plan {
  const message = `Invalid PodSequence: ${errors.join('; ')}`;
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

/** The parts of a plan its events are derived from. */
type PlanFacts = Omit<Plan, 'events' | 'releaseEvents' | 'statusEvents'>;

/** The plan with its events: the releases it sends, and the transitions its status reports. */
function withEvents(ctx: Ctx, facts: PlanFacts, nodesAdvanced?: ReadonlyMap<number, string[]>): Plan {
  const released = releaseEvents(ctx.spec, facts.releases);
  const transitions = transitionEvents(ctx, facts, nodesAdvanced);
  return {
    ...facts,
    releaseEvents: released,
    statusEvents: transitions,
    events: [...released, ...transitions],
  };
}

interface StatusBase {
  phase: Phase;
  currentIndex: number;
  message: string;
  groupName: string | undefined;
  ready: string | undefined;
}

function baseStatus(ctx: Ctx, b: StatusBase): PodSequenceStatus {
  const n = ctx.n;
  const status: PodSequenceStatus = {
    phase: b.phase,
    currentIndex: b.currentIndex,
    message: b.message,
    observedGeneration: ctx.seq.metadata.generation,
    totalGroups: n,
    progress: n === 0 ? '0/0' : `${Math.min(b.currentIndex + 1, n)}/${n}`,
  };
  if (b.groupName !== undefined) status.currentGroupName = b.groupName;
  if (b.ready !== undefined) status.currentGroupReady = b.ready;
  return status;
}

interface ConditionFacts {
  valid: boolean;
  validMessage?: string;
  missing: string[];
  completed: boolean;
  phase: Phase;
  message: string;
}

function conditions(ctx: Ctx, f: ConditionFacts): Condition[] {
  const now = ctx.input.now;
  const gen = ctx.seq.metadata.generation;
  let list: Condition[] = ctx.prev.conditions ?? [];
  const set = (c: Condition) => {
    list = withCondition(list, { ...c, observedGeneration: gen }, now).conditions;
  };
  set(
    f.valid
      ? { type: 'SpecValid', status: 'True', reason: 'Valid', message: 'The spec is valid' }
      : { type: 'SpecValid', status: 'False', reason: 'InvalidSpec', message: f.validMessage ?? '' },
  );
  set(
    f.missing.length === 0
      ? { type: 'PodsFound', status: 'True', reason: 'AllFound', message: 'Every named pod exists' }
      : {
          type: 'PodsFound',
          status: 'False',
          reason: 'PodsMissing',
          message: `Not found in namespace ${ctx.spec.namespace}: ${listNames(f.missing)}`,
        },
  );
  set(
    f.completed
      ? { type: 'Completed', status: 'True', reason: 'AllGroupsReady', message: f.message }
      : {
          type: 'Completed',
          status: 'False',
          reason: f.phase === 'Failed' ? 'Failed' : f.phase === 'Pending' ? 'Pending' : 'InProgress',
          message: f.message,
        },
  );
  return list;
}

/** Missing named pods of the groups up to `upTo` are a failure once the grace period is over. */
function missingCheck(
  ctx: Ctx,
  missingByGroup: readonly (readonly string[])[],
  upTo: number,
): { missing: string[]; failure?: Failure; requeueAfterMs?: number } {
  const missing: string[] = [];
  missingByGroup.forEach((names, k) => {
    if (k <= upTo) missing.push(...names);
  });
  if (missing.length === 0) return { missing };
  const prev = (ctx.prev.conditions ?? []).find((c) => c.type === 'PodsFound');
  const since =
    prev?.status === 'False' && prev.lastTransitionTime
      ? Date.parse(prev.lastTransitionTime)
      : ctx.input.now.getTime();
  const grace = ctx.input.options.missingPodGracePeriodMs;
  const waited = ctx.input.now.getTime() - since;
  if (waited >= grace) {
    return {
      missing,
      failure: {
        reason: 'PodNotFound',
        // No running clock in the message: a status that changes every second would be
        // rewritten every second.
        message: `Pod ${listNames(missing)} not found in namespace ${ctx.spec.namespace} for more than ${Math.round(grace / 1000)}s`,
      },
    };
  }
  // Conditions carry whole seconds: wait for the first instant past the grace period.
  return { missing, requeueAfterMs: grace - waited + 1000 };
}

function conflictFailure(conflicts: ReadonlyMap<string, string>): Failure | undefined {
  if (conflicts.size === 0) return undefined;
  // By name: the same conflicts read the same whatever order the pods were seen in.
  const names = [...conflicts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, why]) => `${name} (${why})`);
  return { reason: 'Conflict', message: `Not releasing pods claimed twice: ${listNames(names, 3)}` };
}

function releaseFor(ctx: Ctx, pod: Pod, group: number, extra: Partial<Release> = {}): Release {
  if (!ctx.hostnames) {
    ctx.hostnames = new Map();
    for (const node of ctx.input.nodes ?? []) {
      const h = node.metadata.labels?.['kubernetes.io/hostname'];
      if (h && node.metadata.name) ctx.hostnames.set(node.metadata.name, h);
    }
  }
  const hostnames = ctx.hostnames;
  // Full mode: the webhook adds these at creation, but a pod admitted before the webhook
  // knew its sequence would otherwise be kept off every node by the later groups' taints.
  const tolerations =
    ctx.input.nodes && ctx.spec.scope === 'Node'
      ? tolerationsFor(ctx.seq.metadata.namespace ?? '', ctx.seq.metadata.name ?? '', group, ctx.n)
      : undefined;
  return {
    name: podName(pod),
    group,
    fromResourceVersion: pod.metadata.resourceVersion,
    ...extra,
    patch: releasePatch({
      pod,
      gate: ctx.spec.gate,
      releasedBy: ctx.key,
      narrowTo: extra.narrowTo,
      hostnameOf: (n) => hostnames.get(n) ?? n,
      tolerations,
    }),
  };
}

function releasable(ctx: Ctx, conflicts: ReadonlyMap<string, string>, pod: Pod): boolean {
  return hasGate(pod, ctx.spec.gate) && !isTerminating(pod) && !conflicts.has(podName(pod));
}

/** A pod that runs ahead of its group without having been released by this sequence. */
function escaped(ctx: Ctx, pod: Pod): boolean {
  return (
    !hasGate(pod, ctx.spec.gate) &&
    !isDone(pod) &&
    !isTerminating(pod) &&
    !isFailed(pod) &&
    releasedBy(pod) !== ctx.key
  );
}

function escapedFailure(ctx: Ctx, pods: { pod: Pod; group: number }[]): Failure | undefined {
  if (pods.length === 0) return undefined;
  const names = pods.map(
    ({ pod, group }) => `${podName(pod)} (group ${groupLabel(ctx.spec.groups[group]!, ctx.n)})`,
  );
  return {
    reason: 'PodNotGated',
    message: `Pod ${listNames(names, 3)} started before its group's turn: it does not carry the scheduling gate ${ctx.spec.gate}`,
  };
}

// ---- cluster scope --------------------------------------------------------------

/** What the cluster-scope decision needs of one group, derived from its members alone. */
interface GroupFacts {
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

function groupFacts(ctx: Ctx, g: GroupMembers): GroupFacts {
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

function decideCluster(ctx: Ctx, m: Membership): Plan {
  const { spec, n } = ctx;
  const facts = m.groups.map((g) => groupFacts(ctx, g));
  const satisfied = m.groups.map(
    (g, k) => g.missing.length === 0 && g.members.length > 0 && facts[k]!.done === g.members.length,
  );
  let current = satisfied.indexOf(false);
  if (current < 0) current = n;

  const releases: Release[] = [];
  for (let k = 0; k <= Math.min(current, n - 1); k++) {
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
  for (let k = current + 1; k < n; k++) for (const pod of facts[k]!.escaped) escapes.push({ pod, group: k });
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

  return withEvents(ctx, {
    spec,
    currentIndex: current,
    releases,
    taints: ctx.input.nodes ? taintChanges(ctx, new Map(), true) : [],
    status,
    failures,
    nodes: [],
    unplaced: [],
    requeueAfterMs: missing.requeueAfterMs,
  });
}

function waitingMessage(
  ctx: Ctx,
  index: number,
  members: readonly Pod[],
  missing: readonly string[],
  label: string,
): string {
  const { spec } = ctx;
  if (members.length === 0 && missing.length === 0) {
    const g = spec.groups[index]!;
    return `Waiting for group ${label}: no pod in namespace ${spec.namespace} matches ${g.selectorText ?? ''}`;
  }
  const ready = members.filter(isDone).length;
  const total = members.length + missing.length;
  const parts: string[] = [];
  if (missing.length > 0) parts.push(`${listNames(missing)} not found in namespace ${spec.namespace}`);
  const detail = notDoneDetail(ctx, members);
  if (detail) parts.push(detail);
  return `Waiting for group ${label}: ${ready}/${total} pods Ready; ${parts.join('; ')}`;
}

// ---- node scope -----------------------------------------------------------------

/** Released pods not on a node yet, as they bear on each node's turn. */
interface Inbound {
  /** Per group, released pods that may land on any node. */
  anywhere: number[];
  /** Per group, per node: released pods that may still land there. */
  headingTo: Map<string, string[]>[];
}

/**
 * Node scope. The releases come first and, in lite mode, cost what the nodes a change
 * touched cost: the tracker says which nodes' pods changed, the memo keeps every other
 * node's part of the last pass. Some passes still walk every node: after a status write
 * (each node's entry is compared with the written one), in full mode (node list and
 * taints), and when pods waiting for a node are released. The report (status, events)
 * walks every node, and is derived only when asked.
 */
function decideNode(ctx: Ctx, tracker: MembershipTracker): Decision {
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
  // A node's own blocker (the first group with no pod on it or a pod not done), or an inbound one.
  const indexNow = (name: string) =>
    Math.min(memo.localIndex(placementOf(name)), headingMin.get(name) ?? n, anyMin);

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
    if (eligible.length === 0) waitingUnplaced[k]!.push(...pods);
    for (const pod of eligible.length > 0 ? pods : []) {
      releases.push(releaseFor(ctx, pod, k, { narrowTo: eligible }));
      arrive(k, pod, eligible);
    }
    for (const name of eligible) if (!headingMin.has(name)) headingMin.set(name, k);
  }

  // The nodes whose part may differ from the last pass's: their pods changed or pods may be
  // heading to them. Every node when the nodes themselves changed, when pods that may land
  // anywhere changed, or when the written status is another object (then most nodes'
  // parts are reused after a comparison with their entry).
  const headingChanged = memo.inboundChanges(inbound, anyMin);
  const prevMoved = memo.syncPrev(ctx.prev.nodeStatus);
  const check =
    nodeSetChanged || !headingChanged || prevMoved
      ? memo.names
      : new Set([...placement.changed, ...headingChanged]);
  for (const name of check) {
    const i = memo.position(name);
    if (i === undefined) continue;
    const here = placementOf(name);
    const index = indexNow(name);
    const heading = anyMin < n || headingMin.has(name);
    const k = Math.min(index, n - 1);
    const inboundKey = `${heading}|${inbound.anywhere[k]}|${(inbound.headingTo[k]!.get(name) ?? []).join(',')}`;
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
      });
      entry = { ...pass, placement: here, index, inboundKey, conflicted, prev };
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
  const taints = ctx.input.nodes
    ? taintChanges(ctx, new Map(passes.map((p) => [p.view.name, p.view.index])), false)
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

interface NodeFacts {
  totals: GroupTotals;
  /** Every node's part, by node name. */
  passes: readonly NodePass[];
  releases: Release[];
  taints: TaintChange[];
  inFlight: { group: number }[];
  waitingUnplaced: Pod[][];
}

/** The node-scope status and events, from every node's part of the pass. */
function nodeReport(ctx: Ctx, f: NodeFacts): Plan {
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
          `${listNames(pods.map(podName))} of group ${groupLabel(spec.groups[k]!, n)} wait for a node where every earlier group is Ready`,
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
      requeueAfterMs: missing.requeueAfterMs,
    },
    advanced,
  );
}

/** What a pass derives for one node, with the inputs it was derived from. */
interface NodePass {
  placement: NodePlacement;
  index: number;
  /** The released pods that may still land on the node, as far as the node's outputs read them. */
  inboundKey: string;
  /** The node's pods another group or sequence also claims. */
  conflicted: string;
  /** The written status's entry for the node, which the node's entry is derived from. */
  prev: NodeSequenceStatus | undefined;
  view: NodeView;
  releases: Release[];
  failed: { pod: Pod; group: number; node: string }[];
  escapes: { pod: Pod; group: number }[];
  status: NodeSequenceStatus;
}

/**
 * What node-scoped passes of one sequence keep between them (one memo per sequence and
 * tracker): each node's part of the last pass, and what it was derived from, so that a
 * pass after one pod event re-derives one node, not a thousand. The decision is the same
 * with or without it (incremental.test.ts checks this over random histories).
 */
export class DecisionMemo {
  /** Every node the sequence knows, sorted; `passes` holds each one's part, in that order. */
  names: string[] = [];
  passes: (NodePass | undefined)[] = [];
  /** Nodes whose part releases pods: their releases are sent again until their pods change. */
  readonly releasing = new Set<string>();
  private pos = new Map<string, number>();
  private cluster = new Set<string>();
  private scope = '';
  private tracker: MembershipTracker | undefined;
  private groups = 0;
  private serial = -1;
  /** The last pass looked at every node it had to. */
  private settled = false;
  private anywhere: number[] = [];
  private anyMin = -1;
  private heading: Map<string, string>[] = [];
  private prevList: readonly NodeSequenceStatus[] | undefined | null = null;
  private prevByNode = new Map<string, NodeSequenceStatus>();
  private readonly empties = new Map<string, NodePlacement>();
  private readonly local = new WeakMap<NodePlacement, number>();

  /** Forgets everything when the tracker, gate, sequence or length differs from the last pass's. */
  reset(gate: string, key: string, groups: number, tracker: MembershipTracker): void {
    const scope = `${key} ${gate} ${groups}`;
    if (scope === this.scope && tracker === this.tracker) return;
    this.scope = scope;
    this.tracker = tracker;
    this.groups = groups;
    this.names = [];
    this.passes = [];
    this.releasing.clear();
    this.pos = new Map();
    this.cluster = new Set();
    this.serial = -1;
    this.anyMin = -1;
    this.heading = [];
    this.prevList = null;
    this.empties.clear();
  }

  position(name: string): number | undefined {
    return this.pos.get(name);
  }

  /**
   * Brings the node list up to date: the nodes with members (and, in full mode, every
   * node of the cluster). True when the list changed or this pass cannot tell (a
   * placement was taken without this memo): every node must then be looked at.
   */
  syncNodes(placement: Placement, cluster: readonly Node[] | undefined): boolean {
    // A pass that threw half-way left some changed nodes unlooked-at: look at all of them.
    let changed = placement.serial !== this.serial + 1 || !this.settled;
    this.serial = placement.serial;
    this.settled = false;
    let names = this.cluster;
    if (cluster) {
      names = new Set();
      for (const node of cluster) if (node.metadata.name) names.add(node.metadata.name);
      if (names.size !== this.cluster.size || [...names].some((x) => !this.cluster.has(x))) changed = true;
    }
    if (!changed) {
      for (const name of placement.changed) {
        if ((placement.nodes.has(name) || names.has(name)) !== this.pos.has(name)) changed = true;
      }
    }
    if (!changed) return false;
    this.cluster = names;
    const before = new Map(this.names.map((name, i) => [name, this.passes[i]]));
    this.names = [...new Set([...placement.nodes.keys(), ...names])].sort();
    this.pos = new Map(this.names.map((name, i) => [name, i]));
    this.passes = this.names.map((name) => before.get(name));
    for (const name of this.releasing) if (!this.pos.has(name)) this.releasing.delete(name);
    return true;
  }

  /**
   * Records the inbound pods of this pass; resolves the nodes whose inbound pods differ
   * from the last pass's, or undefined when pods that may land anywhere changed (every
   * node's turn may have moved).
   */
  inboundChanges(inbound: Inbound, anyMin: number): Set<string> | undefined {
    const heading = inbound.headingTo.map(
      (m) => new Map([...m].map(([node, pods]) => [node, pods.join(',')])),
    );
    const sameAnywhere =
      anyMin === this.anyMin &&
      this.anywhere.length === inbound.anywhere.length &&
      this.anywhere.every((c, k) => c === inbound.anywhere[k]);
    const before = this.heading;
    this.heading = heading;
    this.anywhere = [...inbound.anywhere];
    this.anyMin = anyMin;
    if (!sameAnywhere || before.length !== heading.length) return undefined;
    const changed = new Set<string>();
    heading.forEach((now, k) => {
      const was = before[k]!;
      for (const [node, pods] of now) if (was.get(node) !== pods) changed.add(node);
      for (const node of was.keys()) if (!now.has(node)) changed.add(node);
    });
    return changed;
  }

  /** Takes the written status's node entries; true when they are another list than last pass's. */
  syncPrev(list: readonly NodeSequenceStatus[] | undefined): boolean {
    if (list === this.prevList) return false;
    this.prevList = list;
    this.prevByNode = new Map((list ?? []).map((s) => [s.nodeName, s]));
    return true;
  }

  /** The written status's entry for a node. */
  prevOf(node: string): NodeSequenceStatus | undefined {
    return this.prevByNode.get(node);
  }

  /** The pass has looked at every node it had to (see `syncNodes`). */
  settle(): void {
    this.settled = true;
  }

  /** The nodes in `releasing`, in node order. */
  releasingInOrder(): string[] {
    return [...this.releasing].sort((a, b) => this.pos.get(a)! - this.pos.get(b)!);
  }

  /** The node's own blocker: its first group with no member on it or a member not done. */
  localIndex(p: NodePlacement): number {
    let k = this.local.get(p);
    if (k === undefined) {
      k = 0;
      while (k < p.byGroup.length && p.byGroup[k]!.length > 0 && p.byGroup[k]!.every(isDone)) k++;
      this.local.set(p, k);
    }
    return k;
  }

  /** The same placement object for a node without members, pass after pass. */
  empty(node: string): NodePlacement {
    let e = this.empties.get(node);
    if (!e) {
      e = { node, byGroup: Array.from({ length: this.groups }, () => []) };
      this.empties.set(node, e);
    }
    return e;
  }
}

interface NodeInput {
  name: string;
  byGroup: readonly (readonly Pod[])[];
  index: number;
  heading: boolean;
  inbound: Inbound;
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
  return { view, releases, failed, escapes, status: nodeStatus(ctx, view, prev) };
}

function nodeWaiting(ctx: Ctx, v: NodeView, inbound: Inbound, released: ReadonlySet<string>): string {
  const { spec, n } = ctx;
  const k = v.index;
  const label = `group ${groupLabel(spec.groups[k]!, n)}`;
  const pods = v.byGroup[k]!;
  const heading = inbound.headingTo[k]!.get(v.name) ?? [];
  const anywhere = inbound.anywhere[k]!;
  if (pods.length === 0 && heading.length === 0 && anywhere === 0)
    return `${label}: no pod of it on this node`;
  const parts: string[] = [];
  // This node's pods released in this pass read as released.
  const detail = notDoneDetail(ctx, pods, released);
  if (pods.length > 0)
    parts.push(`${pods.filter(isDone).length}/${pods.length} Ready${detail ? ` (${detail})` : ''}`);
  if (heading.length > 0) parts.push(`${listNames(heading)} not scheduled yet`);
  else if (anywhere > 0) parts.push(`${anywhere} pods not scheduled yet`);
  return `${label}: ${parts.join('; ')}`;
}

/** Two status entries for one node alike in all a node pass reads of them. */
function sameNodeEntry(a: NodeSequenceStatus | undefined, b: NodeSequenceStatus | undefined): boolean {
  if (a === b) return true;
  if (!a || !b) return false;
  if (
    a.currentIndex !== b.currentIndex ||
    a.readyPodsInCurrentGroup !== b.readyPodsInCurrentGroup ||
    a.phase !== b.phase
  ) {
    return false;
  }
  const x = a.conditions ?? [];
  const y = b.conditions ?? [];
  return (
    x.length === y.length &&
    x.every((c, i) => {
      const d = y[i]!;
      return (
        c.type === d.type &&
        c.status === d.status &&
        c.reason === d.reason &&
        c.message === d.message &&
        c.lastTransitionTime === d.lastTransitionTime
      );
    })
  );
}

function nodeStatus(ctx: Ctx, v: NodeView, prev: NodeSequenceStatus | undefined): NodeSequenceStatus {
  const n = ctx.n;
  const index = v.completed ? n : v.index;
  const pods = index < n ? v.byGroup[index]! : [];
  const cond: Condition = v.completed
    ? {
        type: 'Completed',
        status: 'True',
        reason: 'AllGroupsReady',
        message: 'Every pod of the sequence on this node is Ready',
      }
    : {
        type: 'Completed',
        status: 'False',
        reason: v.phase === 'Failed' ? 'PodFailed' : 'Waiting',
        message: v.waiting ? `Waiting for ${v.waiting}` : 'Waiting',
      };
  const ready = pods.filter(isDone).length;
  // Unchanged nodes keep their entry object: no new conditions list per node per pass, and
  // comparing the status with the written one stops at the identical entries.
  if (
    prev &&
    prev.currentIndex === index &&
    prev.readyPodsInCurrentGroup === ready &&
    prev.phase === v.phase &&
    sameCondition(prev.conditions, cond)
  ) {
    return prev;
  }
  return {
    nodeName: v.name,
    currentIndex: index,
    readyPodsInCurrentGroup: ready,
    phase: v.phase,
    conditions: withCondition(prev?.conditions ?? [], cond, ctx.input.now).conditions,
  };
}

/** `cond` is in `list` as it is (setting it would change nothing). */
function sameCondition(list: readonly Condition[] | undefined, cond: Condition): boolean {
  const c = (list ?? []).find((x) => x.type === cond.type);
  return !!c && c.status === cond.status && c.reason === cond.reason && c.message === cond.message;
}

// ---- taints (full mode) ------------------------------------------------------------

/**
 * This sequence's taints per node, where the cached node differs. `lift` removes them all
 * (cluster scope, invalid spec): node-scoped sequences in full mode are the only users.
 */
function taintChanges(ctx: Ctx, indexOf: Map<string, number>, lift: boolean): TaintChange[] {
  const ns = ctx.seq.metadata.namespace ?? '';
  const name = ctx.seq.metadata.name ?? '';
  const out: TaintChange[] = [];
  for (const node of ctx.input.nodes ?? []) {
    const nodeName = node.metadata.name;
    if (!nodeName) continue;
    const desired = lift ? [] : desiredTaints(ns, name, indexOf.get(nodeName) ?? 0, ctx.n);
    if (reconcileTaints(node.spec?.taints, ns, name, desired)) out.push({ node: nodeName, desired });
  }
  return out;
}

// ---- events --------------------------------------------------------------------------

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
function transitionEvents(
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
      const following = k + 1 < n ? `; releasing group ${groupLabel(spec.groups[k + 1]!, n)}` : '';
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
