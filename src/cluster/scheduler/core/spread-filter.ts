/**
 * PodTopologySpread's PreFilter and Filter for DoNotSchedule constraints: matching pods are
 * counted per topology domain once per cycle, then each node is judged by
 * `pods in its domain + the pod itself (if it matches) − the global minimum ≤ maxSkew`.
 */

import type { ClusterState, NodeInfo, PodEntry } from './cluster-state.ts';
import type { FilterStatus, PreparedPod } from './filters.ts';
import {
  countingSelector,
  hasAllTopologyKeys,
  nodeIncluded,
  type SpreadConstraint,
} from './spread-constraints.ts';

export const ERR_REASON_SPREAD = "node(s) didn't match pod topology spread constraints";
export const ERR_REASON_SPREAD_MISSING_LABEL = `${ERR_REASON_SPREAD} (missing required label)`;

export interface SpreadFilterState {
  pod: PreparedPod;
  constraints: SpreadConstraint[];
  /** Per constraint: domain → matching pods, for every domain of an eligible node (0 included). */
  domains: Map<string, number>[];
  /** Per constraint: whether the incoming pod counts towards its own domain. */
  selfMatch: boolean[];
  /** Per constraint: the global minimum, computed on demand and dropped when a count changes. */
  minimum: (number | undefined)[];
}

/** undefined when the pod has no DoNotSchedule constraint (the plugin is skipped). */
export function spreadPreFilter(state: ClusterState, p: PreparedPod): SpreadFilterState | undefined {
  const constraints = p.spread.hard;
  if (constraints.length === 0) return undefined;
  const n = constraints.length;
  const domains = constraints.map(() => new Map<string, number>());
  /** Node name → for each constraint, whether the node's domain counts. */
  const eligible = new Map<string, boolean[]>();
  for (const ni of state.nodes) {
    if (!hasAllTopologyKeys(ni.labels, constraints)) continue;
    const flags = new Array<boolean>(n);
    for (let i = 0; i < n; i++) {
      const c = constraints[i]!;
      flags[i] = nodeIncluded(c, p, ni);
      if (!flags[i]) continue;
      const value = ni.labels[c.topologyKey]!;
      if (!domains[i]!.has(value)) domains[i]!.set(value, 0);
    }
    eligible.set(ni.name, flags);
  }
  for (let i = 0; i < n; i++) {
    const c = constraints[i]!;
    const sel = countingSelector(c);
    if (!sel) continue;
    const counts = domains[i]!;
    state.podsByLabel.forEachMatch(p.namespace, sel, (e) => {
      if (e.terminating || !eligible.get(e.nodeName)?.[i]) return;
      const value = state.getNode(e.nodeName)!.labels[c.topologyKey]!;
      counts.set(value, counts.get(value)! + 1);
    });
  }
  return {
    pod: p,
    constraints,
    domains,
    selfMatch: constraints.map((c) => c.selector?.matches(p.labels) ?? false),
    minimum: new Array(n).fill(undefined),
  };
}

/** The smallest count over the eligible domains, or 0 while there are fewer than minDomains. */
function globalMinimum(s: SpreadFilterState, i: number): number {
  let min = s.minimum[i];
  if (min !== undefined) return min;
  const domains = s.domains[i]!;
  if (domains.size < s.constraints[i]!.minDomains) min = 0;
  else {
    min = Number.POSITIVE_INFINITY;
    for (const v of domains.values()) if (v < min) min = v;
  }
  s.minimum[i] = min;
  return min;
}

export function filterTopologySpread(s: SpreadFilterState, ni: NodeInfo): FilterStatus | undefined {
  for (let i = 0; i < s.constraints.length; i++) {
    const c = s.constraints[i]!;
    const value = ni.labels[c.topologyKey];
    if (value === undefined) {
      return {
        code: 'UnschedulableAndUnresolvable',
        plugin: 'PodTopologySpread',
        reasons: [ERR_REASON_SPREAD_MISSING_LABEL],
      };
    }
    const skew = (s.domains[i]!.get(value) ?? 0) + (s.selfMatch[i] ? 1 : 0) - globalMinimum(s, i);
    if (skew > c.maxSkew) {
      return { code: 'Unschedulable', plugin: 'PodTopologySpread', reasons: [ERR_REASON_SPREAD] };
    }
  }
  return undefined;
}

/**
 * PreFilterExtensions AddPod/RemovePod: preemption's dry run takes pods off a node and puts
 * some back. The pods counted are exactly those the PreFilter counted, so removing a
 * terminating victim cannot drive a count below what it was built from.
 */
export function updateSpreadState(s: SpreadFilterState, e: PodEntry, ni: NodeInfo, delta: 1 | -1): void {
  if (e.terminating || e.namespace !== s.pod.namespace || !hasAllTopologyKeys(ni.labels, s.constraints))
    return;
  for (let i = 0; i < s.constraints.length; i++) {
    const c = s.constraints[i]!;
    if (!countingSelector(c)?.matches(e.labels) || !nodeIncluded(c, s.pod, ni)) continue;
    const value = ni.labels[c.topologyKey]!;
    s.domains[i]!.set(value, (s.domains[i]!.get(value) ?? 0) + delta);
    s.minimum[i] = undefined;
  }
}
