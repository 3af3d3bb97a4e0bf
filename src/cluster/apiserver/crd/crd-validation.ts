/**
 * validateCRD: what kube-apiserver checks on an apiextensions.k8s.io/v1 CustomResourceDefinition
 * on create and update, with its field paths and messages.
 *
 * kube-apiserver validates the internal form of a CRD, into which v1 is converted by hoisting
 * per-version schema, subresources and printer columns to the top level whenever every version
 * has identical ones (always the case with a single version). Errors inside such a hoisted
 * schema are therefore reported under `spec.validation.openAPIV3Schema`, not
 * `spec.versions[0].schema.openAPIV3Schema`; this module reproduces that.
 */

import { clone, jsonEqual } from '../../../lib/json.ts';
import { isDNS1035Label, isDNS1123Subdomain, nameIsDNSSubdomain } from '../builtin/validation.ts';
import {
  child,
  duplicate,
  forbidden,
  index,
  invalid,
  notSupported,
  required,
  tooMany,
} from '../field-errors.ts';
import { GoRaw, GoStruct } from '../gofmt.ts';
import type { FieldError } from '../types.ts';
import { validateValidation } from './crd-schema-validation.ts';
import { additionalProps } from './schema-util.ts';
import type {
  CustomResourceColumnDefinition,
  CustomResourceDefinition,
  CustomResourceDefinitionNames,
  CustomResourceDefinitionSpec,
  CustomResourceDefinitionVersion,
  CustomResourceSubresources,
  JSONSchemaProps,
  SelectableField,
} from './types.ts';

const COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];
const APPROVAL_ANNOTATION = 'api-approved.kubernetes.io';

/** Applies the v1 defaults kube-apiserver sets before validating (singular, listKind, conversion). */
export function applyCRDDefaults(crd: CustomResourceDefinition): void {
  const spec = crd.spec;
  if (!spec) return;
  const names = spec.names;
  if (names?.kind) {
    if (!names.singular) names.singular = names.kind.toLowerCase();
    if (!names.listKind) names.listKind = `${names.kind}List`;
  }
  spec.conversion ??= { strategy: 'None' };
  spec.conversion.strategy ??= 'None';
  if (spec.conversion.strategy === 'Webhook' && spec.conversion.webhook?.clientConfig?.service) {
    spec.conversion.webhook.clientConfig.service.port ??= 443;
  }
}

/** The stored versions after kube-apiserver's PrepareForCreate/PrepareForUpdate of a CRD. */
export function storedVersionsAfterWrite(
  crd: CustomResourceDefinition,
  old?: CustomResourceDefinition,
): string[] {
  const stored = [...(old?.status?.storedVersions ?? [])];
  const storage = (crd.spec?.versions ?? []).find((v) => v.storage);
  if (storage?.name !== undefined && !stored.includes(storage.name)) stored.push(storage.name);
  return stored;
}

/** The internal-API view of a v1 spec: which per-version fields are hoisted to the top level. */
interface Hoisted {
  schema: boolean;
  subresources: boolean;
  columns: boolean;
  selectableFields: boolean;
}

function hoisting(versions: CustomResourceDefinitionVersion[]): Hoisted {
  const same = (f: (v: CustomResourceDefinitionVersion) => unknown) =>
    versions.length > 0 && versions.every((v) => jsonEqual(f(v) ?? null, f(versions[0]!) ?? null));
  return {
    schema: same((v) => v.schema),
    subresources: same((v) => v.subresources),
    columns: same((v) => (v.additionalPrinterColumns?.length ? v.additionalPrinterColumns : null)),
    selectableFields: same((v) => (v.selectableFields?.length ? v.selectableFields : null)),
  };
}

function versionsValue(versions: CustomResourceDefinitionVersion[]): GoStruct[] {
  return versions.map(
    (v) =>
      new GoStruct('apiextensions.CustomResourceDefinitionVersion', [
        ['Name', v.name ?? ''],
        ['Served', v.served ?? false],
        ['Storage', v.storage ?? false],
        ['Deprecated', v.deprecated ?? false],
      ]),
  );
}

function simpleJSONPathErrors(s: string, path: string): FieldError[] {
  if (s.length === 0) return [invalid(path, s, 'must not be empty')];
  if (s[0] !== '.') return [invalid(path, s, 'must be a simple json path starting with .')];
  return [];
}

function validateSubresources(
  sub: CustomResourceSubresources | undefined,
  path: string,
  errs: FieldError[],
): void {
  const scale = sub?.scale;
  if (!scale) return;
  const spec = child(path, 'scale.specReplicasPath');
  if (!scale.specReplicasPath) errs.push(required(spec));
  else {
    const e = simpleJSONPathErrors(scale.specReplicasPath, spec);
    if (e.length > 0) errs.push(...e);
    else if (!scale.specReplicasPath.startsWith('.spec.')) {
      errs.push(invalid(spec, scale.specReplicasPath, 'should be a json path under .spec'));
    }
  }
  const status = child(path, 'scale.statusReplicasPath');
  if (!scale.statusReplicasPath) errs.push(required(status));
  else {
    const e = simpleJSONPathErrors(scale.statusReplicasPath, status);
    if (e.length > 0) errs.push(...e);
    else if (!scale.statusReplicasPath.startsWith('.status.')) {
      errs.push(invalid(status, scale.statusReplicasPath, 'should be a json path under .status'));
    }
  }
  if (scale.labelSelectorPath) {
    const sel = child(path, 'scale.labelSelectorPath');
    const e = simpleJSONPathErrors(scale.labelSelectorPath, sel);
    if (e.length > 0) errs.push(...e);
    else if (
      !scale.labelSelectorPath.startsWith('.spec.') &&
      !scale.labelSelectorPath.startsWith('.status.')
    ) {
      errs.push(invalid(sel, scale.labelSelectorPath, 'should be a json path under either .spec or .status'));
    }
  }
}

function validateColumn(col: CustomResourceColumnDefinition, path: string, errs: FieldError[]): void {
  if (!col.name) errs.push(required(child(path, 'name')));
  if (!col.type) errs.push(required(child(path, 'type'), `must be one of ${COLUMN_TYPES.join(',')}`));
  else if (!COLUMN_TYPES.includes(col.type)) {
    errs.push(invalid(child(path, 'type'), col.type, `must be one of ${COLUMN_TYPES.join(',')}`));
  }
  if (col.format && !COLUMN_FORMATS.includes(col.format)) {
    errs.push(invalid(child(path, 'format'), col.format, `must be one of ${COLUMN_FORMATS.join(',')}`));
  }
  if (!col.jsonPath) errs.push(required(child(path, 'JSONPath')));
  else errs.push(...simpleJSONPathErrors(col.jsonPath, child(path, 'JSONPath')));
}

function schemaAt(
  schema: JSONSchemaProps,
  jsonPath: string,
): { schema?: JSONSchemaProps; error?: string; root?: string } {
  if (jsonPath.includes('[')) return { error: 'array notation is not allowed' };
  if (!jsonPath.startsWith('.')) return { error: `expected [ or . but got: ${jsonPath.split('.')[0]}` };
  let s: JSONSchemaProps | undefined = schema;
  const parts = jsonPath.slice(1).split('.');
  for (const p of parts) {
    if (p === '') return { error: 'unexpected end of JSON path' };
    const next: JSONSchemaProps | undefined = s?.properties?.[p] ?? additionalProps(s)?.schema;
    if (!next) return { error: 'does not refer to a valid field' };
    s = next;
  }
  return { schema: s, root: parts[0] };
}

function validateSelectableFields(
  fields: SelectableField[],
  schema: JSONSchemaProps | undefined,
  path: string,
  errs: FieldError[],
): void {
  if (!schema) {
    errs.push(
      invalid(
        path,
        '',
        'selectableFields may only be set when version.schema.openAPIV3Schema is not included',
      ),
    );
    return;
  }
  const unique = new Set<string>();
  fields.forEach((f, i) => {
    const fp = child(index(path, i), 'jsonPath');
    if (!f.jsonPath) {
      errs.push(required(fp));
      return;
    }
    const found = schemaAt(schema, f.jsonPath);
    if (found.error) {
      errs.push(invalid(fp, f.jsonPath, `is an invalid path: ${found.error}`));
      return;
    }
    if (found.root === 'metadata') errs.push(invalid(fp, f.jsonPath, 'must not point to fields in metadata'));
    if (!['string', 'boolean', 'integer'].includes(found.schema?.type ?? '')) {
      errs.push(
        invalid(
          fp,
          f.jsonPath,
          'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
        ),
      );
    }
    if (unique.has(f.jsonPath)) errs.push(duplicate(fp, f.jsonPath));
    else unique.add(f.jsonPath);
  });
  if (unique.size > 8) errs.push(tooMany(path, unique.size, 8));
}

function validateNames(names: CustomResourceDefinitionNames, path: string, errs: FieldError[]): void {
  const label = (field: string, v: string | undefined, mixedCase = false) => {
    if (!v) return;
    const e = isDNS1035Label(mixedCase ? v.toLowerCase() : v);
    if (e.length === 0) return;
    const msg = mixedCase ? `may have mixed case, but should otherwise match: ${e.join(',')}` : e.join(',');
    errs.push(invalid(child(path, field), v, msg));
  };
  label('plural', names.plural);
  label('singular', names.singular);
  label('kind', names.kind, true);
  label('listKind', names.listKind, true);
  (names.shortNames ?? []).forEach((sn, i) => {
    const e = isDNS1035Label(sn);
    if (e.length > 0) errs.push(invalid(index(child(path, 'shortNames'), i), sn, e.join(',')));
  });
  if (names.kind && names.kind === names.listKind) {
    errs.push(invalid(child(path, 'listKind'), names.listKind, 'kind and listKind may not be the same'));
  }
  (names.categories ?? []).forEach((c, i) => {
    const e = isDNS1035Label(c);
    if (e.length > 0) errs.push(invalid(index(child(path, 'categories'), i), c, e.join(',')));
  });
}

function validateDeprecationWarning(
  v: CustomResourceDefinitionVersion,
  path: string,
  errs: FieldError[],
): void {
  const w = v.deprecationWarning;
  if (w === undefined) return;
  const p = child(path, 'deprecationWarning');
  if (!v.deprecated) {
    errs.push(invalid(p, w, 'can only be set for deprecated versions'));
    return;
  }
  if (w.length > 256) errs.push(invalid(p, w, 'must be <= 256 characters long'));
  if (w.length === 0) errs.push(invalid(p, w, 'must not be an empty string'));
  const bad = [...w].findIndex((ch) => /[\p{Cc}\p{Cn}\p{Cs}]/u.test(ch));
  if (bad >= 0) {
    errs.push(
      invalid(
        p,
        w,
        `must only contain printable UTF-8 characters; non-printable character found at index ${bad}`,
      ),
    );
  }
}

function validateConversion(spec: CustomResourceDefinitionSpec, errs: FieldError[]): void {
  const conv = spec.conversion;
  if (!conv) return;
  const path = 'spec.conversion';
  const strategy = conv.strategy ?? '';
  if (strategy === '') errs.push(required(child(path, 'strategy')));
  else if (strategy !== 'None' && strategy !== 'Webhook') {
    errs.push(notSupported(child(path, 'strategy'), strategy, ['None', 'Webhook']));
  }
  const cc = conv.webhook?.clientConfig;
  const versions = conv.webhook?.conversionReviewVersions ?? [];
  if (strategy === 'Webhook') {
    if (!cc)
      errs.push(required(child(path, 'webhookClientConfig'), 'required when strategy is set to Webhook'));
    else if ((cc.url === undefined) === (cc.service === undefined)) {
      errs.push(required(child(path, 'webhookClientConfig'), 'exactly one of url or service is required'));
    }
    const vp = child(path, 'conversionReviewVersions');
    if (versions.length === 0) errs.push(required(vp));
    else if (!versions.some((v) => v === 'v1' || v === 'v1beta1')) {
      errs.push(invalid(vp, versions, 'must include at least one of v1, v1beta1'));
    }
  } else {
    if (cc)
      errs.push(
        forbidden(
          child(path, 'webhookClientConfig'),
          'should not be set when strategy is not set to Webhook',
        ),
      );
    if (versions.length > 0) {
      errs.push(
        forbidden(
          child(path, 'conversionReviewVersions'),
          'should not be set when strategy is not set to Webhook',
        ),
      );
    }
  }
}

function validateSpec(spec: CustomResourceDefinitionSpec, errs: FieldError[]): void {
  const group = spec.group ?? '';
  if (group === '') errs.push(required('spec.group'));
  else {
    const e = isDNS1123Subdomain(group);
    if (e.length > 0) errs.push(invalid('spec.group', group, e.join(',')));
    else if (group.split('.').length < 2)
      errs.push(invalid('spec.group', group, 'should be a domain with at least one dot'));
  }
  const scope = spec.scope ?? '';
  if (scope === '') errs.push(required('spec.scope'));
  else if (scope !== 'Cluster' && scope !== 'Namespaced') {
    errs.push(notSupported('spec.scope', scope, ['Cluster', 'Namespaced']));
  }
  const versions = spec.versions ?? [];
  const h = hoisting(versions);
  const topSchema = h.schema ? versions[0]?.schema : undefined;
  if (!topSchema?.openAPIV3Schema) {
    versions.forEach((v, i) => {
      if (!v.schema?.openAPIV3Schema)
        errs.push(required(`spec.versions[${i}].schema.openAPIV3Schema`, 'schemas are required'));
    });
  }
  const statusOf = (v: CustomResourceDefinitionVersion) =>
    (h.subresources ? versions[0]?.subresources : v.subresources)?.status !== undefined;
  let storageCount = 0;
  const seen = new Set<string>();
  let unique = true;
  versions.forEach((v, i) => {
    const vp = `spec.versions[${i}]`;
    if (v.storage) storageCount++;
    if (seen.has(v.name ?? '')) unique = false;
    seen.add(v.name ?? '');
    const e = isDNS1035Label(v.name ?? '');
    if (e.length > 0) errs.push(invalid(child(vp, 'name'), v.name ?? '', e.join(',')));
    validateDeprecationWarning(v, vp, errs);
    if (!h.schema) validateValidation(v.schema?.openAPIV3Schema, statusOf(v), child(vp, 'schema'), errs);
    if (!h.subresources) validateSubresources(v.subresources, child(vp, 'subresources'), errs);
    if (!h.columns) {
      (v.additionalPrinterColumns ?? []).forEach((c, j) => {
        validateColumn(c, index(child(vp, 'additionalPrinterColumns'), j), errs);
      });
    }
    if (!h.selectableFields && (v.selectableFields ?? []).length > 0) {
      validateSelectableFields(
        v.selectableFields ?? [],
        v.schema?.openAPIV3Schema,
        child(vp, 'selectableFields'),
        errs,
      );
    }
  });
  if (!unique)
    errs.push(invalid('spec.versions', versionsValue(versions), 'must contain unique version names'));
  if (storageCount !== 1) {
    errs.push(
      invalid(
        'spec.versions',
        versionsValue(versions),
        'must have exactly one version marked as storage version',
      ),
    );
  }
  const names = spec.names ?? {};
  for (const f of ['plural', 'singular', 'kind', 'listKind'] as const) {
    if (!names[f]) errs.push(required(`spec.names.${f}`));
  }
  validateNames(names, 'spec.names', errs);
  if (h.schema && topSchema?.openAPIV3Schema) {
    validateValidation(topSchema.openAPIV3Schema, versions.some(statusOf), 'spec.validation', errs);
  }
  if (h.subresources) validateSubresources(versions[0]?.subresources, 'spec.subresources', errs);
  if (h.columns) {
    (versions[0]?.additionalPrinterColumns ?? []).forEach((c, j) => {
      validateColumn(c, `spec.additionalPrinterColumns[${j}]`, errs);
    });
  }
  if (h.selectableFields && (versions[0]?.selectableFields ?? []).length > 0) {
    validateSelectableFields(
      versions[0]!.selectableFields!,
      topSchema?.openAPIV3Schema,
      'spec.selectableFields',
      errs,
    );
  }
  validateConversion(spec, errs);
}

function validateStoredVersions(
  stored: string[],
  versions: CustomResourceDefinitionVersion[],
  errs: FieldError[],
): void {
  const path = 'status.storedVersions';
  if (stored.length === 0) {
    errs.push(invalid(path, new GoRaw('[]string(nil)'), 'must have at least one stored version'));
    return;
  }
  const remaining = new Map(stored.map((v, i) => [v, i]));
  for (const v of versions) {
    if (v.storage && !remaining.has(v.name ?? ''))
      errs.push(invalid(path, stored, `must have the storage version ${v.name}`));
    remaining.delete(v.name ?? '');
  }
  for (const [v, i] of remaining) {
    errs.push(
      invalid(
        index(path, i),
        v,
        `missing from spec.versions; ${v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in ${v} and removes ${v} from status.storedVersions`,
      ),
    );
  }
}

function isProtectedGroup(group: string): boolean {
  return (
    group === 'k8s.io' ||
    group === 'kubernetes.io' ||
    group.endsWith('.k8s.io') ||
    group.endsWith('.kubernetes.io')
  );
}

function isEstablished(crd: CustomResourceDefinition): boolean {
  return (crd.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True');
}

/**
 * Validates a v1 CustomResourceDefinition as kube-apiserver does on create (no `old`) or
 * update. The input is not modified; v1 defaults (singular, listKind, conversion) are applied
 * to a copy first, and status.storedVersions is taken as the server's create/update sets it.
 */
export function validateCRD(input: CustomResourceDefinition, old?: CustomResourceDefinition): FieldError[] {
  const crd = clone(input);
  applyCRDDefaults(crd);
  const spec = crd.spec ?? {};
  const errs: FieldError[] = [];

  const meta = crd.metadata ?? {};
  const requiredName = `${spec.names?.plural ?? ''}.${spec.group ?? ''}`;
  if (meta.generateName) {
    for (const msg of nameIsDNSSubdomain(meta.generateName, true)) {
      errs.push(invalid('metadata.generateName', meta.generateName, msg));
    }
    if (meta.generateName !== requiredName) {
      errs.push(
        invalid('metadata.generateName', meta.generateName, 'must be spec.names.plural+"."+spec.group'),
      );
    }
  }
  if (!meta.name) errs.push(required('metadata.name', 'name or generateName is required'));
  else {
    for (const msg of nameIsDNSSubdomain(meta.name, false))
      errs.push(invalid('metadata.name', meta.name, msg));
    if (meta.name !== requiredName) {
      errs.push(invalid('metadata.name', meta.name, 'must be spec.names.plural+"."+spec.group'));
    }
  }
  if (old) {
    if (old.metadata?.name !== undefined && meta.name !== old.metadata.name) {
      errs.push(invalid('metadata.name', meta.name ?? '', 'field is immutable'));
    }
  }

  validateSpec(spec, errs);

  if (old) {
    const oldSpec = old.spec ?? {};
    if (isEstablished(old)) {
      if (spec.scope !== oldSpec.scope)
        errs.push(invalid('spec.scope', spec.scope ?? '', 'field is immutable'));
      if (spec.names?.kind !== oldSpec.names?.kind) {
        errs.push(invalid('spec.names.kind', spec.names?.kind ?? '', 'field is immutable'));
      }
    }
    if (spec.group !== oldSpec.group)
      errs.push(invalid('spec.group', spec.group ?? '', 'field is immutable'));
    if (spec.names?.plural !== oldSpec.names?.plural) {
      errs.push(invalid('spec.names.plural', spec.names?.plural ?? '', 'field is immutable'));
    }
  }

  if (crd.status?.acceptedNames) validateNames(crd.status.acceptedNames, 'status.acceptedNames', errs);
  validateStoredVersions(storedVersionsAfterWrite(crd, old), spec.versions ?? [], errs);

  const group = spec.group ?? '';
  const groupChanged = !old || old.spec?.group !== group;
  if (isProtectedGroup(group) && groupChanged && meta.annotations?.[APPROVAL_ANNOTATION] === undefined) {
    errs.push(
      required(
        `metadata.annotations[${APPROVAL_ANNOTATION}]`,
        `protected groups must have approval annotation "${APPROVAL_ANNOTATION}", see https://github.com/kubernetes/enhancements/pull/1111`,
      ),
    );
  }
  if (spec.preserveUnknownFields === true && old?.spec?.preserveUnknownFields !== true) {
    errs.push(
      invalid(
        'spec.preserveUnknownFields',
        true,
        'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in openAPIV3Schema',
      ),
    );
  }
  return errs;
}
