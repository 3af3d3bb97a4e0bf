/**
 * The affinity terms of accounted pods, deduplicated: pods of one workload usually share
 * their terms, so a scheduling cycle evaluates each distinct term against the incoming pod
 * once and then adds up where its holders sit, instead of visiting every such pod.
 */

import type { PodEntry } from './cluster-state.ts';
import { type AffinityTerm, HARD_POD_AFFINITY_WEIGHT } from './pod-affinity-terms.ts';

export interface HeldTerm {
  term: AffinityTerm;
  /** Signed score weight (0 for the filter's anti-affinity terms). */
  weight: number;
  /** Node name → accounted pods on it holding the term. */
  nodes: Map<string, number>;
}

export class ExistingPodTerms {
  /** Required anti-affinity terms: the incoming pod must stay out of their topology domains. */
  readonly antiAffinity = new Map<string, HeldTerm>();
  /**
   * Terms that score the incoming pod: required affinity at the hard-affinity weight,
   * preferred affinity with its weight, preferred anti-affinity with its weight negated.
   */
  readonly scoring = new Map<string, HeldTerm>();

  add(e: PodEntry): void {
    this.apply(e, 1);
  }

  remove(e: PodEntry): void {
    this.apply(e, -1);
  }

  private apply(e: PodEntry, delta: 1 | -1): void {
    const a = e.affinity;
    if (!a) return;
    for (const t of a.requiredAnti) hold(this.antiAffinity, t, 0, e.nodeName, delta);
    for (const t of a.required) hold(this.scoring, t, HARD_POD_AFFINITY_WEIGHT, e.nodeName, delta);
    for (const w of a.preferred) hold(this.scoring, w.term, w.weight, e.nodeName, delta);
    for (const w of a.preferredAnti) hold(this.scoring, w.term, -w.weight, e.nodeName, delta);
  }
}

function hold(
  map: Map<string, HeldTerm>,
  term: AffinityTerm,
  weight: number,
  nodeName: string,
  delta: 1 | -1,
): void {
  const key = `${weight}|${term.key}`;
  let held = map.get(key);
  if (!held) {
    if (delta < 0) return;
    held = { term, weight, nodes: new Map() };
    map.set(key, held);
  }
  const n = (held.nodes.get(nodeName) ?? 0) + delta;
  if (n > 0) held.nodes.set(nodeName, n);
  else held.nodes.delete(nodeName);
  if (held.nodes.size === 0) map.delete(key);
}
