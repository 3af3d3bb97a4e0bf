/**
 * InterPodAffinity's score: the incoming pod's preferred (anti-)affinity terms against placed
 * pods, and placed pods' required affinity (at the hard-affinity weight) and preferred terms
 * against the incoming pod, summed per topology domain and scaled min–max to 0..100.
 */

import type { ClusterState, NodeInfo } from './cluster-state.ts';
import type { PreparedPod } from './filters.ts';
import { resolveTerm, termMatches, type WeightedAffinityTerm } from './pod-affinity-terms.ts';
import { MAX_NODE_SCORE } from './score.ts';

/** topologyKey → value → summed weight. */
type TopologyScore = Map<string, Map<string, number>>;

function add(score: TopologyScore, ni: NodeInfo, key: string, weight: number): void {
  const value = ni.labels[key];
  if (value === undefined) return;
  let values = score.get(key);
  if (!values) {
    values = new Map();
    score.set(key, values);
  }
  values.set(value, (values.get(value) ?? 0) + weight);
}

/** Normalised scores for `nodes`, or undefined when no term applies anywhere. */
export function interPodAffinityScores(
  state: ClusterState,
  p: PreparedPod,
  nodes: readonly NodeInfo[],
): number[] | undefined {
  const score: TopologyScore = new Map();
  const incoming = (terms: readonly WeightedAffinityTerm[], sign: 1 | -1) => {
    for (const { term, weight } of terms) {
      const t = resolveTerm(term, state.namespaceLabels);
      if (!t.selector) continue;
      state.podsByLabel.forEachMatch(t.namespaces, t.selector, (e) => {
        const ni = state.getNode(e.nodeName);
        if (ni) add(score, ni, t.topologyKey, sign * weight);
      });
    }
  };
  incoming(p.podAffinity?.preferred ?? [], 1);
  incoming(p.podAffinity?.preferredAnti ?? [], -1);
  const namespaceLabels = state.namespaceLabels.get(p.namespace);
  for (const held of state.existingTerms.scoring.values()) {
    if (!termMatches(held.term, p.namespace, p.labels, namespaceLabels)) continue;
    for (const [nodeName, n] of held.nodes) {
      const ni = state.getNode(nodeName);
      if (ni) add(score, ni, held.term.topologyKey, held.weight * n);
    }
  }
  if (score.size === 0) return undefined;

  const raw = nodes.map((ni) => {
    let s = 0;
    for (const [key, values] of score) {
      const value = ni.labels[key];
      if (value !== undefined) s += values.get(value) ?? 0;
    }
    return s;
  });
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const s of raw) {
    min = Math.min(min, s);
    max = Math.max(max, s);
  }
  const diff = max - min;
  return raw.map((s) => (diff > 0 ? Math.trunc(MAX_NODE_SCORE * ((s - min) / diff)) : 0));
}
