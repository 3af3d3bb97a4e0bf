/**
 * Pod sets: where a component's pods come from and how many there are. Inferred for the
 * kinds upstream knows (Pod, Deployment, StatefulSet, batch/v1 Job, JobSet, PyTorchJob,
 * RayCluster, RayJob), declared for everything else, and validated against the template.
 */

import { validate as validatePodSpecSchema } from 'kubernetes-models/_schemas/IoK8sApiCoreV1PodSpec';
import {
  type AppWrapper,
  type AppWrapperComponentStatus,
  type AppWrapperPodSet,
  PodSetAnnotations,
} from '../../apis/workload.codeflare.dev/v1beta2.ts';
import { isObject } from '../../lib/json.ts';
import { intAtPath, type Json, objectAtPath, PathError, valueAtPath } from './paths.ts';

const JOB_COMPLETION_INDEX = 'batch.kubernetes.io/job-completion-index';
const JOBSET_JOB_INDEX = 'jobset.sigs.k8s.io/job-index';
const KUBEFLOW_REPLICA_INDEX = 'training.kubeflow.org/replica-index';

/** Every PodSpec field (core/v1), for the strict decoding Go's converter does. */
const PODSPEC_FIELDS = new Set(
  (
    'activeDeadlineSeconds affinity automountServiceAccountToken containers dnsConfig dnsPolicy enableServiceLinks ' +
    'ephemeralContainers hostAliases hostIPC hostNetwork hostPID hostUsers hostname hostnameOverride imagePullSecrets ' +
    'initContainers nodeName nodeSelector os overhead preemptionPolicy priority priorityClassName readinessGates ' +
    'resourceClaims resources restartPolicy runtimeClassName schedulerName schedulingGates schedulingGroup ' +
    'securityContext serviceAccount serviceAccountName setHostnameAsFQDN shareProcessNamespace subdomain ' +
    'terminationGracePeriodSeconds tolerations topologySpreadConstraints volumes'
  ).split(' '),
);

interface SchemaError {
  instancePath: string;
  keyword: string;
  params?: Record<string, unknown>;
}

function describeSchemaErrors(errors: SchemaError[]): string {
  // A bad quantity fails type, format and oneOf at once: report one line per location.
  const rank = (k: string) => (k === 'format' ? 0 : k === 'enum' ? 1 : k === 'type' ? 2 : 3);
  const byPath = new Map<string, SchemaError>();
  for (const e of errors) {
    const cur = byPath.get(e.instancePath);
    if (!cur || rank(e.keyword) < rank(cur.keyword)) byPath.set(e.instancePath, e);
  }
  const parts: string[] = [];
  for (const [path, e] of byPath) {
    const where =
      path
        .replace(/^\//, '')
        .replace(/\/(\d+)(?=\/|$)/g, '[$1]')
        .replace(/\//g, '.') || '(root)';
    const p = e.params ?? {};
    const what =
      e.keyword === 'format'
        ? `must be a ${String(p.format)}`
        : e.keyword === 'type'
          ? `must be of type ${String(p.type)}`
          : e.keyword === 'enum'
            ? `must be one of ${JSON.stringify(p.allowedValues)}`
            : `is invalid (${e.keyword})`;
    parts.push(`${where} ${what}`);
  }
  return parts.join('; ');
}

/**
 * Throws unless the object at `path` has a `spec` that decodes as a v1.PodSpec (types checked
 * at every depth, unknown fields at the PodSpec level). A Pod qualifies as well as a template.
 */
export function checkPodSpecAt(template: unknown, path: string): Json {
  const candidate = objectAtPath(template, path);
  const spec = candidate.spec;
  if (!isObject(spec)) throw new PathError(`content at ${path} does not contain a spec`);
  const unknown = Object.keys(spec).filter((k) => !PODSPEC_FIELDS.has(k));
  if (unknown.length > 0) {
    throw new PathError(
      `content at ${path}.spec not parseable as a v1.PodSpec: unknown field "${unknown[0]}"`,
    );
  }
  if (!validatePodSpecSchema(spec)) {
    // Go's decoder has no notion of required fields; only type errors count.
    const errs = ((validatePodSpecSchema as unknown as { errors?: SchemaError[] }).errors ?? []).filter(
      (e) => e.keyword !== 'required',
    );
    if (errs.length > 0) {
      throw new PathError(
        `content at ${path}.spec not parseable as a v1.PodSpec: ${describeSchemaErrors(errs)}`,
      );
    }
  }
  return candidate;
}

/** Upstream's inferReplicas: the int at `path`, 1 when the field is absent. */
function inferReplicas(template: unknown, path: string): number {
  const dot = path.lastIndexOf('.');
  const parent = dot >= 0 ? objectAtPath(template, path.slice(0, dot)) : (template as Json);
  const v = parent[path.slice(dot + 1)];
  if (v === undefined || v === null) return 1;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  throw new PathError(`at path position '${path}' non-int value ${JSON.stringify(v)}`);
}

function tryInt(template: unknown, path: string): number | undefined {
  try {
    return intAtPath(template, path);
  } catch {
    return undefined;
  }
}

function exists(template: unknown, path: string): boolean {
  try {
    valueAtPath(template, path);
    return true;
  } catch {
    return false;
  }
}

function rayPodSets(template: unknown, prefix: string): AppWrapperPodSet[] {
  const out: AppWrapperPodSet[] = [{ replicas: 1, path: `${prefix}headGroupSpec.template` }];
  let workers: unknown;
  try {
    workers = valueAtPath(template, `${prefix}workerGroupSpecs`);
  } catch {
    return out;
  }
  if (Array.isArray(workers)) {
    for (let i = 0; i < workers.length; i++) {
      const p = `${prefix}workerGroupSpecs[${i}].`;
      if (!exists(template, `${p}template`)) continue;
      out.push({ replicas: inferReplicas(template, `${p}replicas`), path: `${p}template` });
    }
  }
  return out;
}

/** The group/version and kind of a template, as `group/version:Kind` keys below use. */
export function gvkOf(template: Json): { apiVersion: string; kind: string } {
  return {
    apiVersion: typeof template.apiVersion === 'string' ? template.apiVersion : '',
    kind: typeof template.kind === 'string' ? template.kind : '',
  };
}

/** True for the kinds whose pod sets are inferred. */
export function isKnownKind(template: Json): boolean {
  const { apiVersion, kind } = gvkOf(template);
  return KNOWN.has(`${apiVersion}:${kind}`);
}

const KNOWN = new Set([
  'v1:Pod',
  'apps/v1:Deployment',
  'apps/v1:StatefulSet',
  'batch/v1:Job',
  'jobset.x-k8s.io/v1alpha2:JobSet',
  'kubeflow.org/v1:PyTorchJob',
  'ray.io/v1:RayCluster',
  'ray.io/v1:RayJob',
]);

/**
 * The pod sets of a known kind (none for other kinds), each checked to point at a PodSpec.
 * Throws a PathError when the template does not have the shape its kind requires.
 */
export function inferPodSets(template: Json): AppWrapperPodSet[] {
  const { apiVersion, kind } = gvkOf(template);
  const podSets: AppWrapperPodSet[] = [];
  switch (`${apiVersion}:${kind}`) {
    case 'v1:Pod':
      if (exists(template, 'template')) podSets.push({ replicas: 1, path: 'template' });
      break;
    case 'apps/v1:Deployment':
    case 'apps/v1:StatefulSet':
      if (exists(template, 'template.spec.template')) {
        podSets.push({
          replicas: inferReplicas(template, 'template.spec.replicas'),
          path: 'template.spec.template',
        });
      }
      break;
    case 'batch/v1:Job': {
      let replicas = tryInt(template, 'template.spec.parallelism') ?? 1;
      const completions = tryInt(template, 'template.spec.completions');
      if (completions !== undefined && completions < replicas) replicas = completions;
      podSets.push({
        replicas,
        path: 'template.spec.template',
        annotations: { [PodSetAnnotations.tasPodIndexLabel]: JOB_COMPLETION_INDEX },
      });
      break;
    }
    case 'jobset.x-k8s.io/v1alpha2:JobSet': {
      let jobs: unknown;
      try {
        jobs = valueAtPath(template, 'template.spec.replicatedJobs');
      } catch {
        break;
      }
      if (!Array.isArray(jobs)) break;
      for (let i = 0; i < jobs.length; i++) {
        const p = `template.spec.replicatedJobs[${i}].`;
        if (!exists(template, `${p}template`)) continue;
        let podCount = tryInt(template, `${p}template.spec.parallelism`) ?? 1;
        const completions = tryInt(template, `${p}template.spec.completions`);
        if (completions !== undefined && completions < podCount) podCount = completions;
        const replicas = tryInt(template, `${p}replicas`) ?? 1;
        podSets.push({
          replicas: replicas * podCount,
          path: `${p}template.spec.template`,
          annotations: {
            [PodSetAnnotations.tasPodIndexLabel]: JOB_COMPLETION_INDEX,
            [PodSetAnnotations.tasSubGroupIndexLabel]: JOBSET_JOB_INDEX,
            [PodSetAnnotations.tasSubGroupCount]: String(replicas),
          },
        });
      }
      break;
    }
    case 'kubeflow.org/v1:PyTorchJob':
      for (const type of ['Master', 'Worker']) {
        const p = `template.spec.pytorchReplicaSpecs.${type}.`;
        if (!exists(template, `${p}template`)) continue;
        podSets.push({
          replicas: inferReplicas(template, `${p}replicas`),
          path: `${p}template`,
          annotations: { [PodSetAnnotations.tasPodIndexLabel]: KUBEFLOW_REPLICA_INDEX },
        });
      }
      break;
    case 'ray.io/v1:RayCluster':
      podSets.push(...rayPodSets(template, 'template.spec.'));
      break;
    case 'ray.io/v1:RayJob':
      podSets.push(...rayPodSets(template, 'template.spec.rayClusterSpec.'));
      break;
  }
  for (const ps of podSets) {
    try {
      checkPodSpecAt(template, ps.path);
    } catch (err) {
      throw new PathError(`${ps.path} does not refer to a v1.PodSpecTemplate: ${(err as Error).message}`);
    }
  }
  return podSets;
}

/** Upstream's ValidatePodSets: declared pod sets must agree with the inferred ones, if any. */
export function validatePodSets(
  declared: AppWrapperPodSet[],
  inferred: AppWrapperPodSet[],
): string | undefined {
  if (declared.length === 0) return undefined;
  const byPath = new Map<string, AppWrapperPodSet>();
  for (const p of declared) {
    if (byPath.has(p.path)) return `multiple DeclaredPodSets with path '${p.path}'`;
    byPath.set(p.path, p);
  }
  if (inferred.length > 0) {
    if (inferred.length !== declared.length) {
      return `DeclaredPodSet count ${declared.length} differs from inferred count ${inferred.length}`;
    }
    for (const ips of inferred) {
      const dps = byPath.get(ips.path);
      if (!dps) return `PodSet with path '${ips.path}' is missing`;
      if (replicasOf(ips) !== replicasOf(dps)) {
        return `replica count ${replicasOf(dps)} differs from inferred count ${replicasOf(ips)} for PodSet at path position '${ips.path}'`;
      }
    }
  }
  return undefined;
}

export function replicasOf(ps: AppWrapperPodSet): number {
  return ps.replicas ?? 1;
}

/** A component's template as an object (the CRD guarantees it is one once stored). */
export function templateOf(aw: AppWrapper, index: number): Json {
  const t = aw.spec.components[index]?.template;
  if (!isObject(t)) throw new PathError(`spec.components[${index}].template is not an object`);
  return t;
}

/**
 * status.componentStatus as upstream initializes it: one entry per component with its pod
 * sets (declared, else inferred) and empty identity. Undefined when already initialized.
 */
export function initialComponentStatus(aw: AppWrapper): AppWrapperComponentStatus[] | undefined {
  const comps = aw.spec.components ?? [];
  if ((aw.status?.componentStatus?.length ?? 0) === comps.length && comps.length > 0) return undefined;
  return comps.map((c, i) => ({
    name: '',
    kind: '',
    apiVersion: '',
    podSets: c.podSets && c.podSets.length > 0 ? c.podSets : inferPodSets(templateOf(aw, i)),
  }));
}

/** The pods the AppWrapper should have: the sum of its pod sets' replicas. */
export function expectedPodCount(componentStatus: AppWrapperComponentStatus[]): number {
  let n = 0;
  for (const c of componentStatus) for (const ps of c.podSets ?? []) n += replicasOf(ps);
  return n;
}
