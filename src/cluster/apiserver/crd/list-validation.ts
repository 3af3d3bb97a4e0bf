/**
 * Checks that run after OpenAPI validation of a custom resource: uniqueness of
 * x-kubernetes-list-type set/map lists, and TypeMeta/ObjectMeta of embedded resources.
 */

import { isObject, jsonEqual } from '../../../lib/json.ts';
import { isDNS1035Label } from '../builtin/validation.ts';
import { child, duplicate, index, invalid, required } from '../field-errors.ts';
import type { FieldError } from '../types.ts';
import { additionalProps, isEmbedded, itemsSchema } from './schema-util.ts';
import type { JSONSchemaProps } from './types.ts';

function validateListSet(path: string, list: unknown[], errs: FieldError[]): void {
  list.forEach((v, i) => {
    if (list.findIndex((w) => jsonEqual(v, w)) < i) errs.push(duplicate(index(path, i), v));
  });
}

function validateListMap(path: string, s: JSONSchemaProps, list: unknown[], errs: FieldError[]): void {
  const keys = s['x-kubernetes-list-map-keys'] ?? [];
  const items = itemsSchema(s);
  const seen: Record<string, unknown>[] = [];
  list.forEach((item, i) => {
    if (!isObject(item)) return;
    const keyValues: Record<string, unknown> = {};
    let complete = true;
    for (const k of keys) {
      if (k in item) keyValues[k] = item[k];
      else if (items?.properties?.[k]?.default !== undefined) keyValues[k] = items.properties[k]!.default;
      else {
        errs.push(required(child(index(path, i), k)));
        complete = false;
      }
    }
    if (!complete) return;
    if (seen.some((other) => jsonEqual(other, keyValues))) errs.push(duplicate(index(path, i), keyValues));
    else seen.push(keyValues);
  });
}

/** Duplicate values in set lists and duplicate keys in map lists, anywhere in `x`. */
export function validateListSetsAndMaps(
  path: string,
  s: JSONSchemaProps | undefined,
  x: unknown,
): FieldError[] {
  const errs: FieldError[] = [];
  walkLists(path, s, x, errs);
  return errs;
}

function walkLists(path: string, s: JSONSchemaProps | undefined, x: unknown, errs: FieldError[]): void {
  if (!s) return;
  if (Array.isArray(x)) {
    const lt = s['x-kubernetes-list-type'];
    if (lt === 'set') validateListSet(path, x, errs);
    else if (lt === 'map') validateListMap(path, s, x, errs);
    const items = itemsSchema(s);
    x.forEach((v, i) => {
      walkLists(index(path, i), items, v, errs);
    });
  } else if (isObject(x)) {
    const ap = additionalProps(s)?.schema;
    for (const [k, v] of Object.entries(x)) {
      const prop = s.properties?.[k];
      if (prop) walkLists(child(path, k), prop, v, errs);
      else if (ap) walkLists(`${path}[${k}]`, ap, v, errs);
    }
  }
}

function parseGroupVersionError(gv: string): string | undefined {
  if (gv === '' || gv === '/') return undefined;
  const parts = gv.split('/');
  if (parts.length > 2) return `unexpected GroupVersion string: ${gv}`;
  return undefined;
}

function validateEmbeddedResource(path: string, x: Record<string, unknown>, errs: FieldError[]): void {
  if (!('apiVersion' in x)) errs.push(required(child(path, 'apiVersion')));
  if (!('kind' in x)) errs.push(required(child(path, 'kind')));
  for (const [k, v] of Object.entries(x)) {
    if (k === 'apiVersion') {
      if (typeof v !== 'string') errs.push(invalid(child(path, k), v, 'must be a string'));
      else if (v === '') errs.push(invalid(child(path, k), v, 'must not be empty'));
      else {
        const e = parseGroupVersionError(v);
        if (e) errs.push(invalid(child(path, k), v, e));
      }
    } else if (k === 'kind') {
      if (typeof v !== 'string') errs.push(invalid(child(path, k), v, 'must be a string'));
      else if (v === '') errs.push(invalid(child(path, k), v, 'must not be empty'));
      else {
        const e = isDNS1035Label(v.toLowerCase());
        if (e.length > 0) {
          errs.push(
            invalid(child(path, k), v, `may have mixed case, but should otherwise match: ${e.join(',')}`),
          );
        }
      }
    } else if (k === 'metadata' && isObject(v) && typeof v.name === 'string') {
      for (const msg of pathSegmentNameErrors(v.name))
        errs.push(invalid(child(child(path, k), 'name'), v.name, msg));
    }
  }
}

/** ValidatePathSegmentName: the names embedded resources may carry. */
export function pathSegmentNameErrors(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  const errs: string[] = [];
  for (const illegal of ['/', '%']) {
    if (name.includes(illegal)) errs.push(`may not contain '${illegal}'`);
  }
  return errs;
}

/** apiVersion/kind/metadata checks of every x-kubernetes-embedded-resource object below the root. */
export function validateEmbeddedResources(
  path: string,
  s: JSONSchemaProps | undefined,
  x: unknown,
): FieldError[] {
  const errs: FieldError[] = [];
  walkEmbedded(path, s, x, errs, true);
  return errs;
}

function walkEmbedded(
  path: string,
  s: JSONSchemaProps | undefined,
  x: unknown,
  errs: FieldError[],
  root: boolean,
): void {
  if (!s) return;
  if (isObject(x)) {
    if (!root && isEmbedded(s)) validateEmbeddedResource(path, x, errs);
    const ap = additionalProps(s)?.schema;
    for (const [k, v] of Object.entries(x)) {
      const prop = s.properties?.[k];
      if (prop) walkEmbedded(child(path, k), prop, v, errs, false);
      else if (ap) walkEmbedded(`${path}[${k}]`, ap, v, errs, false);
    }
  } else if (Array.isArray(x)) {
    const items = itemsSchema(s);
    x.forEach((v, i) => {
      walkEmbedded(index(path, i), items, v, errs, false);
    });
  }
}
