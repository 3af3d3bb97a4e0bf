/** coordination.k8s.io Leases: ValidateLease and printLease. */

import { translateTimestampSince } from '../../../kube/duration.ts';
import type { FieldError, KubeObject, Strategy, TablePrinter } from '../types.ts';
import { AGE_COLUMN, column, NAME_COLUMN, recordOf, str } from './common.ts';
import { dedupe, invalid } from './field-errors.ts';
import {
  IS_NEGATIVE,
  nameIsDNSSubdomain,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './validation.ts';

function validateLeaseSpec(obj: KubeObject): FieldError[] {
  const spec = recordOf(obj.spec);
  const errs: FieldError[] = [];
  if (typeof spec.leaseDurationSeconds === 'number' && spec.leaseDurationSeconds <= 0) {
    errs.push(invalid('spec.leaseDurationSeconds', spec.leaseDurationSeconds, 'must be greater than 0'));
  }
  if (typeof spec.leaseTransitions === 'number' && spec.leaseTransitions < 0) {
    errs.push(invalid('spec.leaseTransitions', spec.leaseTransitions, IS_NEGATIVE));
  }
  return errs;
}

export const leaseTable: TablePrinter = {
  columns: [NAME_COLUMN, column('Holder', 'string'), AGE_COLUMN],
  cells: (obj, now) => [
    obj.metadata?.name ?? '',
    str(recordOf(obj.spec).holderIdentity),
    translateTimestampSince(obj.metadata?.creationTimestamp, now),
  ],
};

export function leaseStrategy(): Strategy {
  return {
    validateCreate: (obj) =>
      dedupe([...validateObjectMeta(obj.metadata, true, nameIsDNSSubdomain), ...validateLeaseSpec(obj)]),
    validateUpdate: (obj, old) =>
      dedupe([
        ...validateObjectMetaUpdate(obj.metadata, old.metadata),
        ...validateObjectMeta(obj.metadata, true, nameIsDNSSubdomain),
        ...validateLeaseSpec(obj),
      ]),
    table: leaseTable,
  };
}
