/**
 * Pruning of unknown fields (apiextensions' structural pruning): every object field that the
 * schema does not specify is dropped, except below x-kubernetes-preserve-unknown-fields, and
 * except apiVersion/kind/metadata at a resource root or an embedded resource, whose metadata
 * keeps only ObjectMeta's fields. The dropped paths are returned, as apiextensions records them.
 */

import { isObject } from '../../../lib/json.ts';
import { OBJECT_META_FIELDS } from '../meta.ts';
import { additionalProps, isEmbedded, itemsSchema, preservesUnknown } from './schema-util.ts';
import type { JSONSchemaProps } from './types.ts';

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/** Anything else under metadata is unknown to the API server. */
const OBJECT_META = new Set(OBJECT_META_FIELDS);

function join(path: string, k: string): string {
  return path === '' ? k : `${path}.${k}`;
}

function pruneMetadata(meta: unknown, path: string, pruned: string[]): void {
  if (!isObject(meta)) return;
  for (const k of Object.keys(meta)) {
    if (!OBJECT_META.has(k)) {
      delete meta[k];
      pruned.push(join(path, k));
    }
  }
}

function pruneNode(
  x: unknown,
  s: JSONSchemaProps | undefined,
  embedded: boolean,
  path: string,
  pruned: string[],
): void {
  if (s && preservesUnknown(s)) {
    skipPrune(x, s, embedded, path, pruned);
    return;
  }
  if (isObject(x)) {
    if (!s) {
      for (const k of Object.keys(x)) {
        delete x[k];
        pruned.push(join(path, k));
      }
      return;
    }
    const ap = additionalProps(s);
    for (const k of Object.keys(x)) {
      if (embedded && META_FIELDS.has(k)) {
        if (k === 'metadata') pruneMetadata(x[k], join(path, k), pruned);
        continue;
      }
      const prop = s.properties?.[k];
      if (prop) pruneNode(x[k], prop, isEmbedded(prop), join(path, k), pruned);
      else if (ap) pruneNode(x[k], ap.schema, isEmbedded(ap.schema), join(path, k), pruned);
      else {
        delete x[k];
        pruned.push(join(path, k));
      }
    }
  } else if (Array.isArray(x)) {
    const items = s ? itemsSchema(s) : undefined;
    x.forEach((v, i) => {
      pruneNode(v, items, isEmbedded(items), `${path}[${i}]`, pruned);
    });
  }
}

function skipPrune(x: unknown, s: JSONSchemaProps, embedded: boolean, path: string, pruned: string[]): void {
  if (isObject(x)) {
    const ap = additionalProps(s);
    for (const k of Object.keys(x)) {
      if (embedded && META_FIELDS.has(k)) {
        if (k === 'metadata') pruneMetadata(x[k], join(path, k), pruned);
        continue;
      }
      const prop = s.properties?.[k];
      if (prop) pruneNode(x[k], prop, isEmbedded(prop), join(path, k), pruned);
      else if (ap?.schema) pruneNode(x[k], ap.schema, isEmbedded(ap.schema), join(path, k), pruned);
    }
  } else if (Array.isArray(x)) {
    const items = itemsSchema(s);
    if (!items) return;
    x.forEach((v, i) => {
      skipPrune(v, items, isEmbedded(items), `${path}[${i}]`, pruned);
    });
  }
}

/**
 * Removes unknown fields from `obj` in place and returns their paths in the order found.
 * With `resourceRoot`, the root is treated as a resource (apiVersion, kind, metadata kept).
 */
export function pruneUnknownFields(
  obj: unknown,
  schema: JSONSchemaProps | undefined,
  resourceRoot = true,
): string[] {
  const pruned: string[] = [];
  pruneNode(obj, schema, resourceRoot || isEmbedded(schema), '', pruned);
  return pruned;
}
