/** Deployments: SetDefaults_Deployment, ValidateDeployment/Update, printDeployment. */

import { translateTimestampSince } from '../../../kube/duration.ts';
import { isObject } from '../../../lib/json.ts';
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
import { forbidden, invalid, notSupported, required } from './field-errors.ts';
import { labelSelectorString } from './selector.ts';
import {
  defaultWorkloadTemplate,
  intOrPercentValue,
  notMoreThan100Percent,
  validateNonnegativeSpecField,
  validatePositiveIntOrPercent,
  validateTemplateForController,
  validateWorkloadSelector,
  workloadStrategy,
} from './workload.ts';

export function defaultDeployment(obj: KubeObject): void {
  const spec = ensureRecord(obj, 'spec');
  spec.replicas ??= 1;
  const strategy = ensureRecord(spec, 'strategy');
  strategy.type ||= 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = ensureRecord(strategy, 'rollingUpdate');
    ru.maxUnavailable ??= '25%';
    ru.maxSurge ??= '25%';
  }
  spec.revisionHistoryLimit ??= 10;
  spec.progressDeadlineSeconds ??= 600;
  defaultWorkloadTemplate(spec);
}

function validateStrategy(strategy: unknown): FieldError[] {
  const s = recordOf(strategy);
  switch (s.type) {
    case 'Recreate':
      return s.rollingUpdate != null
        ? [
            forbidden(
              'spec.strategy.rollingUpdate',
              "may not be specified when strategy `type` is 'Recreate'",
            ),
          ]
        : [];
    case 'RollingUpdate': {
      if (!isObject(s.rollingUpdate))
        return [required('spec.strategy.rollingUpdate', 'this should be defaulted and never be nil')];
      const ru = s.rollingUpdate;
      const errs = [
        ...validatePositiveIntOrPercent(ru.maxUnavailable, 'spec.strategy.rollingUpdate.maxUnavailable'),
        ...validatePositiveIntOrPercent(ru.maxSurge, 'spec.strategy.rollingUpdate.maxSurge'),
      ];
      if (intOrPercentValue(ru.maxUnavailable) === 0 && intOrPercentValue(ru.maxSurge) === 0) {
        errs.push(
          invalid(
            'spec.strategy.rollingUpdate.maxUnavailable',
            ru.maxUnavailable ?? 0,
            'may not be 0 when `maxSurge` is 0',
          ),
        );
      }
      errs.push(...notMoreThan100Percent(ru.maxUnavailable, 'spec.strategy.rollingUpdate.maxUnavailable'));
      return errs;
    }
    default:
      return [notSupported('spec.strategy', s, ['Recreate', 'RollingUpdate'])];
  }
}

export function validateDeploymentSpec(spec: Json): FieldError[] {
  const errs = [
    ...validateNonnegativeSpecField(spec, 'replicas'),
    ...validateWorkloadSelector(spec, 'deployment'),
    ...validateTemplateForController(spec, 'ReplicaSet'),
    ...validateStrategy(spec.strategy),
    ...validateNonnegativeSpecField(spec, 'minReadySeconds'),
    ...validateNonnegativeSpecField(spec, 'revisionHistoryLimit'),
  ];
  if (typeof spec.progressDeadlineSeconds === 'number') {
    errs.push(...validateNonnegativeSpecField(spec, 'progressDeadlineSeconds'));
    if (spec.progressDeadlineSeconds <= num(spec.minReadySeconds)) {
      errs.push(
        invalid(
          'spec.progressDeadlineSeconds',
          spec.progressDeadlineSeconds,
          'must be greater than minReadySeconds',
        ),
      );
    }
  }
  return errs;
}

export const deploymentTable: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Ready', 'string', { description: 'Number of the pod with ready state' }),
    column('Up-to-date', 'string'),
    column('Available', 'string'),
    AGE_COLUMN,
    ...TEMPLATE_WIDE_COLUMNS,
  ],
  cells(obj, now) {
    const spec = recordOf(obj.spec);
    const status = recordOf(obj.status);
    const [names, images] = containerCells(recordOf(recordOf(spec.template).spec).containers);
    return [
      obj.metadata?.name ?? '',
      `${num(status.readyReplicas)}/${num(spec.replicas)}`,
      num(status.updatedReplicas),
      num(status.availableReplicas),
      translateTimestampSince(obj.metadata?.creationTimestamp, now),
      names,
      images,
      labelSelectorString(spec.selector) ?? '<invalid>',
    ];
  },
};

export function deploymentStrategy(): Strategy {
  return workloadStrategy({
    default: defaultDeployment,
    validateSpec: validateDeploymentSpec,
    table: deploymentTable,
  });
}
