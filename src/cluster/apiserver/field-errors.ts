/**
 * field.Error constructors whose messages read as apimachinery's field.Error.ErrorBody renders
 * them, so a 422 Status from the embedded server reads like kube-apiserver's. A bad value is
 * printed with Go's fmt rules for the JSON-decoded values of custom resources (%v for numbers
 * and booleans, %q for strings, %#v otherwise); built-in kinds print theirs their own way
 * (builtin/field-errors.ts), through `fieldErrors`.
 */

import { goQuote, goSharpV } from './gofmt.ts';
import type { CauseType, FieldError } from './types.ts';

/** Marks a bad value that is not printed (apimachinery's field.OmitValueType). */
export const OMIT: unique symbol = Symbol('omit-value');

const TYPE_TEXT: Record<CauseType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueTypeInvalid: 'Invalid value',
  InternalError: 'Internal error',
  FieldManagerConflict: 'Conflict',
  UnexpectedServerResponse: 'Unexpected server response',
};

/** A path as field.Path.String() renders it; the nil path is `<nil>`. */
export const NIL_PATH = '<nil>';

export function child(path: string, name: string): string {
  return path === '' || path === NIL_PATH ? name : `${path}.${name}`;
}

export function index(path: string, i: number): string {
  return `${path === NIL_PATH ? '' : path}[${i}]`;
}

export function key(path: string, k: string): string {
  return `${path === NIL_PATH ? '' : path}[${k}]`;
}

/** How one family of kinds prints field errors. */
export interface FieldErrorStyle {
  /** A bad value as ErrorBody prints it after `Invalid value: `. */
  printValue(value: unknown): string;
  /** What the empty path prints as: the nil path (`<nil>`) or the root path (``). */
  emptyPath: string;
}

/** The constructors of field.Error (field.Required, field.Invalid, ...) for one style. */
export function fieldErrors(style: FieldErrorStyle) {
  const at = (field: string) => (field === '' ? style.emptyPath : field);
  const error = (reason: CauseType, field: string, value: unknown, detail: string): FieldError => {
    let message = TYPE_TEXT[reason];
    if (value !== OMIT) message += `: ${style.printValue(value)}`;
    if (detail) message += `: ${detail}`;
    return { reason, field: at(field), message };
  };
  return {
    required: (field: string, detail = '') => error('FieldValueRequired', field, OMIT, detail),
    forbidden: (field: string, detail = '') => error('FieldValueForbidden', field, OMIT, detail),
    invalid: (field: string, value: unknown, detail = '') => error('FieldValueInvalid', field, value, detail),
    typeInvalid: (field: string, value: unknown, detail: string) =>
      error('FieldValueTypeInvalid', field, value, detail),
    notSupported: (field: string, value: unknown, valid: readonly string[]) =>
      error(
        'FieldValueNotSupported',
        field,
        value,
        valid.length > 0 ? `supported values: ${valid.map(goQuote).join(', ')}` : '',
      ),
    duplicate: (field: string, value: unknown) => error('FieldValueDuplicate', field, value, ''),
    notFound: (field: string, value: unknown) => error('FieldValueNotFound', field, value, ''),
    tooLong: (field: string, maxLength: number) =>
      error(
        'FieldValueTooLong',
        field,
        OMIT,
        maxLength >= 0
          ? `may not be more than ${maxLength} ${maxLength === 1 ? 'byte' : 'bytes'}`
          : 'value is too long',
      ),
    tooMany: (field: string, actual: number, max: number) =>
      error(
        'FieldValueTooMany',
        field,
        actual >= 0 ? actual : OMIT,
        max >= 0 ? `must have at most ${max} ${max === 1 ? 'item' : 'items'}` : 'has too many items',
      ),
    internalError: (field: string, detail: string) => error('InternalError', field, OMIT, detail),
  };
}

/** Go's %v/%q/%#v choice for an interface{} value, with nil printed as ErrorBody does (`"null"`). */
function printUnstructured(value: unknown): string {
  return value === null || value === undefined ? '"null"' : goSharpV(value);
}

/** For custom resources and CRDs, whose values are JSON-decoded and whose empty path is nil. */
export const {
  required,
  forbidden,
  invalid,
  typeInvalid,
  notSupported,
  duplicate,
  notFound,
  tooLong,
  tooMany,
  internalError,
} = fieldErrors({ printValue: printUnstructured, emptyPath: NIL_PATH });

/** `field: message`, the way field.Error.Error() prints one cause (a root-path cause is its message). */
export function formatFieldError(e: FieldError): string {
  return e.field ? `${e.field}: ${e.message}` : e.message;
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
