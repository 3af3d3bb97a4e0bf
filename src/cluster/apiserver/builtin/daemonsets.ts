/** DaemonSets: SetDefaults_DaemonSet, ValidateDaemonSet/Update, printDaemonSet. */

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
import { invalid, notSupported, required } from './field-errors.ts';
import { formatLabelSelector, formatLabels } from './selector.ts';
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

export function defaultDaemonSet(obj: KubeObject): void {
  const spec = ensureRecord(obj, 'spec');
  const strategy = ensureRecord(spec, 'updateStrategy');
  strategy.type ||= 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    const ru = ensureRecord(strategy, 'rollingUpdate');
    ru.maxUnavailable ??= 1;
    ru.maxSurge ??= 0;
  }
  spec.revisionHistoryLimit ??= 10;
  defaultWorkloadTemplate(spec);
}

export function validateDaemonSetSpec(spec: Json): FieldError[] {
  const errs = [
    ...validateWorkloadSelector(spec, 'daemonset'),
    ...validateTemplateForController(spec, 'DaemonSet'),
    ...validateNonnegativeSpecField(spec, 'minReadySeconds'),
    ...validateNonnegativeSpecField(spec, 'templateGeneration'),
    ...validateNonnegativeSpecField(spec, 'revisionHistoryLimit'),
  ];
  const strategy = recordOf(spec.updateStrategy);
  if (strategy.type === 'RollingUpdate') {
    const ru = recordOf(strategy.rollingUpdate);
    const p = 'spec.updateStrategy.rollingUpdate';
    errs.push(...validatePositiveIntOrPercent(ru.maxUnavailable, `${p}.maxUnavailable`));
    errs.push(...validatePositiveIntOrPercent(ru.maxSurge, `${p}.maxSurge`));
    errs.push(...notMoreThan100Percent(ru.maxUnavailable, `${p}.maxUnavailable`));
    errs.push(...notMoreThan100Percent(ru.maxSurge, `${p}.maxSurge`));
    const unavailable = intOrPercentValue(ru.maxUnavailable);
    const surge = intOrPercentValue(ru.maxSurge);
    if (unavailable !== 0 && surge !== 0)
      errs.push(invalid(`${p}.maxSurge`, ru.maxSurge, 'may not be set when maxUnavailable is non-zero'));
    if (unavailable === 0 && surge === 0)
      errs.push(required(`${p}.maxUnavailable`, 'cannot be 0 when maxSurge is 0'));
  } else if (strategy.type !== 'OnDelete') {
    errs.push(notSupported('spec.updateStrategy.type', strategy.type ?? '', ['OnDelete', 'RollingUpdate']));
  }
  return errs;
}

export const daemonSetTable: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Desired', 'integer'),
    column('Current', 'integer'),
    column('Ready', 'integer'),
    column('Up-to-date', 'integer'),
    column('Available', 'integer'),
    column('Node Selector', 'string'),
    AGE_COLUMN,
    ...TEMPLATE_WIDE_COLUMNS,
  ],
  cells(obj, now) {
    const spec = recordOf(obj.spec);
    const status = recordOf(obj.status);
    const podSpec = recordOf(recordOf(spec.template).spec);
    const [names, images] = containerCells(podSpec.containers);
    return [
      obj.metadata?.name ?? '',
      num(status.desiredNumberScheduled),
      num(status.currentNumberScheduled),
      num(status.numberReady),
      num(status.updatedNumberScheduled),
      num(status.numberAvailable),
      formatLabels(podSpec.nodeSelector as Record<string, string> | undefined),
      translateTimestampSince(obj.metadata?.creationTimestamp, now),
      names,
      images,
      formatLabelSelector(spec.selector),
    ];
  },
};

export function daemonSetStrategy(): Strategy {
  return workloadStrategy({
    default: defaultDaemonSet,
    validateSpec: validateDaemonSetSpec,
    table: daemonSetTable,
  });
}
