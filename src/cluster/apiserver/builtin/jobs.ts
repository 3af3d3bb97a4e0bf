/**
 * Jobs: SetDefaults_Job, selector generation (batch.kubernetes.io/controller-uid and
 * job-name, plus the legacy unprefixed labels), ValidateJob/Update with the mutable
 * scheduling directives of suspended, never-started Jobs, and printJob.
 */

import { humanDuration, translateTimestampSince } from '../../../kube/duration.ts';
import { clone, isObject, semanticEqual } from '../../../lib/json.ts';
import type { FieldError, KubeObject, RequestContext, Strategy, TablePrinter } from '../types.ts';
import {
  AGE_COLUMN,
  arrayOf,
  column,
  containerCells,
  ensureRecord,
  type Json,
  NAME_COLUMN,
  num,
  recordOf,
  splitStatusUpdate,
  str,
  TEMPLATE_WIDE_COLUMNS,
} from './common.ts';
import { child, dedupe, invalid, key, notSupported, required } from './field-errors.ts';
import { defaultPodTemplate, validatePodTemplateSpec } from './podspec.ts';
import {
  formatLabelSelector,
  labelSelectorString,
  selectorMatches,
  validateLabelSelector,
} from './selector.ts';
import {
  FIELD_IMMUTABLE,
  IS_NEGATIVE,
  nameIsDNSSubdomain,
  validateImmutable,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './validation.ts';
import { SELECTOR_MISMATCH } from './workload.ts';

export const CONTROLLER_UID_LABEL = 'batch.kubernetes.io/controller-uid';
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';
export const LEGACY_CONTROLLER_UID_LABEL = 'controller-uid';
export const LEGACY_JOB_NAME_LABEL = 'job-name';

export function defaultJob(obj: KubeObject): void {
  const spec = ensureRecord(obj, 'spec');
  if (spec.completions == null && spec.parallelism == null) {
    spec.completions = 1;
    spec.parallelism = 1;
  }
  spec.parallelism ??= 1;
  spec.backoffLimit ??= spec.backoffLimitPerIndex != null ? 2147483647 : 6;
  spec.completionMode ??= 'NonIndexed';
  spec.suspend ??= false;
  spec.manualSelector ??= false;
  const pfp = recordOf(spec.podFailurePolicy);
  for (const rule of arrayOf(pfp.rules)) {
    for (const pattern of arrayOf(rule.onPodConditions)) if (isObject(pattern)) pattern.status ||= 'True';
  }
  spec.podReplacementPolicy ??= spec.podFailurePolicy != null ? 'Failed' : 'TerminatingOrFailed';
  const templateLabels = recordOf(recordOf(recordOf(spec.template).metadata).labels);
  if (Object.keys(templateLabels).length > 0 && Object.keys(obj.metadata?.labels ?? {}).length === 0) {
    obj.metadata.labels = { ...(templateLabels as Record<string, string>) };
  }
  if (spec.template != null) defaultPodTemplate(spec.template);
}

/** generateSelector: needs metadata.uid, so it runs once the storage layer has assigned one. */
export function generateJobSelector(obj: KubeObject): void {
  const spec = ensureRecord(obj, 'spec');
  if (spec.manualSelector === true) return;
  const uid = obj.metadata?.uid ?? '';
  const name = obj.metadata?.name ?? '';
  const template = ensureRecord(spec, 'template');
  const meta = ensureRecord(template, 'metadata');
  const labels = ensureRecord(meta, 'labels');
  for (const k of [LEGACY_JOB_NAME_LABEL, JOB_NAME_LABEL]) if (!(k in labels)) labels[k] = name;
  for (const k of [LEGACY_CONTROLLER_UID_LABEL, CONTROLLER_UID_LABEL]) if (!(k in labels)) labels[k] = uid;
  const selector = ensureRecord(spec, 'selector');
  const matchLabels = ensureRecord(selector, 'matchLabels');
  if (!(CONTROLLER_UID_LABEL in matchLabels)) matchLabels[CONTROLLER_UID_LABEL] = uid;
}

function prepareJobForCreate(obj: KubeObject): void {
  obj.status = {};
  if (obj.metadata?.uid) generateJobSelector(obj);
  // The Job's own labels follow its template's once defaulting sees them (upstream: on the next write).
  const templateLabels = recordOf(recordOf(recordOf(recordOf(obj.spec).template).metadata).labels);
  if (Object.keys(obj.metadata?.labels ?? {}).length === 0 && Object.keys(templateLabels).length > 0) {
    obj.metadata.labels = { ...(templateLabels as Record<string, string>) };
  }
}

function hasLabel(labels: Json, path: string, k: string, expected: string): FieldError[] {
  if (!(k in labels)) return [required(key(child(path, 'labels'), k), expected)];
  if (labels[k] !== expected)
    return [invalid(key(child(path, 'labels'), k), labels, `must be '${expected}'`)];
  return [];
}

function validateGeneratedSelector(obj: KubeObject): FieldError[] {
  const spec = recordOf(obj.spec);
  if (spec.manualSelector === true || spec.selector == null) return [];
  const errs: FieldError[] = [];
  const uid = obj.metadata?.uid ?? '';
  const name = obj.metadata?.name ?? '';
  if (!uid) errs.push(required('metadata.uid'));
  const labels = recordOf(recordOf(recordOf(spec.template).metadata).labels);
  errs.push(...hasLabel(labels, 'spec.template.metadata', CONTROLLER_UID_LABEL, uid));
  errs.push(...hasLabel(labels, 'spec.template.metadata', JOB_NAME_LABEL, name));
  if (
    labelSelectorString(spec.selector) !== undefined &&
    !selectorMatches(spec.selector, { [CONTROLLER_UID_LABEL]: uid, [JOB_NAME_LABEL]: name })
  ) {
    errs.push(invalid('spec.selector', spec.selector, '`selector` not auto-generated'));
  }
  return errs;
}

function nonnegative(spec: Json, f: string): FieldError[] {
  return typeof spec[f] === 'number' && (spec[f] as number) < 0
    ? [invalid(`spec.${f}`, spec[f], IS_NEGATIVE)]
    : [];
}

export function validateJob(obj: KubeObject): FieldError[] {
  const spec = recordOf(obj.spec);
  const errs = [
    ...validateObjectMeta(obj.metadata, true, nameIsDNSSubdomain),
    ...validateGeneratedSelector(obj),
  ];
  for (const f of [
    'parallelism',
    'completions',
    'activeDeadlineSeconds',
    'backoffLimit',
    'ttlSecondsAfterFinished',
    'backoffLimitPerIndex',
    'maxFailedIndexes',
  ]) {
    errs.push(...nonnegative(spec, f));
  }
  const mode = spec.completionMode;
  if (mode !== 'NonIndexed' && mode !== 'Indexed')
    errs.push(notSupported('spec.completionMode', mode ?? '', ['NonIndexed', 'Indexed']));
  if (mode === 'Indexed' && spec.completions == null)
    errs.push(required('spec.completions', 'when completion mode is Indexed'));
  if (spec.backoffLimitPerIndex != null && mode !== 'Indexed') {
    errs.push(
      required(
        'spec.completionMode',
        'when backoffLimitPerIndex is specified, completionMode must be Indexed',
      ),
    );
  }
  const prp = spec.podReplacementPolicy;
  if (prp != null) {
    if (spec.podFailurePolicy != null && prp !== 'Failed')
      errs.push(notSupported('spec.podReplacementPolicy', prp, ['Failed']));
    else if (prp !== 'Failed' && prp !== 'TerminatingOrFailed') {
      errs.push(notSupported('spec.podReplacementPolicy', prp, ['Failed', 'TerminatingOrFailed']));
    }
  }
  if (spec.selector == null) errs.push(required('spec.selector'));
  else errs.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  const templateLabels = recordOf(recordOf(recordOf(spec.template).metadata).labels) as Record<
    string,
    string
  >;
  if (
    spec.selector != null &&
    labelSelectorString(spec.selector) !== undefined &&
    !selectorMatches(spec.selector, templateLabels)
  ) {
    errs.push(invalid('spec.template.metadata.labels', templateLabels, SELECTOR_MISMATCH));
  }
  errs.push(...validatePodTemplateSpec(spec.template, 'spec.template'));
  const restart = recordOf(recordOf(spec.template).spec).restartPolicy;
  const allowed = spec.podFailurePolicy != null ? ['Never'] : ['OnFailure', 'Never'];
  if (!allowed.includes(str(restart)))
    errs.push(notSupported('spec.template.spec.restartPolicy', restart ?? '', allowed));
  return errs;
}

/** Fields of a suspended, never-started Job's template that Kueue-style controllers may change. */
function maskSchedulingDirectives(template: Json, oldTemplate: Json): Json {
  const masked = clone(oldTemplate);
  const spec = recordOf(template.spec);
  const mSpec = ensureRecord(masked, 'spec');
  const newAffinity = spec.affinity;
  const oldAffinity = isObject(mSpec.affinity) ? mSpec.affinity : undefined;
  if (newAffinity == null && oldAffinity) {
    delete oldAffinity.nodeAffinity;
    if (Object.keys(oldAffinity).length === 0) delete mSpec.affinity;
  } else if (isObject(newAffinity) && !oldAffinity) {
    mSpec.affinity =
      newAffinity.nodeAffinity == null ? {} : { nodeAffinity: clone(newAffinity.nodeAffinity) };
  } else if (isObject(newAffinity) && oldAffinity) {
    if (newAffinity.nodeAffinity == null) delete oldAffinity.nodeAffinity;
    else oldAffinity.nodeAffinity = clone(newAffinity.nodeAffinity);
  }
  for (const f of ['nodeSelector', 'tolerations', 'schedulingGates']) {
    if (spec[f] === undefined) delete mSpec[f];
    else mSpec[f] = clone(spec[f]);
  }
  const meta = recordOf(template.metadata);
  const mMeta = ensureRecord(masked, 'metadata');
  for (const f of ['annotations', 'labels']) {
    if (meta[f] === undefined) delete mMeta[f];
    else mMeta[f] = clone(meta[f]);
  }
  return masked;
}

function validateJobSpecUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const spec = recordOf(obj.spec);
  const oldSpec = recordOf(old.spec);
  const errs: FieldError[] = [];
  const elastic =
    spec.completionMode === 'Indexed' &&
    oldSpec.completionMode === 'Indexed' &&
    spec.completions === spec.parallelism &&
    oldSpec.completions === oldSpec.parallelism;
  if (!elastic)
    errs.push(
      ...validateImmutable(spec.completions ?? null, oldSpec.completions ?? null, 'spec.completions'),
    );
  errs.push(...validateImmutable(spec.selector, oldSpec.selector, 'spec.selector'));
  const suspendedNeverStarted = oldSpec.suspend === true && recordOf(old.status).startTime == null;
  const template = recordOf(spec.template);
  const oldTemplate = recordOf(oldSpec.template);
  const compareTo = suspendedNeverStarted ? maskSchedulingDirectives(template, oldTemplate) : oldTemplate;
  if (!semanticEqual(template, compareTo)) errs.push(invalid('spec.template', template, FIELD_IMMUTABLE));
  for (const f of [
    'completionMode',
    'podFailurePolicy',
    'backoffLimitPerIndex',
    'managedBy',
    'successPolicy',
  ]) {
    errs.push(...validateImmutable(spec[f], oldSpec[f], `spec.${f}`));
  }
  return errs;
}

function validateJobStatus(obj: KubeObject): FieldError[] {
  const status = recordOf(obj.status);
  const errs: FieldError[] = [];
  for (const f of ['active', 'succeeded', 'failed', 'ready', 'terminating']) {
    if (typeof status[f] === 'number' && (status[f] as number) < 0)
      errs.push(invalid(`status.${f}`, status[f], IS_NEGATIVE));
  }
  return errs;
}

function jobConditionTrue(obj: KubeObject, type: string): boolean {
  const c = arrayOf(recordOf(obj.status).conditions).find((x) => x.type === type);
  return c?.status === 'True';
}

/** The STATUS column of `kubectl get jobs`. */
export function jobStatusString(obj: KubeObject): string {
  if (jobConditionTrue(obj, 'Complete')) return 'Complete';
  if (jobConditionTrue(obj, 'Failed')) return 'Failed';
  if (obj.metadata?.deletionTimestamp) return 'Terminating';
  if (jobConditionTrue(obj, 'Suspended')) return 'Suspended';
  if (jobConditionTrue(obj, 'FailureTarget')) return 'FailureTarget';
  return 'Running';
}

export const jobTable: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Status', 'string', { description: 'Status of the job.' }),
    column('Completions', 'string'),
    column('Duration', 'string', { description: 'Time required to complete the job.' }),
    AGE_COLUMN,
    ...TEMPLATE_WIDE_COLUMNS,
  ],
  cells(obj, now) {
    const spec = recordOf(obj.spec);
    const status = recordOf(obj.status);
    const succeeded = num(status.succeeded);
    let completions: string;
    if (typeof spec.completions === 'number') completions = `${succeeded}/${spec.completions}`;
    else {
      const parallelism = num(spec.parallelism);
      completions = parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
    }
    let duration = '';
    const start = Date.parse(str(status.startTime));
    if (!Number.isNaN(start)) {
      const end = Date.parse(str(status.completionTime));
      duration = humanDuration((Number.isNaN(end) ? now.getTime() : end) - start);
    }
    const [names, images] = containerCells(recordOf(recordOf(spec.template).spec).containers);
    return [
      obj.metadata?.name ?? '',
      jobStatusString(obj),
      completions,
      duration,
      translateTimestampSince(obj.metadata?.creationTimestamp, now),
      names,
      images,
      formatLabelSelector(spec.selector),
    ];
  },
};

export function jobStrategy(): Strategy {
  return {
    default: defaultJob,
    prepareForCreate: prepareJobForCreate,
    prepareForUpdate(obj: KubeObject, old: KubeObject, ctx: RequestContext) {
      splitStatusUpdate(obj, old, ctx, 'none');
    },
    validateCreate(obj) {
      // Normally done in prepareForCreate; here too in case the uid arrived later.
      generateJobSelector(obj);
      return dedupe(validateJob(obj));
    },
    validateUpdate(obj, old, ctx) {
      const errs = validateObjectMetaUpdate(obj.metadata, old.metadata);
      if (ctx.subresource === 'status') return dedupe([...errs, ...validateJobStatus(obj)]);
      return dedupe([...errs, ...validateJob(obj), ...validateJobSpecUpdate(obj, old)]);
    },
    selectableFields: (obj) => ({ 'status.successful': String(num(recordOf(obj.status).succeeded)) }),
    tracksGeneration: true,
    table: jobTable,
  };
}
