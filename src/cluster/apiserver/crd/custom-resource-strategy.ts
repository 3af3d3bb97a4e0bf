/**
 * The registry strategy of custom resources (apiextensions' customResourceStrategy and its
 * status strategy): pruning + defaulting, the status split when /status is served, generation
 * on every non-metadata change, and validation (TypeMeta, metadata name, schema, scale paths,
 * list types, embedded resources, CEL rules).
 */

import { clone, isObject, jsonEqual } from '../../../lib/json.ts';
import { isDNS1123Label, nameIsDNSSubdomain } from '../builtin/validation.ts';
import { forbidden, invalid, required } from '../field-errors.ts';
import { goTypeName, goV } from '../gofmt.ts';
import type { FieldError, KubeObject, RequestContext, Strategy } from '../types.ts';
import { type CompiledSchema, compileSchema, hasBlockingError, rulesSkippedError } from './compile-schema.ts';
import { tableForColumns } from './printer.ts';
import type { CustomResourceDefinition, CustomResourceDefinitionVersion } from './types.ts';

/** A Strategy with the extras the HTTP layer needs for custom resources. */
export interface CustomResourceStrategy extends Strategy {
  /** The compiled schema of this version (undefined only for schemaless legacy CRDs). */
  readonly schema: CompiledSchema | undefined;
}

function get(obj: unknown, path: string): { found: boolean; value?: unknown } {
  let cur: unknown = obj;
  for (const p of path.replace(/^\./, '').split('.')) {
    if (!isObject(cur) || !(p in cur)) return { found: false };
    cur = cur[p];
  }
  return { found: true, value: cur };
}

/** ValidateScaleSpec / ValidateScaleStatus: replicas must be a non-negative int32. */
function validateReplicas(obj: unknown, path: string | undefined): FieldError[] {
  if (!path) return [];
  const r = get(obj, path);
  if (!r.found) return [];
  const v = r.value;
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    return [
      invalid(path, 0, `${path} accessor error: ${goV(v)} is of the type ${goTypeName(v)}, expected int64`),
    ];
  }
  if (v < 0) return [invalid(path, v, 'should be a non-negative integer')];
  if (v > 2147483647) return [invalid(path, v, 'should be less than or equal to 2147483647')];
  return [];
}

function validateLabelSelectorPath(obj: unknown, path: string | undefined): FieldError[] {
  if (!path) return [];
  const r = get(obj, path);
  if (!r.found || typeof r.value === 'string') return [];
  return [
    invalid(
      path,
      '',
      `${path} accessor error: ${goV(r.value)} is of the type ${goTypeName(r.value)}, expected string`,
    ),
  ];
}

/** The Strategy of one served version of a CRD. */
export function customResourceStrategy(
  crd: CustomResourceDefinition,
  version: CustomResourceDefinitionVersion,
): CustomResourceStrategy {
  const group = crd.spec?.group ?? '';
  const kind = crd.spec?.names?.kind ?? '';
  const namespaced = crd.spec?.scope !== 'Cluster';
  const apiVersion = `${group}/${version.name ?? ''}`;
  const openAPI = version.schema?.openAPIV3Schema;
  const schema = openAPI ? compileSchema(openAPI) : undefined;
  const statusEnabled = version.subresources?.status !== undefined;
  const scale = version.subresources?.scale;

  const pruneAndDefault = (obj: KubeObject) => {
    if (!schema) return;
    schema.prune(obj);
    schema.default(obj);
  };

  const validateTypeMeta = (obj: KubeObject): FieldError[] => {
    const errs: FieldError[] = [];
    if (obj.kind !== kind) errs.push(invalid('kind', obj.kind ?? '', `must be ${kind}`));
    if (obj.apiVersion !== apiVersion)
      errs.push(invalid('apiVersion', obj.apiVersion ?? '', `must be ${apiVersion}`));
    return errs;
  };

  const validateMeta = (obj: KubeObject): FieldError[] => {
    const errs: FieldError[] = [];
    const meta = obj.metadata ?? {};
    if (meta.generateName) {
      for (const msg of nameIsDNSSubdomain(meta.generateName, true)) {
        errs.push(invalid('metadata.generateName', meta.generateName, msg));
      }
    }
    if (!meta.name) errs.push(required('metadata.name', 'name or generateName is required'));
    else
      for (const msg of nameIsDNSSubdomain(meta.name, false))
        errs.push(invalid('metadata.name', meta.name, msg));
    if (namespaced) {
      if (!meta.namespace) errs.push(required('metadata.namespace'));
      else
        for (const msg of isDNS1123Label(meta.namespace))
          errs.push(invalid('metadata.namespace', meta.namespace, msg));
    } else if (meta.namespace) errs.push(forbidden('metadata.namespace', 'not allowed on this type'));
    return errs;
  };

  const validate = (obj: KubeObject, old: KubeObject | undefined, statusOnly: boolean): FieldError[] => {
    const typeErrs = validateTypeMeta(obj);
    if (typeErrs.length > 0) return typeErrs;
    const errs = validateMeta(obj);
    if (schema) errs.push(...schema.validateOpenAPI(obj, old));
    if (!statusOnly) errs.push(...validateReplicas(obj, scale?.specReplicasPath));
    errs.push(...validateReplicas(obj, scale?.statusReplicasPath));
    errs.push(...validateLabelSelectorPath(obj, scale?.labelSelectorPath));
    if (schema) {
      errs.push(...schema.validateStructure(obj));
      if (hasBlockingError(errs)) errs.push(rulesSkippedError());
      else errs.push(...schema.validateRules(obj, old));
    }
    return errs;
  };

  return {
    schema,
    tracksGeneration: true,
    default(obj) {
      pruneAndDefault(obj);
    },
    prepareForCreate(obj) {
      pruneAndDefault(obj);
      if (statusEnabled) delete obj.status;
      obj.metadata.generation = 1;
    },
    prepareForUpdate(obj, old, ctx: RequestContext) {
      pruneAndDefault(obj);
      if (ctx.subresource === 'status') {
        // /status writes only status: everything else, metadata included, stays as stored.
        const status = obj.status;
        const hasStatus = 'status' in obj;
        const managedFields = obj.metadata.managedFields;
        for (const k of Object.keys(obj)) delete obj[k];
        Object.assign(obj, clone(old));
        if (managedFields !== undefined) obj.metadata.managedFields = managedFields;
        if (hasStatus) obj.status = status;
        else delete obj.status;
        return;
      }
      if (statusEnabled) {
        if ('status' in old) obj.status = clone(old.status);
        else delete obj.status;
      }
      const { metadata: _n, ...newContent } = obj;
      const { metadata: _o, ...oldContent } = old;
      obj.metadata.generation = jsonEqual(newContent, oldContent)
        ? (old.metadata.generation ?? obj.metadata.generation)
        : (old.metadata.generation ?? 0) + 1;
    },
    validateCreate(obj) {
      return validate(obj, undefined, false);
    },
    validateUpdate(obj, old, ctx) {
      return validate(obj, old, ctx.subresource === 'status');
    },
    selectableFields(obj) {
      const out: Record<string, string> = {};
      for (const f of version.selectableFields ?? []) {
        if (!f.jsonPath) continue;
        const r = get(obj, f.jsonPath);
        const v = r.value;
        out[f.jsonPath.replace(/^\./, '')] =
          typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';
      }
      return out;
    },
    table: tableForColumns(version.additionalPrinterColumns),
  };
}
