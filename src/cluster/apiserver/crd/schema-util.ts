/** Small accessors over JSONSchemaProps and JSON values shared by the schema algorithms. */

import { isObject, jsonEqual } from '../../../lib/json.ts';
import type { JSONSchemaProps } from './types.ts';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function itemsSchema(s: JSONSchemaProps | undefined): JSONSchemaProps | undefined {
  const items = s?.items;
  return items && !Array.isArray(items) ? items : undefined;
}

/** additionalProperties as structural schemas see it: undefined, a bare allow/deny, or a schema. */
export function additionalProps(
  s: JSONSchemaProps | undefined,
): { allows: boolean; schema?: JSONSchemaProps } | undefined {
  const ap = s?.additionalProperties;
  if (ap === undefined) return undefined;
  if (typeof ap === 'boolean') return { allows: ap };
  return { allows: true, schema: ap };
}

export function preservesUnknown(s: JSONSchemaProps | undefined): boolean {
  return s?.['x-kubernetes-preserve-unknown-fields'] === true;
}

export function isEmbedded(s: JSONSchemaProps | undefined): boolean {
  return s?.['x-kubernetes-embedded-resource'] === true;
}

export function isIntOrString(s: JSONSchemaProps | undefined): boolean {
  return s?.['x-kubernetes-int-or-string'] === true;
}

/** Schema types as go-openapi sees them after CRD conversion (int-or-string is two types). */
export function schemaTypes(s: JSONSchemaProps): string[] {
  if (isIntOrString(s)) return ['integer', 'string'];
  return s.type ? [s.type] : [];
}

/** The JSON type a decoded value has, as go-openapi infers it (integral numbers are integers). */
export function jsonTypeOf(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (typeof v === 'bigint') return 'integer';
  if (Array.isArray(v)) return 'array';
  return 'object';
}

/**
 * The old value correlated with one list item, for ratcheting and CEL transition rules:
 * map lists correlate by their keys; set lists (ratcheting only) by equal value.
 */
export function correlateItem(
  listSchema: JSONSchemaProps,
  item: unknown,
  oldList: unknown,
  allowSets: boolean,
): { found: boolean; old?: unknown } {
  if (!Array.isArray(oldList)) return { found: false };
  const listType = listSchema['x-kubernetes-list-type'];
  if (listType === 'map') {
    const keys = listSchema['x-kubernetes-list-map-keys'] ?? [];
    if (!isObject(item) || keys.length === 0) return { found: false };
    const match = oldList.find((o) => isObject(o) && keys.every((k) => jsonEqual(o[k], item[k])));
    return match === undefined ? { found: false } : { found: true, old: match };
  }
  if (listType === 'set' && allowSets) {
    const match = oldList.find((o) => jsonEqual(o, item));
    return match === undefined ? { found: false } : { found: true, old: match };
  }
  return { found: false };
}
