/**
 * Structural defaulting as kube-apiserver applies it to custom resources: first non-nullable
 * nulls without a default are dropped, then `default` values are copied in, top-down, for every
 * missing field of an object that exists (a missing parent is created only if it has a default
 * of its own), for non-nullable nulls, and inside array items and map values.
 */

import { clone, isObject } from '../../../lib/json.ts';
import { additionalProps, itemsSchema } from './schema-util.ts';
import type { JSONSchemaProps } from './types.ts';

function isNonNullableNull(x: unknown, s: JSONSchemaProps | undefined): boolean {
  return x === null && s !== undefined && !s.nullable;
}

function fieldSchema(k: string, s: JSONSchemaProps | undefined): JSONSchemaProps | undefined {
  if (!s) return undefined;
  const prop = s.properties?.[k];
  if (prop) return prop;
  return additionalProps(s)?.schema;
}

/** Drops `null` where the field's schema is not nullable and has no default to replace it. */
export function pruneNonNullableNullsWithoutDefaults(x: unknown, s: JSONSchemaProps | undefined): void {
  if (isObject(x)) {
    for (const k of Object.keys(x)) {
      const fs = fieldSchema(k, s);
      if (isNonNullableNull(x[k], fs) && fs?.default === undefined) delete x[k];
      else pruneNonNullableNullsWithoutDefaults(x[k], fs);
    }
  } else if (Array.isArray(x)) {
    const items = itemsSchema(s);
    for (const v of x) pruneNonNullableNullsWithoutDefaults(v, items);
  }
}

/** Applies schema defaults in place. Default values are deep-copied. */
export function applyDefaults(x: unknown, s: JSONSchemaProps | undefined): void {
  if (!s) return;
  if (isObject(x)) {
    for (const [k, prop] of Object.entries(s.properties ?? {})) {
      if (prop.default === undefined) continue;
      if (!(k in x) || isNonNullableNull(x[k], prop)) x[k] = clone(prop.default);
    }
    const ap = additionalProps(s)?.schema;
    for (const k of Object.keys(x)) {
      const prop = s.properties?.[k];
      if (prop) applyDefaults(x[k], prop);
      else if (ap) {
        if (isNonNullableNull(x[k], ap) && ap.default !== undefined) x[k] = clone(ap.default);
        applyDefaults(x[k], ap);
      }
    }
  } else if (Array.isArray(x)) {
    const items = itemsSchema(s);
    if (!items) return;
    for (let i = 0; i < x.length; i++) {
      if (isNonNullableNull(x[i], items) && items.default !== undefined) x[i] = clone(items.default);
      applyDefaults(x[i], items);
    }
  }
}
