/**
 * kube-scheduler's default Filter plugins that matter without volumes, in the default
 * profile's order, each returning upstream's reason strings and status codes. The two that
 * look at other pods (PodTopologySpread, InterPodAffinity) read what their PreFilter counted
 * for the cycle; they live in spread-filter.ts and inter-pod-filter.ts.
 */

import type { Pod, Toleration } from '../../../kube/builtin.ts';
import type { OwnerReference } from '../../../kube/object.ts';
import { type CompiledNodeAffinity, compileNodeAffinity } from './affinity.ts';
import type { ClusterState, NodeInfo, PodEntry } from './cluster-state.ts';
import { filterInterPodAffinity, type InterPodFilterState, updateInterPodState } from './inter-pod-filter.ts';
import type { ShapeVerdicts } from './node-verdicts.ts';
import { compilePodAffinityTerms, type PodAffinityTerms } from './pod-affinity-terms.ts';
import { computePodRequests, type PodRequests } from './requests.ts';
import { compileSpreadConstraints, type PodSpreadConstraints } from './spread-constraints.ts';
import { filterTopologySpread, type SpreadFilterState, updateSpreadState } from './spread-filter.ts';
import { firstUntoleratedTaint, tolerationsTolerate, UNSCHEDULABLE_TAINT } from './taints.ts';

export type StatusCode = 'Unschedulable' | 'UnschedulableAndUnresolvable';

export interface FilterStatus {
  code: StatusCode;
  plugin: string;
  reasons: string[];
}

export const ERR_REASON_UNSCHEDULABLE = 'node(s) were unschedulable';
export const ERR_REASON_NODE_NAME = "node(s) didn't match the requested node name";
export const ERR_REASON_AFFINITY = "node(s) didn't match Pod's node affinity/selector";
export const ERR_REASON_AFFINITY_CONFLICT = 'pod affinity terms conflict';
/** The wording since kube-scheduler stopped leaking taint keys and values (1.35, 1.34.2). */
export const ERR_REASON_TAINT_GENERIC = 'node(s) had untolerated taint(s)';

/** Everything about the pod the filters need, computed once per scheduling attempt. */
export interface PreparedPod {
  pod: Pod;
  uid: string;
  namespace: string;
  labels: Readonly<Record<string, string>>;
  /** The controller owner reference, whose selector the default spreading uses. */
  controller: OwnerReference | undefined;
  nodeName: string;
  tolerations: Toleration[];
  toleratesUnschedulable: boolean;
  affinity: CompiledNodeAffinity;
  requests: PodRequests;
  priority: number;
  preemptNever: boolean;
  /** No cpu/memory/ephemeral/scalar request at all: only the pod count can fail. */
  zeroRequest: boolean;
  spread: PodSpreadConstraints;
  podAffinity: PodAffinityTerms | undefined;
  /** nodeFilterKey's answer, kept for the pod's next cycles (a rejected gang's come often). */
  filterKey?: { detailed: boolean; key: string };
}

export function preparePod(pod: Pod, requests?: PodRequests): PreparedPod {
  const tolerations = pod.spec?.tolerations ?? [];
  const r = requests ?? computePodRequests(pod);
  const q = r.requests;
  return {
    pod,
    uid: pod.metadata?.uid ?? `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`,
    namespace: pod.metadata?.namespace ?? '',
    labels: pod.metadata?.labels ?? {},
    controller: pod.metadata?.ownerReferences?.find((o) => o.controller === true),
    nodeName: pod.spec?.nodeName ?? '',
    tolerations,
    toleratesUnschedulable: tolerationsTolerate(tolerations, UNSCHEDULABLE_TAINT),
    affinity: compileNodeAffinity(pod),
    requests: r,
    priority: pod.spec?.priority ?? 0,
    preemptNever: pod.spec?.preemptionPolicy === 'Never',
    zeroRequest:
      q.milliCPU === 0 && q.memory === 0 && q.ephemeralStorage === 0 && (q.scalar?.size ?? 0) === 0,
    spread: compileSpreadConstraints(pod),
    podAffinity: compilePodAffinityTerms(pod),
  };
}

export function filterNodeUnschedulable(p: PreparedPod, ni: NodeInfo): FilterStatus | undefined {
  if (ni.unschedulable && !p.toleratesUnschedulable) {
    return {
      code: 'UnschedulableAndUnresolvable',
      plugin: 'NodeUnschedulable',
      reasons: [ERR_REASON_UNSCHEDULABLE],
    };
  }
  return undefined;
}

export function filterNodeName(p: PreparedPod, ni: NodeInfo): FilterStatus | undefined {
  if (p.nodeName !== '' && p.nodeName !== ni.name) {
    return { code: 'UnschedulableAndUnresolvable', plugin: 'NodeName', reasons: [ERR_REASON_NODE_NAME] };
  }
  return undefined;
}

/**
 * NoSchedule and NoExecute taints must be tolerated; PreferNoSchedule only affects scoring.
 * A NotReady/unreachable node is excluded this way too, through the node lifecycle taints.
 */
export function filterTaintToleration(
  p: PreparedPod,
  ni: NodeInfo,
  detailed = false,
): FilterStatus | undefined {
  if (ni.scheduleTaints.length === 0) return undefined;
  const taint = firstUntoleratedTaint(ni.scheduleTaints, p.tolerations);
  if (!taint) return undefined;
  const reason = detailed
    ? `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`
    : ERR_REASON_TAINT_GENERIC;
  return { code: 'UnschedulableAndUnresolvable', plugin: 'TaintToleration', reasons: [reason] };
}

export function filterNodeAffinity(p: PreparedPod, ni: NodeInfo): FilterStatus | undefined {
  const req = p.affinity.required;
  if (req && !req(ni.labels, ni.name)) {
    return { code: 'UnschedulableAndUnresolvable', plugin: 'NodeAffinity', reasons: [ERR_REASON_AFFINITY] };
  }
  return undefined;
}

/** Numbers the fit check needs, so preemption can rerun it with victims subtracted. */
export interface NodeUsage {
  milliCPU: number;
  memory: number;
  ephemeralStorage: number;
  podCount: number;
  scalar: (name: string) => number;
}

export function nodeUsage(ni: NodeInfo): NodeUsage {
  return {
    milliCPU: ni.reqMilliCPU,
    memory: ni.reqMemory,
    ephemeralStorage: ni.reqEphemeralStorage,
    podCount: ni.podCount,
    scalar: (n) => ni.scalarRequested(n),
  };
}

/**
 * NodeResourcesFit's filter. All shortfalls are reported; the status is Unresolvable when the
 * pod could not fit even on the empty node, which tells preemption not to bother.
 */
/** Appends to a lazily created list, so the common all-fits path allocates nothing. */
function withReason(list: string[] | undefined, reason: string): string[] {
  if (!list) return [reason];
  list.push(reason);
  return list;
}

export function fitsRequest(p: PreparedPod, ni: NodeInfo, used?: NodeUsage): FilterStatus | undefined {
  let reasons: string[] | undefined;
  let unresolvable = false;
  const podCount = used ? used.podCount : ni.podCount;
  if (podCount + 1 > ni.allowedPodNumber) reasons = withReason(reasons, 'Too many pods');
  if (!p.zeroRequest) {
    const q = p.requests.requests;
    const cpu = used ? used.milliCPU : ni.reqMilliCPU;
    if (q.milliCPU > 0 && q.milliCPU > ni.allocMilliCPU - cpu) {
      reasons = withReason(reasons, 'Insufficient cpu');
      if (q.milliCPU > ni.allocMilliCPU) unresolvable = true;
    }
    const mem = used ? used.memory : ni.reqMemory;
    if (q.memory > 0 && q.memory > ni.allocMemory - mem) {
      reasons = withReason(reasons, 'Insufficient memory');
      if (q.memory > ni.allocMemory) unresolvable = true;
    }
    const eph = used ? used.ephemeralStorage : ni.reqEphemeralStorage;
    if (q.ephemeralStorage > 0 && q.ephemeralStorage > ni.allocEphemeralStorage - eph) {
      reasons = withReason(reasons, 'Insufficient ephemeral-storage');
      if (q.ephemeralStorage > ni.allocEphemeralStorage) unresolvable = true;
    }
    if (q.scalar) {
      for (const [name, want] of q.scalar) {
        if (want === 0) continue;
        const alloc = ni.scalarAllocatable(name);
        const have = used ? used.scalar(name) : ni.scalarRequested(name);
        if (want > alloc - have) {
          reasons = withReason(reasons, `Insufficient ${name}`);
          if (want > alloc) unresolvable = true;
        }
      }
    }
  }
  if (!reasons) return undefined;
  const code = unresolvable ? 'UnschedulableAndUnresolvable' : 'Unschedulable';
  if (reasons.length > 1) return { code, plugin: 'NodeResourcesFit', reasons };
  // One shortfall is the usual rejection: one status object per reason, shared by every node
  // it rejects (statuses are only read), which FitError's histogram counts at once.
  const key = `${code}\u0000${reasons[0]}`;
  let st = singleShortfall.get(key);
  if (!st) {
    st = { code, plugin: 'NodeResourcesFit', reasons };
    singleShortfall.set(key, st);
  }
  return st;
}

const singleShortfall = new Map<string, FilterStatus>();

export function filterNodeResourcesFit(p: PreparedPod, ni: NodeInfo): FilterStatus | undefined {
  return fitsRequest(p, ni);
}

export interface FilterOptions {
  /** Report `{key: value}` of the untolerated taint, as kube-scheduler did before 1.34.2. */
  detailedTaintReasons?: boolean;
}

/** What the PreFilters computed for this cycle; undefined where the plugin has nothing to check. */
export interface CycleState {
  spread?: SpreadFilterState;
  interPod?: InterPodFilterState;
}

/** The filters that read other pods, after NodeResourcesFit as in the default profile. */
export function runPodFilters(cycle: CycleState, ni: NodeInfo): FilterStatus | undefined {
  return (
    (cycle.spread && filterTopologySpread(cycle.spread, ni)) ??
    (cycle.interPod && filterInterPodAffinity(cycle.interPod, ni))
  );
}

/** PreFilterExtensions: `e` added to (1) or removed from (−1) node `ni` in the cycle's counts. */
export function updateCycleState(cycle: CycleState, e: PodEntry, ni: NodeInfo, delta: 1 | -1): void {
  if (cycle.spread) updateSpreadState(cycle.spread, e, ni, delta);
  if (cycle.interPod) updateInterPodState(cycle.interPod, e, ni, delta);
}

/**
 * The inputs of the filters up to NodeResourcesFit, the ones that read only the node and the
 * pod: equal keys get equal verdicts on a node whose state has not changed.
 */
export function nodeFilterKey(p: PreparedPod, opts: FilterOptions): string {
  const detailed = opts.detailedTaintReasons === true;
  if (p.filterKey?.detailed === detailed) return p.filterKey.key;
  const spec = p.pod.spec;
  const q = p.requests.requests;
  const key = JSON.stringify([
    p.nodeName,
    p.tolerations,
    spec?.nodeSelector ?? null,
    spec?.affinity?.nodeAffinity ?? null,
    q.milliCPU,
    q.memory,
    q.ephemeralStorage,
    q.scalar ? [...q.scalar] : null,
    detailed,
  ]);
  p.filterKey = { detailed, key };
  return key;
}

/**
 * runFilters for a cycle without filters that read other pods, on the node at `i` in
 * `state.nodes`, remembered in the pod shape's verdicts (ClusterState.verdicts): a cycle
 * after another pod of the same shape was tried finds the unchanged nodes' verdicts there.
 */
export function runNodeFiltersMemo(
  state: ClusterState,
  p: PreparedPod,
  i: number,
  opts: FilterOptions,
  verdicts: ShapeVerdicts,
): FilterStatus | undefined {
  if (verdicts.stamp[i] === state.verdicts.stamp[i]) return verdicts.status[i];
  const st = runFilters(p, state.nodes[i]!, opts);
  state.verdicts.hold(verdicts, i, st);
  return st;
}

/** Runs the filters in profile order and stops at the first failure, like the framework. */
export function runFilters(
  p: PreparedPod,
  ni: NodeInfo,
  opts: FilterOptions = {},
  cycle: CycleState = {},
): FilterStatus | undefined {
  return (
    filterNodeUnschedulable(p, ni) ??
    filterNodeName(p, ni) ??
    filterTaintToleration(p, ni, opts.detailedTaintReasons === true) ??
    filterNodeAffinity(p, ni) ??
    fitsRequest(p, ni) ??
    runPodFilters(cycle, ni)
  );
}
