/**
 * apiextensions.k8s.io/v1 CustomResourceDefinitions: defaults, storedVersions upkeep,
 * the structural checks of ValidateCustomResourceDefinition that clients hit most (names,
 * group, scope, versions); schema checking belongs to the CRD machinery.
 */

import type { FieldError, KubeObject, Strategy, TablePrinter } from '../types.ts';
import {
  arrayOf,
  DEFAULT_TABLE_COLUMNS,
  defaultTableCells,
  ensureRecord,
  isRecord,
  type Json,
  recordOf,
  splitStatusUpdate,
  str,
} from './common.ts';
import { child, dedupe, duplicate, index, invalid, notSupported, required } from './fielderrors.ts';
import {
  isDNS1035Label,
  isDNS1123Subdomain,
  validateImmutable,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './validation.ts';

export function defaultCRD(obj: KubeObject): void {
  const spec = ensureRecord(obj, 'spec');
  const names = ensureRecord(spec, 'names');
  const kind = str(names.kind);
  if (!names.singular && kind) names.singular = kind.toLowerCase();
  if (!names.listKind && kind) names.listKind = `${kind}List`;
  if (!isRecord(spec.conversion)) spec.conversion = { strategy: 'None' };
  const webhook = recordOf(recordOf(recordOf(spec.conversion).webhook).clientConfig);
  if (isRecord(webhook.service)) webhook.service.port ??= 443;
}

/** The storage version joins status.storedVersions (apiextensions' strategy does this on every write). */
function recordStorageVersion(obj: KubeObject): void {
  const storage = arrayOf(recordOf(obj.spec).versions).find((v) => v.storage === true);
  if (!storage) return;
  const status = ensureRecord(obj, 'status');
  const stored = arrayOf<string>(status.storedVersions);
  if (!stored.includes(str(storage.name))) status.storedVersions = [...stored, str(storage.name)];
}

function validateNames(names: Json, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of ['plural', 'singular', 'kind', 'listKind'])
    if (!str(names[f])) errs.push(required(child(path, f)));
  const label = (v: string, f: string, mixed: boolean) => {
    const msgs = isDNS1035Label(mixed ? v.toLowerCase() : v);
    if (v && msgs.length > 0) {
      errs.push(
        invalid(
          child(path, f),
          v,
          mixed ? `may have mixed case, but should otherwise match: ${msgs.join(',')}` : msgs.join(','),
        ),
      );
    }
  };
  label(str(names.plural), 'plural', false);
  label(str(names.singular), 'singular', false);
  label(str(names.kind), 'kind', true);
  label(str(names.listKind), 'listKind', true);
  arrayOf<string>(names.shortNames).forEach((s, i) => {
    const msgs = isDNS1035Label(String(s));
    if (msgs.length > 0) errs.push(invalid(index(child(path, 'shortNames'), i), s, msgs.join(',')));
  });
  arrayOf<string>(names.categories).forEach((c, i) => {
    const msgs = isDNS1035Label(String(c));
    if (msgs.length > 0) errs.push(invalid(index(child(path, 'categories'), i), c, msgs.join(',')));
  });
  if (str(names.kind) && names.kind === names.listKind)
    errs.push(invalid(child(path, 'listKind'), names.listKind, 'kind and listKind may not be the same'));
  return errs;
}

export function validateCRD(obj: KubeObject): FieldError[] {
  const errs = validateObjectMeta(obj.metadata, false, (name) => isDNS1123Subdomain(name));
  const spec = recordOf(obj.spec);
  const names = recordOf(spec.names);
  const group = str(spec.group);
  if (obj.metadata?.name !== `${str(names.plural)}.${group}`) {
    errs.push(invalid('metadata.name', obj.metadata?.name ?? '', 'must be spec.names.plural+"."+spec.group'));
  }
  if (!group) errs.push(required('spec.group'));
  else {
    const msgs = isDNS1123Subdomain(group);
    if (msgs.length > 0) errs.push(invalid('spec.group', group, msgs.join(',')));
    if (group.split('.').length < 2)
      errs.push(invalid('spec.group', group, 'should be a domain with at least one dot'));
  }
  if (!spec.scope) errs.push(required('spec.scope'));
  else if (spec.scope !== 'Cluster' && spec.scope !== 'Namespaced')
    errs.push(notSupported('spec.scope', spec.scope, ['Cluster', 'Namespaced']));
  errs.push(...validateNames(names, 'spec.names'));
  const versions = arrayOf(spec.versions);
  if (versions.length === 0) errs.push(required('spec.versions'));
  const seen = new Set<string>();
  let storageCount = 0;
  let served = 0;
  versions.forEach((v, i) => {
    const p = index('spec.versions', i);
    const name = str(v.name);
    if (!name) errs.push(required(child(p, 'name')));
    else {
      const msgs = isDNS1035Label(name);
      if (msgs.length > 0) errs.push(invalid(child(p, 'name'), name, msgs.join(',')));
      if (seen.has(name)) errs.push(duplicate(child(p, 'name'), name));
      seen.add(name);
    }
    if (v.storage === true) storageCount++;
    if (v.served === true) served++;
    if (recordOf(v.schema).openAPIV3Schema == null)
      errs.push(required(child(child(p, 'schema'), 'openAPIV3Schema'), 'schemas are required'));
  });
  if (versions.length > 0 && storageCount !== 1)
    errs.push(invalid('spec.versions', versions, 'must have exactly one version marked as storage version'));
  if (versions.length > 0 && served === 0)
    errs.push(invalid('spec.versions', versions, 'must have at least one version served'));
  const strategy = str(recordOf(spec.conversion).strategy);
  if (strategy && strategy !== 'None' && strategy !== 'Webhook')
    errs.push(notSupported('spec.conversion.strategy', strategy, ['None', 'Webhook']));
  return errs;
}

function validateCRDUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const spec = recordOf(obj.spec);
  const oldSpec = recordOf(old.spec);
  const errs = [
    ...validateObjectMetaUpdate(obj.metadata, old.metadata),
    ...validateImmutable(spec.group, oldSpec.group, 'spec.group'),
  ];
  const established = arrayOf(recordOf(old.status).conditions).some(
    (c) => c.type === 'Established' && c.status === 'True',
  );
  if (established) {
    errs.push(...validateImmutable(spec.scope, oldSpec.scope, 'spec.scope'));
    errs.push(
      ...validateImmutable(recordOf(spec.names).plural, recordOf(oldSpec.names).plural, 'spec.names.plural'),
    );
  }
  return errs;
}

function validateCRDStatus(obj: KubeObject): FieldError[] {
  const stored = arrayOf<string>(recordOf(obj.status).storedVersions);
  const errs: FieldError[] = [];
  if (stored.length === 0)
    errs.push(invalid('status.storedVersions', stored, 'must have at least one stored version'));
  const storage = arrayOf(recordOf(obj.spec).versions).find((v) => v.storage === true);
  if (storage && !stored.includes(str(storage.name))) {
    errs.push(invalid('status.storedVersions', stored, `must have the storage version ${str(storage.name)}`));
  }
  const defined = new Set(arrayOf(recordOf(obj.spec).versions).map((v) => str(v.name)));
  stored.forEach((v, i) => {
    if (!defined.has(v))
      errs.push(invalid(index('status.storedVersions', i), v, 'must appear in spec.versions'));
  });
  return errs;
}

/** CRDs have no printer upstream: the default Name / Created At table. */
export const crdTable: TablePrinter = { columns: DEFAULT_TABLE_COLUMNS, cells: defaultTableCells };

export function crdStrategy(): Strategy {
  return {
    default: defaultCRD,
    prepareForCreate(obj) {
      obj.status = {};
      recordStorageVersion(obj);
    },
    prepareForUpdate(obj, old, ctx) {
      splitStatusUpdate(obj, old, ctx, 'none');
      if (ctx.subresource === '') recordStorageVersion(obj);
    },
    validateCreate: (obj) => dedupe(validateCRD(obj)),
    validateUpdate(obj, old, ctx) {
      if (ctx.subresource === 'status')
        return dedupe([...validateObjectMetaUpdate(obj.metadata, old.metadata), ...validateCRDStatus(obj)]);
      return dedupe([...validateCRD(obj), ...validateCRDUpdate(obj, old)]);
    },
    tracksGeneration: true,
    table: crdTable,
  };
}
