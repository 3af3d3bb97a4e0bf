/**
 * Inter-pod affinity and anti-affinity terms: their validation (validatePodAffinity and
 * validatePodAntiAffinity in pkg/apis/core/validation) and, on pod create, the merge of a
 * term's matchLabelKeys and mismatchLabelKeys into its labelSelector (pod strategy
 * mutatePodAffinity, feature MatchLabelKeysInPodAffinity, on by default in 1.32).
 */

import { isObject } from '../../../lib/json.ts';
import type { FieldError, KubeObject } from '../types.ts';
import { arrayOf, type Json, recordOf } from './common.ts';
import { child, forbidden, index, invalid, required } from './field-errors.ts';
import { validateLabelSelector } from './selector.ts';
import { nameIsDNSLabel, validateLabelName } from './validation.ts';

const TERM_KINDS = ['podAffinity', 'podAntiAffinity'];
const REQUIRED = 'requiredDuringSchedulingIgnoredDuringExecution';
const PREFERRED = 'preferredDuringSchedulingIgnoredDuringExecution';

/** Every pod (anti-)affinity term of a pod spec, preferred ones first as upstream walks them. */
function termsOf(spec: Json): Json[] {
  const affinity = recordOf(spec.affinity);
  return TERM_KINDS.flatMap((kind) => {
    const a = recordOf(affinity[kind]);
    return [
      ...arrayOf(a[PREFERRED])
        .map((w) => (isObject(w) ? w.podAffinityTerm : undefined))
        .filter(isObject),
      ...arrayOf(a[REQUIRED]).filter(isObject),
    ];
  });
}

/**
 * The scheduler then sees only the selector: `key In (value)` for each matchLabelKeys key and
 * `key NotIn (value)` for each mismatchLabelKeys key the pod carries. A term without a
 * labelSelector matches nothing and is left alone.
 */
export function mergeAffinityLabelKeys(pod: KubeObject): void {
  const labels = recordOf(pod.metadata?.labels);
  for (const term of termsOf(recordOf(pod.spec))) {
    const match = arrayOf<unknown>(term.matchLabelKeys);
    const mismatch = arrayOf<unknown>(term.mismatchLabelKeys);
    const selector = term.labelSelector;
    if ((match.length === 0 && mismatch.length === 0) || !isObject(selector)) continue;
    const added = [...requirements(match, 'In', labels), ...requirements(mismatch, 'NotIn', labels)];
    if (added.length > 0) selector.matchExpressions = [...arrayOf(selector.matchExpressions), ...added];
  }
}

function requirements(keys: unknown[], operator: string, labels: Json): Json[] {
  return keys
    .filter((k): k is string => typeof k === 'string' && typeof labels[k] === 'string')
    .map((key) => ({ key, operator, values: [labels[key]] }));
}

/** The podAffinity and podAntiAffinity parts of validateAffinity. */
export function validatePodAffinityTerms(affinity: Json, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const kind of TERM_KINDS) {
    const a = recordOf(affinity[kind]);
    const p = child(path, kind);
    arrayOf(a[REQUIRED]).forEach((term, i) => {
      errs.push(...validateTerm(recordOf(term), index(child(p, REQUIRED), i)));
    });
    arrayOf(a[PREFERRED]).forEach((w, j) => {
      const wp = index(child(p, PREFERRED), j);
      const weight = recordOf(w).weight ?? 0;
      if (typeof weight !== 'number' || weight <= 0 || weight > 100)
        errs.push(invalid(child(wp, 'weight'), weight, 'must be in the range 1-100'));
      errs.push(...validateTerm(recordOf(recordOf(w).podAffinityTerm), child(wp, 'podAffinityTerm')));
    });
  }
  return errs;
}

function validateTerm(term: Json, path: string): FieldError[] {
  const errs = [
    ...validateLabelSelector(term.labelSelector, child(path, 'labelSelector')),
    ...validateLabelSelector(term.namespaceSelector, child(path, 'namespaceSelector')),
  ];
  for (const ns of arrayOf<unknown>(term.namespaces)) {
    // Upstream names the field `namespace` here.
    for (const m of nameIsDNSLabel(String(ns), false)) errs.push(invalid(child(path, 'namespace'), ns, m));
  }
  errs.push(...validateLabelKeys(term, path));
  const topologyKey = typeof term.topologyKey === 'string' ? term.topologyKey : '';
  if (!topologyKey) errs.push(required(child(path, 'topologyKey'), 'can not be empty'));
  errs.push(...validateLabelName(topologyKey, child(path, 'topologyKey')));
  return errs;
}

/** validateMatchLabelKeysAndMismatchLabelKeys. */
function validateLabelKeys(term: Json, path: string): FieldError[] {
  const match = arrayOf<unknown>(term.matchLabelKeys).map(String);
  const mismatch = arrayOf<unknown>(term.mismatchLabelKeys).map(String);
  const selector = isObject(term.labelSelector) ? term.labelSelector : undefined;
  const errs = [
    ...validateKeyNames(match, selector, child(path, 'matchLabelKeys')),
    ...validateKeyNames(mismatch, selector, child(path, 'mismatchLabelKeys')),
  ];
  if (selector) {
    // A pod's selector already holds the merged `key In (value)`: only a key the selector
    // names a second time was also written into it by the user. The error's path indexes the
    // term itself, as upstream's does.
    const matchIndex = new Map(match.map((k, i) => [k, i]));
    const seen = new Set(Object.keys(recordOf(selector.matchLabels)));
    for (const r of arrayOf(selector.matchExpressions)) {
      const key = String(recordOf(r).key ?? '');
      const i = matchIndex.get(key);
      if (i !== undefined && seen.has(key))
        errs.push(invalid(index(path, i), key, 'exists in both matchLabelKeys and labelSelector'));
      seen.add(key);
    }
  }
  const mismatchSet = new Set(mismatch);
  match.forEach((k, i) => {
    if (mismatchSet.has(k))
      errs.push(
        invalid(
          index(child(path, 'matchLabelKeys'), i),
          k,
          'exists in both matchLabelKeys and mismatchLabelKeys',
        ),
      );
  });
  return errs;
}

function validateKeyNames(keys: string[], selector: Json | undefined, path: string): FieldError[] {
  if (keys.length === 0) return [];
  if (!selector) return [forbidden(path, 'must not be specified when labelSelector is not set')];
  return keys.flatMap((k, i) => validateLabelName(k, index(path, i)));
}
