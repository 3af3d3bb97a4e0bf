/**
 * Kueue's scheduling decision, as a pure function of a snapshot: which pending Workloads
 * each ClusterQueue admits now, with which flavors, and why the others wait. Per
 * ClusterQueue, workloads are taken by priority then age; a workload fits when every pod set
 * finds, for each resource group, the first flavor (in the ClusterQueue's order) that its
 * node labels and taints allow and whose nominal quota has room. StrictFIFO stops at the
 * first workload that does not fit; BestEffortFIFO goes on to the next. No cohorts,
 * borrowing or preemption.
 */

import { labelSelectorMatches } from '../../kube/labels.ts';
import { podRequestsMilli, type PodLike } from '../../kube/pod.ts';
import { formatQuantity, parseQuantityMilli, quantityFromMilli } from '../../kube/quantity.ts';
import { firstUntoleratedTaint } from '../scheduler/core/taints.ts';
import {
  type Admission,
  type ClusterQueue,
  type Condition,
  type LocalQueue,
  type PodSetAssignment,
  type ResourceFlavor,
  type Toleration,
  type Workload,
  WorkloadConditions,
} from './api.ts';

export interface Snapshot {
  flavors: Map<string, ResourceFlavor>;
  clusterQueues: Map<string, ClusterQueue>;
  /** By `namespace/name`. */
  localQueues: Map<string, LocalQueue>;
  /** Namespace labels by namespace name. */
  namespaces: Map<string, Record<string, string>>;
  workloads: Workload[];
  /** Tie-break between workloads created in the same second (first seen first). */
  order?: (wl: Workload) => number;
}

export interface Pending {
  key: string;
  reason: 'Pending' | 'Inadmissible';
  message: string;
}

export interface ScheduleResult {
  admit: { key: string; workload: Workload; admission: Admission }[];
  pending: Pending[];
}

export function keyOf(wl: Workload): string {
  return `${wl.metadata.namespace ?? ''}/${wl.metadata.name ?? ''}`;
}

function cond(wl: Workload, type: string): Condition | undefined {
  return wl.status?.conditions?.find((c) => c.type === type);
}

export function isTrue(wl: Workload, type: string): boolean {
  return cond(wl, type)?.status === 'True';
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
  const rq = cond(wl, WorkloadConditions.Requeued);
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
    const spec = (ps.template?.spec ?? {}) as Record<string, unknown>;
    reqs = podSetRequests({ spec } as PodLike, ps.count ?? 1, coversPods);
    perSet.set(key, reqs);
  }
  return reqs;
}

/** Whether a flavor can host a pod set: its node labels agree with the nodeSelector, its taints are tolerated. */
function flavorMatches(flavor: ResourceFlavor, spec: Record<string, unknown>): string | undefined {
  const selector = (spec.nodeSelector ?? {}) as Record<string, string>;
  const labels = flavor.spec?.nodeLabels ?? {};
  for (const [k, v] of Object.entries(selector)) {
    if (k in labels && labels[k] !== v) return `flavor ${flavor.metadata.name} doesn't match node affinity`;
  }
  const tols = [...((spec.tolerations ?? []) as Toleration[]), ...(flavor.spec?.tolerations ?? [])];
  const taint = firstUntoleratedTaint(flavor.spec?.nodeTaints ?? [], tols);
  return taint && `untolerated taint {${taint.key}: ${taint.value ?? ''}} in flavor ${flavor.metadata.name}`;
}

function fmt(milli: bigint, resource: string): string {
  // `pods` is counted in whole pods.
  return formatQuantity(quantityFromMilli(resource === 'pods' ? (milli / 1000n) * 1000n : milli));
}

function nominal(cq: ClusterQueue): Map<string, Map<string, bigint>> {
  const out = new Map<string, Map<string, bigint>>();
  for (const rg of cq.spec?.resourceGroups ?? []) {
    for (const f of rg.flavors ?? []) {
      for (const r of f.resources ?? []) {
        let milli = 0n;
        try {
          milli = parseQuantityMilli(r.nominalQuota);
        } catch {
          milli = 0n;
        }
        let m = out.get(f.name);
        if (!m) {
          m = new Map();
          out.set(f.name, m);
        }
        m.set(r.name, milli);
      }
    }
  }
  return out;
}

/**
 * Flavors for every pod set of `wl` in `cq`, given what is already used. Returns the
 * assignments (and the usage they add), or the reason it does not fit.
 */
export function assignFlavors(
  wl: Workload,
  cq: ClusterQueue,
  flavors: Map<string, ResourceFlavor>,
  used: Usage,
): { assignments: PodSetAssignment[]; adds: Usage } | { message: string } {
  const groups = cq.spec?.resourceGroups ?? [];
  const covers = new Set(groups.flatMap((g) => g.coveredResources ?? []));
  const quota = nominal(cq);
  const adds: Usage = new Map();
  const assignments: PodSetAssignment[] = [];
  for (const [psIndex, ps] of (wl.spec.podSets ?? []).entries()) {
    const spec = (ps.template?.spec ?? {}) as Record<string, unknown>;
    const reqs = requestsOf(wl, psIndex, covers.has('pods'));
    const chosen: Record<string, string> = {};
    for (const res of reqs.keys()) {
      if (!covers.has(res))
        return {
          message: `couldn't assign flavors to pod set ${ps.name}: resource ${res} unavailable in ClusterQueue`,
        };
    }
    for (const g of groups) {
      const wanted = (g.coveredResources ?? []).filter((r) => reqs.has(r));
      if (wanted.length === 0) continue;
      const reasons: string[] = [];
      let picked: string | undefined;
      for (const f of g.flavors ?? []) {
        const flavor = flavors.get(f.name);
        if (!flavor) continue;
        const mismatch = flavorMatches(flavor, spec);
        if (mismatch) {
          reasons.push(mismatch);
          continue;
        }
        let fits = true;
        for (const res of wanted) {
          const need = reqs.get(res)!;
          const cap = quota.get(f.name)?.get(res) ?? 0n;
          const inUse = get(used, f.name, res) + get(adds, f.name, res);
          if (need > cap) {
            reasons.push(
              `insufficient quota for ${res} in flavor ${f.name}, request > maximum capacity (${fmt(need, res)} > ${fmt(cap, res)})`,
            );
            fits = false;
            break;
          }
          if (inUse + need > cap) {
            reasons.push(
              `insufficient unused quota for ${res} in flavor ${f.name}, ${fmt(inUse + need - cap, res)} more needed`,
            );
            fits = false;
            break;
          }
        }
        if (fits) {
          picked = f.name;
          break;
        }
      }
      if (!picked) {
        return {
          message: `couldn't assign flavors to pod set ${ps.name}: ${reasons.join(', ') || 'no flavor'}`,
        };
      }
      for (const res of wanted) {
        chosen[res] = picked;
        add(adds, picked, res, reqs.get(res)!);
      }
    }
    const resourceUsage: Record<string, string> = {};
    for (const [res, milli] of reqs) resourceUsage[res] = fmt(milli, res);
    assignments.push({ name: ps.name, flavors: chosen, resourceUsage, count: ps.count ?? 1 });
  }
  return { assignments, adds };
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

function priorityOf(wl: Workload): number {
  return typeof wl.spec.priority === 'number' ? wl.spec.priority : 0;
}

export function schedule(snap: Snapshot): ScheduleResult {
  const result: ScheduleResult = { admit: [], pending: [] };
  const used = new Map<string, Usage>();
  const queued = new Map<string, Workload[]>();
  for (const wl of snap.workloads) {
    if (isFinished(wl)) continue;
    if (hasQuotaReservation(wl)) {
      const cqName = wl.status!.admission!.clusterQueue;
      let u = used.get(cqName);
      if (!u) {
        u = new Map();
        used.set(cqName, u);
      }
      usageOf(wl, u);
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
  const order = snap.order ?? (() => 0);
  for (const [cqName, list] of queued) {
    const cq = snap.clusterQueues.get(cqName)!;
    const strict = cq.spec?.queueingStrategy === 'StrictFIFO';
    const keyed = list.map((wl) => ({
      wl,
      p: priorityOf(wl),
      t: Date.parse(wl.metadata.creationTimestamp ?? '') || 0,
      o: order(wl),
    }));
    keyed.sort((a, b) => b.p - a.p || a.t - b.t || a.o - b.o);
    list.length = 0;
    for (const k of keyed) list.push(k.wl);
    let u = used.get(cqName);
    if (!u) {
      u = new Map();
      used.set(cqName, u);
    }
    // Within a pass usage only grows: a workload shaped like one that did not fit does not
    // fit either, which keeps a pass linear when a long queue waits for quota.
    const misfits = new Map<string, string>();
    for (const wl of list) {
      const shape = shapeOf(wl);
      const known = misfits.get(shape);
      const r = known !== undefined ? { message: known } : assignFlavors(wl, cq, snap.flavors, u);
      if ('message' in r) {
        misfits.set(shape, r.message);
        result.pending.push({ key: keyOf(wl), reason: 'Pending', message: r.message });
        if (strict) break;
        continue;
      }
      for (const [f, m] of r.adds) for (const [res, milli] of m) add(u, f, res, milli);
      result.admit.push({
        key: keyOf(wl),
        workload: wl,
        admission: { clusterQueue: cqName, podSetAssignments: r.assignments },
      });
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
      if (withBorrowed) entry.borrowed = '0';
      return entry;
    }),
  }));
}
