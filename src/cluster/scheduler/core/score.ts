/**
 * Score plugins of the default profile that depend only on nodes and the pod:
 * NodeResourcesFit (LeastAllocated or MostAllocated), NodeResourcesBalancedAllocation,
 * TaintToleration (PreferNoSchedule) and NodeAffinity (preferred terms), with upstream's
 * integer arithmetic, normalisation and plugin weights. The plugins that look at other pods
 * (PodTopologySpread, InterPodAffinity) score in spread-score.ts and inter-pod-score.ts.
 */

import type { NodeInfo } from './cluster-state.ts';
import type { PreparedPod } from './filters.ts';
import { tolerationsTolerate } from './taints.ts';

export const MAX_NODE_SCORE = 100;

export interface ResourceWeight {
  name: string;
  weight: number;
}

export interface ScoringOptions {
  /** NodeResourcesFit scoring strategy; LeastAllocated spreads, MostAllocated bin-packs. */
  strategy?: 'LeastAllocated' | 'MostAllocated';
  /** Resources the strategy scores; default cpu and memory with weight 1 each. */
  resources?: ResourceWeight[];
  /**
   * Plugin weights as in the default profile: fit 1, balanced 1, taint 3, affinity 2,
   * spread (PodTopologySpread) 2, interPod (InterPodAffinity) 2.
   */
  weights?: Partial<PluginWeights>;
}

export interface PluginWeights {
  fit: number;
  balanced: number;
  taint: number;
  affinity: number;
  spread: number;
  interPod: number;
}

export function pluginWeights(opts: ScoringOptions = {}): PluginWeights {
  return { fit: 1, balanced: 1, taint: 3, affinity: 2, spread: 2, interPod: 2, ...opts.weights };
}

export const DEFAULT_SCORING_RESOURCES: ResourceWeight[] = [
  { name: 'cpu', weight: 1 },
  { name: 'memory', weight: 1 },
];

/** Allocatable and would-be-requested amounts of one resource on one node; alloc 0 skips it. */
function allocatableAndRequested(
  p: PreparedPod,
  ni: NodeInfo,
  name: string,
  useRequested: boolean,
): [alloc: number, req: number] {
  const r = p.requests;
  switch (name) {
    case 'cpu':
      return useRequested
        ? [ni.allocMilliCPU, ni.reqMilliCPU + r.requests.milliCPU]
        : [ni.allocMilliCPU, ni.nonZeroMilliCPU + r.nonZeroMilliCPU];
    case 'memory':
      return useRequested
        ? [ni.allocMemory, ni.reqMemory + r.requests.memory]
        : [ni.allocMemory, ni.nonZeroMemory + r.nonZeroMemory];
    case 'ephemeral-storage':
      return [ni.allocEphemeralStorage, ni.reqEphemeralStorage + r.requests.ephemeralStorage];
    default: {
      // A scalar resource the pod does not ask for is left out rather than scored as free.
      const want = r.requests.scalar?.get(name) ?? 0;
      if (want === 0) return [0, 0];
      return [ni.scalarAllocatable(name), ni.scalarRequested(name) + want];
    }
  }
}

export function leastRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0 || requested > capacity) return 0;
  return Math.floor(((capacity - requested) * MAX_NODE_SCORE) / capacity);
}

export function mostRequestedScore(requested: number, capacity: number): number {
  if (capacity === 0) return 0;
  const r = Math.min(requested, capacity);
  return Math.floor((r * MAX_NODE_SCORE) / capacity);
}

/** NodeResourcesFit's score for one node, 0..100. */
export function resourceFitScore(
  p: PreparedPod,
  ni: NodeInfo,
  strategy: 'LeastAllocated' | 'MostAllocated' = 'LeastAllocated',
  resources: ResourceWeight[] = DEFAULT_SCORING_RESOURCES,
): number {
  const fn = strategy === 'MostAllocated' ? mostRequestedScore : leastRequestedScore;
  let nodeScore = 0;
  let weightSum = 0;
  for (const { name, weight } of resources) {
    const [alloc, req] = allocatableAndRequested(p, ni, name, false);
    if (alloc === 0) continue;
    nodeScore += fn(req, alloc) * weight;
    weightSum += weight;
  }
  return weightSum === 0 ? 0 : Math.floor(nodeScore / weightSum);
}

/** NodeResourcesBalancedAllocation: 100 × (1 − std of cpu/memory utilisation fractions). */
export function balancedAllocationScore(p: PreparedPod, ni: NodeInfo): number {
  const fractions: number[] = [];
  for (const name of ['cpu', 'memory']) {
    const [alloc, req] = allocatableAndRequested(p, ni, name, true);
    if (alloc === 0) continue;
    fractions.push(Math.min(req / alloc, 1));
  }
  let std = 0;
  if (fractions.length === 2) std = Math.abs((fractions[0]! - fractions[1]!) / 2);
  else if (fractions.length > 2) {
    const mean = fractions.reduce((a, b) => a + b, 0) / fractions.length;
    std = Math.sqrt(fractions.reduce((a, f) => a + (f - mean) * (f - mean), 0) / fractions.length);
  }
  return Math.trunc((1 - std) * MAX_NODE_SCORE);
}

/** Balanced allocation skips best-effort pods so they do not all pile onto one node. */
export function isBestEffort(p: PreparedPod): boolean {
  const q = p.requests.requests;
  return q.milliCPU === 0 && q.memory === 0;
}

/** Raw TaintToleration score: PreferNoSchedule taints the pod does not tolerate (lower is better). */
export function intolerablePreferNoSchedule(p: PreparedPod, ni: NodeInfo): number {
  if (ni.preferNoScheduleTaints.length === 0) return 0;
  const tols = p.tolerations.filter((t) => !t.effect || t.effect === 'PreferNoSchedule');
  let n = 0;
  for (const taint of ni.preferNoScheduleTaints) if (!tolerationsTolerate(tols, taint)) n++;
  return n;
}

/** Raw NodeAffinity score: the summed weights of matching preferred terms. */
export function preferredAffinityScore(p: PreparedPod, ni: NodeInfo): number {
  let s = 0;
  for (const t of p.affinity.preferred) if (t.match(ni.labels, ni.name)) s += t.weight;
  return s;
}

/** helper.DefaultNormalizeScore: scale to 0..100 by the maximum, optionally reversed. */
export function normalizeScores(scores: number[], reverse: boolean): void {
  let max = 0;
  for (const s of scores) if (s > max) max = s;
  if (max === 0) {
    if (reverse) scores.fill(MAX_NODE_SCORE);
    return;
  }
  for (let i = 0; i < scores.length; i++) {
    let s = Math.floor((MAX_NODE_SCORE * scores[i]!) / max);
    if (reverse) s = MAX_NODE_SCORE - s;
    scores[i] = s;
  }
}

/** Weighted totals over the feasible nodes, in their order. */
export function scoreNodes(p: PreparedPod, nodes: readonly NodeInfo[], opts: ScoringOptions = {}): number[] {
  const w = pluginWeights(opts);
  const strategy = opts.strategy ?? 'LeastAllocated';
  const resources = opts.resources ?? DEFAULT_SCORING_RESOURCES;
  const n = nodes.length;
  const totals = new Array<number>(n);
  const balanced = w.balanced !== 0 && !isBestEffort(p);
  let anyTaint = false;
  const taintRaw = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    const ni = nodes[i]!;
    let t = w.fit * resourceFitScore(p, ni, strategy, resources);
    if (balanced) t += w.balanced * balancedAllocationScore(p, ni);
    totals[i] = t;
    const tr = intolerablePreferNoSchedule(p, ni);
    taintRaw[i] = tr;
    if (tr !== 0) anyTaint = true;
  }
  if (w.taint !== 0) {
    // With no PreferNoSchedule taint anywhere every node gets the same 100: skip the work.
    if (anyTaint) {
      normalizeScores(taintRaw, true);
      for (let i = 0; i < n; i++) totals[i]! += w.taint * taintRaw[i]!;
    } else {
      for (let i = 0; i < n; i++) totals[i]! += w.taint * MAX_NODE_SCORE;
    }
  }
  if (w.affinity !== 0 && p.affinity.preferred.length > 0) {
    const aff = nodes.map((ni) => preferredAffinityScore(p, ni));
    normalizeScores(aff, false);
    for (let i = 0; i < n; i++) totals[i]! += w.affinity * aff[i]!;
  }
  return totals;
}
