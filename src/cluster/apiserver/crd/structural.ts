/**
 * The structural-schema rules apiextensions enforces on every CRD schema: a `type` on every
 * specified node (except under x-kubernetes-int-or-string / x-kubernetes-preserve-unknown-fields),
 * nothing but value validations inside allOf/anyOf/oneOf/not, every property named there also
 * specified outside, restricted root metadata, and the embedded-resource invariants. Errors
 * come back sorted by their text, as kube-apiserver sorts them.
 */

import { RE2JS } from '@bufbuild/re2';
import { child, forbidden, formatFieldError, invalid, key, required } from '../field-errors.ts';
import type { FieldError } from '../types.ts';
import { additionalProps, isEmbedded, isIntOrString, itemsSchema, preservesUnknown } from './schema-util.ts';
import type { JSONSchemaProps } from './types.ts';

type Level = 'root' | 'item' | 'field';

function prop(path: string, k: string): string {
  return key(child(path, 'properties'), k);
}

function isIntOrStringPair(anyOf: JSONSchemaProps[] | undefined): boolean {
  if (anyOf?.length !== 2) return false;
  const only = (s: JSONSchemaProps, t: string) => Object.keys(s).length === 1 && s.type === t;
  return only(anyOf[0]!, 'integer') && only(anyOf[1]!, 'string');
}

function patternError(s: JSONSchemaProps, path: string, errs: FieldError[]): void {
  if (s.pattern === undefined || s.pattern === '') return;
  try {
    RE2JS.compile(s.pattern);
  } catch (e) {
    const detail = (e as Error).message;
    errs.push(
      invalid(child(path, 'pattern'), s.pattern, `must be a valid regular expression, but isn't: ${detail}`),
    );
  }
}

function validateValueValidation(
  s: JSONSchemaProps,
  skipAnyOf: boolean,
  skipFirstAllOfAnyOf: boolean,
  lvl: Level,
  path: string,
  errs: FieldError[],
): void {
  if (!skipAnyOf) {
    s.anyOf?.forEach((v, i) => {
      validateNested(v, false, lvl, `${child(path, 'anyOf')}[${i}]`, errs);
    });
  }
  s.allOf?.forEach((v, i) => {
    validateNested(v, skipFirstAllOfAnyOf && i === 0, lvl, `${child(path, 'allOf')}[${i}]`, errs);
  });
  s.oneOf?.forEach((v, i) => {
    validateNested(v, false, lvl, `${child(path, 'oneOf')}[${i}]`, errs);
  });
  if (s.not) validateNested(s.not, false, lvl, child(path, 'not'), errs);
  patternError(s, path, errs);
}

function validateNested(
  v: JSONSchemaProps,
  skipAnyOf: boolean,
  lvl: Level,
  path: string,
  errs: FieldError[],
): void {
  validateValueValidation(v, skipAnyOf, false, lvl, path, errs);
  const items = itemsSchema(v);
  if (items) validateNested(items, false, lvl, child(path, 'items'), errs);
  for (const [k, p] of Object.entries(v.properties ?? {}))
    validateNested(p, false, 'field', prop(path, k), errs);
  if (v.type) errs.push(forbidden(child(path, 'type'), 'must be empty to be structural'));
  if (v.additionalProperties !== undefined) {
    errs.push(forbidden(child(path, 'additionalProperties'), 'must be undefined to be structural'));
  }
  if (v.default !== undefined)
    errs.push(forbidden(child(path, 'default'), 'must be undefined to be structural'));
  if (v.title) errs.push(forbidden(child(path, 'title'), 'must be empty to be structural'));
  if (v.description) errs.push(forbidden(child(path, 'description'), 'must be empty to be structural'));
  if (v.nullable) errs.push(forbidden(child(path, 'nullable'), 'must be false to be structural'));
  if (v.externalDocs) errs.push(forbidden(child(path, 'externalDocs'), 'must be undefined to be structural'));
  const ext: [keyof JSONSchemaProps, string][] = [
    ['x-kubernetes-preserve-unknown-fields', 'must be false to be structural'],
    ['x-kubernetes-embedded-resource', 'must be false to be structural'],
    ['x-kubernetes-int-or-string', 'must be false to be structural'],
  ];
  for (const [name, msg] of ext) if (v[name] === true) errs.push(forbidden(child(path, name), msg));
  if ((v['x-kubernetes-list-map-keys'] ?? []).length > 0) {
    errs.push(forbidden(child(path, 'x-kubernetes-list-map-keys'), 'must be empty to be structural'));
  }
  if (v['x-kubernetes-list-type'] !== undefined) {
    errs.push(forbidden(child(path, 'x-kubernetes-list-type'), 'must be undefined to be structural'));
  }
  if (v['x-kubernetes-map-type'] !== undefined) {
    errs.push(forbidden(child(path, 'x-kubernetes-map-type'), 'must be undefined to be structural'));
  }
  if ((v['x-kubernetes-validations'] ?? []).length > 0) {
    errs.push(forbidden(child(path, 'x-kubernetes-validations'), 'must be empty to be structural'));
  }
  if (v.properties && 'metadata' in v.properties) {
    errs.push(forbidden(prop(path, 'metadata'), 'must not be specified in a nested context'));
  }
}

/** Keys of a schema node that count as "specified" for the root-metadata restriction. */
function hasOnlyNameRestrictions(meta: JSONSchemaProps): boolean {
  const props = Object.keys(meta.properties ?? {});
  const onlyNames = props.every((p) => p === 'name' || p === 'generateName');
  for (const [k, v] of Object.entries(meta)) {
    if (v === undefined) continue;
    if (k === 'type' || k === 'default') continue;
    if (k === 'properties' && onlyNames) continue;
    if (v === false || (Array.isArray(v) && v.length === 0) || v === '') continue;
    return false;
  }
  return true;
}

function validateInvariants(s: JSONSchemaProps, lvl: Level, path: string, errs: FieldError[]): void {
  const items = itemsSchema(s);
  if (s.type === 'array' && !items) errs.push(required(child(path, 'items'), 'must be specified'));
  if (items) validateInvariants(items, 'item', child(path, 'items'), errs);
  for (const [k, p] of Object.entries(s.properties ?? {}))
    validateInvariants(p, 'field', prop(path, k), errs);
  const ap = additionalProps(s);
  if (ap) {
    if (lvl === 'root')
      errs.push(forbidden(child(path, 'additionalProperties'), 'must not be used at the root'));
    if (ap.schema) validateInvariants(ap.schema, 'field', child(path, 'additionalProperties'), errs);
  }
  if (isIntOrString(s) && preservesUnknown(s)) {
    errs.push(
      invalid(
        child(path, 'x-kubernetes-preserve-unknown-fields'),
        true,
        'must be false if x-kubernetes-int-or-string is true',
      ),
    );
  }
  if (isIntOrString(s) && isEmbedded(s)) {
    errs.push(
      invalid(
        child(path, 'x-kubernetes-embedded-resource'),
        true,
        'must be false if x-kubernetes-int-or-string is true',
      ),
    );
  }
  const skipAnyOf = isIntOrStringPair(s.anyOf);
  const skipFirstAllOfAnyOf = isIntOrStringPair(s.allOf?.[0]?.anyOf);
  validateValueValidation(s, skipAnyOf, skipFirstAllOfAnyOf, lvl, path, errs);

  const checkMetadata = lvl === 'root' || isEmbedded(s);
  if (isEmbedded(s) && s.type !== 'object') {
    if (!s.type)
      errs.push(required(child(path, 'type'), 'must be object if x-kubernetes-embedded-resource is true'));
    else
      errs.push(
        invalid(child(path, 'type'), s.type, 'must be object if x-kubernetes-embedded-resource is true'),
      );
  } else if (!s.type && !isIntOrString(s) && !preservesUnknown(s)) {
    const where =
      lvl === 'root'
        ? 'at the root'
        : lvl === 'item'
          ? 'for specified array items'
          : 'for specified object fields';
    errs.push(required(child(path, 'type'), `must not be empty ${where}`));
  }
  if (isEmbedded(s) && ap) {
    errs.push(
      forbidden(
        child(path, 'additionalProperties'),
        'must not be used if x-kubernetes-embedded-resource is set',
      ),
    );
  }
  if (lvl === 'root' && s.type && s.type !== 'object') {
    errs.push(invalid(child(path, 'type'), s.type, 'must be object at the root'));
  }
  for (const f of ['kind', 'apiVersion']) {
    const p = s.properties?.[f];
    if (p && checkMetadata && p.type !== 'string') {
      errs.push(invalid(child(prop(path, f), 'type'), p.type ?? '', 'must be string'));
    }
  }
  const meta = s.properties?.metadata;
  if (meta) {
    const mp = prop(path, 'metadata');
    if (checkMetadata && meta.type !== 'object')
      errs.push(invalid(child(mp, 'type'), meta.type ?? '', 'must be object'));
    if (lvl === 'root' && !hasOnlyNameRestrictions(meta)) {
      errs.push(
        forbidden(
          mp,
          'must not specify anything other than name and generateName, but metadata is implicitly specified',
        ),
      );
    }
  }
  if (isEmbedded(s) && !preservesUnknown(s) && Object.keys(s.properties ?? {}).length === 0) {
    errs.push(
      required(
        child(path, 'properties'),
        'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields',
      ),
    );
  }
}

function completenessOfValueValidation(
  v: JSONSchemaProps,
  s: JSONSchemaProps,
  sPath: string,
  vPath: string,
  errs: FieldError[],
): void {
  if (v.not) completenessOfNested(v.not, s, sPath, child(vPath, 'not'), errs);
  v.allOf?.forEach((x, i) => {
    completenessOfNested(x, s, sPath, `${child(vPath, 'allOf')}[${i}]`, errs);
  });
  v.anyOf?.forEach((x, i) => {
    completenessOfNested(x, s, sPath, `${child(vPath, 'anyOf')}[${i}]`, errs);
  });
  v.oneOf?.forEach((x, i) => {
    completenessOfNested(x, s, sPath, `${child(vPath, 'oneOf')}[${i}]`, errs);
  });
}

function completenessOfNested(
  v: JSONSchemaProps,
  s: JSONSchemaProps | undefined,
  sPath: string,
  vPath: string,
  errs: FieldError[],
): void {
  if (!s) {
    errs.push(required(sPath, `because it is defined in ${vPath}`));
    return;
  }
  completenessOfValueValidation(v, s, sPath, vPath, errs);
  const vItems = itemsSchema(v);
  if (vItems)
    completenessOfNested(vItems, itemsSchema(s), child(sPath, 'items'), child(vPath, 'items'), errs);
  for (const [k, vf] of Object.entries(v.properties ?? {})) {
    const sf = s.properties?.[k];
    if (!sf) errs.push(required(prop(sPath, k), `because it is defined in ${prop(vPath, k)}`));
    else completenessOfNested(vf, sf, prop(sPath, k), prop(vPath, k), errs);
  }
}

function completeness(s: JSONSchemaProps, path: string, errs: FieldError[]): void {
  const items = itemsSchema(s);
  if (items) completeness(items, child(path, 'items'), errs);
  for (const [k, p] of Object.entries(s.properties ?? {})) completeness(p, prop(path, k), errs);
  completenessOfValueValidation(s, s, path, path, errs);
}

/** Structural-schema errors of `schema` (rooted at `path`), sorted like kube-apiserver sorts them. */
export function validateStructural(schema: JSONSchemaProps, path: string): FieldError[] {
  const errs: FieldError[] = [];
  validateInvariants(schema, 'root', path, errs);
  completeness(schema, path, errs);
  return errs.sort((a, b) => {
    const x = formatFieldError(a);
    const y = formatFieldError(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
}
