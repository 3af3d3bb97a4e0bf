/**
 * compileSchema: one CRD version's openAPIV3Schema turned into the operations kube-apiserver
 * runs on custom resources of that version (pruning, defaulting, validation).
 */

import { invalid } from '../field-errors.ts';
import type { FieldError } from '../types.ts';
import { validateRules } from './cel/evaluate.ts';
import { applyDefaults, pruneNonNullableNullsWithoutDefaults } from './defaults.ts';
import { validateEmbeddedResources, validateListSetsAndMaps } from './list-validation.ts';
import { pruneUnknownFields } from './prune.ts';
import type { JSONSchemaProps } from './types.ts';
import { type OldValue, validateValue } from './value-validation.ts';

export interface CompileOptions {
  /** Treat the root as a resource (apiVersion, kind, metadata handled as such). Default true. */
  resourceRoot?: boolean;
}

export interface CompiledSchema {
  readonly openAPIV3Schema: JSONSchemaProps;
  /** Drops non-nullable nulls that have no default, then applies defaults at every level. */
  default(obj: unknown): void;
  /** Drops unknown fields in place; returns their paths (`spec.foo`, `spec.items[0].bar`). */
  prune(obj: unknown): string[];
  /** OpenAPI + list-type + embedded-resource + CEL validation; `old` makes it an update. */
  validate(obj: unknown, old?: unknown): FieldError[];
  /** OpenAPI value validation only (kube-openapi's part), ratcheted against `old`. */
  validateOpenAPI(obj: unknown, old?: unknown): FieldError[];
  /** x-kubernetes-list-type set/map uniqueness and embedded-resource TypeMeta checks. */
  validateStructure(obj: unknown): FieldError[];
  /** x-kubernetes-validations (CEL) only. */
  validateRules(obj: unknown, old?: unknown): FieldError[];
}

const BLOCKING = new Set([
  'FieldValueNotSupported',
  'FieldValueRequired',
  'FieldValueTooLong',
  'FieldValueTooMany',
  'FieldValueTypeInvalid',
]);

/** Whether kube-apiserver would skip CEL rules because of these errors (rules need a well-typed object). */
export function hasBlockingError(errs: FieldError[]): boolean {
  return errs.some((e) => BLOCKING.has(e.reason));
}

/** The error kube-apiserver reports instead of running rules over an invalid object. */
export function rulesSkippedError(): FieldError {
  return invalid(
    '',
    null,
    'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
  );
}

function oldOf(old: unknown): OldValue | undefined {
  return old === undefined ? undefined : { found: true, value: old };
}

export function compileSchema(
  openAPIV3Schema: JSONSchemaProps,
  options: CompileOptions = {},
): CompiledSchema {
  const resourceRoot = options.resourceRoot ?? true;
  const schema = openAPIV3Schema;
  const compiled: CompiledSchema = {
    openAPIV3Schema: schema,
    default(obj) {
      pruneNonNullableNullsWithoutDefaults(obj, schema);
      applyDefaults(obj, schema);
    },
    prune(obj) {
      return pruneUnknownFields(obj, schema, resourceRoot);
    },
    validateOpenAPI(obj, old) {
      return validateValue(schema, obj, oldOf(old));
    },
    validateStructure(obj) {
      return [...validateEmbeddedResources('', schema, obj), ...validateListSetsAndMaps('', schema, obj)];
    },
    validateRules(obj, old) {
      return validateRules(schema, obj, oldOf(old), resourceRoot);
    },
    validate(obj, old) {
      const errs = [...compiled.validateOpenAPI(obj, old), ...compiled.validateStructure(obj)];
      if (hasBlockingError(errs)) return [...errs, rulesSkippedError()];
      return [...errs, ...compiled.validateRules(obj, old)];
    },
  };
  return compiled;
}
