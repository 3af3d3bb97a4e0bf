/**
 * Kueue's scheduling decision, as a pure function of a snapshot: which pending Workloads
 * the ClusterQueues admit now, with which flavors, which admitted Workloads are preempted
 * for them, and why the others wait. Read from kueue v0.19's pkg/scheduler/scheduler.go
 * (cycles, entry order, fits re-check, preemption issuing) and
 * pkg/scheduler/flavorassigner/flavorassigner.go (flavor choice, fungibility, messages);
 * quota arithmetic with cohorts is in quota.ts, preemption in preemption.ts.
 *
 * Why one file: one scheduling cycle in upstream's order (entries, flavor assignment, fit,
 * preemption), read together against scheduler.go and flavorassigner.go.
 */

import type { PodSpec } from '../../kube/builtin.ts';
import { findCondition } from '../../kube/conditions.ts';
import { labelSelectorMatches } from '../../kube/labels.ts';
import { type PodLike, podRequestsMilli } from '../../kube/pod.ts';
import { formatQuantity, parseQuantityMilli, quantityFromMilli } from '../../kube/quantity.ts';
import { firstUntoleratedTaint } from '../scheduler/core/taints.ts';
import {
  type Admission,
  type ClusterQueue,
  JOB_UID_LABEL,
  type LocalQueue,
  type ResourceFlavor,
  type Workload,
  WorkloadConditions,
} from './api.ts';
import {
  type Admitted,
  getTargets,
  type PreemptionContext,
  type Preemptor,
  preemptionMessage,
  preemptionOf,
  type QueuePreemption,
  queuePath,
  simulatePreemption,
  type Target,
} from './preemption.ts';
import {
  addUsage,
  available,
  borrowLevel,
  buildQuotaTree,
  type FR,
  fr,
  nominal,
  potentialAvailable,
  type QuotaNode,
  type QuotaTree,
} from './quota.ts';

export interface Snapshot {
  flavors: Map<string, ResourceFlavor>;
  clusterQueues: Map<string, ClusterQueue>;
  /** By `namespace/name`. */
  localQueues: Map<string, LocalQueue>;
  /** Namespace labels by namespace name. */
  namespaces: Map<string, Record<string, string>>;
  /** The workloads a pass reads (finished ones may be left out: it skips them). */
  workloads: Workload[];
  /** Tie-break between workloads created in the same second (first seen first). */
  order?: (wl: Workload) => number;
  /** waitForPodsReady.blockAdmission: admit one at a time until admitted pods are ready. */
  blockAdmission?: boolean;
  /** waitForPodsReady.requeuingStrategy.timestamp (default Eviction). */
  requeuingTimestamp?: 'Eviction' | 'Creation';
}

export interface Pending {
  key: string;
  /** QuotaReserved=False reason: Pending, Inadmissible, or Waiting (blockAdmission). */
  reason: 'Pending' | 'Inadmissible' | 'Waiting';
  message: string;
}

export interface ScheduleResult {
  /** `flavorsConsidered`: the QuotaReserved event's `Flavors considered` (flavorsConsidered). */
  admit: { key: string; workload: Workload; admission: Admission; flavorsConsidered: string }[];
  pending: Pending[];
  /** Admitted workloads to evict (reason InClusterQueue, InCohortReclamation...). */
  preempt: { key: string; reason: string; message: string; preemptorKey: string }[];
}

export function keyOf(wl: Workload): string {
  return `${wl.metadata.namespace ?? ''}/${wl.metadata.name ?? ''}`;
}

export function isTrue(wl: Workload, type: string): boolean {
  return findCondition(wl.status?.conditions, type)?.status === 'True';
}

export function isFinished(wl: Workload): boolean {
  return isTrue(wl, WorkloadConditions.Finished);
}

export function hasQuotaReservation(wl: Workload): boolean {
  return Boolean(wl.status?.admission) && isTrue(wl, WorkloadConditions.QuotaReserved);
}

export function isAdmitted(wl: Workload): boolean {
  return hasQuotaReservation(wl) && isTrue(wl, WorkloadConditions.Admitted);
}

/** Waiting for admission: not finished, not reserving, active, and not held after an eviction. */
export function isCandidate(wl: Workload): boolean {
  if (isFinished(wl) || hasQuotaReservation(wl) || wl.metadata.deletionTimestamp) return false;
  if (wl.spec.active === false) return false;
  const rq = findCondition(wl.status?.conditions, WorkloadConditions.Requeued);
  return rq?.status !== 'False';
}

/** Why a ClusterQueue cannot admit anything (undefined when it can). */
export function clusterQueueInactive(
  cq: ClusterQueue,
  flavors: Map<string, ResourceFlavor>,
): string | undefined {
  const stop = cq.spec?.stopPolicy;
  if (stop && stop !== 'None') return 'Stopped';
  for (const rg of cq.spec?.resourceGroups ?? []) {
    for (const f of rg.flavors ?? []) if (!flavors.has(f.name)) return 'FlavorNotFound';
  }
  return undefined;
}

/** The local queue a workload names and the cluster queue behind it, or why there is none. */
export function resolveQueue(
  wl: Workload,
  snap: Pick<Snapshot, 'localQueues' | 'clusterQueues' | 'flavors' | 'namespaces'>,
): { cq: ClusterQueue; lq: LocalQueue } | { reason: string } {
  const ns = wl.metadata.namespace ?? '';
  const q = wl.spec.queueName ?? '';
  const lq = snap.localQueues.get(`${ns}/${q}`);
  if (!lq) return { reason: `LocalQueue ${q} doesn't exist` };
  if (lq.spec?.stopPolicy && lq.spec.stopPolicy !== 'None') return { reason: `LocalQueue ${q} is inactive` };
  const cqName = lq.spec?.clusterQueue ?? '';
  const cq = snap.clusterQueues.get(cqName);
  if (!cq) return { reason: `ClusterQueue ${cqName} doesn't exist` };
  if (clusterQueueInactive(cq, snap.flavors)) return { reason: `ClusterQueue ${cqName} is inactive` };
  // A missing selector admits no namespace; {} admits all (Kueue's rule).
  const sel = cq.spec?.namespaceSelector;
  if (!sel || !labelSelectorMatches(sel, snap.namespaces.get(ns) ?? {})) {
    return { reason: "Workload namespace doesn't match ClusterQueue selector" };
  }
  return { cq, lq };
}

/** Usage in milli-units by flavor and resource. */
export type Usage = Map<string, Map<string, bigint>>;

function add(u: Usage, flavor: string, resource: string, milli: bigint): void {
  let m = u.get(flavor);
  if (!m) {
    m = new Map();
    u.set(flavor, m);
  }
  m.set(resource, (m.get(resource) ?? 0n) + milli);
}

function get(u: Usage, flavor: string, resource: string): bigint {
  return u.get(flavor)?.get(resource) ?? 0n;
}

// Informers replace an object on every change, so parsed values can be cached per object.
const usageCache = new WeakMap<Workload, [string, string, bigint][]>();

/** What an admitted workload holds in its ClusterQueue. */
export function usageOf(wl: Workload, into: Usage = new Map()): Usage {
  let parsed = usageCache.get(wl);
  if (!parsed) {
    parsed = [];
    for (const psa of wl.status?.admission?.podSetAssignments ?? []) {
      for (const [res, q] of Object.entries(psa.resourceUsage ?? {})) {
        const flavor = psa.flavors?.[res];
        if (!flavor) continue;
        try {
          parsed.push([flavor, res, parseQuantityMilli(q)]);
        } catch {
          // A hand-written malformed quantity holds nothing.
        }
      }
    }
    usageCache.set(wl, parsed);
  }
  for (const [flavor, res, milli] of parsed) add(into, flavor, res, milli);
  return into;
}

/** Total requests of a pod set (milli-units), `pods` counted when the queue covers it. */
export function podSetRequests(template: PodLike, count: number, coversPods: boolean): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const [res, milli] of Object.entries(podRequestsMilli(template))) {
    if (milli > 0n) out.set(res, milli * BigInt(count));
  }
  if (coversPods && count > 0) out.set('pods', BigInt(count) * 1000n);
  return out;
}

const requestsCache = new WeakMap<Workload, Map<string, Map<string, bigint>>>();

/** podSetRequests of one pod set, cached per workload object. */
function requestsOf(wl: Workload, index: number, coversPods: boolean): Map<string, bigint> {
  let perSet = requestsCache.get(wl);
  if (!perSet) {
    perSet = new Map();
    requestsCache.set(wl, perSet);
  }
  const key = `${index}/${coversPods}`;
  let reqs = perSet.get(key);
  if (!reqs) {
    const ps = wl.spec.podSets[index]!;
    reqs = podSetRequests({ spec: ps.template?.spec ?? {} }, ps.count ?? 1, coversPods);
    perSet.set(key, reqs);
  }
  return reqs;
}

/**
 * Whether a flavor can host a pod set (checkFlavorForPodSets): its taints are tolerated (by
 * the pod set or the flavor's own tolerations) and, on the flavor's own label keys, the
 * nodeSelector agrees with its node labels.
 */
function flavorMatches(flavor: ResourceFlavor, spec: PodSpec): string | undefined {
  const name = flavor.metadata.name;
  const tols = [...(spec.tolerations ?? []), ...(flavor.spec?.tolerations ?? [])];
  const taint = firstUntoleratedTaint(flavor.spec?.nodeTaints ?? [], tols);
  // corev1.Taint.ToString: key=value:effect, or key:effect without a value.
  if (taint)
    return `untolerated taint ${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect} in flavor ${name}`;
  const selector = spec.nodeSelector ?? {};
  const labels = flavor.spec?.nodeLabels ?? {};
  for (const [k, v] of Object.entries(selector)) {
    if (k in labels && labels[k] !== v) return `flavor ${name} doesn't match node affinity`;
  }
  return undefined;
}

/**
 * A quantity as Kueue's ResourceFormatter writes it (pkg/resources/resource_formatter.go):
 * memory, ephemeral storage and hugepages in binary units (`8Gi`), the rest decimal.
 */
function fmt(milli: bigint, resource: string): string {
  const binary =
    resource === 'memory' || resource === 'ephemeral-storage' || resource.startsWith('hugepages-');
  // `pods` is counted in whole pods.
  const value = resource === 'pods' ? (milli / 1000n) * 1000n : milli;
  return formatQuantity(quantityFromMilli(value, binary ? 'BinarySI' : 'DecimalSI'));
}

/**
 * How a flavor can take a request, from worst to best (flavorassigner's preemptionMode):
 * not at all, only by preempting though no candidate exists, by preempting within the
 * ClusterQueue, by reclaiming from the cohort, or right away.
 */
const NO_FIT = 0;
const NO_CANDIDATES = 1;
const PREEMPT = 2;
const RECLAIM = 3;
const FIT = 4;

interface Mode {
  mode: number;
  borrow: number;
}

/** isPreferred with the default preference, BorrowingOverPreemption. */
function isPreferred(a: Mode, b: Mode): boolean {
  if (a.mode === NO_FIT) return false;
  if (b.mode === NO_FIT) return true;
  const aNone = a.mode === NO_CANDIDATES;
  if (aNone !== (b.mode === NO_CANDIDATES)) return !aNone;
  if (a.mode !== b.mode) return a.mode > b.mode;
  return a.borrow < b.borrow;
}

interface Fungibility {
  whenCanBorrow: 'MayStopSearch' | 'TryNextFlavor';
  whenCanPreempt: 'MayStopSearch' | 'TryNextFlavor';
}

function fungibilityOf(cq: ClusterQueue): Fungibility {
  const f = (cq.spec?.flavorFungibility ?? {}) as Partial<Fungibility>;
  return {
    whenCanBorrow: f.whenCanBorrow ?? 'MayStopSearch',
    whenCanPreempt: f.whenCanPreempt ?? 'TryNextFlavor',
  };
}

function shouldTryNextFlavor(m: Mode, f: Fungibility): boolean {
  if (m.mode === NO_FIT || m.mode === NO_CANDIDATES) return true;
  if ((m.mode === PREEMPT || m.mode === RECLAIM) && f.whenCanPreempt === 'TryNextFlavor') return true;
  return m.borrow > 0 && f.whenCanBorrow === 'TryNextFlavor';
}

export interface PodSetFlavors {
  name: string;
  count: number;
  /** Flavor by resource, and how it was assigned. */
  flavors: Record<string, string>;
  modes: Record<string, number>;
  requests: Map<string, bigint>;
  /** Why the pod set does not simply fit (Kueue's Status reasons); empty when it fits. */
  reasons: string[];
  assigned: boolean;
  /** Every flavor tried, by name (FlavorAssignmentAttempts), for the QuotaReserved event. */
  attempts: FlavorAttempt[];
}

/** How one flavor took (or not) a pod set's requests: its worst mode, most borrowing, reasons. */
export interface FlavorAttempt {
  flavor: string;
  mode: number;
  borrow: number;
  reasons: string[];
}

export interface Assignment {
  podSets: PodSetFlavors[];
  mode: 'Fit' | 'Preempt' | 'NoFit';
  /** How far from the ClusterQueue the quota comes from (0: within nominal quota). */
  borrows: number;
  /** Usage by flavor/resource (milli-units). */
  usage: Map<FR, bigint>;
  message: string;
}

/** What the flavor assigner reads besides the workload: the queue's node, flavors, preemption. */
export interface AssignContext {
  tree: QuotaTree;
  flavors: Map<string, ResourceFlavor>;
  preemption: PreemptionContext;
}

/**
 * The `; Flavors considered: …` of the QuotaReserved event
 * (flavor_assigner_attempts.go FormatFlavorAssignmentAttemptsForEvents): per pod set, every
 * flavor tried but one that simply fit, as `flavor(mode[;borrow=n][;reasons])`; empty when
 * every flavor tried fit within nominal quota.
 */
export function flavorsConsidered(podSets: PodSetFlavors[]): string {
  const modeName = (m: number) =>
    m === NO_FIT
      ? 'NoFit'
      : m === FIT
        ? 'Fit'
        : `preemptionMode=${m === NO_CANDIDATES ? 'NoCandidates' : m === PREEMPT ? 'Preempt' : 'Reclaim'}`;
  return podSets
    .map((ps) => {
      const tried = ps.attempts
        .filter((a) => a.mode !== FIT || a.borrow > 0)
        .map(
          (a) =>
            `${a.flavor}(${modeName(a.mode)}${a.borrow > 0 ? `;borrow=${a.borrow}` : ''}${a.reasons.map((r) => `;${r}`).join('')})`,
        );
      return tried.length > 0 ? `${ps.name}: ${tried.join(', ')}` : '';
    })
    .filter((x) => x !== '')
    .join(' | ');
}

/** mergeFlavorAttempts: a flavor tried for several resource groups keeps its worst outcome. */
function addAttempt(into: Map<string, FlavorAttempt>, a: FlavorAttempt): void {
  const cur = into.get(a.flavor);
  const reasons = [...new Set([...(cur?.reasons ?? []), ...a.reasons])].sort();
  into.set(a.flavor, {
    flavor: a.flavor,
    mode: cur ? Math.min(cur.mode, a.mode) : a.mode,
    borrow: Math.max(cur?.borrow ?? 0, a.borrow),
    reasons,
  });
}

function assignmentMessage(podSets: PodSetFlavors[]): string {
  return podSets
    .filter((ps) => ps.reasons.length > 0)
    .map((ps) => `couldn't assign flavors to pod set ${ps.name}: ${[...ps.reasons].sort().join(', ')}`)
    .join('; ');
}

/**
 * Flavors for every pod set of `wl` in `cq` given the tree's current usage (Kueue's
 * FlavorAssigner.assignFlavors, without partial admission and topology): per pod set and
 * resource group, flavors in the queue's order, each checked with fitsResourceQuota.
 */
export function assignFlavors(
  wl: Workload,
  cq: ClusterQueue,
  ctx: AssignContext,
  preemptor: Preemptor,
): Assignment {
  const cqName = cq.metadata.name ?? '';
  const node = ctx.tree.queues.get(cqName)!;
  const policy = ctx.preemption.policies.get(cqName)!;
  const fungibility = fungibilityOf(cq);
  const groups = cq.spec?.resourceGroups ?? [];
  const covers = new Set(groups.flatMap((g) => g.coveredResources ?? []));
  const canPreemptWhileBorrowing = policy.borrowWithinCohort !== 'Never';
  const usage = new Map<FR, bigint>();
  const podSets: PodSetFlavors[] = [];
  const done = (mode: Assignment['mode'], borrows: number): Assignment => ({
    podSets,
    mode,
    borrows,
    usage,
    message: assignmentMessage(podSets),
  });
  let worst = FIT;
  let borrows = 0;

  /** fitsResourceQuota: how `request` more of `k` fits, on top of earlier pod sets' `assumed`. */
  const fitsQuota = (
    k: FR,
    resource: string,
    flavor: string,
    assumed: bigint,
    request: bigint,
    reasons: string[],
  ): Mode => {
    const val = assumed + request;
    const maxCapacity = potentialAvailable(node, k);
    if (val > maxCapacity) {
      reasons.push(
        `insufficient quota for ${resource} in flavor ${flavor}, previously considered podsets requests (${fmt(assumed, resource)}) + current podset request (${fmt(request, resource)}) > maximum capacity (${fmt(maxCapacity, resource)})`,
      );
      return { mode: NO_FIT, borrow: 0 };
    }
    const [borrow, mayReclaim] = borrowLevel(node, k, val);
    const avail = available(node, k);
    if (val <= avail) return { mode: FIT, borrow };
    reasons.push(
      `insufficient unused quota for ${resource} in flavor ${flavor}, ${fmt(val - avail, resource)} more needed`,
    );
    if (nominal(node, k) >= val || mayReclaim || canPreemptWhileBorrowing) {
      const [possibility, after] = simulatePreemption(ctx.preemption, preemptor, k, val);
      const mode =
        possibility === 'NoCandidates' ? NO_CANDIDATES : possibility === 'Preempt' ? PREEMPT : RECLAIM;
      return { mode, borrow: after };
    }
    return { mode: NO_FIT, borrow };
  };

  for (const [psIndex, ps] of (wl.spec.podSets ?? []).entries()) {
    const spec = ps.template?.spec ?? {};
    const requests = requestsOf(wl, psIndex, covers.has('pods'));
    const out: PodSetFlavors = {
      name: ps.name,
      count: ps.count ?? 1,
      flavors: {},
      modes: {},
      requests,
      reasons: [],
      assigned: true,
      attempts: [],
    };
    podSets.push(out);
    // finalizeFlavorAssignmentAttempts: by flavor name, whatever the order they were tried in.
    const attempts = new Map<string, FlavorAttempt>();
    const finalizeAttempts = () => {
      out.attempts = [...attempts.values()].sort((a, b) =>
        a.flavor < b.flavor ? -1 : a.flavor > b.flavor ? 1 : 0,
      );
    };
    for (const res of requests.keys()) {
      if (!covers.has(res)) {
        out.reasons.push(`resource ${res} unavailable in ClusterQueue`);
        out.assigned = false;
        return done('NoFit', borrows);
      }
    }
    for (const g of groups) {
      const wanted = (g.coveredResources ?? []).filter((r) => requests.has(r));
      if (wanted.length === 0) continue;
      let best: { flavor: string; modes: Record<string, Mode> } | undefined;
      let bestMode: Mode = { mode: NO_FIT, borrow: Number.MAX_SAFE_INTEGER };
      const reasons: string[] = [];
      for (const f of g.flavors ?? []) {
        const flavor = ctx.flavors.get(f.name);
        if (!flavor) {
          reasons.push(`flavor ${f.name} not found`);
          addAttempt(attempts, {
            flavor: f.name,
            mode: NO_FIT,
            borrow: 0,
            reasons: [`flavor ${f.name} not found`],
          });
          continue;
        }
        const mismatch = flavorMatches(flavor, spec);
        if (mismatch) {
          reasons.push(mismatch);
          addAttempt(attempts, { flavor: f.name, mode: NO_FIT, borrow: 0, reasons: [mismatch] });
          continue;
        }
        let rep: Mode = { mode: FIT, borrow: 0 };
        let maxBorrow = 0;
        const flavorReasons: string[] = [];
        const modes: Record<string, Mode> = {};
        for (const res of wanted) {
          const k = fr(f.name, res);
          const m = fitsQuota(k, res, f.name, usage.get(k) ?? 0n, requests.get(res)!, flavorReasons);
          maxBorrow = Math.max(maxBorrow, m.borrow);
          if (isPreferred(rep, m)) rep = m;
          // As Kueue (requests.ForEach has no early exit), the other resources are still
          // checked after one does not fit: their reasons join the message.
          if (rep.mode === NO_FIT) continue;
          modes[res] = m;
        }
        reasons.push(...flavorReasons);
        addAttempt(attempts, { flavor: f.name, mode: rep.mode, borrow: maxBorrow, reasons: flavorReasons });
        if (!shouldTryNextFlavor(rep, fungibility)) {
          best = { flavor: f.name, modes };
          bestMode = rep;
          break;
        }
        if (isPreferred(rep, bestMode)) {
          best = { flavor: f.name, modes };
          bestMode = rep;
        }
      }
      finalizeAttempts();
      if (!best) {
        out.reasons.push(...reasons);
        out.assigned = false;
        return done('NoFit', borrows);
      }
      if (bestMode.mode !== FIT) out.reasons.push(...reasons);
      worst = Math.min(worst, bestMode.mode);
      borrows = Math.max(borrows, bestMode.borrow);
      for (const res of wanted) {
        out.flavors[res] = best.flavor;
        out.modes[res] = best.modes[res]?.mode ?? NO_FIT;
        const k = fr(best.flavor, res);
        usage.set(k, (usage.get(k) ?? 0n) + requests.get(res)!);
      }
    }
  }
  return done(worst === FIT ? 'Fit' : 'Preempt', borrows);
}

/** What admission looks at in a workload's pod sets: names, counts and pod specs. */
const shapeCache = new WeakMap<Workload, string>();

function shapeOf(wl: Workload): string {
  let shape = shapeCache.get(wl);
  if (shape === undefined) {
    shape = JSON.stringify(wl.spec.podSets?.map((ps) => [ps.name, ps.count, ps.template?.spec]) ?? []);
    shapeCache.set(wl, shape);
  }
  return shape;
}

/**
 * The part of a pending message worth rewriting a Workload for: Kueue's "N more needed"
 * moves with every admission and release, and rewriting every waiting Workload each time
 * would cost more than the number is worth.
 */
export function pendingGist(message: string): string {
  return message.replace(/, [^,]* more needed/g, '');
}

export function priorityOf(wl: Workload): number {
  return typeof wl.spec.priority === 'number' ? wl.spec.priority : 0;
}

function timeOf(s: string | undefined | null): number {
  return (s && Date.parse(s)) || 0;
}

/**
 * GetQueueOrderTimestamp: creation time, or (requeuingStrategy.timestamp `Eviction`, the
 * default) the time of the last eviction for a PodsReady timeout.
 */
export function queueTimestamp(wl: Workload, requeuing: 'Eviction' | 'Creation' = 'Eviction'): number {
  if (requeuing === 'Eviction') {
    const ev = findCondition(wl.status?.conditions, WorkloadConditions.Evicted);
    if (ev?.status === 'True' && ev.reason === 'PodsReadyTimeout') return timeOf(ev.lastTransitionTime);
  }
  return timeOf(wl.metadata.creationTimestamp);
}

/** admittedInfo per informer object (replaced on every change, as usageOf's cache relies on). */
const admittedCache = new WeakMap<Workload, { requeuing: string; info: Admitted }>();

function admittedInfo(wl: Workload, requeuing: 'Eviction' | 'Creation'): Admitted {
  const cached = admittedCache.get(wl);
  if (cached?.requeuing === requeuing) return cached.info;
  const info = readAdmitted(wl, requeuing);
  admittedCache.set(wl, { requeuing, info });
  return info;
}

function readAdmitted(wl: Workload, requeuing: 'Eviction' | 'Creation'): Admitted {
  const usage = new Map<FR, bigint>();
  for (const [f, m] of usageOf(wl)) for (const [r, v] of m) usage.set(fr(f, r), v);
  return {
    key: keyOf(wl),
    uid: wl.metadata.uid ?? '',
    cq: wl.status!.admission!.clusterQueue,
    usage,
    priority: priorityOf(wl),
    queueTs: queueTimestamp(wl, requeuing),
    reservedAt: timeOf(
      findCondition(wl.status?.conditions, WorkloadConditions.QuotaReserved)?.lastTransitionTime,
    ),
    evicted: isTrue(wl, WorkloadConditions.Evicted),
  };
}

/** quotaResourcesToReserve: what a preempting workload holds back in this cycle. */
function toReserve(a: Assignment, node: QuotaNode): Map<FR, bigint> {
  if (a.mode !== 'Preempt') return a.usage;
  const out = new Map<FR, bigint>();
  for (const [k, v] of a.usage) {
    const q = node.quotas.get(k);
    const used = node.usage.get(k) ?? 0n;
    const nominalQuota = q?.nominal ?? 0n;
    let r: bigint;
    if (a.borrows > 0) {
      r = q?.borrowingLimit === undefined ? v : bmin(v, nominalQuota + q.borrowingLimit - used);
    } else r = bmax(0n, bmin(v, nominalQuota - used));
    out.set(k, r);
  }
  return out;
}

const bmin = (a: bigint, b: bigint) => (a < b ? a : b);
const bmax = (a: bigint, b: bigint) => (a > b ? a : b);

function fitsNow(node: QuotaNode, usage: Map<FR, bigint>): boolean {
  for (const [k, v] of usage) if (v > available(node, k)) return false;
  return true;
}

interface Entry {
  wl: Workload;
  key: string;
  cq: ClusterQueue;
  preemptor: Preemptor;
  order: number;
  assignment: Assignment;
  targets: Target[];
}

/**
 * One scheduling pass. Kueue's scheduler runs cycles: it takes the head of every
 * ClusterQueue, assigns flavors against the current usage, orders the heads (within nominal
 * quota before borrowing, then priority, then queue time), and admits each that still fits
 * or preempts for it. A pass runs such cycles until no ClusterQueue has a head left:
 * BestEffortFIFO moves past a head that does not fit, StrictFIFO stops at it, and a
 * ClusterQueue waiting for its preemptions stops until they are done.
 */
export function schedule(snap: Snapshot): ScheduleResult {
  const result: ScheduleResult = { admit: [], pending: [], preempt: [] };
  const requeuing = snap.requeuingTimestamp ?? 'Eviction';
  const tree = buildQuotaTree(snap.clusterQueues.values());
  const admittedByCq = new Map<string, Admitted[]>();
  const policies = new Map<string, QueuePreemption>();
  for (const [name, cq] of snap.clusterQueues) policies.set(name, preemptionOf(cq));
  const queued = new Map<string, Workload[]>();
  let notReady = false;
  for (const wl of snap.workloads) {
    if (isFinished(wl)) continue;
    if (hasQuotaReservation(wl)) {
      const info = admittedInfo(wl, requeuing);
      const node = tree.queues.get(info.cq);
      if (node) for (const [k, v] of info.usage) addUsage(node, k, v);
      let list = admittedByCq.get(info.cq);
      if (!list) {
        list = [];
        admittedByCq.set(info.cq, list);
      }
      list.push(info);
      if (!isTrue(wl, WorkloadConditions.PodsReady)) notReady = true;
      continue;
    }
    if (!isCandidate(wl)) continue;
    const q = resolveQueue(wl, snap);
    if ('reason' in q) {
      result.pending.push({ key: keyOf(wl), reason: 'Inadmissible', message: q.reason });
      continue;
    }
    const name = q.cq.metadata.name!;
    let list = queued.get(name);
    if (!list) {
      list = [];
      queued.set(name, list);
    }
    list.push(wl);
  }
  const preemption: PreemptionContext = { tree, admittedByCq, policies };
  const ctx: AssignContext = { tree, flavors: snap.flavors, preemption };
  const order = snap.order ?? (() => 0);

  interface Lane {
    cq: ClusterQueue;
    list: { wl: Workload; p: number; t: number; o: number }[];
    next: number;
    open: boolean;
    misfits: Map<string, string>;
  }
  const lanes: Lane[] = [];
  for (const [cqName, list] of queued) {
    const keyed = list.map((wl) => ({
      wl,
      p: priorityOf(wl),
      t: queueTimestamp(wl, requeuing),
      o: order(wl),
    }));
    keyed.sort((a, b) => b.p - a.p || a.t - b.t || a.o - b.o);
    lanes.push({ cq: snap.clusterQueues.get(cqName)!, list: keyed, next: 0, open: true, misfits: new Map() });
  }
  const preempted = new Set<string>();
  let blocked = Boolean(snap.blockAdmission) && notReady;

  const settle = (lane: Lane, wl: Workload, reason: Pending['reason'], message: string) => {
    result.pending.push({ key: keyOf(wl), reason, message });
    if (lane.cq.spec?.queueingStrategy === 'StrictFIFO') lane.open = false;
    else lane.next++;
  };
  const holdRest = (lane: Lane) => {
    lane.open = false;
  };

  for (;;) {
    const entries: Entry[] = [];
    for (const lane of lanes) {
      while (lane.open && lane.next < lane.list.length) {
        const head = lane.list[lane.next]!;
        const cqName = lane.cq.metadata.name!;
        const preemptor: Preemptor = { cq: cqName, priority: head.p, queueTs: head.t };
        const pol = policies.get(cqName)!;
        // Within a pass usage only grows and candidates only shrink: a workload shaped like
        // one that found no way in finds none either, which keeps a long queue cheap.
        const cacheKey = `${shapeOf(head.wl)}|${head.p}${pol.withinClusterQueue === 'LowerOrNewerEqualPriority' ? `|${head.t}` : ''}`;
        const known = lane.misfits.get(cacheKey);
        if (known !== undefined) {
          settle(lane, head.wl, 'Pending', known);
          continue;
        }
        const assignment = assignFlavors(head.wl, lane.cq, ctx, preemptor);
        let targets: Target[] = [];
        if (assignment.mode === 'Preempt') {
          const need = new Set<FR>();
          for (const ps of assignment.podSets)
            for (const [res, f] of Object.entries(ps.flavors))
              if ((ps.modes[res] ?? FIT) !== FIT) need.add(fr(f, res));
          targets = getTargets(preemption, preemptor, assignment.usage, need);
        }
        if (assignment.mode === 'NoFit' || (assignment.mode === 'Preempt' && targets.length === 0)) {
          lane.misfits.set(cacheKey, assignment.message);
          settle(lane, head.wl, 'Pending', assignment.message);
          continue;
        }
        entries.push({
          wl: head.wl,
          key: keyOf(head.wl),
          cq: lane.cq,
          preemptor,
          order: head.o,
          assignment,
          targets,
        });
        break;
      }
    }
    if (entries.length === 0) break;
    entries.sort(
      (a, b) =>
        a.assignment.borrows - b.assignment.borrows ||
        b.preemptor.priority - a.preemptor.priority ||
        a.preemptor.queueTs - b.preemptor.queueTs ||
        a.order - b.order,
    );
    for (const e of entries) {
      const lane = lanes.find((l) => l.cq === e.cq)!;
      const node = tree.queues.get(e.preemptor.cq)!;
      if (e.assignment.mode === 'Preempt') {
        if (e.targets.some((t) => preempted.has(t.victim.key))) {
          // Another workload of this cycle preempts the same ones: wait for them.
          result.pending.push({
            key: e.key,
            reason: 'Pending',
            message: 'Workload has overlapping preemption targets with another workload',
          });
          holdRest(lane);
          continue;
        }
        const reserve = toReserve(e.assignment, node);
        for (const [k, v] of reserve) addUsage(node, k, v);
        const preemptorPath = queuePath(tree, e.preemptor.cq);
        for (const t of e.targets) {
          preempted.add(t.victim.key);
          if (t.victim.evicted) continue; // "Preemption ongoing": already on its way out
          result.preempt.push({
            key: t.victim.key,
            reason: t.reason,
            preemptorKey: e.key,
            message: preemptionMessage(
              e.wl.metadata.uid ?? '',
              e.wl.metadata.labels?.[JOB_UID_LABEL] ?? '',
              t.reason,
              preemptorPath,
              queuePath(tree, t.victim.cq),
            ),
          });
        }
        result.pending.push({
          key: e.key,
          reason: 'Pending',
          message: `${e.assignment.message}. Pending the preemption of ${e.targets.length} workload(s)`,
        });
        holdRest(lane);
        continue;
      }
      if (!fitsNow(node, e.assignment.usage)) continue; // re-nominated next cycle
      if (blocked) {
        result.pending.push({
          key: e.key,
          reason: 'Waiting',
          message: 'waiting for all admitted workloads to be in PodsReady condition',
        });
        holdRest(lane);
        continue;
      }
      for (const [k, v] of e.assignment.usage) addUsage(node, k, v);
      result.admit.push({
        key: e.key,
        workload: e.wl,
        admission: {
          clusterQueue: e.preemptor.cq,
          podSetAssignments: e.assignment.podSets.map((ps) => {
            const resourceUsage: Record<string, string> = {};
            for (const [res, milli] of ps.requests) resourceUsage[res] = fmt(milli, res);
            return { name: ps.name, flavors: ps.flavors, resourceUsage, count: ps.count };
          }),
        },
        flavorsConsidered: flavorsConsidered(e.assignment.podSets),
      });
      lane.next++;
      // waitForPodsReady.blockAdmission: the next admission waits for this one's pods.
      if (snap.blockAdmission) blocked = true;
    }
  }
  return result;
}

export interface QueueCounts {
  pending: number;
  reserving: number;
  admitted: number;
  /** Reserved usage by flavor and resource (milli-units). */
  reservation: Usage;
  /** Admitted usage by flavor and resource (milli-units). */
  usage: Usage;
}

function emptyCounts(): QueueCounts {
  return { pending: 0, reserving: 0, admitted: 0, reservation: new Map(), usage: new Map() };
}

/** Pending/reserving/admitted counts and usage per ClusterQueue and per LocalQueue (`ns/name`). */
export function queueCounts(snap: Snapshot): {
  clusterQueues: Map<string, QueueCounts>;
  localQueues: Map<string, QueueCounts>;
} {
  const cqs = new Map<string, QueueCounts>();
  const lqs = new Map<string, QueueCounts>();
  const slot = (m: Map<string, QueueCounts>, k: string) => {
    let c = m.get(k);
    if (!c) {
      c = emptyCounts();
      m.set(k, c);
    }
    return c;
  };
  for (const name of snap.clusterQueues.keys()) slot(cqs, name);
  for (const key of snap.localQueues.keys()) slot(lqs, key);
  for (const wl of snap.workloads) {
    if (isFinished(wl)) continue;
    const lqKey = `${wl.metadata.namespace ?? ''}/${wl.spec.queueName ?? ''}`;
    const lq = snap.localQueues.get(lqKey);
    if (hasQuotaReservation(wl)) {
      const targets = [slot(cqs, wl.status!.admission!.clusterQueue)];
      if (lq) targets.push(slot(lqs, lqKey));
      for (const c of targets) {
        c.reserving++;
        usageOf(wl, c.reservation);
        if (isAdmitted(wl)) {
          c.admitted++;
          usageOf(wl, c.usage);
        }
      }
    } else if (isCandidate(wl) && lq) {
      slot(lqs, lqKey).pending++;
      const cqName = lq.spec?.clusterQueue;
      if (cqName && snap.clusterQueues.has(cqName)) slot(cqs, cqName).pending++;
    }
  }
  return { clusterQueues: cqs, localQueues: lqs };
}

/** Usage as Kueue's status lists it, covering every flavor/resource the queue defines. */
export function usageList(
  u: Usage,
  cq: ClusterQueue | undefined,
  withBorrowed: boolean,
): { name: string; resources: { name: string; total: string; borrowed?: string }[] }[] {
  const names = new Map<string, Set<string>>();
  for (const rg of cq?.spec?.resourceGroups ?? []) {
    for (const f of rg.flavors ?? []) {
      const s = names.get(f.name) ?? new Set<string>();
      for (const r of rg.coveredResources ?? []) s.add(r);
      names.set(f.name, s);
    }
  }
  for (const [f, m] of u) {
    const s = names.get(f) ?? new Set<string>();
    for (const r of m.keys()) s.add(r);
    names.set(f, s);
  }
  return [...names].map(([name, resources]) => ({
    name,
    resources: [...resources].map((r) => {
      const entry: { name: string; total: string; borrowed?: string } = {
        name: r,
        total: fmt(get(u, name, r), r),
      };
      if (withBorrowed) {
        // What the queue uses past its nominal quota comes from its cohort.
        const q = cq?.spec?.resourceGroups
          ?.flatMap((g) => g.flavors ?? [])
          .find((f) => f.name === name)
          ?.resources?.find((x) => x.name === r)?.nominalQuota;
        let nominalMilli = 0n;
        try {
          nominalMilli = q === undefined ? 0n : parseQuantityMilli(q);
        } catch {
          nominalMilli = 0n;
        }
        const over = get(u, name, r) - nominalMilli;
        entry.borrowed = fmt(over > 0n ? over : 0n, r);
      }
      return entry;
    }),
  }));
}
