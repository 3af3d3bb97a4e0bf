/** Namespaces: pkg/registry/core/namespace/strategy.go, ValidateNamespace, printNamespace. */

import { translateTimestampSince } from '../../../kube/duration.ts';
import { clone } from '../../../lib/json.ts';
import type { FieldError, KubeObject, Strategy, TablePrinter } from '../types.ts';
import { AGE_COLUMN, arrayOf, ensureRecord, keepAllButStatus, NAME_COLUMN, recordOf, str } from './common.ts';
import { dedupe, invalid } from './field-errors.ts';
import {
  isQualifiedName,
  nameIsDNSLabel,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './validation.ts';

export const FINALIZER_KUBERNETES = 'kubernetes';
const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

export function defaultNamespace(obj: KubeObject): void {
  // SetDefaults_Namespace: the immutable name label, re-asserted on every write.
  const name = obj.metadata?.name;
  if (name) obj.metadata.labels = { ...(obj.metadata.labels ?? {}), 'kubernetes.io/metadata.name': name };
}

function prepareNamespaceForCreate(obj: KubeObject): void {
  obj.status = { phase: 'Active' };
  const spec = ensureRecord(obj, 'spec');
  const finalizers = arrayOf<string>(spec.finalizers);
  if (!finalizers.includes(FINALIZER_KUBERNETES)) spec.finalizers = [...finalizers, FINALIZER_KUBERNETES];
}

function validateNamespaceFinalizers(obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of arrayOf<string>(recordOf(obj.spec).finalizers)) {
    const name = String(f);
    for (const m of isQualifiedName(name)) errs.push(invalid('spec.finalizers', name, m));
    if (!name.includes('/') && !STANDARD_FINALIZERS.has(name)) {
      errs.push(
        invalid(
          'spec.finalizers',
          name,
          'name is neither a standard finalizer name nor is it fully qualified',
        ),
      );
    }
  }
  return errs;
}

function validateNamespaceStatus(obj: KubeObject): FieldError[] {
  const phase = str(recordOf(obj.status).phase);
  if (!obj.metadata?.deletionTimestamp) {
    if (phase !== 'Active')
      return [invalid('status.Phase', phase, "may only be 'Active' if `deletionTimestamp` is empty")];
  } else if (phase !== 'Terminating') {
    return [invalid('status.Phase', phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")];
  }
  return [];
}

export const namespaceTable: TablePrinter = {
  columns: [
    NAME_COLUMN,
    { name: 'Status', type: 'string', description: 'The status of the namespace' },
    AGE_COLUMN,
  ],
  cells: (obj, now) => [
    obj.metadata?.name ?? '',
    str(recordOf(obj.status).phase),
    translateTimestampSince(obj.metadata?.creationTimestamp, now),
  ],
};

export function namespaceStrategy(): Strategy {
  return {
    default: defaultNamespace,
    prepareForCreate: prepareNamespaceForCreate,
    prepareForUpdate(obj, old, ctx) {
      if (ctx.subresource === 'status') {
        keepAllButStatus(obj, old, 'none');
        return;
      }
      if (old.status === undefined) delete obj.status;
      else obj.status = clone(old.status);
      // spec.finalizers only change through /finalize.
      if (ctx.subresource !== 'finalize') {
        const spec = ensureRecord(obj, 'spec');
        const oldFinalizers = recordOf(old.spec).finalizers;
        if (oldFinalizers === undefined) delete spec.finalizers;
        else spec.finalizers = clone(oldFinalizers);
      }
    },
    validateCreate: (obj) =>
      dedupe([
        ...validateObjectMeta(obj.metadata, false, nameIsDNSLabel),
        ...validateNamespaceFinalizers(obj),
      ]),
    validateUpdate(obj, old, ctx) {
      const errs = [
        ...validateObjectMetaUpdate(obj.metadata, old.metadata),
        ...validateObjectMeta(obj.metadata, false, nameIsDNSLabel),
      ];
      if (ctx.subresource === 'status') errs.push(...validateNamespaceStatus(obj));
      if (ctx.subresource === 'finalize') errs.push(...validateNamespaceFinalizers(obj));
      return dedupe(errs);
    },
    selectableFields: (obj) => ({ 'status.phase': str(recordOf(obj.status).phase) }),
    table: namespaceTable,
  };
}
