/**
 * metav1.LabelSelector as the scheduler reads it: a null selector matches no pod, an empty
 * one every pod. A selector the API server should have refused also matches nothing, so a
 * bad object can never stop a scheduling cycle.
 */

import type { LabelSelector } from '../../../kube/builtin.ts';
import { type Requirement, Selector, SelectorParseError, selectorFromObject } from '../../../kube/labels.ts';

export type { Selector };

/** undefined stands for labels.Nothing(). */
export function compileSelector(ls: LabelSelector | null | undefined): Selector | undefined {
  if (ls == null) return undefined;
  try {
    return selectorFromObject(ls);
  } catch (err) {
    if (err instanceof SelectorParseError) return undefined;
    throw err;
  }
}

/**
 * `key in (value)` (or `notin`) for each of `keys` the pod carries, added to `sel`: how
 * matchLabelKeys and mismatchLabelKeys narrow a selector to the pod's own group.
 */
export function withPodLabelKeys(
  sel: Selector,
  keys: readonly string[] | null | undefined,
  podLabels: Readonly<Record<string, string>>,
  operator: 'In' | 'NotIn',
): Selector {
  if (!keys || keys.length === 0) return sel;
  const extra: Requirement[] = [];
  for (const key of keys) {
    const value = podLabels[key];
    if (value !== undefined) extra.push({ key, operator, values: [value] });
  }
  return extra.length === 0 ? sel : new Selector([...extra, ...sel.requirements]);
}

/** Equality requirements from a plain map (a Service's or ReplicationController's selector). */
export function selectorFromMap(labels: Readonly<Record<string, string>>): Selector {
  return new Selector(Object.entries(labels).map(([key, v]) => ({ key, operator: 'Equals', values: [v] })));
}
