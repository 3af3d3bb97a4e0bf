/**
 * One scheduling cycle for one pod over a ClusterState: PreFilter, Filter (stopping once enough
 * feasible nodes are found, as percentageOfNodesToScore does), Score, select, and on failure
 * the PostFilter plugins (DynamicResources' note, DefaultPreemption's dry run) that complete
 * kube-scheduler's message. Pure: the caller applies the result (bind, assume, evict, events).
 */

import type { Pod } from '../../../kube/builtin.ts';
import { random } from '../../../lib/random.ts';
import type { ClusterState, NodeInfo, PodEntry } from './cluster-state.ts';
import {
  type CycleState,
  ERR_REASON_AFFINITY_CONFLICT,
  type FilterOptions,
  type FilterStatus,
  fitsRequest,
  type NodeUsage,
  nodeFilterKey,
  type PreparedPod,
  preparePod,
  runFilters,
  runNodeFiltersMemo,
  runPodFilters,
  updateCycleState,
} from './filters.ts';
import { FitError, NodeStatuses } from './fit-error.ts';
import { interPodPreFilter } from './inter-pod-filter.ts';
import { interPodAffinityScores } from './inter-pod-score.ts';
import type { ShapeVerdicts } from './node-verdicts.ts';
import type { PodRequests } from './requests.ts';
import { pluginWeights, type ScoringOptions, scoreNodes } from './score.ts';
import { spreadPreFilter } from './spread-filter.ts';
import { topologySpreadScores } from './spread-score.ts';

/** Which kube-scheduler release's wording to reproduce. */
export interface MessageStyle {
  /** `{key: value}` of the untolerated taint (≤1.34.1); newer releases say "untolerated taint(s)". */
  detailedTaintReasons: boolean;
  /** DynamicResources' PostFilter runs first (DRA on by default since 1.34): "no new claims to deallocate, ". */
  draPostFilter: boolean;
}

export const MESSAGES_1_35: MessageStyle = { detailedTaintReasons: false, draPostFilter: true };
export const MESSAGES_1_33: MessageStyle = { detailedTaintReasons: true, draPostFilter: false };

export interface ScheduleOptions {
  scoring?: ScoringOptions;
  /** 0 (default) is kube-scheduler's adaptive percentage; 100 evaluates every node. */
  percentageOfNodesToScore?: number;
  /** Among equal top scores: the first in scan order (default) or a random one. */
  tieBreak?: 'first' | 'random';
  /** Random source in [0, 1) for tie breaking; the program's random source (src/lib/random.ts) by default. */
  random?: () => number;
  messages?: MessageStyle;
  /** Run DefaultPreemption on failure (message and victim choice). Default true. */
  preemption?: boolean;
  /**
   * Of a node's lower-priority pods, the ones preemption may take (coscheduling keeps gangs at
   * their quorum); all of them by default.
   */
  preemptable?: (pods: readonly PodEntry[]) => PodEntry[];
  /** Plugins kept outside the core for this pod (the scheduler's VolumeBinding). */
  extra?: ExtraPlugins;
}

/**
 * A plugin outside the core: its PreFilter rejection (UnschedulableAndUnresolvable, its
 * reasons are the message) or its Filter, run on nodes the core filters pass.
 */
export interface ExtraPlugins {
  preFilterReject?: FilterStatus;
  filter?: (ni: NodeInfo) => FilterStatus | undefined;
}

export interface Scheduled {
  status: 'Scheduled';
  nodeName: string;
  score: number;
  /** Feasible nodes found and nodes examined; evaluated ≤ cluster size when sampling. */
  feasibleNodes: number;
  evaluatedNodes: number;
}

export interface Unschedulable {
  status: 'Unschedulable';
  error: FitError;
  /** Set when preemption found room: the node to nominate and the pods to evict from it. */
  nominatedNodeName?: string;
  victims?: PodEntry[];
}

export type ScheduleResult = Scheduled | Unschedulable;

const MIN_FEASIBLE_NODES_TO_FIND = 100;
const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5;

export function numFeasibleNodesToFind(numAllNodes: number, percentage = 0): number {
  if (numAllNodes < MIN_FEASIBLE_NODES_TO_FIND) return numAllNodes;
  let pct = percentage;
  if (pct <= 0) {
    pct = 50 - Math.trunc(numAllNodes / 125);
    if (pct < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND) pct = MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND;
  }
  if (pct >= 100) return numAllNodes;
  const n = Math.trunc((numAllNodes * pct) / 100);
  return Math.max(n, MIN_FEASIBLE_NODES_TO_FIND);
}

/** A PreparedPod, not a Pod: a Pod has no top-level `affinity` or `requests`. */
function isPrepared(pod: Pod | PreparedPod): pod is PreparedPod {
  return 'affinity' in pod && 'requests' in pod;
}

export function schedulePod(
  state: ClusterState,
  pod: Pod | PreparedPod,
  opts: ScheduleOptions = {},
  requests?: PodRequests,
): ScheduleResult {
  const p = isPrepared(pod) ? pod : preparePod(pod, requests);
  const style = opts.messages ?? MESSAGES_1_35;
  const filterOpts: FilterOptions = { detailedTaintReasons: style.detailedTaintReasons };
  const all = state.nodes;
  const numAll = all.length;
  if (numAll === 0) {
    return {
      status: 'Unschedulable',
      error: new FitError({ numAllNodes: 0, nodeStatuses: new NodeStatuses() }),
    };
  }

  let statuses = new NodeStatuses();
  const pinned = p.affinity.nodeNames;
  if (pinned && pinned.size === 0) {
    // Every term pins a disjoint set of names: NodeAffinity's PreFilter rejects the pod outright.
    const st: FilterStatus = {
      code: 'UnschedulableAndUnresolvable',
      plugin: 'NodeAffinity',
      reasons: [ERR_REASON_AFFINITY_CONFLICT],
    };
    return fail(state, p, opts, style, statuses, st, ERR_REASON_AFFINITY_CONFLICT, {});
  }

  const extra = opts.extra;
  if (extra?.preFilterReject) {
    const st = extra.preFilterReject;
    return fail(state, p, opts, style, statuses, st, st.reasons.join(', '), {});
  }

  let candidates: readonly NodeInfo[] = all;
  let absent: FilterStatus | undefined;
  let start = state.nextStartNodeIndex % numAll;
  if (pinned) {
    const list: NodeInfo[] = [];
    for (const name of pinned) {
      const ni = state.getNode(name);
      if (ni) list.push(ni);
    }
    candidates = list;
    start = 0;
    absent = {
      code: 'UnschedulableAndUnresolvable',
      plugin: 'NodeAffinity',
      reasons: ["node(s) didn't satisfy plugin(s) [NodeAffinity]"],
    };
  }

  const cycle: CycleState = { spread: spreadPreFilter(state, p), interPod: interPodPreFilter(state, p) };
  // Without filters that read other pods, each node's verdict depends on the node and the pod's shape.
  const shape = cycle.spread || cycle.interPod ? -1 : state.shapeId(nodeFilterKey(p, filterOpts));
  const want = numFeasibleNodesToFind(numAll, opts.percentageOfNodesToScore ?? 0);
  const feasible: NodeInfo[] = [];
  let processed = 0;
  if (shape >= 0 && !pinned && !extra?.filter) {
    const verdicts = state.verdicts.of(shape);
    processed = scanRemembered(state, p, filterOpts, verdicts, start, want, feasible);
    if (feasible.length === 0) statuses = remembered(state, verdicts, start);
  } else {
    const held = shape >= 0 ? state.verdicts.of(shape) : undefined;
    const n = candidates.length;
    for (let i = 0; i < n && feasible.length < want; i++) {
      const ni = candidates[(start + i) % n]!;
      processed++;
      const st =
        (held
          ? runNodeFiltersMemo(state, p, ni.index, filterOpts, held)
          : runFilters(p, ni, filterOpts, cycle)) ?? extra?.filter?.(ni);
      if (st) statuses.add(ni.name, st);
      else feasible.push(ni);
    }
  }
  if (!pinned) state.nextStartNodeIndex = (start + processed) % numAll;

  if (feasible.length === 0) return fail(state, p, opts, style, statuses, absent, '', cycle);

  if (feasible.length === 1) {
    return {
      status: 'Scheduled',
      nodeName: feasible[0]!.name,
      score: 0,
      feasibleNodes: 1,
      evaluatedNodes: processed,
    };
  }
  const scores = scoreNodes(p, feasible, opts.scoring);
  const w = pluginWeights(opts.scoring);
  addWeighted(scores, w.spread, () => topologySpreadScores(state, p, feasible));
  addWeighted(scores, w.interPod, () => interPodAffinityScores(state, p, feasible));
  const best = selectHost(scores, opts.tieBreak === 'random' ? (opts.random ?? random) : undefined);
  return {
    status: 'Scheduled',
    nodeName: feasible[best]!.name,
    score: scores[best]!,
    feasibleNodes: feasible.length,
    evaluatedNodes: processed,
  };
}

/**
 * The Filter loop over every node when each verdict depends only on the node and the pod's
 * shape: the shape's verdicts are brought up to date (ClusterState.verdicts: only nodes
 * changed since are filtered), then from `start` round the node list until `want` nodes
 * pass. Returns how many nodes it looked at. A placed pod needs no statuses, so the rejected
 * nodes' are collected only when none passed (remembered).
 */
function scanRemembered(
  state: ClusterState,
  p: PreparedPod,
  opts: FilterOptions,
  verdicts: ShapeVerdicts,
  start: number,
  want: number,
  feasible: NodeInfo[],
): number {
  const nodes = state.nodes;
  const n = nodes.length;
  state.verdicts.catchUp(verdicts, n, (i) => runFilters(p, nodes[i]!, opts));
  if (verdicts.passing === 0) return n;
  const pass = verdicts.pass;
  let processed = 0;
  for (let i = start; processed < n && feasible.length < want; processed++) {
    if (pass[i] === 1) feasible.push(nodes[i]!);
    if (++i === n) i = 0;
  }
  return processed;
}

/** Every node's remembered verdict, in scan order from `start`, after a scan that placed nothing. */
function remembered(state: ClusterState, verdicts: ShapeVerdicts, start: number): NodeStatuses {
  const nodes = state.nodes;
  const n = nodes.length;
  const status = verdicts.status;
  const names = new Array<string>(n);
  const statuses = new Array<FilterStatus>(n);
  for (let k = 0, i = start; k < n; k++) {
    names[k] = nodes[i]!.name;
    statuses[k] = status[i]!;
    if (++i === n) i = 0;
  }
  return new NodeStatuses(names, statuses);
}

/** Adds a plugin's normalised scores, if it has any, with the plugin's weight. */
function addWeighted(totals: number[], weight: number, plugin: () => number[] | undefined): void {
  if (weight === 0) return;
  const scores = plugin();
  if (!scores) return;
  for (let i = 0; i < totals.length; i++) totals[i]! += weight * scores[i]!;
}

/** Index of the highest score; ties go to the first, or to a uniform pick when `random` is given. */
export function selectHost(scores: readonly number[], random?: () => number): number {
  let best = 0;
  let ties = 1;
  for (let i = 1; i < scores.length; i++) {
    const s = scores[i]!;
    if (s > scores[best]!) {
      best = i;
      ties = 1;
    } else if (s === scores[best]! && random) {
      // Reservoir sampling keeps each tied node equally likely in one pass.
      ties++;
      if (Math.floor(random() * ties) === 0) best = i;
    }
  }
  return best;
}

function fail(
  state: ClusterState,
  p: PreparedPod,
  opts: ScheduleOptions,
  style: MessageStyle,
  statuses: NodeStatuses,
  absent: FilterStatus | undefined,
  preFilterMessage: string,
  cycle: CycleState,
): Unschedulable {
  const numAll = state.nodes.length;
  const postFilter: string[] = [];
  if (style.draPostFilter) postFilter.push('no new claims to deallocate');
  let nominated: { node: string; victims: PodEntry[] } | undefined;
  if (opts.preemption !== false) {
    const pre = preempt(state, p, statuses, preFilterMessage !== '', cycle, opts.preemptable);
    if (pre.kind === 'message') postFilter.push(`preemption: ${pre.message}`);
    else nominated = { node: pre.node, victims: pre.victims };
  }
  const error = new FitError({
    numAllNodes: numAll,
    nodeStatuses: statuses,
    // With a PreFilter message the histogram is not shown; the status still names the plugin
    // whose cluster events may make the pod schedulable.
    absentStatus: absent,
    preFilterMessage,
    // A successful PostFilter returns no message, so the event shows only the filter reasons.
    postFilterMessage: nominated ? '' : postFilter.join(', '),
  });
  if (nominated) {
    return { status: 'Unschedulable', error, nominatedNodeName: nominated.node, victims: nominated.victims };
  }
  return { status: 'Unschedulable', error };
}

type PreemptOutcome =
  | { kind: 'message'; message: string }
  | { kind: 'nominate'; node: string; victims: PodEntry[] };

const NOT_HELPFUL: FilterStatus = {
  code: 'UnschedulableAndUnresolvable',
  plugin: 'DefaultPreemption',
  reasons: ['Preemption is not helpful for scheduling'],
};
const NO_VICTIMS = 'No preemption victims found for incoming pod';
/** One object for every node without victims: statuses are read, never changed. */
const NO_VICTIMS_STATUS: FilterStatus = {
  code: 'UnschedulableAndUnresolvable',
  plugin: 'DefaultPreemption',
  reasons: [NO_VICTIMS],
};

/** MoreImportantPod: higher priority first, then the pod that started earlier. */
function moreImportant(a: PodEntry, b: PodEntry): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  return a.startTime - b.startTime;
}

/**
 * DefaultPreemption's dry run without PodDisruptionBudgets: nodes whose rejection is not
 * marked unresolvable (resources, topology spread skew, anti-affinity) are retried with
 * every lower-priority pod removed, then as many victims as possible are reprieved, most
 * important first.
 */
function preempt(
  state: ClusterState,
  p: PreparedPod,
  statuses: NodeStatuses,
  preFilterFailed: boolean,
  cycle: CycleState,
  preemptable: ScheduleOptions['preemptable'],
): PreemptOutcome {
  if (p.preemptNever) return { kind: 'message', message: 'not eligible due to preemptionPolicy=Never.' };
  const numAll = state.nodes.length;
  // Sized for every node up front: a failed attempt's dry run answers hundreds of them.
  const names = new Array<string>(statuses.size);
  const answers = new Array<FilterStatus>(statuses.size);
  let answered = 0;
  const found: { node: NodeInfo; victims: PodEntry[] }[] = [];
  // A PreFilter rejection and nodes outside a PreFilter result are unresolvable: no dry run.
  if (!preFilterFailed) {
    // No pod anywhere of lower priority: every node answers as selectVictimsOnNode's first
    // check would (most pods of a busy cluster share the lowest priority, and fail often).
    const none = state.lowestPodPriority() >= p.priority;
    for (let i = 0; i < statuses.size; i++) {
      if (statuses.statuses[i]!.code !== 'Unschedulable') continue;
      const name = statuses.names[i]!;
      let answer = NO_VICTIMS_STATUS;
      if (!none) {
        const ni = state.getNode(name);
        if (!ni) continue;
        const r = selectVictimsOnNode(p, ni, cycle, preemptable);
        if (r.ok) {
          found.push({ node: ni, victims: r.victims });
          continue;
        }
        answer = r.status;
      }
      names[answered] = name;
      answers[answered++] = answer;
    }
  }
  if (found.length === 0) {
    names.length = answered;
    answers.length = answered;
    const dryRun = new NodeStatuses(names, answers);
    const inner = new FitError({ numAllNodes: numAll, nodeStatuses: dryRun, absentStatus: NOT_HELPFUL });
    return { kind: 'message', message: inner.message };
  }
  found.sort((a, b) => compareCandidates(a.victims, b.victims));
  const best = found[0]!;
  return { kind: 'nominate', node: best.node.name, victims: best.victims };
}

/**
 * The filters from NodeResourcesFit on are rerun (the earlier ones passed and do not depend
 * on pods), with the cycle's topology counts updated for every pod taken off or put back;
 * the counts are restored before returning, for the next node's dry run.
 */
function selectVictimsOnNode(
  p: PreparedPod,
  ni: NodeInfo,
  cycle: CycleState,
  preemptable: ScheduleOptions['preemptable'],
): { ok: true; victims: PodEntry[] } | { ok: false; status: FilterStatus } {
  if (ni.lowestPodPriority() >= p.priority) return { ok: false, status: NO_VICTIMS_STATUS };
  let potential: PodEntry[] = [];
  for (const e of ni.podList()) if (e.priority < p.priority) potential.push(e);
  if (preemptable && potential.length > 0) potential = preemptable(potential);
  if (potential.length === 0) return { ok: false, status: NO_VICTIMS_STATUS };
  const usage: NodeUsage & { scalarMap: Map<string, number> } = {
    milliCPU: ni.reqMilliCPU,
    memory: ni.reqMemory,
    ephemeralStorage: ni.reqEphemeralStorage,
    podCount: ni.podCount,
    scalarMap: new Map(ni.reqScalar ?? []),
    scalar(name: string) {
      return this.scalarMap.get(name) ?? 0;
    },
  };
  const apply = (e: PodEntry, sign: 1 | -1) => {
    const q = e.requests.requests;
    usage.milliCPU += sign * q.milliCPU;
    usage.memory += sign * q.memory;
    usage.ephemeralStorage += sign * q.ephemeralStorage;
    usage.podCount += sign;
    if (q.scalar)
      for (const [k, v] of q.scalar) usage.scalarMap.set(k, (usage.scalarMap.get(k) ?? 0) + sign * v);
    updateCycleState(cycle, e, ni, sign);
  };
  const fits = () => fitsRequest(p, ni, usage) ?? runPodFilters(cycle, ni);
  for (const e of potential) apply(e, -1);
  const st = fits();
  if (st) {
    for (const e of potential) updateCycleState(cycle, e, ni, 1);
    return { ok: false, status: st };
  }
  potential.sort(moreImportant);
  const victims: PodEntry[] = [];
  for (const e of potential) {
    apply(e, 1);
    if (fits()) {
      apply(e, -1);
      victims.push(e);
    }
  }
  for (const e of victims) updateCycleState(cycle, e, ni, 1);
  return { ok: true, victims };
}

/** pickOneNodeForPreemption without PDBs: lowest top victim priority, lowest sum, fewest, latest start. */
function compareCandidates(a: PodEntry[], b: PodEntry[]): number {
  const topA = a[0]?.priority ?? 0;
  const topB = b[0]?.priority ?? 0;
  if (topA !== topB) return topA - topB;
  // Upstream offsets each priority by MaxInt32+1 so negative priorities still add up sensibly.
  const sum = (v: PodEntry[]) => v.reduce((s, e) => s + e.priority + 2147483648, 0);
  const d = sum(a) - sum(b);
  if (d !== 0) return d;
  if (a.length !== b.length) return a.length - b.length;
  const earliest = (v: PodEntry[]) =>
    v
      .filter((e) => e.priority === v[0]?.priority)
      .reduce((m, e) => Math.min(m, e.startTime), Number.POSITIVE_INFINITY);
  return earliest(b) - earliest(a);
}
