/** ReplicaSets: defaults, ValidateReplicaSet/Update, printReplicaSet. */

import { translateTimestampSince } from '../../../kube/duration.ts';
import type { FieldError, KubeObject, Strategy, TablePrinter } from '../types.ts';
import {
  AGE_COLUMN,
  column,
  containerCells,
  ensureRecord,
  type Json,
  NAME_COLUMN,
  num,
  recordOf,
  TEMPLATE_WIDE_COLUMNS,
} from './common.ts';
import { formatLabelSelector } from './selector.ts';
import {
  defaultWorkloadTemplate,
  validateNonnegativeSpecField,
  validateTemplateForController,
  validateWorkloadSelector,
  workloadStrategy,
} from './workload.ts';

export function defaultReplicaSet(obj: KubeObject): void {
  const spec = ensureRecord(obj, 'spec');
  spec.replicas ??= 1;
  defaultWorkloadTemplate(spec);
}

export function validateReplicaSetSpec(spec: Json): FieldError[] {
  return [
    ...validateNonnegativeSpecField(spec, 'replicas'),
    ...validateNonnegativeSpecField(spec, 'minReadySeconds'),
    // Upstream's message says "deployment" here too.
    ...validateWorkloadSelector(spec, 'deployment'),
    ...validateTemplateForController(spec, 'ReplicaSet'),
  ];
}

export const replicaSetTable: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Desired', 'integer'),
    column('Current', 'integer'),
    column('Ready', 'integer'),
    AGE_COLUMN,
    ...TEMPLATE_WIDE_COLUMNS,
  ],
  cells(obj, now) {
    const spec = recordOf(obj.spec);
    const status = recordOf(obj.status);
    const [names, images] = containerCells(recordOf(recordOf(spec.template).spec).containers);
    return [
      obj.metadata?.name ?? '',
      num(spec.replicas),
      num(status.replicas),
      num(status.readyReplicas),
      translateTimestampSince(obj.metadata?.creationTimestamp, now),
      names,
      images,
      formatLabelSelector(spec.selector),
    ];
  },
};

export function replicaSetStrategy(): Strategy {
  return workloadStrategy({
    default: defaultReplicaSet,
    validateSpec: validateReplicaSetSpec,
    table: replicaSetTable,
    selectableFields: (obj) => ({ 'status.replicas': String(num(recordOf(obj.status).replicas)) }),
  });
}
