/**
 * HorizontalPodAutoscalers are stored as autoscaling/v2 and served as v1 by conversion, as
 * kube-apiserver does (pkg/apis/autoscaling/v1/conversion.go): v1's
 * targetCPUUtilizationPercentage is v2's cpu Resource metric with an Utilization target; the
 * v2 metrics v1 cannot express travel in the `autoscaling.alpha.kubernetes.io/metrics` and
 * `…/current-metrics` annotations, and behavior in `autoscaling.alpha.kubernetes.io/behavior`.
 */

import { clone } from '../../../lib/json.ts';
import type { FieldError, KubeObject, Strategy } from '../types.ts';
import { arrayOf, type Json, recordOf } from './common.ts';
import { invalid, required } from './field-errors.ts';

const METRICS = 'autoscaling.alpha.kubernetes.io/metrics';
const CURRENT = 'autoscaling.alpha.kubernetes.io/current-metrics';
const BEHAVIOR = 'autoscaling.alpha.kubernetes.io/behavior';

function isCpuUtilization(m: Json): boolean {
  const r = recordOf(m.resource);
  return m.type === 'Resource' && r.name === 'cpu' && recordOf(r.target).type === 'Utilization';
}

export function hpaV1ToV2(v1: KubeObject): KubeObject {
  const out = clone(v1);
  out.apiVersion = 'autoscaling/v2';
  const ann = { ...(out.metadata.annotations ?? {}) };
  const spec = recordOf(out.spec);
  const metrics: Json[] = [];
  if (typeof spec.targetCPUUtilizationPercentage === 'number') {
    metrics.push({
      type: 'Resource',
      resource: {
        name: 'cpu',
        target: { type: 'Utilization', averageUtilization: spec.targetCPUUtilizationPercentage },
      },
    });
  }
  if (ann[METRICS]) metrics.push(...arrayOf(safeParse(ann[METRICS])));
  const v2spec: Json = { ...spec };
  delete v2spec.targetCPUUtilizationPercentage;
  if (metrics.length) v2spec.metrics = metrics;
  if (ann[BEHAVIOR]) v2spec.behavior = safeParse(ann[BEHAVIOR]);
  out.spec = v2spec;
  if (out.status !== undefined) {
    const st = { ...recordOf(out.status) };
    const current: Json[] = [];
    if (typeof st.currentCPUUtilizationPercentage === 'number') {
      current.push({
        type: 'Resource',
        resource: { name: 'cpu', current: { averageUtilization: st.currentCPUUtilizationPercentage } },
      });
    }
    if (ann[CURRENT]) current.push(...arrayOf(safeParse(ann[CURRENT])));
    delete st.currentCPUUtilizationPercentage;
    if (current.length) st.currentMetrics = current;
    out.status = st;
  }
  delete ann[METRICS];
  delete ann[CURRENT];
  delete ann[BEHAVIOR];
  setAnnotations(out, ann);
  return out;
}

export function hpaV2ToV1(v2: KubeObject): KubeObject {
  const out = clone(v2);
  out.apiVersion = 'autoscaling/v1';
  const ann = { ...(out.metadata.annotations ?? {}) };
  const spec = { ...recordOf(out.spec) };
  const metrics = arrayOf(spec.metrics);
  const other: Json[] = [];
  for (const m of metrics) {
    if (isCpuUtilization(m) && spec.targetCPUUtilizationPercentage === undefined) {
      spec.targetCPUUtilizationPercentage = recordOf(recordOf(m.resource).target).averageUtilization;
    } else other.push(m);
  }
  if (other.length) ann[METRICS] = JSON.stringify(other);
  if (spec.behavior !== undefined) ann[BEHAVIOR] = JSON.stringify(spec.behavior);
  delete spec.metrics;
  delete spec.behavior;
  out.spec = spec;
  if (out.status !== undefined) {
    const st = { ...recordOf(out.status) };
    const rest: Json[] = [];
    for (const m of arrayOf(st.currentMetrics)) {
      const r = recordOf(m.resource);
      const cur = recordOf(r.current);
      if (m.type === 'Resource' && r.name === 'cpu' && cur.averageUtilization !== undefined) {
        st.currentCPUUtilizationPercentage = cur.averageUtilization;
      } else rest.push(m);
    }
    if (rest.length) ann[CURRENT] = JSON.stringify(rest);
    delete st.currentMetrics;
    delete st.conditions;
    out.status = st;
  }
  setAnnotations(out, ann);
  return out;
}

function setAnnotations(obj: KubeObject, ann: Record<string, string>): void {
  if (Object.keys(ann).length) obj.metadata.annotations = ann;
  else delete obj.metadata.annotations;
}

function safeParse(text: string | undefined): unknown {
  try {
    return JSON.parse(text ?? '');
  } catch {
    return undefined;
  }
}

/**
 * ValidateHorizontalPodAutoscalerSpec (pkg/apis/autoscaling/validation): the bounds and the
 * target reference, shared by v1 and v2 (the same fields).
 */
function validateHpaSpec(obj: KubeObject): FieldError[] {
  const spec = recordOf(obj.spec);
  const errs: FieldError[] = [];
  const min = spec.minReplicas;
  const max = spec.maxReplicas;
  if (typeof min === 'number' && min < 1)
    errs.push(invalid('spec.minReplicas', min, 'must be greater than or equal to 1'));
  if (typeof max !== 'number') errs.push(required('spec.maxReplicas'));
  else if (max < 1) errs.push(invalid('spec.maxReplicas', max, 'must be greater than 0'));
  if (typeof min === 'number' && typeof max === 'number' && max < min)
    errs.push(invalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
  const ref = recordOf(spec.scaleTargetRef);
  if (!ref.kind) errs.push(required('spec.scaleTargetRef.kind'));
  if (!ref.name) errs.push(required('spec.scaleTargetRef.name'));
  return errs;
}

export const hpaStrategy: Strategy = {
  validateCreate: validateHpaSpec,
  validateUpdate: validateHpaSpec,
};
