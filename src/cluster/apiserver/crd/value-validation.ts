/**
 * OpenAPI value validation of a custom resource, equivalent to kube-openapi's SchemaValidator
 * followed by apiextensions' conversion of its results into field errors.
 *
 * Hand-written rather than built on ajv: the error paths (`spec.items[0].name`), the Go-styled
 * messages (`spec.replicas in body should be greater than or equal to 1`), the reason each
 * keyword maps to (enum → FieldValueNotSupported, maxItems → FieldValueTooMany...), the
 * `<nil>` field of combinator errors, minProperties short-circuiting, int-vs-float bounds,
 * RE2 patterns and update ratcheting all differ from ajv's JSON Schema semantics.
 */

import { RE2JS } from '@bufbuild/re2';
import { isObject, jsonEqual } from '../../../lib/json.ts';
import { invalid, notSupported, required, tooLong, tooMany, typeInvalid } from '../field-errors.ts';
import { formatGoFloat, GoFloat, goQuote } from '../gofmt.ts';
import type { FieldError } from '../types.ts';
import { checkFormat, isKnownFormat } from './formats.ts';
import { additionalProps, correlateItem, itemsSchema, jsonTypeOf, schemaTypes } from './schema-util.ts';
import type { JSONSchemaProps } from './types.ts';

/** The old value a node is compared with when ratcheting an update. */
export interface OldValue {
  found: boolean;
  value?: unknown;
}

const NONE: OldValue = { found: false };

const patternCache = new Map<string, RE2JS | null>();

/** Compiles a schema pattern with RE2 semantics (what Go's regexp, used by kube-openapi, implements). */
export function compilePattern(pattern: string): RE2JS | null {
  let re = patternCache.get(pattern);
  if (re === undefined) {
    try {
      re = RE2JS.compile(pattern);
    } catch {
      re = null;
    }
    patternCache.set(pattern, re);
  }
  return re;
}

/** The field path of an error: kube-openapi names with the leading '.' trimmed ('' is the nil path). */
function errPath(name: string): string {
  if (name === '' || name === '.') return '';
  return name.startsWith('.') ? name.slice(1) : name;
}

function runeCount(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

interface Result {
  errors: FieldError[];
  /** How many checks passed: picks the closest alternative of anyOf/oneOf, like go-openapi's MatchCount. */
  matches: number;
}

function oldChild(old: OldValue, key: string): OldValue {
  if (!old.found || !isObject(old.value) || !(key in old.value)) return NONE;
  return { found: true, value: old.value[key] };
}

function validateType(s: JSONSchemaProps, data: unknown, name: string, r: Result): boolean {
  const types = schemaTypes(s);
  const format = s.format ?? '';
  if (types.length === 0 && format === '') return true;
  const path = errPath(name);
  if (data === null || data === undefined) {
    if (types.length > 0 && !types.includes('null') && !s.nullable) {
      r.errors.push(typeInvalid(path, 'null', `${name} in body must be of type ${types.join(',')}: "null"`));
      return false;
    }
    return true;
  }
  const schType = jsonTypeOf(data);
  const dataFormat = schType === 'integer' ? 'int64' : schType === 'number' ? 'double' : '';
  const isIntFloat = schType === 'integer' && types.includes('number');
  const stringOrSlice = typeof data === 'string' || Array.isArray(data);
  if (!stringOrSlice && format !== '' && !(types.includes(schType) || dataFormat === format || isIntFloat)) {
    r.errors.push(
      typeInvalid(path, dataFormat, `${name} in body must be of type ${format}: ${goQuote(dataFormat)}`),
    );
    return false;
  }
  if (!(types.includes('number') || types.includes('integer')) && format !== '' && stringOrSlice) return true;
  if (!(types.includes(schType) || isIntFloat)) {
    r.errors.push(
      typeInvalid(path, schType, `${name} in body must be of type ${types.join(',')}: "${schType}"`),
    );
    return false;
  }
  return true;
}

function validateString(s: JSONSchemaProps, data: string, name: string, r: Result): void {
  const path = errPath(name);
  if (s.maxLength !== undefined && runeCount(data) > s.maxLength) r.errors.push(tooLong(path, s.maxLength));
  if (s.minLength !== undefined && runeCount(data) < s.minLength) {
    r.errors.push(invalid(path, data, `${name} in body should be at least ${s.minLength} chars long`));
  }
  if (s.pattern !== undefined) {
    const re = compilePattern(s.pattern);
    if (re && !re.test(data))
      r.errors.push(invalid(path, data, `${name} in body should match '${s.pattern}'`));
  }
  if (s.format !== undefined && isKnownFormat(s.format) && !checkFormat(s.format, data)) {
    r.errors.push(typeInvalid(path, data, `${name} in body must be of type ${s.format}: ${goQuote(data)}`));
  }
}

function validateNumber(s: JSONSchemaProps, data: number, name: string, r: Result): void {
  const path = errPath(name);
  const isInt = Number.isInteger(data);
  const types = schemaTypes(s);
  if (
    types.includes('integer') &&
    s.format === 'int32' &&
    (!isInt || data > 2147483647 || data < -2147483648)
  ) {
    // go-openapi reports range violations as a plain error, which apiextensions puts on the nil path.
    r.errors.push(invalid('', '', `Checked value must be of type integer with format int32 in ${name}`));
  }
  // Integer data is compared with int64(bound), float data with the float bound: so does go-openapi.
  const bound = (b: number) => (isInt ? Math.trunc(b) : new GoFloat(b));
  const num = (b: number) => (isInt ? Math.trunc(b) : b);
  if (s.multipleOf !== undefined && s.multipleOf !== 0) {
    const factor = s.multipleOf;
    let ok: boolean;
    if (isInt && Number.isInteger(factor)) ok = data % factor === 0;
    else {
      const mult = factor < 1 ? (1 / factor) * data : data / factor;
      ok = Number.isInteger(mult);
    }
    if (!ok)
      r.errors.push(
        invalid(path, data, `${name} in body should be a multiple of ${fmtBound(bound(factor))}`),
      );
  }
  if (s.maximum !== undefined) {
    const max = num(s.maximum);
    if (s.exclusiveMaximum ? data >= max : data > max) {
      const rel = s.exclusiveMaximum ? 'less than' : 'less than or equal to';
      r.errors.push(invalid(path, data, `${name} in body should be ${rel} ${fmtBound(bound(s.maximum))}`));
    }
  }
  if (s.minimum !== undefined) {
    const min = num(s.minimum);
    if (s.exclusiveMinimum ? data <= min : data < min) {
      const rel = s.exclusiveMinimum ? 'greater than' : 'greater than or equal to';
      r.errors.push(invalid(path, data, `${name} in body should be ${rel} ${fmtBound(bound(s.minimum))}`));
    }
  }
}

function fmtBound(b: number | GoFloat): string {
  return b instanceof GoFloat ? formatGoFloat(b.value) : String(b);
}

function validateArray(s: JSONSchemaProps, data: unknown[], name: string, old: OldValue, r: Result): void {
  const path = errPath(name);
  const items = itemsSchema(s);
  if (items) {
    data.forEach((item, i) => {
      const o = old.found ? correlateItem(s, item, old.value, true) : { found: false };
      const sub = validateNode(items, item, `${name}[${i}]`, o.found ? { found: true, value: o.old } : NONE);
      merge(r, sub);
    });
  }
  if (s.minItems !== undefined && data.length < s.minItems) {
    r.errors.push(invalid(path, data.length, `${name} in body should have at least ${s.minItems} items`));
  }
  if (s.maxItems !== undefined && data.length > s.maxItems)
    r.errors.push(tooMany(path, data.length, s.maxItems));
  if (s.uniqueItems && data.some((x, i) => data.findIndex((y) => jsonEqual(x, y)) !== i)) {
    r.errors.push(invalid(path, '', `${name} in body shouldn't contain duplicates`));
  }
}

function enumValueText(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function validateEnum(s: JSONSchemaProps, data: unknown, name: string, r: Result): void {
  if (!s.enum || s.enum.length === 0) return;
  const value = data === undefined ? null : data;
  if (s.enum.some((e) => jsonEqual(e, value))) return;
  r.errors.push(notSupported(errPath(name), value, s.enum.map(enumValueText)));
}

function validateObject(
  s: JSONSchemaProps,
  data: Record<string, unknown>,
  name: string,
  old: OldValue,
  r: Result,
): void {
  const path = errPath(name);
  const count = Object.keys(data).length;
  // go-openapi stops at a property-count violation without looking at the properties.
  if (s.minProperties !== undefined && count < s.minProperties) {
    r.errors.push(invalid(path, count, `${name} in body should have at least ${s.minProperties} properties`));
    return;
  }
  if (s.maxProperties !== undefined && count > s.maxProperties) {
    r.errors.push(tooMany(path, count, s.maxProperties));
    return;
  }
  const props = s.properties ?? {};
  const ap = additionalProps(s);
  if (ap && !ap.allows) {
    for (const k of Object.keys(data)) {
      if (!(k in props)) r.errors.push(invalid(path, k, `${name}.${k} in body is a forbidden property`));
    }
  } else if (ap?.schema) {
    for (const [k, v] of Object.entries(data)) {
      if (!(k in props)) merge(r, validateNode(ap.schema, v, `${name}.${k}`, oldChild(old, k)));
    }
  }
  for (const [p, ps] of Object.entries(props)) {
    if (!(p in data)) continue;
    merge(r, validateNode(ps, data[p], name === '' ? p : `${name}.${p}`, oldChild(old, p)));
  }
  for (const k of s.required ?? []) {
    if (!(k in data)) r.errors.push(required(errPath(`${name}.${k}`)));
  }
}

function validateCombinators(
  s: JSONSchemaProps,
  data: unknown,
  name: string,
  old: OldValue,
  r: Result,
): void {
  const quoted = goQuote(name);
  if (s.anyOf && s.anyOf.length > 0) {
    let best: Result | undefined;
    let ok = false;
    for (const alt of s.anyOf) {
      const res = validateNode(alt, data, name, old);
      if (res.errors.length === 0) {
        ok = true;
        best = undefined;
        break;
      }
      if (!best || res.matches > best.matches) best = res;
    }
    if (!ok) r.errors.push(invalid('', '', `${quoted} must validate at least one schema (anyOf)`));
    if (best) merge(r, best);
  }
  if (s.oneOf && s.oneOf.length > 0) {
    let best: Result | undefined;
    let validated = 0;
    for (const alt of s.oneOf) {
      const res = validateNode(alt, data, name, old);
      if (res.errors.length === 0) {
        validated++;
        best = undefined;
        continue;
      }
      if (validated === 0 && (!best || res.matches > best.matches)) best = res;
    }
    if (validated !== 1) {
      const more = validated === 0 ? 'Found none valid' : `Found ${validated} valid alternatives`;
      r.errors.push(invalid('', '', `${quoted} must validate one and only one schema (oneOf). ${more}`));
      if (best) merge(r, best);
    }
  }
  if (s.allOf && s.allOf.length > 0) {
    let validated = 0;
    for (const alt of s.allOf) {
      const res = validateNode(alt, data, name, old);
      if (res.errors.length === 0) validated++;
      merge(r, res);
    }
    if (validated !== s.allOf.length) {
      const more = validated === 0 ? '. None validated' : '';
      r.errors.push(invalid('', '', `${quoted} must validate all the schemas (allOf)${more}`));
    }
  }
  if (s.not) {
    const res = validateNode(s.not, data, name, old);
    if (res.errors.length === 0)
      r.errors.push(invalid('', '', `${quoted} must not validate the schema (not)`));
  }
}

function merge(into: Result, from: Result): void {
  into.errors.push(...from.errors);
  into.matches += from.matches;
}

function validateNode(s: JSONSchemaProps, data: unknown, name: string, old: OldValue): Result {
  const r: Result = { errors: [], matches: 0 };
  // Ratcheting (CRDValidationRatcheting): a value left unchanged by an update keeps passing.
  if (old.found && jsonEqual(data, old.value)) return r;
  const before = () => r.errors.length;
  let n = before();
  if (data === null || data === undefined) {
    validateType(s, data, name, r);
    validateEnum(s, data, name, r);
    if (before() === n) r.matches++;
    return r;
  }
  validateType(s, data, name, r);
  validateCombinators(s, data, name, old, r);
  if (typeof data === 'string') validateString(s, data, name, r);
  if (typeof data === 'number') validateNumber(s, data, name, r);
  if (Array.isArray(data)) validateArray(s, data, name, old, r);
  validateEnum(s, data, name, r);
  if (isObject(data)) validateObject(s, data, name, old, r);
  n = before() - n;
  if (n === 0) r.matches++;
  return r;
}

/**
 * Validates `data` against an OpenAPI v3 schema; with `old` (an update), unchanged values are
 * ratcheted. Paths are relative to the schema root (`spec.replicas` for a resource).
 */
export function validateValue(schema: JSONSchemaProps, data: unknown, old?: OldValue): FieldError[] {
  return validateNode(schema, data, '', old ?? NONE).errors;
}

/** Like validateValue but for a value at `basePath` (used for defaults inside a CRD schema). */
export function validateValueAt(schema: JSONSchemaProps, data: unknown, name: string): FieldError[] {
  return validateNode(schema, data, name, NONE).errors;
}
