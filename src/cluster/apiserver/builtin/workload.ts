/**
 * What the apps/v1 workload kinds share: selector rules, ValidatePodTemplateSpecForReplicaSet,
 * int-or-percent fields and the status split (labels are kept on `/status` writes, as in
 * apps' status strategies).
 */

import type { FieldError, KubeObject, RequestContext, Strategy, TablePrinter } from '../types.ts';
import { type Json, recordOf, splitStatusUpdate } from './common.ts';
import { dedupe, forbidden, invalid, notSupported, required } from './field-errors.ts';
import { defaultPodTemplate, validatePodTemplateSpec } from './podspec.ts';
import { labelSelectorString, selectorIsEmpty, selectorMatches, validateLabelSelector } from './selector.ts';
import {
  IS_NEGATIVE,
  nameIsDNSSubdomain,
  regexError,
  validateImmutable,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './validation.ts';

export const SELECTOR_MISMATCH = '`selector` does not match template `labels`';

/** Selector required, valid and non-empty (`empty selector is invalid for <kind>`). */
export function validateWorkloadSelector(spec: Json, kindWord: string): FieldError[] {
  if (spec.selector == null) return [required('spec.selector')];
  const errs = validateLabelSelector(spec.selector, 'spec.selector');
  if (selectorIsEmpty(spec.selector))
    errs.push(invalid('spec.selector', spec.selector, `empty selector is invalid for ${kindWord}`));
  if (errs.length === 0 && labelSelectorString(spec.selector) === undefined) {
    errs.push(invalid('spec.selector', spec.selector, 'invalid label selector'));
  }
  return errs;
}

/**
 * ValidatePodTemplateSpecForReplicaSet (also used by StatefulSets and DaemonSets): the
 * selector must match the template labels, restartPolicy must be Always and
 * activeDeadlineSeconds is refused.
 */
export function validateTemplateForController(spec: Json, controllerWord: string): FieldError[] {
  const template = spec.template;
  if (template == null) return [required('spec.template')];
  const errs: FieldError[] = [];
  const labels = recordOf(recordOf(recordOf(template).metadata).labels) as Record<string, string>;
  if (spec.selector != null && !selectorIsEmpty(spec.selector) && !selectorMatches(spec.selector, labels)) {
    errs.push(invalid('spec.template.metadata.labels', labels, SELECTOR_MISMATCH));
  }
  errs.push(...validatePodTemplateSpec(withClaimVolumes(spec, template), 'spec.template'));
  const podSpec = recordOf(recordOf(template).spec);
  if (podSpec.restartPolicy !== 'Always') {
    errs.push(notSupported('spec.template.spec.restartPolicy', podSpec.restartPolicy ?? '', ['Always']));
  }
  if (podSpec.activeDeadlineSeconds != null) {
    errs.push(
      forbidden(
        'spec.template.spec.activeDeadlineSeconds',
        `activeDeadlineSeconds in ${controllerWord} is not Supported`,
      ),
    );
  }
  return errs;
}

/**
 * A StatefulSet's containers mount its volumeClaimTemplates by name: the template is checked
 * with them as volumes (kube-apiserver skips the pod spec of a StatefulSet template entirely,
 * with a TODO to check exactly this union).
 */
function withClaimVolumes(spec: Json, template: unknown): unknown {
  const claims = Array.isArray(spec.volumeClaimTemplates) ? (spec.volumeClaimTemplates as Json[]) : [];
  if (claims.length === 0) return template;
  const t = recordOf(template);
  const podSpec = recordOf(t.spec);
  const volumes = Array.isArray(podSpec.volumes) ? [...(podSpec.volumes as Json[])] : [];
  for (const c of claims) {
    const name = recordOf(c.metadata).name;
    if (typeof name === 'string' && !volumes.some((v) => v.name === name))
      volumes.push({ name, persistentVolumeClaim: { claimName: name } });
  }
  return { ...t, spec: { ...podSpec, volumes } };
}

const PERCENT_RE = /^[0-9]+%$/;
const PERCENT_ERROR = regexError(
  "a valid percent string must be a numeric string followed by an ending '%'",
  '[0-9]+%',
  '1%',
  '93%',
);

export function validatePositiveIntOrPercent(v: unknown, path: string): FieldError[] {
  if (typeof v === 'string') return PERCENT_RE.test(v) ? [] : [invalid(path, v, PERCENT_ERROR)];
  if (typeof v === 'number') return v < 0 ? [invalid(path, v, IS_NEGATIVE)] : [];
  if (v == null) return [];
  return [invalid(path, v, "must be an integer or percentage (e.g '5%')")];
}

export function intOrPercentValue(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && PERCENT_RE.test(v)) return Number(v.slice(0, -1));
  return 0;
}

export function notMoreThan100Percent(v: unknown, path: string): FieldError[] {
  return typeof v === 'string' && PERCENT_RE.test(v) && Number(v.slice(0, -1)) > 100
    ? [invalid(path, v, 'must not be greater than 100%')]
    : [];
}

export function validateNonnegativeSpecField(spec: Json, name: string): FieldError[] {
  const v = spec[name];
  return typeof v === 'number' && v < 0 ? [invalid(`spec.${name}`, v, IS_NEGATIVE)] : [];
}

export function defaultWorkloadTemplate(spec: Json): void {
  if (spec.template != null) defaultPodTemplate(spec.template);
}

export function prepareWorkloadForCreate(obj: KubeObject): void {
  obj.status = {};
}

export function prepareWorkloadForUpdate(obj: KubeObject, old: KubeObject, ctx: RequestContext): void {
  splitStatusUpdate(obj, old, ctx, 'labels');
}

export function specScale(statusSelector = true): {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
} {
  const s = { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' };
  return statusSelector ? { ...s, labelSelectorPath: '.spec.selector' } : s;
}

/**
 * The strategy of an apps/v1 workload with a pod template: defaults, the status split,
 * generation tracking, validation (namespaced DNS-subdomain metadata, then `validateSpec`),
 * and (unless `updateRules` says otherwise) an immutable selector, as kube-apiserver's
 * Deployment/ReplicaSet/DaemonSet strategies share.
 */
export function workloadStrategy(o: {
  default: (obj: KubeObject) => void;
  validateSpec: (spec: Json) => FieldError[];
  table: TablePrinter;
  updateRules?: (obj: KubeObject, old: KubeObject) => FieldError[];
  selectableFields?: Strategy['selectableFields'];
}): Strategy {
  const updateRules =
    o.updateRules ??
    ((obj: KubeObject, old: KubeObject) =>
      validateImmutable(recordOf(obj.spec).selector, recordOf(old.spec).selector, 'spec.selector'));
  const validate = (obj: KubeObject) => [
    ...validateObjectMeta(obj.metadata, true, nameIsDNSSubdomain),
    ...o.validateSpec(recordOf(obj.spec)),
  ];
  return {
    default: o.default,
    prepareForCreate: prepareWorkloadForCreate,
    prepareForUpdate: prepareWorkloadForUpdate,
    validateCreate: (obj) => dedupe(validate(obj)),
    validateUpdate(obj, old, ctx) {
      const errs = validateObjectMetaUpdate(obj.metadata, old.metadata);
      if (ctx.subresource === 'status') return dedupe(errs);
      return dedupe([...errs, ...validate(obj), ...updateRules(obj, old)]);
    },
    tracksGeneration: true,
    table: o.table,
    ...(o.selectableFields ? { selectableFields: o.selectableFields } : {}),
  };
}
