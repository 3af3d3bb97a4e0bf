/** StatefulSets: SetDefaults_StatefulSet, ValidateStatefulSet/Update, printStatefulSet. */

import { translateTimestampSince } from '../../../kube/duration.ts';
import { clone, isObject, semanticEqual } from '../../../lib/json.ts';
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
  str,
  TEMPLATE_WIDE_COLUMNS,
} from './common.ts';
import { forbidden, invalid, notSupported } from './field-errors.ts';
import { IS_NEGATIVE, isDNS1123Label } from './validation.ts';
import {
  defaultWorkloadTemplate,
  validateNonnegativeSpecField,
  validatePositiveIntOrPercent,
  validateTemplateForController,
  validateWorkloadSelector,
  workloadStrategy,
} from './workload.ts';

export function defaultStatefulSet(obj: KubeObject): void {
  const spec = ensureRecord(obj, 'spec');
  spec.podManagementPolicy ||= 'OrderedReady';
  const strategy = ensureRecord(spec, 'updateStrategy');
  strategy.type ||= 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') ensureRecord(strategy, 'rollingUpdate').partition ??= 0;
  spec.replicas ??= 1;
  spec.revisionHistoryLimit ??= 10;
  const retention = ensureRecord(spec, 'persistentVolumeClaimRetentionPolicy');
  retention.whenDeleted ||= 'Retain';
  retention.whenScaled ||= 'Retain';
  defaultWorkloadTemplate(spec);
}

export function validateStatefulSetSpec(spec: Json): FieldError[] {
  const errs = [
    ...validateNonnegativeSpecField(spec, 'replicas'),
    ...validateNonnegativeSpecField(spec, 'minReadySeconds'),
  ];
  const pmp = spec.podManagementPolicy;
  if (pmp !== 'OrderedReady' && pmp !== 'Parallel')
    errs.push(notSupported('spec.podManagementPolicy', pmp ?? '', ['OrderedReady', 'Parallel']));
  const strategy = recordOf(spec.updateStrategy);
  if (strategy.type === 'OnDelete') {
    if (strategy.rollingUpdate != null) {
      errs.push(
        invalid(
          'spec.updateStrategy.rollingUpdate',
          strategy.rollingUpdate,
          "only allowed for updateStrategy 'RollingUpdate'",
        ),
      );
    }
  } else if (strategy.type === 'RollingUpdate') {
    const ru = recordOf(strategy.rollingUpdate);
    if (typeof ru.partition === 'number' && ru.partition < 0) {
      errs.push(invalid('spec.updateStrategy.rollingUpdate.partition', ru.partition, IS_NEGATIVE));
    }
    errs.push(
      ...validatePositiveIntOrPercent(ru.maxUnavailable, 'spec.updateStrategy.rollingUpdate.maxUnavailable'),
    );
  } else {
    errs.push(notSupported('spec.updateStrategy.type', strategy.type ?? '', ['OnDelete', 'RollingUpdate']));
  }
  const serviceName = str(spec.serviceName);
  if (serviceName)
    for (const m of isDNS1123Label(serviceName)) errs.push(invalid('spec.serviceName', serviceName, m));
  errs.push(...validateWorkloadSelector(spec, 'statefulset'));
  errs.push(...validateTemplateForController(spec, 'StatefulSet'));
  const ordinals = spec.ordinals;
  if (isObject(ordinals) && typeof ordinals.start === 'number' && ordinals.start < 0) {
    errs.push(invalid('spec.ordinals.start', ordinals.start, IS_NEGATIVE));
  }
  return errs;
}

const MUTABLE_SPEC_FIELDS = [
  'replicas',
  'template',
  'updateStrategy',
  'minReadySeconds',
  'ordinals',
  'revisionHistoryLimit',
  'persistentVolumeClaimRetentionPolicy',
];

function validateStatefulSetUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const spec = clone(recordOf(obj.spec));
  const oldSpec = recordOf(old.spec);
  for (const f of MUTABLE_SPEC_FIELDS) {
    if (oldSpec[f] === undefined) delete spec[f];
    else spec[f] = oldSpec[f];
  }
  if (semanticEqual(spec, oldSpec)) return [];
  return [
    forbidden(
      'spec',
      "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    ),
  ];
}

export const statefulSetTable: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Ready', 'string', { description: 'Number of the pod with ready state' }),
    AGE_COLUMN,
    // printStatefulSet's wide output has no Selector column.
    ...TEMPLATE_WIDE_COLUMNS.slice(0, 2),
  ],
  cells(obj, now) {
    const spec = recordOf(obj.spec);
    const [names, images] = containerCells(recordOf(recordOf(spec.template).spec).containers);
    return [
      obj.metadata?.name ?? '',
      `${num(recordOf(obj.status).readyReplicas)}/${num(spec.replicas)}`,
      translateTimestampSince(obj.metadata?.creationTimestamp, now),
      names,
      images,
    ];
  },
};

export function statefulSetStrategy(): Strategy {
  return workloadStrategy({
    default: defaultStatefulSet,
    validateSpec: validateStatefulSetSpec,
    table: statefulSetTable,
    updateRules: validateStatefulSetUpdate,
  });
}
