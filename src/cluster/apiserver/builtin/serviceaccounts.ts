/** ServiceAccounts: light validation and printServiceAccount. */

import { translateTimestampSince } from '../../../kube/duration.ts';
import type { Strategy, TablePrinter } from '../types.ts';
import { AGE_COLUMN, arrayOf, column, NAME_COLUMN } from './common.ts';
import { dedupe } from './field-errors.ts';
import { nameIsDNSSubdomain, validateObjectMeta, validateObjectMetaUpdate } from './validation.ts';

export const serviceAccountTable: TablePrinter = {
  columns: [NAME_COLUMN, column('Secrets', 'string'), AGE_COLUMN],
  cells: (obj, now) => [
    obj.metadata?.name ?? '',
    arrayOf(obj.secrets).length,
    translateTimestampSince(obj.metadata?.creationTimestamp, now),
  ],
};

export function serviceAccountStrategy(): Strategy {
  return {
    validateCreate: (obj) => dedupe(validateObjectMeta(obj.metadata, true, nameIsDNSSubdomain)),
    validateUpdate: (obj, old) =>
      dedupe([
        ...validateObjectMetaUpdate(obj.metadata, old.metadata),
        ...validateObjectMeta(obj.metadata, true, nameIsDNSSubdomain),
      ]),
    table: serviceAccountTable,
  };
}
