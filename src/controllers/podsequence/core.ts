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
  type Membership,
  MembershipTracker,
  type NodePlacement,
  type OtherSequence,
  type Placement,
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
  membership?: Membership;
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

function notDoneDetail(ctx: Ctx, pods: readonly Pod[]): string {
  const bad = pods.filter((p) => !isDone(p));
  const shown = bad
    .slice(0, LIST_IN_MESSAGE)
    .map((p) => `${podName(p)} ${describePod(p, ctx.spec.gate, ctx.released.has(podName(p)))}`);
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
  /** The previous status's nodeStatus by node name (built on first use). */
  prevNodes?: Map<string, NodeSequenceStatus>;
}

export function decide(input: CoreInput): Plan {
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
  if (invalid.length > 0) return invalidPlan(ctx, invalid);
  const tracker =
    input.tracker ??
    new MembershipTracker(
      spec,
      input.others,
      input.pods.filter((p) => (p.metadata.namespace ?? spec.namespace) === spec.namespace),
    );
  const membership = tracker.membership();
  return spec.scope === 'Node'
    ? decideNode(ctx, membership, tracker.placement())
    : decideCluster(ctx, membership);
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
function withEvents(ctx: Ctx, facts: PlanFacts): Plan {
  const released = releaseEvents(ctx.spec, facts.releases);
  const transitions = transitionEvents(ctx, facts);
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
  membership: Membership,
  upTo: number,
): { missing: string[]; failure?: Failure; requeueAfterMs?: number } {
  const missing: string[] = [];
  for (const g of membership.groups) if (g.index <= upTo) missing.push(...g.missing);
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

function conflictFailure(membership: Membership): Failure | undefined {
  if (membership.conflicts.size === 0) return undefined;
  // By name: the same conflicts read the same whatever order the pods were seen in.
  const names = [...membership.conflicts]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, why]) => `${name} (${why})`);
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

function releasable(ctx: Ctx, membership: Membership, pod: Pod): boolean {
  return hasGate(pod, ctx.spec.gate) && !isTerminating(pod) && !membership.conflicts.has(podName(pod));
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
  const conflict = conflictFailure(m);
  if (conflict) failures.push(conflict);
  const missing = missingCheck(ctx, m, current);
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
    membership: m,
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

function decideNode(ctx: Ctx, m: Membership, placement: Placement): Plan {
  const { spec, n } = ctx;
  const memo = ctx.input.memo ?? new DecisionMemo();
  memo.reset(spec.gate, ctx.key, n);
  const placed = new Map(placement.nodes);
  /** Released pods not on a node yet, with the nodes they may land on (undefined: any). */
  const inFlight: { pod: Pod; group: number; nodes: ReadonlySet<string> | undefined }[] = [];
  const unplaced: Pod[][] = Array.from({ length: n }, () => []);
  placement.unplaced.forEach((pods, k) => {
    for (const pod of pods) {
      if (hasGate(pod, spec.gate)) unplaced[k]!.push(pod);
      else if (!isDone(pod) && !isTerminating(pod) && !isFailed(pod))
        inFlight.push({ pod, group: k, nodes: candidateNodes(pod) });
    }
  });
  // Full mode knows every node; lite mode knows the nodes its pods name.
  for (const node of ctx.input.nodes ?? []) {
    const name = node.metadata.name;
    if (name && !placed.has(name)) placed.set(name, memo.empty(name));
  }
  const anywhere = Array.from({ length: n }, () => 0);
  /** Per group, per node: released pods that may still land there. */
  const headingTo: Map<string, string[]>[] = Array.from({ length: n }, () => new Map());
  const inbound = (group: number, pod: Pod, nodes: Iterable<string> | undefined) => {
    if (!nodes) {
      anywhere[group]!++;
      return;
    }
    for (const node of nodes) {
      const list = headingTo[group]!.get(node) ?? [];
      list.push(podName(pod));
      headingTo[group]!.set(node, list);
    }
  };
  for (const f of inFlight) inbound(f.group, f.pod, f.nodes);

  // A node's own blocker: the first group with no pod on it or a pod not done.
  const nodeNames = memo.sortedNames(placed);
  const localIndex = new Map<string, number>();
  for (const name of nodeNames) localIndex.set(name, memo.localIndex(placed.get(name)!));
  // Inbound blockers: the first group with released pods that may still land on the node.
  let anyMin = anywhere.findIndex((c) => c > 0);
  if (anyMin < 0) anyMin = n;
  const headingMin = new Map<string, number>();
  for (let k = n - 1; k >= 0; k--) for (const node of headingTo[k]!.keys()) headingMin.set(node, k);
  const indexNow = (name: string) => Math.min(localIndex.get(name)!, headingMin.get(name) ?? n, anyMin);

  // Pods waiting for a node go in group order: pods of group k released in this pass (to
  // the nodes where every group before k is Ready) then count as not-yet-Ready members of
  // group k on each of those nodes, before group k+1 is judged there.
  const releases: Release[] = [];
  const waitingUnplaced: Pod[][] = Array.from({ length: n }, () => []);
  for (let k = 0; k < n; k++) {
    const pods = unplaced[k]!.filter((p) => releasable(ctx, m, p));
    if (pods.length === 0) continue;
    if (k === 0) {
      for (const pod of pods) {
        releases.push(releaseFor(ctx, pod, 0));
        inbound(0, pod, undefined);
      }
      anyMin = 0;
      continue;
    }
    const eligible = nodeNames.filter((name) => indexNow(name) >= k);
    if (eligible.length === 0) waitingUnplaced[k]!.push(...pods);
    for (const pod of eligible.length > 0 ? pods : []) {
      releases.push(releaseFor(ctx, pod, k, { narrowTo: eligible }));
      inbound(k, pod, eligible);
    }
    for (const name of eligible) if (!headingMin.has(name)) headingMin.set(name, k);
  }

  // Per node: its view, releases, failed and escaped pods and status entry, reused from the
  // previous pass while the node's pods, index and inbound pods are the same.
  const seen = new Set<string>();
  const passes = nodeNames.map((name) => {
    seen.add(name);
    const here = placed.get(name)!;
    const byGroup = here.byGroup;
    const index = indexNow(name);
    const heading = anyMin < n || headingMin.has(name);
    const k = Math.min(index, n - 1);
    const inboundKey = `${heading}|${anywhere[k]}|${(headingTo[k]!.get(name) ?? []).join(',')}`;
    const conflicted =
      m.conflicts.size === 0
        ? ''
        : byGroup
            .flat()
            .filter((p) => m.conflicts.has(podName(p)))
            .map(podName)
            .join(',');
    const prev = prevNodeStatus(ctx, name);
    const old = memo.nodes.get(name);
    if (
      old &&
      old.index === index &&
      old.inboundKey === inboundKey &&
      old.conflicted === conflicted &&
      old.placement === here &&
      sameNodeEntry(old.prev, prev)
    ) {
      // The written status comes back as new objects (the server's answer, then the cache's
      // copy): remember this one, so the next pass matches it by identity.
      old.prev = prev;
      return old;
    }
    const pass = passForNode(ctx, m, { name, byGroup, index, heading, headingTo, anywhere });
    const entry: NodePass = { ...pass, placement: here, index, inboundKey, conflicted, prev };
    memo.nodes.set(name, entry);
    return entry;
  });
  for (const name of memo.nodes.keys()) if (!seen.has(name)) memo.nodes.delete(name);
  const views = passes.map((p) => p.view);
  for (const p of passes) releases.push(...p.releases);
  ctx.released = new Set(releases.map((r) => r.name));
  const failures: Failure[] = [];
  const failedPods = passes.flatMap((p) => p.failed);
  const escapes = passes.flatMap((p) => p.escapes);
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
  const conflict = conflictFailure(m);
  if (conflict) failures.push(conflict);

  const waitingGroups = waitingUnplaced.map((p, k) => (p.length > 0 ? k : n));
  const inFlightGroups = inFlight.map((f) => f.group);
  const members = views.filter((v) => v.byGroup.some((g) => g.length > 0));
  let current = Math.min(
    n,
    ...members.map((v) => (v.completed ? n : v.index)),
    ...waitingGroups,
    ...inFlightGroups,
  );
  const totalMembers = m.groups.reduce((s, g) => s + g.members.length, 0);
  if (totalMembers === 0) current = 0;
  const missing = missingCheck(ctx, m, current);
  if (missing.failure) failures.push(missing.failure);

  const completed = totalMembers > 0 && current === n && members.every((v) => v.completed);
  const anyoneReleased =
    releases.length > 0 || m.groups.some((g) => g.members.some((p) => !hasGate(p, spec.gate)));
  let phase: Phase;
  if (failures.length > 0) phase = 'Failed';
  else if (completed) phase = 'Completed';
  else if (!anyoneReleased) phase = 'Pending';
  else phase = 'InProgress';

  const doneNodes = members.filter((v) => v.completed).length;
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
    const waiting = members.filter((v) => !v.completed && v.waiting);
    for (const v of waiting.slice(0, 3)) parts.push(`node ${v.name} waits for ${v.waiting}`);
    if (waiting.length > 3) parts.push(`${waiting.length - 3} more nodes waiting`);
    for (let k = 0; k < n; k++) {
      const pods = waitingUnplaced[k]!;
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
  if (failures.length > 0) message = `${failures.map((f) => f.message).join('; ')}. ${message}`;

  const status = baseStatus(ctx, {
    phase,
    currentIndex: current,
    message,
    groupName: spec.groups[Math.min(current, n - 1)]?.name,
    ready: `${doneNodes}/${members.length} nodes`,
  });
  const statusOf = new Map(passes.map((p) => [p.view.name, p.status]));
  status.nodeStatus = members.map((v) => statusOf.get(v.name)!);
  const max = ctx.input.options.maxListedPods;
  const processed: string[] = [];
  for (const v of members) {
    const upTo = v.completed ? n : v.index;
    for (let k = 0; k < upTo && processed.length < max; k++) processed.push(...v.byGroup[k]!.map(podName));
  }
  status.processedPods = capped(processed.sort(), max);
  status.conditions = conditions(ctx, { valid: true, missing: missing.missing, completed, phase, message });

  return withEvents(ctx, {
    spec,
    membership: m,
    currentIndex: current,
    releases,
    taints: ctx.input.nodes ? taintChanges(ctx, new Map(views.map((v) => [v.name, v.index])), false) : [],
    status,
    failures,
    nodes: views,
    unplaced: waitingUnplaced,
    requeueAfterMs: missing.requeueAfterMs,
  });
}

/** What a pass derives for one node, with the inputs it was derived from. */
interface NodePass {
  placement: NodePlacement;
  index: number;
  /** The released pods that may still land on the node, as far as the node's outputs read them. */
  inboundKey: string;
  /** The node's pods another group or sequence also claims. */
  conflicted: string;
  prev: NodeSequenceStatus | undefined;
  view: NodeView;
  releases: Release[];
  failed: { pod: Pod; group: number; node: string }[];
  escapes: { pod: Pod; group: number }[];
  status: NodeSequenceStatus;
}

/**
 * Per-node results of node-scoped passes of one sequence, kept by the caller between
 * passes (one per sequence): a pass after one pod event then re-derives one node, not
 * a thousand. The decision is the same with or without it.
 */
export class DecisionMemo {
  readonly nodes = new Map<string, NodePass>();
  private readonly empties = new Map<string, NodePlacement>();
  private scope = '';
  private groups = 0;

  /** Forgets everything when the gate, the sequence or its length differs from the last pass's. */
  reset(gate: string, key: string, groups: number): void {
    const scope = `${key} ${gate} ${groups}`;
    if (scope === this.scope) return;
    this.scope = scope;
    this.groups = groups;
    this.nodes.clear();
    this.empties.clear();
    this.names = [];
    this.nameSet = new Set();
  }

  private names: string[] = [];
  private nameSet = new Set<string>();
  private readonly local = new WeakMap<NodePlacement, number>();

  /** The node names of `placed`, sorted; sorted again only when the set of nodes changes. */
  sortedNames(placed: ReadonlyMap<string, unknown>): string[] {
    let same = placed.size === this.names.length;
    if (same) for (const name of placed.keys()) if (!this.nameSet.has(name)) same = false;
    if (!same) {
      this.names = [...placed.keys()].sort();
      this.nameSet = new Set(this.names);
    }
    return this.names;
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
  headingTo: Map<string, string[]>[];
  anywhere: number[];
}

/** One node's part of a node-scoped pass. */
function passForNode(
  ctx: Ctx,
  m: Membership,
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
      if (releasable(ctx, m, pod)) releases.push(releaseFor(ctx, pod, k, { node: name }));
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
  if (!completed && index < n) {
    // Messages describe this node's pods released in this pass as released.
    const before = ctx.released;
    ctx.released = released;
    view.waiting = nodeWaiting(ctx, view, node.headingTo, node.anywhere);
    ctx.released = before;
  }
  return { view, releases, failed, escapes, status: nodeStatus(ctx, view) };
}

function nodeWaiting(ctx: Ctx, v: NodeView, headingTo: Map<string, string[]>[], anywhere: number[]): string {
  const { spec, n } = ctx;
  const k = v.index;
  const label = `group ${groupLabel(spec.groups[k]!, n)}`;
  const pods = v.byGroup[k]!;
  const heading = headingTo[k]!.get(v.name) ?? [];
  if (pods.length === 0 && heading.length === 0 && anywhere[k] === 0)
    return `${label}: no pod of it on this node`;
  const parts: string[] = [];
  const detail = notDoneDetail(ctx, pods);
  if (pods.length > 0)
    parts.push(`${pods.filter(isDone).length}/${pods.length} Ready${detail ? ` (${detail})` : ''}`);
  if (heading.length > 0) parts.push(`${listNames(heading)} not scheduled yet`);
  else if (anywhere[k]! > 0) parts.push(`${anywhere[k]} pods not scheduled yet`);
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

/** The previous status's entry for a node. */
function prevNodeStatus(ctx: Ctx, node: string): NodeSequenceStatus | undefined {
  ctx.prevNodes ??= new Map((ctx.prev.nodeStatus ?? []).map((s) => [s.nodeName, s]));
  return ctx.prevNodes.get(node);
}

function nodeStatus(ctx: Ctx, v: NodeView): NodeSequenceStatus {
  const n = ctx.n;
  const prev = prevNodeStatus(ctx, v.name);
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

function transitionEvents(ctx: Ctx, plan: PlanFacts): CoreEvent[] {
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
  if (sameSpec && spec.scope === 'Node') {
    const before = new Map((prev.nodeStatus ?? []).map((s) => [s.nodeName, s.currentIndex]));
    const advanced = new Map<number, string[]>();
    for (const s of next.nodeStatus ?? []) {
      const was = before.get(s.nodeName);
      if (was === undefined) continue;
      for (let k = was; k < s.currentIndex && k < n; k++) {
        const list = advanced.get(k) ?? [];
        list.push(s.nodeName);
        advanced.set(k, list);
      }
    }
    for (const [k, nodes] of [...advanced].sort(([a], [b]) => a - b)) {
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
