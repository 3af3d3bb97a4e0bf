/**
 * PodTopologySpread's score for ScheduleAnyway constraints, or for the system default ones:
 * fewer matching pods in a node's domains scores higher, each domain count weighted by
 * log(number of domains + 2) and softened by maxSkew − 1, then normalised so the emptiest
 * node gets 100.
 */

import type { ClusterState, NodeInfo } from './cluster-state.ts';
import type { PreparedPod } from './filters.ts';
import { MAX_NODE_SCORE } from './score.ts';
import {
  countingSelector,
  hasAllTopologyKeys,
  LABEL_HOSTNAME,
  nodeIncluded,
  type SpreadConstraint,
  systemDefaultConstraints,
} from './spread-constraints.ts';

function scoringConstraints(state: ClusterState, p: PreparedPod): SpreadConstraint[] {
  if (p.spread.own) return p.spread.soft;
  const selector = state.workloads.defaultSelector(p.namespace, p.labels, p.controller);
  return selector.empty ? [] : systemDefaultConstraints(selector);
}

/** Normalised scores for `nodes` (the feasible ones), or undefined when the plugin has nothing to score. */
export function topologySpreadScores(
  state: ClusterState,
  p: PreparedPod,
  nodes: readonly NodeInfo[],
): number[] | undefined {
  const constraints = scoringConstraints(state, p);
  if (constraints.length === 0) return undefined;
  // The system defaults let nodes without a zone label still spread by hostname.
  const requireAll = p.spread.own;
  const ignored = new Set<NodeInfo>();
  /** Per constraint (hostname ones unused): domains of the feasible nodes → matching pods. */
  const domains = constraints.map(() => new Map<string, number>());
  for (const ni of nodes) {
    if (requireAll && !hasAllTopologyKeys(ni.labels, constraints)) {
      ignored.add(ni);
      continue;
    }
    constraints.forEach((c, i) => {
      if (c.topologyKey !== LABEL_HOSTNAME) domains[i]!.set(ni.labels[c.topologyKey] ?? '', 0);
    });
  }
  const weights = constraints.map((c, i) =>
    Math.log((c.topologyKey === LABEL_HOSTNAME ? nodes.length - ignored.size : domains[i]!.size) + 2),
  );

  /** Per hostname constraint: node name → matching pods on it. */
  const perNode = constraints.map(() => new Map<string, number>());
  constraints.forEach((c, i) => {
    const sel = countingSelector(c);
    if (!sel) return;
    const hostname = c.topologyKey === LABEL_HOSTNAME;
    state.podsByLabel.forEachMatch(p.namespace, sel, (e) => {
      if (e.terminating) return;
      if (hostname) {
        perNode[i]!.set(e.nodeName, (perNode[i]!.get(e.nodeName) ?? 0) + 1);
        return;
      }
      const ni = state.getNode(e.nodeName);
      if (!ni || (requireAll && !hasAllTopologyKeys(ni.labels, constraints)) || !nodeIncluded(c, p, ni))
        return;
      const value = ni.labels[c.topologyKey] ?? '';
      const n = domains[i]!.get(value);
      if (n !== undefined) domains[i]!.set(value, n + 1);
    });
  });

  const raw = nodes.map((ni) => {
    if (ignored.has(ni)) return 0;
    let score = 0;
    constraints.forEach((c, i) => {
      const value = ni.labels[c.topologyKey];
      if (value === undefined) return;
      const count =
        c.topologyKey === LABEL_HOSTNAME ? (perNode[i]!.get(ni.name) ?? 0) : domains[i]!.get(value)!;
      score += count * weights[i]! + (c.maxSkew - 1);
    });
    return Math.round(score);
  });

  let min = Number.POSITIVE_INFINITY;
  let max = 0;
  nodes.forEach((ni, i) => {
    if (ignored.has(ni)) return;
    min = Math.min(min, raw[i]!);
    max = Math.max(max, raw[i]!);
  });
  return nodes.map((ni, i) => {
    if (ignored.has(ni)) return 0;
    if (max === 0) return MAX_NODE_SCORE;
    return Math.trunc((MAX_NODE_SCORE * (max + min - raw[i]!)) / max);
  });
}
