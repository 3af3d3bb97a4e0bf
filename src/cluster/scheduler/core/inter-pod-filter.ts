/**
 * InterPodAffinity's PreFilter and Filter: required pod affinity and anti-affinity of the
 * incoming pod, and the required anti-affinity of pods already placed, counted per topology
 * domain once per cycle.
 */

import type { ClusterState, NodeInfo, PodEntry } from './cluster-state.ts';
import type { FilterStatus, PreparedPod } from './filters.ts';
import { type ResolvedTerm, resolvedTermMatches, resolveTerm, termMatches } from './pod-affinity-terms.ts';

export const ERR_REASON_AFFINITY_RULES = "node(s) didn't match pod affinity rules";
export const ERR_REASON_ANTI_AFFINITY_RULES = "node(s) didn't match pod anti-affinity rules";
export const ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules";

/** `key\0value` of a topology domain → matching pods (entries at zero are removed). */
type DomainCounts = Map<string, number>;

export interface InterPodFilterState {
  namespace: string;
  labels: Readonly<Record<string, string>>;
  namespaceLabels: Readonly<Record<string, string>> | undefined;
  affinity: ResolvedTerm[];
  antiAffinity: ResolvedTerm[];
  /** The pod matches all its own affinity terms: it may start a group that wants itself. */
  selfAffine: boolean;
  /** Domains where a placed pod's anti-affinity term matches the incoming pod. */
  existingAnti: DomainCounts;
  /** Domains holding pods that match every affinity term of the incoming pod. */
  affinityCounts: DomainCounts;
  /** Domains holding pods that match one of its anti-affinity terms (once per term). */
  antiCounts: DomainCounts;
}

function domain(key: string, value: string): string {
  return `${key}\u0000${value}`;
}

function bump(m: DomainCounts, ni: NodeInfo, key: string, delta: number): void {
  const value = ni.labels[key];
  if (value === undefined) return;
  const d = domain(key, value);
  const n = (m.get(d) ?? 0) + delta;
  if (n === 0) m.delete(d);
  else m.set(d, n);
}

function matchesAll(
  terms: readonly ResolvedTerm[],
  namespace: string,
  labels: Readonly<Record<string, string>>,
) {
  if (terms.length === 0) return false;
  for (const t of terms) if (!resolvedTermMatches(t, namespace, labels)) return false;
  return true;
}

/** undefined when neither the pod nor any placed pod has a required term that could apply. */
export function interPodPreFilter(state: ClusterState, p: PreparedPod): InterPodFilterState | undefined {
  const namespaceLabels = state.namespaceLabels.get(p.namespace);
  const existingAnti: DomainCounts = new Map();
  for (const held of state.existingTerms.antiAffinity.values()) {
    if (!termMatches(held.term, p.namespace, p.labels, namespaceLabels)) continue;
    for (const [nodeName, n] of held.nodes) {
      const ni = state.getNode(nodeName);
      if (ni) bump(existingAnti, ni, held.term.topologyKey, n);
    }
  }
  const required = p.podAffinity?.required ?? [];
  const requiredAnti = p.podAffinity?.requiredAnti ?? [];
  if (existingAnti.size === 0 && required.length === 0 && requiredAnti.length === 0) return undefined;

  const affinity = required.map((t) => resolveTerm(t, state.namespaceLabels));
  const antiAffinity = requiredAnti.map((t) => resolveTerm(t, state.namespaceLabels));
  const affinityCounts: DomainCounts = new Map();
  const first = affinity[0];
  if (first?.selector) {
    state.podsByLabel.forEachMatch(first.namespaces, first.selector, (e) => {
      const ni = state.getNode(e.nodeName);
      if (!ni || !matchesAll(affinity, e.namespace, e.labels)) return;
      for (const t of affinity) bump(affinityCounts, ni, t.topologyKey, 1);
    });
  }
  const antiCounts: DomainCounts = new Map();
  for (const t of antiAffinity) {
    if (!t.selector) continue;
    state.podsByLabel.forEachMatch(t.namespaces, t.selector, (e) => {
      const ni = state.getNode(e.nodeName);
      if (ni) bump(antiCounts, ni, t.topologyKey, 1);
    });
  }
  return {
    namespace: p.namespace,
    labels: p.labels,
    namespaceLabels,
    affinity,
    antiAffinity,
    selfAffine: matchesAll(affinity, p.namespace, p.labels),
    existingAnti,
    affinityCounts,
    antiCounts,
  };
}

function satisfiesAffinity(s: InterPodFilterState, ni: NodeInfo): boolean {
  let podsExist = true;
  for (const t of s.affinity) {
    const value = ni.labels[t.topologyKey];
    // Every topology key must exist on the node, even for the first pod of a group.
    if (value === undefined) return false;
    if ((s.affinityCounts.get(domain(t.topologyKey, value)) ?? 0) <= 0) podsExist = false;
  }
  // No pod anywhere matches yet: a pod matching its own terms may go first.
  return podsExist || (s.affinityCounts.size === 0 && s.selfAffine);
}

function satisfiesAntiAffinity(s: InterPodFilterState, ni: NodeInfo): boolean {
  if (s.antiCounts.size === 0) return true;
  for (const t of s.antiAffinity) {
    const value = ni.labels[t.topologyKey];
    if (value !== undefined && (s.antiCounts.get(domain(t.topologyKey, value)) ?? 0) > 0) return false;
  }
  return true;
}

function satisfiesExistingAntiAffinity(s: InterPodFilterState, ni: NodeInfo): boolean {
  if (s.existingAnti.size === 0) return true;
  for (const key in ni.labels) {
    if ((s.existingAnti.get(domain(key, ni.labels[key]!)) ?? 0) > 0) return false;
  }
  return true;
}

/** A missing affinity match cannot be fixed by evicting pods; anti-affinity conflicts can. */
export function filterInterPodAffinity(s: InterPodFilterState, ni: NodeInfo): FilterStatus | undefined {
  if (!satisfiesAffinity(s, ni)) {
    return {
      code: 'UnschedulableAndUnresolvable',
      plugin: 'InterPodAffinity',
      reasons: [ERR_REASON_AFFINITY_RULES],
    };
  }
  if (!satisfiesAntiAffinity(s, ni)) {
    return { code: 'Unschedulable', plugin: 'InterPodAffinity', reasons: [ERR_REASON_ANTI_AFFINITY_RULES] };
  }
  if (!satisfiesExistingAntiAffinity(s, ni)) {
    return {
      code: 'Unschedulable',
      plugin: 'InterPodAffinity',
      reasons: [ERR_REASON_EXISTING_ANTI_AFFINITY],
    };
  }
  return undefined;
}

/** PreFilterExtensions AddPod/RemovePod for preemption's dry run on `ni`. */
export function updateInterPodState(s: InterPodFilterState, e: PodEntry, ni: NodeInfo, delta: 1 | -1): void {
  for (const t of e.affinity?.requiredAnti ?? []) {
    if (termMatches(t, s.namespace, s.labels, s.namespaceLabels))
      bump(s.existingAnti, ni, t.topologyKey, delta);
  }
  if (matchesAll(s.affinity, e.namespace, e.labels)) {
    for (const t of s.affinity) bump(s.affinityCounts, ni, t.topologyKey, delta);
  }
  for (const t of s.antiAffinity) {
    if (resolvedTermMatches(t, e.namespace, e.labels)) bump(s.antiCounts, ni, t.topologyKey, delta);
  }
}
