/**
 * Builders for FieldError that render messages the way apimachinery's field.Error.ErrorBody
 * does, so a 422 Status from the embedded server reads like kube-apiserver's. Bad values are
 * printed with Go's fmt rules (%v for numbers and booleans, %q for strings, %#v otherwise).
 */

import type { CauseType, FieldError } from '../types.ts';

/** Marks a bad value that is not printed (apimachinery's field.OmitValueType). */
export const OMIT: unique symbol = Symbol('omit-value');

/** A Go struct value (for %#v): printed as `typeName{Field:value, ...}`. */
export class GoStruct {
  readonly typeName: string;
  readonly fields: [string, unknown][];
  constructor(typeName: string, fields: [string, unknown][]) {
    this.typeName = typeName;
    this.fields = fields;
  }
}

/** Text printed verbatim inside a %#v dump (e.g. a typed nil pointer). */
export class GoRaw {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** A float64 that happens to be integral (e.g. a schema bound), printed as Go prints a float. */
export class GoFloat {
  readonly value: number;
  constructor(value: number) {
    this.value = value;
  }
}

/** Go's strconv.FormatFloat(v, 'g', -1, 64), which is what %v prints for a float64. */
export function formatGoFloat(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  const [mantissa, expPart] = v.toExponential().split('e') as [string, string];
  const exp = Number(expPart);
  // Shortest-representation %g switches to exponent form outside [1e-4, 1e6).
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? '-' : '+';
    const digits = String(Math.abs(exp)).padStart(2, '0');
    return `${mantissa}e${sign}${digits}`;
  }
  return String(v);
}

/** Go's %q for a string (close to JSON string syntax for everything Kubernetes emits). */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Go's %v for the scalar kinds a JSON value decodes to (int64, float64, string, bool). */
export function goScalar(v: unknown): string {
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : formatGoFloat(v);
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof GoFloat) return formatGoFloat(v.value);
  return String(v);
}

/** Go's %#v for JSON-decoded values (map[string]interface {}, []interface {}) and GoStruct. */
export function goSharpV(v: unknown, nested = false): string {
  if (v === null || v === undefined) return nested ? 'interface {}(nil)' : '<nil>';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean' || v instanceof GoFloat) {
    return goScalar(v);
  }
  if (v instanceof GoRaw) return v.text;
  if (v instanceof GoStruct) {
    return `${v.typeName}{${v.fields.map(([k, fv]) => `${k}:${goSharpV(fv, true)}`).join(', ')}}`;
  }
  if (Array.isArray(v)) {
    if (v.every((x) => x instanceof GoStruct) && v.length > 0) {
      return `[]${(v[0] as GoStruct).typeName}{${v.map((x) => goSharpV(x, true)).join(', ')}}`;
    }
    if (v.every((x) => typeof x === 'string')) {
      return `[]string{${v.map((x) => goQuote(x as string)).join(', ')}}`;
    }
    return `[]interface {}{${v.map((x) => goSharpV(x, true)).join(', ')}}`;
  }
  if (typeof v === 'object') {
    const keys = Object.keys(v as object).sort();
    const body = keys.map((k) => `${goQuote(k)}:${goSharpV((v as Record<string, unknown>)[k], true)}`);
    return `map[string]interface {}{${body.join(', ')}}`;
  }
  return String(v);
}

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

function body(reason: CauseType, value: unknown, detail: string, printValue: boolean): string {
  let s = TYPE_TEXT[reason];
  if (printValue && value !== OMIT) {
    if (value === null || value === undefined) s += ': "null"';
    else if (typeof value === 'string') s += `: ${goQuote(value)}`;
    else if (
      typeof value === 'number' ||
      typeof value === 'bigint' ||
      typeof value === 'boolean' ||
      value instanceof GoFloat
    ) {
      s += `: ${goScalar(value)}`;
    } else s += `: ${goSharpV(value)}`;
  }
  if (detail) s += `: ${detail}`;
  return s;
}

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

export function fieldString(path: string): string {
  return path === '' ? NIL_PATH : path;
}

export function required(field: string, detail = ''): FieldError {
  return {
    reason: 'FieldValueRequired',
    field: fieldString(field),
    message: body('FieldValueRequired', '', detail, false),
  };
}

export function forbidden(field: string, detail: string): FieldError {
  return {
    reason: 'FieldValueForbidden',
    field: fieldString(field),
    message: body('FieldValueForbidden', '', detail, false),
  };
}

export function invalid(field: string, value: unknown, detail: string): FieldError {
  return {
    reason: 'FieldValueInvalid',
    field: fieldString(field),
    message: body('FieldValueInvalid', value, detail, true),
  };
}

export function typeInvalid(field: string, value: unknown, detail: string): FieldError {
  return {
    reason: 'FieldValueTypeInvalid',
    field: fieldString(field),
    message: body('FieldValueTypeInvalid', value, detail, true),
  };
}

export function notSupported(field: string, value: unknown, valid: string[]): FieldError {
  const detail = valid.length > 0 ? `supported values: ${valid.map(goQuote).join(', ')}` : '';
  return {
    reason: 'FieldValueNotSupported',
    field: fieldString(field),
    message: body('FieldValueNotSupported', value, detail, true),
  };
}

export function duplicate(field: string, value: unknown): FieldError {
  return {
    reason: 'FieldValueDuplicate',
    field: fieldString(field),
    message: body('FieldValueDuplicate', value, '', true),
  };
}

export function tooLong(field: string, maxLength: number): FieldError {
  const detail =
    maxLength >= 0
      ? `may not be more than ${maxLength} ${maxLength === 1 ? 'byte' : 'bytes'}`
      : 'value is too long';
  return {
    reason: 'FieldValueTooLong',
    field: fieldString(field),
    message: body('FieldValueTooLong', '', detail, false),
  };
}

export function tooMany(field: string, actual: number, max: number): FieldError {
  const detail = max >= 0 ? `must have at most ${max} ${max === 1 ? 'item' : 'items'}` : 'has too many items';
  return {
    reason: 'FieldValueTooMany',
    field: fieldString(field),
    message: body('FieldValueTooMany', actual >= 0 ? actual : OMIT, detail, true),
  };
}

export function internalError(field: string, detail: string): FieldError {
  return {
    reason: 'InternalError',
    field: fieldString(field),
    message: body('InternalError', '', detail, false),
  };
}

/** `field: message`, the way field.Error.Error() prints one cause. */
export function formatFieldError(e: FieldError): string {
  return `${e.field}: ${e.message}`;
}
