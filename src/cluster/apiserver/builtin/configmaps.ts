/** ConfigMaps: ValidateConfigMap/ValidateConfigMapUpdate (immutable configmaps), printConfigMap. */

import { translateTimestampSince } from '../../../kube/duration.ts';
import { semanticEqual } from '../../../lib/json.ts';
import type { FieldError, KubeObject, Strategy, TablePrinter } from '../types.ts';
import { AGE_COLUMN, column, NAME_COLUMN, recordOf } from './common.ts';
import { dedupe, forbidden, invalid, key, tooLong } from './field-errors.ts';
import {
  isConfigMapKey,
  nameIsDNSSubdomain,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './validation.ts';

/** core.MaxSecretSize, shared by ConfigMaps and Secrets. */
export const MAX_DATA_SIZE = 1024 * 1024;

function byteLength(v: unknown): number {
  return typeof v === 'string' ? Buffer.byteLength(v, 'utf8') : 0;
}

/** Keys of data/binaryData (or a Secret's data), their clash across the two bags, and the size cap. */
export function validateDataKeys(
  bags: [string, unknown][],
  sizeOf: (bag: string, v: unknown) => number,
): FieldError[] {
  const errs: FieldError[] = [];
  let total = 0;
  for (const [bag, content] of bags) {
    for (const [k, v] of Object.entries(recordOf(content))) {
      for (const m of isConfigMapKey(k)) errs.push(invalid(key(bag, k), k, m));
      for (const [other, otherContent] of bags) {
        if (other !== bag && k in recordOf(otherContent))
          errs.push(invalid(key(bag, k), k, `duplicate of key present in ${other}`));
      }
      total += sizeOf(bag, v);
    }
  }
  if (total > MAX_DATA_SIZE) errs.push(tooLong('', MAX_DATA_SIZE));
  return errs;
}

/** The `immutable: true` contract shared by ConfigMaps and Secrets. */
export function validateImmutableData(obj: KubeObject, old: KubeObject, fields: string[]): FieldError[] {
  if (old.immutable !== true) return [];
  const errs: FieldError[] = [];
  if (obj.immutable !== true) errs.push(forbidden('immutable', 'field is immutable when `immutable` is set'));
  for (const f of fields)
    if (!semanticEqual(obj[f], old[f])) errs.push(forbidden(f, 'field is immutable when `immutable` is set'));
  return errs;
}

function validateConfigMap(obj: KubeObject): FieldError[] {
  return [
    ...validateObjectMeta(obj.metadata, true, nameIsDNSSubdomain),
    ...validateDataKeys(
      [
        ['data', obj.data],
        ['binaryData', obj.binaryData],
      ],
      (bag, v) =>
        bag === 'binaryData' && typeof v === 'string' ? Math.floor((v.length * 3) / 4) : byteLength(v),
    ),
  ];
}

export const configMapTable: TablePrinter = {
  columns: [NAME_COLUMN, column('Data', 'string'), AGE_COLUMN],
  cells: (obj, now) => [
    obj.metadata?.name ?? '',
    Object.keys(recordOf(obj.data)).length + Object.keys(recordOf(obj.binaryData)).length,
    translateTimestampSince(obj.metadata?.creationTimestamp, now),
  ],
};

export function configMapStrategy(): Strategy {
  return {
    validateCreate: (obj) => dedupe(validateConfigMap(obj)),
    validateUpdate: (obj, old) =>
      dedupe([
        ...validateObjectMetaUpdate(obj.metadata, old.metadata),
        ...validateConfigMap(obj),
        ...validateImmutableData(obj, old, ['data', 'binaryData']),
      ]),
    table: configMapTable,
  };
}
