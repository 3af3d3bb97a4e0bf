/**
 * Pod affinity and anti-affinity terms compiled once per pod (framework.AffinityTerm): the
 * namespaces a term looks in, its selectors and topology key. Terms of pods already placed
 * keep their namespaceSelector and are matched against the incoming pod's namespace labels;
 * the incoming pod's own terms are resolved into a namespace set once per cycle instead.
 */

import type { Pod, PodAffinityTerm, WeightedPodAffinityTerm } from '../../../kube/builtin.ts';
import { compileSelector, type Selector } from './label-selectors.ts';

export interface AffinityTerm {
  namespaces: ReadonlySet<string>;
  /** undefined when the term has no namespaceSelector: then labels select no namespace. */
  namespaceSelector: Selector | undefined;
  /** undefined for a null labelSelector, which matches no pod. */
  selector: Selector | undefined;
  topologyKey: string;
  /** What the term matches and where: equal terms of different pods share it. */
  key: string;
}

export interface WeightedAffinityTerm {
  term: AffinityTerm;
  weight: number;
}

export interface PodAffinityTerms {
  required: AffinityTerm[];
  requiredAnti: AffinityTerm[];
  preferred: WeightedAffinityTerm[];
  preferredAnti: WeightedAffinityTerm[];
}

/** Weight of an existing pod's required affinity term when scoring (hardPodAffinityWeight). */
export const HARD_POD_AFFINITY_WEIGHT = 1;

/**
 * The pod's terms, or undefined when it has none. Their matchLabelKeys and
 * mismatchLabelKeys are already in the label selector: the API server merges them when the
 * pod is created (1.32, MatchLabelKeysInPodAffinity), so the scheduler reads the selector.
 */
export function compilePodAffinityTerms(pod: Pod): PodAffinityTerms | undefined {
  const a = pod.spec?.affinity;
  const aff = a?.podAffinity;
  const anti = a?.podAntiAffinity;
  if (!aff && !anti) return undefined;
  const ns = pod.metadata?.namespace ?? '';
  const term = (t: PodAffinityTerm) => compileAffinityTerm(t, ns);
  // Validation requires a weighted term's podAffinityTerm; the type leaves it optional.
  const weighted = (w: WeightedPodAffinityTerm) =>
    w.podAffinityTerm ? [{ term: term(w.podAffinityTerm), weight: w.weight }] : [];
  const terms: PodAffinityTerms = {
    required: (aff?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map(term),
    requiredAnti: (anti?.requiredDuringSchedulingIgnoredDuringExecution ?? []).map(term),
    preferred: (aff?.preferredDuringSchedulingIgnoredDuringExecution ?? []).flatMap(weighted),
    preferredAnti: (anti?.preferredDuringSchedulingIgnoredDuringExecution ?? []).flatMap(weighted),
  };
  const none =
    terms.required.length === 0 &&
    terms.requiredAnti.length === 0 &&
    terms.preferred.length === 0 &&
    terms.preferredAnti.length === 0;
  return none ? undefined : terms;
}

export function compileAffinityTerm(t: PodAffinityTerm, podNamespace: string): AffinityTerm {
  const listed = t.namespaces ?? [];
  // Neither namespaces nor a namespaceSelector: the term looks in the pod's own namespace.
  const namespaces = new Set(listed.length === 0 && t.namespaceSelector == null ? [podNamespace] : listed);
  const namespaceSelector = compileSelector(t.namespaceSelector);
  const selector = compileSelector(t.labelSelector);
  const key = JSON.stringify([
    [...namespaces].sort(),
    namespaceSelector?.toString() ?? null,
    selector?.toString() ?? null,
    t.topologyKey,
  ]);
  return { namespaces, namespaceSelector, selector, topologyKey: t.topologyKey, key };
}

/** AffinityTerm.Matches: the pod is in one of the term's namespaces and carries matching labels. */
export function termMatches(
  term: AffinityTerm,
  namespace: string,
  labels: Readonly<Record<string, string>>,
  namespaceLabels: Readonly<Record<string, string>> | undefined,
): boolean {
  if (!term.selector) return false;
  if (!term.namespaces.has(namespace) && !(term.namespaceSelector?.matches(namespaceLabels) ?? false))
    return false;
  return term.selector.matches(labels);
}

/** An incoming pod's term with its namespaceSelector turned into namespaces for this cycle. */
export interface ResolvedTerm {
  namespaces: ReadonlySet<string> | 'all';
  selector: Selector | undefined;
  topologyKey: string;
}

/** mergeAffinityTermNamespacesIfNotEmpty: an empty namespaceSelector keeps matching every namespace. */
export function resolveTerm(
  term: AffinityTerm,
  namespaceLabels: ReadonlyMap<string, Readonly<Record<string, string>>>,
): ResolvedTerm {
  const nsSel = term.namespaceSelector;
  let namespaces: ReadonlySet<string> | 'all' = term.namespaces;
  if (nsSel?.empty) namespaces = 'all';
  else if (nsSel) {
    const set = new Set(term.namespaces);
    for (const [name, labels] of namespaceLabels) if (nsSel.matches(labels)) set.add(name);
    namespaces = set;
  }
  return { namespaces, selector: term.selector, topologyKey: term.topologyKey };
}

export function resolvedTermMatches(
  t: ResolvedTerm,
  namespace: string,
  labels: Readonly<Record<string, string>>,
): boolean {
  if (!t.selector) return false;
  if (t.namespaces !== 'all' && !t.namespaces.has(namespace)) return false;
  return t.selector.matches(labels);
}
