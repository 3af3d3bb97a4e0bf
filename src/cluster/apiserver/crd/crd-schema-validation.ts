/**
 * Validation of one CRD schema (validateCustomResourceDefinitionValidation): structural rules,
 * defaults, the OpenAPI subset CRDs allow, list/map extensions and x-kubernetes-validations
 * (whose rules must compile against the schema).
 */

import { clone } from '../../../lib/json.ts';
import { child, forbidden, index, invalid, key, notSupported, required } from '../field-errors.ts';
import { GoRaw, GoStruct } from '../gofmt.ts';
import type { FieldError } from '../types.ts';
import { compileRules } from './cel/compile.ts';
import { validateRules } from './cel/evaluate.ts';
import { validateEmbeddedResources, validateListSetsAndMaps } from './list-validation.ts';
import { pruneUnknownFields } from './prune.ts';
import { additionalProps, isEmbedded, itemsSchema } from './schema-util.ts';
import { validateStructural } from './structural.ts';
import type { JSONSchemaProps, ValidationRule } from './types.ts';
import { validateValueAt } from './value-validation.ts';

const OPENAPI_V3_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];

const RULE_REASONS = [
  'FieldValueDuplicate',
  'FieldValueForbidden',
  'FieldValueInvalid',
  'FieldValueRequired',
];

const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion']);

/** The Go field names allowed at the root of a schema when the status subresource is enabled. */
const ROOT_FIELDS_WITH_STATUS: [string, string][] = [
  ['description', 'Description'],
  ['type', 'Type'],
  ['format', 'Format'],
  ['title', 'Title'],
  ['maximum', 'Maximum'],
  ['exclusiveMaximum', 'ExclusiveMaximum'],
  ['minimum', 'Minimum'],
  ['exclusiveMinimum', 'ExclusiveMinimum'],
  ['maxLength', 'MaxLength'],
  ['minLength', 'MinLength'],
  ['pattern', 'Pattern'],
  ['maxItems', 'MaxItems'],
  ['minItems', 'MinItems'],
  ['uniqueItems', 'UniqueItems'],
  ['multipleOf', 'MultipleOf'],
  ['required', 'Required'],
  ['items', 'Items'],
  ['properties', 'Properties'],
  ['externalDocs', 'ExternalDocs'],
  ['example', 'Example'],
  ['x-kubernetes-preserve-unknown-fields', 'XPreserveUnknownFields'],
  ['x-kubernetes-validations', 'XValidations'],
];

function ruleValue(rule: ValidationRule): GoStruct {
  const ptr = (type: string, v: unknown) =>
    v === undefined ? new GoRaw(`(*${type})(nil)`) : new GoRaw(`(*${type})(${JSON.stringify(v)})`);
  return new GoStruct('apiextensions.ValidationRule', [
    ['Rule', rule.rule ?? ''],
    ['Message', rule.message ?? ''],
    ['MessageExpression', rule.messageExpression ?? ''],
    ['Reason', ptr('apiextensions.FieldValueErrorReason', rule.reason)],
    ['FieldPath', rule.fieldPath ?? ''],
    ['OptionalOldSelf', ptr('bool', rule.optionalOldSelf)],
  ]);
}

interface SchemaState {
  allowDefaults: boolean;
  disallowDefaultsReason?: string;
  insideResourceMeta: boolean;
  /** Path of the nearest ancestor that old and new objects cannot be correlated through. */
  uncorrelatable?: string;
}

interface SchemaErrors {
  schema: FieldError[];
  cel: FieldError[];
}

function standardChecks(s: JSONSchemaProps, path: string, st: SchemaState, errs: FieldError[]): void {
  if (s.type && !OPENAPI_V3_TYPES.includes(s.type))
    errs.push(notSupported(child(path, 'type'), s.type, OPENAPI_V3_TYPES));
  if (s.default !== undefined && !st.allowDefaults) {
    const detail = st.disallowDefaultsReason
      ? `must not be set ${st.disallowDefaultsReason}`
      : 'must not be set';
    errs.push(forbidden(child(path, 'default'), detail));
  }
  if (s.id) errs.push(forbidden(child(path, 'id'), 'id is not supported'));
  if (s.additionalItems !== undefined)
    errs.push(forbidden(child(path, 'additionalItems'), 'additionalItems is not supported'));
  if (s.patternProperties && Object.keys(s.patternProperties).length > 0) {
    errs.push(forbidden(child(path, 'patternProperties'), 'patternProperties is not supported'));
  }
  if (s.definitions && Object.keys(s.definitions).length > 0) {
    errs.push(forbidden(child(path, 'definitions'), 'definitions is not supported'));
  }
  if (s.dependencies !== undefined)
    errs.push(forbidden(child(path, 'dependencies'), 'dependencies is not supported'));
  if (s.$ref !== undefined) errs.push(forbidden(child(path, '$ref'), '$ref is not supported'));
  if (s.type === 'null') {
    errs.push(forbidden(child(path, 'type'), 'type cannot be set to null, use nullable as an alternative'));
  }
  if (Array.isArray(s.items)) {
    errs.push(forbidden(child(path, 'items'), 'items must be a schema object and not an array'));
  }
  if (st.insideResourceMeta && isEmbedded(s)) {
    errs.push(
      forbidden(child(path, 'x-kubernetes-embedded-resource'), 'must not be used inside of resource meta'),
    );
  }
}

function listAndMapChecks(s: JSONSchemaProps, path: string, errs: FieldError[]): void {
  if (s['x-kubernetes-preserve-unknown-fields'] === false) {
    errs.push(
      invalid(child(path, 'x-kubernetes-preserve-unknown-fields'), false, 'must be true or undefined'),
    );
  }
  const mapType = s['x-kubernetes-map-type'];
  if (mapType !== undefined && s.type !== 'object') {
    if (!s.type)
      errs.push(required(child(path, 'type'), 'must be object if x-kubernetes-map-type is specified'));
    else
      errs.push(invalid(child(path, 'type'), s.type, 'must be object if x-kubernetes-map-type is specified'));
  }
  if (mapType !== undefined && mapType !== 'atomic' && mapType !== 'granular') {
    errs.push(notSupported(child(path, 'x-kubernetes-map-type'), mapType, ['atomic', 'granular']));
  }
  const listType = s['x-kubernetes-list-type'];
  const items = itemsSchema(s);
  if (listType !== undefined && s.type !== 'array') {
    if (!s.type)
      errs.push(required(child(path, 'type'), 'must be array if x-kubernetes-list-type is specified'));
    else
      errs.push(invalid(child(path, 'type'), s.type, 'must be array if x-kubernetes-list-type is specified'));
  } else if (listType === 'set' && items) {
    if (
      items.type === 'array' &&
      items['x-kubernetes-list-type'] &&
      items['x-kubernetes-list-type'] !== 'atomic'
    ) {
      errs.push(
        invalid(
          child(child(path, 'items'), 'x-kubernetes-list-type'),
          items['x-kubernetes-list-type'],
          'must be atomic as item of a list with x-kubernetes-list-type=set',
        ),
      );
    } else if (items.type === 'object' && items['x-kubernetes-map-type'] !== 'atomic') {
      errs.push(
        invalid(
          child(child(path, 'items'), 'x-kubernetes-map-type'),
          items['x-kubernetes-list-type'] ?? null,
          'must be atomic as item of a list with x-kubernetes-list-type=set',
        ),
      );
    }
  }
  if (listType !== undefined && !['atomic', 'set', 'map'].includes(listType)) {
    errs.push(notSupported(child(path, 'x-kubernetes-list-type'), listType, ['atomic', 'set', 'map']));
  }
  const mapKeys = s['x-kubernetes-list-map-keys'] ?? [];
  if (mapKeys.length > 0) {
    if (listType === undefined) {
      errs.push(
        required(
          child(path, 'x-kubernetes-list-type'),
          'must be map if x-kubernetes-list-map-keys is non-empty',
        ),
      );
    } else if (listType !== 'map') {
      errs.push(
        invalid(
          child(path, 'x-kubernetes-list-type'),
          listType,
          'must be map if x-kubernetes-list-map-keys is non-empty',
        ),
      );
    }
  }
  if (listType === 'map') {
    if (mapKeys.length === 0) {
      errs.push(
        required(
          child(path, 'x-kubernetes-list-map-keys'),
          'must not be empty if x-kubernetes-list-type is map',
        ),
      );
    }
    if (s.items === undefined)
      errs.push(required(child(path, 'items'), 'must have a schema if x-kubernetes-list-type is map'));
    if (items && items.type !== 'object') {
      errs.push(
        invalid(
          child(child(path, 'items'), 'type'),
          items.type ?? '',
          "must be object if parent array's x-kubernetes-list-type is map",
        ),
      );
    }
    if (items?.type === 'object') {
      const seen = new Set<string>();
      for (const k of mapKeys) {
        const ks = items.properties?.[k];
        if (ks) {
          if (ks.type === 'array' || ks.type === 'object') {
            errs.push(
              invalid(
                child(key(child(child(path, 'items'), 'properties'), k), 'type'),
                items.type,
                "must be a scalar type if parent array's x-kubernetes-list-type is map",
              ),
            );
          }
        } else {
          errs.push(
            invalid(
              child(path, 'x-kubernetes-list-map-keys'),
              mapKeys,
              'entries must all be names of item properties',
            ),
          );
        }
        if (seen.has(k)) {
          errs.push(
            invalid(child(path, 'x-kubernetes-list-map-keys'), mapKeys, 'must not contain duplicate entries'),
          );
        }
        seen.add(k);
      }
    }
  }
  if (items && (listType === 'set' || listType === 'map')) {
    if (items.nullable) {
      errs.push(
        forbidden(
          child(child(path, 'items'), 'nullable'),
          `cannot be nullable when x-kubernetes-list-type is ${listType}`,
        ),
      );
    }
    if (listType === 'map') {
      const req = new Set(items.required ?? []);
      for (const k of mapKeys) {
        const ks = items.properties?.[k];
        if (!ks) continue;
        const kp = key(child(child(path, 'items'), 'properties'), k);
        if (!req.has(k) && ks.default === undefined) {
          errs.push(
            required(
              child(kp, 'default'),
              'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property',
            ),
          );
        }
        if (ks.nullable) {
          errs.push(
            forbidden(
              child(kp, 'nullable'),
              'this property is in x-kubernetes-list-map-keys, so it cannot be nullable',
            ),
          );
        }
      }
    }
  }
}

function ruleChecks(s: JSONSchemaProps, path: string, errs: FieldError[]): void {
  (s['x-kubernetes-validations'] ?? []).forEach((rule, i) => {
    const rp = index(child(path, 'x-kubernetes-validations'), i);
    const rawRule = rule.rule ?? '';
    const trimmedRule = rawRule.trim();
    const trimmedMsg = (rule.message ?? '').trim();
    if (trimmedRule === '') errs.push(required(child(rp, 'rule'), 'rule is not specified'));
    else if ((rule.message ?? '') !== '' && trimmedMsg === '') {
      errs.push(invalid(child(rp, 'message'), rule.message, 'message must be non-empty if specified'));
    } else if (/[\n\r]/.test(trimmedMsg)) {
      errs.push(invalid(child(rp, 'message'), rule.message, 'message must not contain line breaks'));
    } else if (/[\n\r]/.test(trimmedRule) && trimmedMsg === '') {
      errs.push(required(child(rp, 'message'), 'message must be specified if rule contains line breaks'));
    }
    if ((rule.messageExpression ?? '') !== '' && (rule.messageExpression ?? '').trim() === '') {
      errs.push(required(child(rp, 'messageExpression'), 'messageExpression must be non-empty if specified'));
    }
    if (rule.reason !== undefined && !RULE_REASONS.includes(rule.reason)) {
      errs.push(notSupported(child(rp, 'reason'), rule.reason, RULE_REASONS));
    }
    const fp = rule.fieldPath;
    if (fp !== undefined && fp !== '' && fp.trim() === '') {
      errs.push(invalid(child(rp, 'fieldPath'), fp, 'fieldPath must be non-empty if specified'));
    }
    if (fp !== undefined && /[\n\r]/.test(fp)) {
      errs.push(invalid(child(rp, 'fieldPath'), fp, 'fieldPath must not contain line breaks'));
    }
  });
}

function celChecks(
  s: JSONSchemaProps,
  path: string,
  root: boolean,
  st: SchemaState,
  errs: FieldError[],
): void {
  const rules = s['x-kubernetes-validations'] ?? [];
  if (rules.length === 0) return;
  const compiled = compileRules(s, root || isEmbedded(s));
  compiled.forEach((c, i) => {
    const rp = index(child(path, 'x-kubernetes-validations'), i);
    const rule = rules[i]!;
    if ((rule.rule ?? '').trim() === '') return;
    if (c.fieldPathError !== undefined) {
      errs.push(invalid(child(rp, 'fieldPath'), rule.fieldPath, 'fieldPath must be a valid path'));
    }
    if (c.error) errs.push(invalid(child(rp, 'rule'), ruleValue(rule), c.error));
    if (c.messageError) errs.push(invalid(child(rp, 'messageExpression'), ruleValue(rule), c.messageError));
    if (c.usesOldSelf) {
      if (st.uncorrelatable !== undefined) {
        errs.push(
          invalid(
            child(rp, 'rule'),
            rule.rule,
            `oldSelf cannot be used on the uncorrelatable portion of the schema within ${st.uncorrelatable}`,
          ),
        );
      }
    } else if (rule.optionalOldSelf !== undefined) {
      errs.push(
        invalid(
          child(rp, 'optionalOldSelf'),
          rule.optionalOldSelf,
          'may not be set if oldSelf is not used in rule',
        ),
      );
    }
  });
}

function validateSchemaNode(
  s: JSONSchemaProps | undefined,
  path: string,
  st: SchemaState,
  root: boolean,
  cel: boolean,
): SchemaErrors {
  const out: SchemaErrors = { schema: [], cel: [] };
  if (!s) return out;
  const add = (r: SchemaErrors) => {
    out.schema.push(...r.schema);
    out.cel.push(...r.cel);
  };
  standardChecks(s, path, st, out.schema);
  if (s.uniqueItems) {
    out.schema.push(
      forbidden(
        child(path, 'uniqueItems'),
        'uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
      ),
    );
  }
  const ap = s.additionalProperties;
  if (ap !== undefined) {
    if (s.properties && Object.keys(s.properties).length > 0 && (ap === false || typeof ap === 'object')) {
      out.schema.push(
        forbidden(
          child(path, 'additionalProperties'),
          'additionalProperties and properties are mutual exclusive',
        ),
      );
    }
    const sub: SchemaState = st.insideResourceMeta
      ? {
          ...st,
          allowDefaults: false,
          disallowDefaultsReason: 'inside additionalProperties applying to object metadata',
        }
      : st;
    if (typeof ap === 'object')
      add(validateSchemaNode(ap, child(path, 'additionalProperties'), sub, false, cel));
  }
  for (const [p, ps] of Object.entries(s.properties ?? {})) {
    let sub = st;
    if (s['x-kubernetes-map-type'] === 'atomic' && sub.uncorrelatable === undefined)
      sub = { ...sub, uncorrelatable: path };
    if ((root || isEmbedded(s)) && META_FIELDS.has(p)) {
      sub = { ...sub, insideResourceMeta: true };
      if (root) sub = { ...sub, allowDefaults: false, disallowDefaultsReason: `in top-level ${p}` };
    }
    add(validateSchemaNode(ps, key(child(path, 'properties'), p), sub, false, cel));
  }
  add(validateSchemaNode(s.not, child(path, 'not'), st, false, false));
  for (const [name, list] of [
    ['allOf', s.allOf],
    ['oneOf', s.oneOf],
    ['anyOf', s.anyOf],
  ] as const) {
    list?.forEach((x, i) => {
      add(validateSchemaNode(x, index(child(path, name), i), st, false, false));
    });
  }
  for (const [d, ds] of Object.entries(s.definitions ?? {})) {
    add(validateSchemaNode(ds, key(child(path, 'definitions'), d), st, false, false));
  }
  const items = s.items;
  if (items !== undefined) {
    let sub = st;
    if (s['x-kubernetes-list-type'] !== 'map' && sub.uncorrelatable === undefined)
      sub = { ...sub, uncorrelatable: path };
    if (Array.isArray(items)) {
      items.forEach((x, i) => {
        add(validateSchemaNode(x, index(child(path, 'items'), i), sub, false, cel));
      });
    } else add(validateSchemaNode(items, child(path, 'items'), sub, false, cel));
  }
  for (const [d, dep] of Object.entries(s.dependencies ?? {})) {
    if (!Array.isArray(dep))
      add(validateSchemaNode(dep, key(child(path, 'dependencies'), d), st, false, false));
  }
  listAndMapChecks(s, path, out.schema);
  ruleChecks(s, path, out.schema);
  // Like kube-apiserver, rules are only compiled where the schema at and below this node is sound.
  if (cel && out.schema.length === 0) celChecks(s, path, root, st, out.cel);
  return out;
}

/** Re-roots errors of a value validated on its own under `base` (e.g. `...properties[x].default`). */
function rebase(errs: FieldError[], base: string): FieldError[] {
  return errs.map((e) => ({ ...e, field: e.field === '<nil>' ? base : `${base}.${e.field}` }));
}

/** Defaults must validate against their schema and must not carry unknown fields. */
function validateDefaults(s: JSONSchemaProps, path: string, root: boolean, errs: FieldError[]): void {
  if (s.default !== undefined && !root) {
    const dp = child(path, 'default');
    if (pruneUnknownFields(clone(s.default), s, isEmbedded(s)).length > 0)
      errs.push(invalid(dp, s.default, 'must not have unknown fields'));
    const valueErrs = validateValueAt(s, s.default, '');
    if (valueErrs.length > 0) errs.push(...rebase(valueErrs, dp));
    else {
      const structural = [
        ...validateEmbeddedResources('', s, s.default),
        ...validateListSetsAndMaps('', s, s.default),
      ];
      if (structural.length > 0) errs.push(...rebase(structural, dp));
      else {
        const ruleErrs = validateRules(s, s.default, { found: true, value: s.default }, isEmbedded(s), false);
        errs.push(...rebase(ruleErrs, dp));
      }
    }
  }
  const items = itemsSchema(s);
  if (items) validateDefaults(items, child(path, 'items'), false, errs);
  for (const [p, ps] of Object.entries(s.properties ?? {})) {
    validateDefaults(ps, key(child(path, 'properties'), p), false, errs);
  }
  const ap = additionalProps(s)?.schema;
  if (ap) validateDefaults(ap, child(path, 'additionalProperties'), false, errs);
}

function rootFieldsWithStatus(s: JSONSchemaProps, path: string, errs: FieldError[]): void {
  const allowed = new Map(ROOT_FIELDS_WITH_STATUS);
  for (const [k, v] of Object.entries(s)) {
    if (v === undefined || v === false || v === '' || (Array.isArray(v) && v.length === 0)) continue;
    if (k === 'type') {
      if (v !== 'object') {
        errs.push(
          invalid(
            child(path, 'openAPIV3Schema.type'),
            v,
            'only "object" is allowed as the type at the root of the schema if the status subresource is enabled',
          ),
        );
        return;
      }
      continue;
    }
    if (!allowed.has(k)) {
      const list = `[${[...allowed.values()].join(' ')}]`;
      errs.push(
        invalid(
          child(path, 'openAPIV3Schema'),
          new GoRaw('apiextensions.JSONSchemaProps{...}'),
          `only ${list} fields are allowed at the root of the schema if the status subresource is enabled`,
        ),
      );
      return;
    }
  }
}

/** validateCustomResourceDefinitionValidation: one schema, at `path` (`spec.validation` or a version's `schema`). */
export function validateValidation(
  schema: JSONSchemaProps | undefined,
  statusEnabled: boolean,
  path: string,
  errs: FieldError[],
): void {
  if (!schema) return;
  if (statusEnabled) rootFieldsWithStatus(schema, path, errs);
  if (schema.nullable)
    errs.push(forbidden(child(path, 'openAPIV3Schema.nullable'), 'nullable cannot be true at the root'));
  const sp = child(path, 'openAPIV3Schema');
  const structural = validateStructural(schema, sp);
  let cel = false;
  if (structural.length > 0) errs.push(...structural);
  else {
    const defaults: FieldError[] = [];
    validateDefaults(schema, sp, true, defaults);
    errs.push(...defaults);
    cel = defaults.length === 0;
  }
  const r = validateSchemaNode(schema, sp, { allowDefaults: true, insideResourceMeta: false }, true, cel);
  errs.push(...r.schema, ...r.cel);
}
