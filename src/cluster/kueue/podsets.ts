/**
 * Pod sets of the jobs the stand-in queues. For AppWrappers this plays the part of the
 * AppWrapper library Kueue links (its GetComponentPodSpecs): the pod sets the AppWrapper
 * controller recorded in status.componentStatus, or inferred from the templates when it has
 * not yet; the pod templates reduced to what admission reads. The cluster must not import
 * the controllers, so the inference lives here too, as in the two upstream programs.
 */

import type { PodSpec, PodTemplateSpec } from '../../kube/builtin.ts';
import { isObject } from '../../lib/json.ts';
import type { KubeObject } from '../apiserver/types.ts';
import type { PodSet } from './api.ts';

type Json = Record<string, unknown>;

/** The value at an AppWrapper pod-set path (`template.spec.template`, `template.x[0].y`). */
export function valueAtPath(template: unknown, path: string): unknown {
  if (!path.startsWith('template')) return undefined;
  let cursor: unknown = template;
  const steps = path.slice('template'.length).match(/\.[^.[]+|\[\d+\]/g) ?? [];
  if (steps.join('') !== path.slice('template'.length)) return undefined;
  for (const step of steps) {
    if (step.startsWith('[')) {
      const i = Number(step.slice(1, -1));
      if (!Array.isArray(cursor) || i >= cursor.length) return undefined;
      cursor = cursor[i];
    } else {
      if (!isObject(cursor) || !(step.slice(1) in cursor)) return undefined;
      cursor = cursor[step.slice(1)];
    }
  }
  return cursor;
}

function int(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
}

interface AwPodSet {
  path: string;
  replicas?: number;
}

/** Upstream's inference for the kinds it knows (see the AppWrapper controller's podsets.ts). */
export function inferAppWrapperPodSets(template: Json): AwPodSet[] {
  const key = `${String(template.apiVersion)}:${String(template.kind)}`;
  const at = (p: string) => valueAtPath(template, p);
  const orOne = (p: string) => int(at(p)) ?? 1;
  const minOf = (prefix: string) => {
    let n = int(at(`${prefix}.parallelism`)) ?? 1;
    const c = int(at(`${prefix}.completions`));
    if (c !== undefined && c < n) n = c;
    return n;
  };
  const ray = (prefix: string): AwPodSet[] => {
    const out: AwPodSet[] = [{ path: `${prefix}headGroupSpec.template`, replicas: 1 }];
    const workers = at(`${prefix}workerGroupSpecs`);
    if (Array.isArray(workers)) {
      workers.forEach((_, i) => {
        const p = `${prefix}workerGroupSpecs[${i}].`;
        if (at(`${p}template`) !== undefined)
          out.push({ path: `${p}template`, replicas: orOne(`${p}replicas`) });
      });
    }
    return out;
  };
  switch (key) {
    case 'v1:Pod':
      return [{ path: 'template', replicas: 1 }];
    case 'apps/v1:Deployment':
    case 'apps/v1:StatefulSet':
      return [{ path: 'template.spec.template', replicas: orOne('template.spec.replicas') }];
    case 'batch/v1:Job':
      return [{ path: 'template.spec.template', replicas: minOf('template.spec') }];
    case 'jobset.x-k8s.io/v1alpha2:JobSet': {
      const jobs = at('template.spec.replicatedJobs');
      if (!Array.isArray(jobs)) return [];
      return jobs.map((_, i) => {
        const p = `template.spec.replicatedJobs[${i}]`;
        return {
          path: `${p}.template.spec.template`,
          replicas: orOne(`${p}.replicas`) * minOf(`${p}.template.spec`),
        };
      });
    }
    case 'kubeflow.org/v1:PyTorchJob':
      return ['Master', 'Worker']
        .map((t) => `template.spec.pytorchReplicaSpecs.${t}`)
        .filter((p) => at(`${p}.template`) !== undefined)
        .map((p) => ({ path: `${p}.template`, replicas: orOne(`${p}.replicas`) }));
    case 'ray.io/v1:RayCluster':
      return ray('template.spec.');
    case 'ray.io/v1:RayJob':
      return ray('template.spec.rayClusterSpec.');
    default:
      return [];
  }
}

const CONTAINER_FIELDS = ['name', 'image', 'command', 'args', 'resources', 'restartPolicy'];
const SPEC_FIELDS = [
  'nodeSelector',
  'nodeName',
  'affinity',
  'tolerations',
  'priorityClassName',
  'schedulerName',
  'restartPolicy',
  'overhead',
  'topologySpreadConstraints',
  'runtimeClassName',
  'schedulingGates',
];

function pick(obj: Json, fields: string[]): Json {
  const out: Json = {};
  for (const f of fields) if (obj[f] !== undefined) out[f] = structuredClone(obj[f]);
  return out;
}

/** A Pod or pod template reduced to what Kueue's admission reads (upstream's GetPodTemplateSpec). */
export function kueuePodTemplate(source: Json): PodTemplateSpec | undefined {
  const spec = source.spec;
  if (!isObject(spec)) return undefined;
  const md = isObject(source.metadata) ? source.metadata : {};
  const picked = pick(spec, SPEC_FIELDS);
  const containers = (v: unknown) =>
    Array.isArray(v) ? v.filter(isObject).map((c) => pick(c, CONTAINER_FIELDS)) : [];
  picked.containers = containers(spec.containers);
  if (Array.isArray(spec.initContainers) && spec.initContainers.length > 0)
    picked.initContainers = containers(spec.initContainers);
  // The fields are copied from the job's (API-validated) template as they are.
  const out: PodTemplateSpec = { spec: picked as PodSpec };
  const meta: NonNullable<PodTemplateSpec['metadata']> = {};
  if (isObject(md.labels)) meta.labels = { ...(md.labels as Record<string, string>) };
  if (isObject(md.annotations)) meta.annotations = { ...(md.annotations as Record<string, string>) };
  if (meta.labels || meta.annotations) out.metadata = meta;
  return out;
}

/** The Workload pod sets of an AppWrapper (named `<appwrapper>-<index>`, as Kueue names them). */
export function appWrapperPodSets(aw: KubeObject): PodSet[] | undefined {
  const spec = aw.spec as { components?: { template?: unknown; podSets?: AwPodSet[] }[] } | undefined;
  const status = aw.status as { componentStatus?: { podSets?: AwPodSet[] }[] } | undefined;
  const components = spec?.components ?? [];
  const recorded = status?.componentStatus;
  const useStatus = Array.isArray(recorded) && recorded.length === components.length && components.length > 0;
  const out: PodSet[] = [];
  for (let i = 0; i < components.length; i++) {
    const c = components[i]!;
    if (!isObject(c.template)) return undefined;
    const sets = useStatus
      ? (recorded[i]?.podSets ?? [])
      : c.podSets && c.podSets.length > 0
        ? c.podSets
        : inferAppWrapperPodSets(c.template);
    for (const ps of sets) {
      const src = valueAtPath(c.template, ps.path);
      if (!isObject(src)) continue;
      const template = kueuePodTemplate(src);
      if (!template) continue;
      out.push({
        name: `${aw.metadata.name}-${out.length}`.toLowerCase(),
        count: ps.replicas ?? 1,
        template,
      });
    }
  }
  return out.length > 0 ? out : undefined;
}

/** The single pod set of a batch/v1 Job. */
export function jobPodSets(job: KubeObject): PodSet[] | undefined {
  const spec = job.spec as Json | undefined;
  if (!spec || !isObject(spec.template)) return undefined;
  const template = kueuePodTemplate(spec.template);
  if (!template) return undefined;
  let count = int(spec.parallelism) ?? 1;
  const completions = int(spec.completions);
  if (completions !== undefined && completions < count) count = completions;
  return [{ name: 'main', count, template }];
}
