/**
 * metav1.LabelSelector and core NodeSelector validation, plus the selector strings printers
 * show (metav1.FormatLabelSelector). Matching itself is kube/labels.ts's.
 */

import { type LabelSelectorObject, selectorFromObject } from '../../../kube/labels.ts';
import type { FieldError } from '../types.ts';
import { child, forbidden, index, invalid, required } from './field-errors.ts';
import { isValidLabelValue, validateLabelName, validateLabels } from './validation.ts';

interface RequirementLike {
  key?: unknown;
  operator?: unknown;
  values?: unknown;
}

function valuesOf(r: RequirementLike): unknown[] {
  return Array.isArray(r.values) ? r.values : [];
}

export function validateLabelSelector(sel: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (sel == null || typeof sel !== 'object') return errs;
  const s = sel as { matchLabels?: unknown; matchExpressions?: unknown };
  errs.push(...validateLabels(s.matchLabels, child(path, 'matchLabels')));
  const exprs = Array.isArray(s.matchExpressions) ? (s.matchExpressions as RequirementLike[]) : [];
  exprs.forEach((r, i) => {
    errs.push(...validateRequirement(r, index(child(path, 'matchExpressions'), i), false));
  });
  return errs;
}

/** ValidateLabelSelectorRequirement, or ValidateNodeSelectorRequirement with `numeric` (Gt and Lt). */
function validateRequirement(r: RequirementLike, p: string, numeric: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const values = valuesOf(r);
  const op = r.operator;
  if (op === 'In' || op === 'NotIn') {
    if (values.length === 0)
      errs.push(required(child(p, 'values'), "must be specified when `operator` is 'In' or 'NotIn'"));
  } else if (op === 'Exists' || op === 'DoesNotExist') {
    if (values.length > 0) {
      errs.push(
        forbidden(child(p, 'values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
      );
    }
  } else if (numeric && (op === 'Gt' || op === 'Lt')) {
    if (values.length !== 1) {
      errs.push(
        required(child(p, 'values'), "must be specified single value when `operator` is 'Lt' or 'Gt'"),
      );
    }
  } else {
    errs.push(invalid(child(p, 'operator'), op ?? '', 'not a valid selector operator'));
  }
  errs.push(...validateLabelName(String(r.key ?? ''), child(p, 'key')));
  values.forEach((v, j) => {
    for (const m of isValidLabelValue(String(v))) errs.push(invalid(index(child(p, 'values'), j), v, m));
  });
  return errs;
}

function validateNodeFieldSelectorRequirement(r: RequirementLike, p: string): FieldError[] {
  const errs: FieldError[] = [];
  if (r.operator !== 'In' && r.operator !== 'NotIn') {
    errs.push(invalid(child(p, 'operator'), r.operator ?? '', 'not a valid selector operator'));
  } else if (valuesOf(r).length !== 1) {
    errs.push(
      required(
        child(p, 'values'),
        "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
      ),
    );
  }
  if (r.key !== 'metadata.name')
    errs.push(invalid(child(p, 'key'), r.key ?? '', 'not a valid field selector key'));
  return errs;
}

/** ValidateNodeSelector: required node affinity terms. */
export function validateNodeSelector(sel: unknown, path: string): FieldError[] {
  const terms = (sel as { nodeSelectorTerms?: unknown } | null)?.nodeSelectorTerms;
  const termsPath = child(path, 'nodeSelectorTerms');
  if (!Array.isArray(terms) || terms.length === 0)
    return [required(termsPath, 'must have at least one node selector term')];
  const errs: FieldError[] = [];
  terms.forEach((t: { matchExpressions?: unknown; matchFields?: unknown } | null, i) => {
    errs.push(...validateNodeSelectorTerm(t, index(termsPath, i)));
  });
  return errs;
}

export function validateNodeSelectorTerm(
  t: { matchExpressions?: unknown; matchFields?: unknown } | null,
  p: string,
): FieldError[] {
  const errs: FieldError[] = [];
  const exprs = Array.isArray(t?.matchExpressions) ? (t.matchExpressions as RequirementLike[]) : [];
  exprs.forEach((r, j) => {
    errs.push(...validateRequirement(r, index(child(p, 'matchExpressions'), j), true));
  });
  const fields = Array.isArray(t?.matchFields) ? (t.matchFields as RequirementLike[]) : [];
  fields.forEach((r, j) => {
    errs.push(...validateNodeFieldSelectorRequirement(r, index(child(p, 'matchFields'), j)));
  });
  return errs;
}

/** True when a metav1.LabelSelector (non-null) matches; invalid selectors match nothing. */
export function selectorMatches(sel: unknown, labels: Record<string, string> | undefined): boolean {
  if (sel == null) return false;
  try {
    return selectorFromObject(sel as LabelSelectorObject).matches(labels ?? {});
  } catch {
    return false;
  }
}

export function selectorIsEmpty(sel: unknown): boolean {
  const s = sel as LabelSelectorObject | null | undefined;
  return Object.keys(s?.matchLabels ?? {}).length + (s?.matchExpressions?.length ?? 0) === 0;
}

/**
 * The selector as labels.Selector.String() renders it: requirements sorted by key, set
 * values sorted (`app=web,tier in (a,b),!legacy`); '' for an empty or nil selector and
 * undefined when the selector is invalid.
 */
export function labelSelectorString(sel: unknown): string | undefined {
  if (sel == null) return '';
  const s = sel as LabelSelectorObject;
  try {
    selectorFromObject(s);
  } catch {
    return undefined;
  }
  const parts: { key: string; text: string }[] = [];
  for (const [k, v] of Object.entries(s.matchLabels ?? {})) parts.push({ key: k, text: `${k}=${v}` });
  for (const e of s.matchExpressions ?? []) {
    const values = [...new Set(e.values ?? [])].sort();
    switch (e.operator) {
      case 'In':
        parts.push({ key: e.key, text: `${e.key} in (${values.join(',')})` });
        break;
      case 'NotIn':
        parts.push({ key: e.key, text: `${e.key} notin (${values.join(',')})` });
        break;
      case 'Exists':
        parts.push({ key: e.key, text: e.key });
        break;
      case 'DoesNotExist':
        parts.push({ key: e.key, text: `!${e.key}` });
        break;
    }
  }
  parts.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return parts.map((p) => p.text).join(',');
}

/** metav1.FormatLabelSelector: `<none>` when empty, `<error>` when invalid. */
export function formatLabelSelector(sel: unknown): string {
  const s = labelSelectorString(sel);
  if (s === undefined) return '<error>';
  return s === '' ? '<none>' : s;
}

/** labels.FormatLabels: `k=v,...` sorted by key, `<none>` when empty. */
export function formatLabels(labels: Record<string, string> | undefined | null): string {
  const keys = Object.keys(labels ?? {}).sort();
  if (keys.length === 0) return '<none>';
  return keys.map((k) => `${k}=${labels![k]}`).join(',');
}
