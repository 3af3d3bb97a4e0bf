/**
 * field.Error constructors rendering their message exactly as apimachinery's
 * field.Error.ErrorBody() does, so 422 responses read like kube-apiserver's.
 */

import type { FieldError } from '../types.ts';

/** Marks "no value to print" (field.omitValue), e.g. for Invalid errors about a whole list. */
export const OMIT = Symbol('omit');

/**
 * Renders a bad value the way ErrorBody does: strings quoted, simple scalars bare, nil as
 * `null`, anything else as JSON.
 */
export function renderValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return JSON.stringify(value);
}

function withDetail(body: string, detail: string | undefined): string {
  return detail ? `${body}: ${detail}` : body;
}

export function required(field: string, detail = ''): FieldError {
  return { reason: 'FieldValueRequired', field, message: withDetail('Required value', detail) };
}

export function forbidden(field: string, detail = ''): FieldError {
  return { reason: 'FieldValueForbidden', field, message: withDetail('Forbidden', detail) };
}

export function invalid(field: string, value: unknown, detail = ''): FieldError {
  const body = value === OMIT ? 'Invalid value' : `Invalid value: ${renderValue(value)}`;
  return { reason: 'FieldValueInvalid', field, message: withDetail(body, detail) };
}

export function notSupported(field: string, value: unknown, valid: readonly string[]): FieldError {
  const detail =
    valid.length > 0 ? `supported values: ${valid.map((v) => JSON.stringify(v)).join(', ')}` : '';
  return {
    reason: 'FieldValueNotSupported',
    field,
    message: withDetail(`Unsupported value: ${renderValue(value)}`, detail),
  };
}

export function duplicate(field: string, value: unknown): FieldError {
  return { reason: 'FieldValueDuplicate', field, message: `Duplicate value: ${renderValue(value)}` };
}

export function notFound(field: string, value: unknown): FieldError {
  return { reason: 'FieldValueNotFound', field, message: `Not found: ${renderValue(value)}` };
}

export function tooLong(field: string, maxLength: number): FieldError {
  return { reason: 'FieldValueTooLong', field, message: `Too long: may not be more than ${maxLength} bytes` };
}

export function tooMany(field: string, actual: number, max: number): FieldError {
  return {
    reason: 'FieldValueTooMany',
    field,
    message: `Too many: ${actual}: must have at most ${max} items`,
  };
}

/** The whole error as apimachinery prints it: `spec.containers[0].image: Required value`. */
export function formatFieldError(e: FieldError): string {
  return e.field ? `${e.field}: ${e.message}` : e.message;
}

/** Field paths the way field.Path renders them: `spec.containers[0].name`, `metadata.labels[app]`. */
export function child(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

export function index(path: string, i: number): string {
  return `${path}[${i}]`;
}

export function key(path: string, k: string): string {
  return `${path}[${k}]`;
}

/** Drops repeated errors (same field and message), as ErrorList.ToAggregate does for the message. */
export function dedupe(errs: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errs.filter((e) => {
    const k = `${e.field}\u0000${e.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
