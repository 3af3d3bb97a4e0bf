/**
 * Kueue's classical preemption (v0.19, no fair sharing): which admitted Workloads to evict
 * so that a pending one fits. Read from kueue pkg/scheduler/preemption/preemption.go
 * (classicalPreemptions, fillBackWorkloads, workloadFits, preemptionMessage),
 * preemption/classical/{candidate_generator,hierarchical_preemption}.go (candidate
 * classification and validity) and preemption/common/{ordering,preemption_policy}.go.
 *
 * Candidates are workloads of the same ClusterQueue (`withinClusterQueue`) and of
 * ClusterQueues of the cohort that use more than their nominal quota (`reclaimWithinCohort`,
 * `borrowWithinCohort`); the cheapest are taken first (already evicted, other queues, lower
 * priority, most recently admitted) until the preemptor fits, then the ones not needed are
 * given back, newest choice first.
 */

import type { ClusterQueue } from './api.ts';
import {
  addUsage,
  ancestors,
  available,
  borrowingWith,
  borrowLevel,
  type FR,
  fitsInQuota,
  isWithinNominal,
  nominal,
  type QuotaNode,
  type QuotaTree,
  removeUsage,
} from './quota.ts';

export type PreemptionPolicy = 'Never' | 'LowerPriority' | 'LowerOrNewerEqualPriority' | 'Any';

export interface QueuePreemption {
  withinClusterQueue: PreemptionPolicy;
  reclaimWithinCohort: PreemptionPolicy;
  /** borrowWithinCohort.policy: may the preemptor borrow while reclaiming from lower priorities. */
  borrowWithinCohort: 'Never' | 'LowerPriority';
  maxPriorityThreshold?: number;
}

export function preemptionOf(cq: ClusterQueue | undefined): QueuePreemption {
  const p = (cq?.spec?.preemption ?? {}) as {
    withinClusterQueue?: PreemptionPolicy;
    reclaimWithinCohort?: PreemptionPolicy;
    borrowWithinCohort?: { policy?: 'Never' | 'LowerPriority'; maxPriorityThreshold?: number };
  };
  const out: QueuePreemption = {
    withinClusterQueue: p.withinClusterQueue ?? 'Never',
    reclaimWithinCohort: p.reclaimWithinCohort ?? 'Never',
    borrowWithinCohort: p.borrowWithinCohort?.policy ?? 'Never',
  };
  if (typeof p.borrowWithinCohort?.maxPriorityThreshold === 'number')
    out.maxPriorityThreshold = p.borrowWithinCohort.maxPriorityThreshold;
  return out;
}

/** An admitted (quota-reserving) workload as preemption sees it. */
export interface Admitted {
  key: string;
  uid: string;
  cq: string;
  usage: Map<FR, bigint>;
  priority: number;
  /** Queue order timestamp (ms): creation, or the last PodsReady-timeout eviction. */
  queueTs: number;
  /** QuotaReserved transition (ms). */
  reservedAt: number;
  evicted: boolean;
}

export interface Preemptor {
  cq: string;
  priority: number;
  queueTs: number;
}

export const PreemptionReasons = {
  InClusterQueue: 'InClusterQueue',
  InCohortReclamation: 'InCohortReclamation',
  InCohortReclaimWhileBorrowing: 'InCohortReclaimWhileBorrowing',
} as const;

export const HUMAN_READABLE_REASONS: Record<string, string> = {
  InClusterQueue: 'prioritization in the ClusterQueue',
  InCohortReclamation: 'reclamation within the cohort',
  InCohortFairSharing: 'Fair Sharing within the cohort',
  InCohortReclaimWhileBorrowing: 'reclamation within the cohort while borrowing',
};

export interface Target {
  victim: Admitted;
  reason: string;
}

export interface PreemptionContext {
  tree: QuotaTree;
  admittedByCq: Map<string, Admitted[]>;
  policies: Map<string, QueuePreemption>;
}

type Variant =
  | 'Never'
  | 'WithinCQ'
  | 'HierarchicalReclaim'
  | 'ReclaimWithoutBorrowing'
  | 'ReclaimWhileBorrowing';

function reasonOf(v: Variant): string {
  if (v === 'WithinCQ') return PreemptionReasons.InClusterQueue;
  if (v === 'ReclaimWhileBorrowing') return PreemptionReasons.InCohortReclaimWhileBorrowing;
  return PreemptionReasons.InCohortReclamation;
}

export function satisfiesPolicy(p: Preemptor, candidate: Admitted, policy: PreemptionPolicy): boolean {
  const lower = p.priority > candidate.priority;
  if (policy === 'LowerPriority') return lower;
  if (policy === 'LowerOrNewerEqualPriority')
    return lower || (p.priority === candidate.priority && p.queueTs < candidate.queueTs);
  return policy === 'Any';
}

function usesAny(a: Admitted, frs: Set<FR>): boolean {
  for (const k of a.usage.keys()) if (frs.has(k)) return true;
  return false;
}

/** CandidatesOrdering: evicted first, other queues first, lower priority, newest reservation, uid. */
function ordering(cq: string) {
  return (a: Admitted, b: Admitted): number =>
    Number(b.evicted) - Number(a.evicted) ||
    Number(a.cq === cq) - Number(b.cq === cq) ||
    a.priority - b.priority ||
    b.reservedAt - a.reservedAt ||
    (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0);
}

interface Candidate {
  a: Admitted;
  lca?: QuotaNode;
  variant: Variant;
}

function removeWl(tree: QuotaTree, a: Admitted): void {
  const n = tree.queues.get(a.cq);
  if (n) for (const [k, v] of a.usage) removeUsage(n, k, v);
}

function addWl(tree: QuotaTree, a: Admitted): void {
  const n = tree.queues.get(a.cq);
  if (n) for (const [k, v] of a.usage) addUsage(n, k, v);
}

/**
 * The workloads to evict so that `usage` fits in the preemptor's ClusterQueue, with the
 * reason for each; empty when no set of allowed candidates makes it fit.
 */
export function getTargets(
  ctx: PreemptionContext,
  preemptor: Preemptor,
  usage: Map<FR, bigint>,
  frsNeedPreemption: Set<FR>,
): Target[] {
  const cqNode = ctx.tree.queues.get(preemptor.cq);
  const policy = ctx.policies.get(preemptor.cq);
  if (!cqNode || !policy) return [];
  const borrowForbidden = policy.borrowWithinCohort === 'Never';

  const classify = (a: Admitted, advantage: boolean): Variant => {
    if (!usesAny(a, frsNeedPreemption)) return 'Never';
    const same = a.cq === preemptor.cq;
    if (!satisfiesPolicy(preemptor, a, same ? policy.withinClusterQueue : policy.reclaimWithinCohort))
      return 'Never';
    if (same) return 'WithinCQ';
    if (advantage) return 'HierarchicalReclaim';
    if (borrowForbidden) return 'ReclaimWithoutBorrowing';
    const threshold = policy.maxPriorityThreshold;
    const above = a.priority >= preemptor.priority || (threshold !== undefined && a.priority > threshold);
    return above ? 'ReclaimWithoutBorrowing' : 'ReclaimWhileBorrowing';
  };
  const fromQueue = (q: QuotaNode, lca: QuotaNode | undefined, advantage: boolean, out: Candidate[]) => {
    for (const a of ctx.admittedByCq.get(q.name) ?? []) {
      const variant = classify(a, advantage);
      if (variant !== 'Never') out.push({ a, lca, variant });
    }
  };

  const sameQueue: Candidate[] = [];
  if (policy.withinClusterQueue !== 'Never') fromQueue(cqNode, undefined, false, sameQueue);
  const hierarchy: Candidate[] = [];
  const priority: Candidate[] = [];
  if (cqNode.parent && policy.reclaimWithinCohort !== 'Never') {
    const collect = (
      current: QuotaNode,
      subtreeRoot: QuotaNode,
      skip: QuotaNode | undefined,
      advantage: boolean,
      out: Candidate[],
    ) => {
      for (const child of current.childCohorts) {
        if (child === skip || isWithinNominal(child, frsNeedPreemption)) continue;
        collect(child, subtreeRoot, skip, advantage, out);
      }
      for (const q of current.childQueues) {
        if (q === cqNode || isWithinNominal(q, frsNeedPreemption)) continue;
        fromQueue(q, subtreeRoot, advantage, out);
      }
    };
    let [advantage, remaining] = fitsInQuota(cqNode, usage);
    let previous: QuotaNode | undefined;
    for (const root of ancestors(cqNode)) {
      collect(root, root, previous, advantage, advantage ? hierarchy : priority);
      const [fits, rest] = fitsInQuota(root, remaining);
      remaining = rest;
      advantage ||= fits;
      previous = root;
    }
  }
  const order = ordering(preemptor.cq);
  const byOrder = (x: Candidate, y: Candidate) => order(x.a, y.a);
  for (const list of [sameQueue, hierarchy, priority]) list.sort(byOrder);
  const evicted = (l: Candidate[]) => l.filter((c) => c.a.evicted);
  const live = (l: Candidate[]) => l.filter((c) => !c.a.evicted);
  const all = [
    ...evicted(hierarchy),
    ...evicted(priority),
    ...evicted(sameQueue),
    ...live(hierarchy),
    ...live(priority),
    ...live(sameQueue),
  ];
  const noneFromOthers = hierarchy.length === 0 && priority.length === 0;

  const valid = (c: Candidate, borrow: boolean): boolean => {
    if (c.a.cq === preemptor.cq) return true;
    if (borrow && c.variant === 'ReclaimWithoutBorrowing') return false;
    const q = ctx.tree.queues.get(c.a.cq);
    if (!q || isWithinNominal(q, frsNeedPreemption)) return false;
    for (const n of ancestors(q)) {
      if (n === c.lca) break;
      if (isWithinNominal(n, frsNeedPreemption)) return false;
    }
    return true;
  };
  const fits = (allowBorrowing: boolean): boolean => {
    for (const [k, v] of usage) {
      if (!allowBorrowing && borrowingWith(cqNode, k, v)) return false;
      if (v > available(cqNode, k)) return false;
    }
    return true;
  };
  const underNominal = () => {
    for (const k of frsNeedPreemption) if (nominal(cqNode, k) <= (cqNode.usage.get(k) ?? 0n)) return false;
    return true;
  };

  let attempts: boolean[];
  if (noneFromOthers || (borrowForbidden && !underNominal())) attempts = [true];
  else if (borrowForbidden && hierarchy.length === 0) attempts = [false, true];
  else attempts = [true, false];

  for (const borrow of attempts) {
    const targets: Target[] = [];
    for (const c of all) {
      if (!valid(c, borrow)) continue;
      removeWl(ctx.tree, c.a);
      targets.push({ victim: c.a, reason: reasonOf(c.variant) });
      if (fits(borrow)) {
        // Give back, newest choice first, every target the preemptor fits without.
        for (let i = targets.length - 2; i >= 0; i--) {
          addWl(ctx.tree, targets[i]!.victim);
          if (fits(borrow)) {
            targets[i] = targets[targets.length - 1]!;
            targets.pop();
          } else removeWl(ctx.tree, targets[i]!.victim);
        }
        for (const t of targets) addWl(ctx.tree, t.victim);
        return targets;
      }
    }
    for (const t of targets) addWl(ctx.tree, t.victim);
  }
  return [];
}

export type Possibility = 'NoCandidates' | 'Preempt' | 'Reclaim';

/** SimulatePreemption: whether preemption could make `val` of `k` fit, and the borrowing after it. */
export function simulatePreemption(
  ctx: PreemptionContext,
  preemptor: Preemptor,
  k: FR,
  val: bigint,
): [Possibility, number] {
  const cqNode = ctx.tree.queues.get(preemptor.cq)!;
  const targets = getTargets(ctx, preemptor, new Map([[k, val]]), new Set([k]));
  if (targets.length === 0) return ['NoCandidates', borrowLevel(cqNode, k, val)[0]];
  for (const t of targets) removeWl(ctx.tree, t.victim);
  const borrow = borrowLevel(cqNode, k, val)[0];
  for (const t of targets) addWl(ctx.tree, t.victim);
  return [targets.some((t) => t.victim.cq === preemptor.cq) ? 'Preempt' : 'Reclaim', borrow];
}

/** `/cohort/.../cq`, as Kueue's preemption messages name a queue. */
export function queuePath(tree: QuotaTree, cq: string): string {
  const n = tree.queues.get(cq);
  const parts = [cq];
  if (n) for (const a of ancestors(n)) parts.unshift(a.name);
  return `/${parts.join('/')}`;
}

/** preemptionMessage, written on the preempted Workload's Evicted and Preempted conditions. */
export function preemptionMessage(
  preemptorUid: string,
  preemptorJobUid: string,
  reason: string,
  preemptorPath: string,
  preempteePath: string,
): string {
  return (
    `Preempted to accommodate a workload (UID: ${preemptorUid || 'UNKNOWN'}, JobUID: ${preemptorJobUid || 'UNKNOWN'}) ` +
    `due to ${HUMAN_READABLE_REASONS[reason] ?? 'UNKNOWN'}; preemptor path: ${preemptorPath || 'UNKNOWN'}; ` +
    `preemptee path: ${preempteePath || 'UNKNOWN'}`
  );
}
