/**
 * Turning a Job's pod template into what a provider launches (pure): the image, the
 * command and arguments, the environment (values, Secrets and ConfigMaps resolved by the
 * caller, `$(VAR)` references expanded as the kubelet does), GPU count and vendor, CPU,
 * memory and disk, and the tags that trace the remote pod back to its cluster and Job.
 * A template RunPod cannot run (several containers, volumes, init containers, parallel
 * Jobs, env from fields RunPod cannot know) is refused with a reason, and the Job stays
 * local.
 */
import { milliValue, quantityValue, tryParseQuantity } from '../../kube/quantity.ts';
import type { JobConfig } from './core.ts';
import * as K from './keys.ts';
import type { CloudType } from './options.ts';
import type { Container, EnvVar, Job } from './types.ts';

export interface LaunchRequest {
  /** Remote pod name: `troupe-<namespace>-<job>-<uid prefix>`, at most 63 characters. */
  name: string;
  image: string;
  /** Kubernetes semantics: `command` replaces the image's ENTRYPOINT, `args` its CMD. */
  command?: string[];
  args?: string[];
  /** True when troupe wraps the command to capture its exit code (the Job gives a command). */
  wrapped: boolean;
  env: Record<string, string>;
  gpuCount: number;
  gpuVendor: 'NVIDIA' | 'AMD';
  gpuMemoryGb: number;
  minVcpuPerGpu?: number;
  minRamGbPerGpu?: number;
  diskGb: number;
  cloud: CloudType;
  registry?: string;
  tags: { cluster: string; namespace: string; job: string; jobUid: string; marker: string };
  /** The container's resources as the Job gives them (a Kubernetes provider uses them as they are). */
  resources?: Container['resources'];
  /** The pod template's annotations (a Kubernetes provider puts them on its pod). */
  podAnnotations?: Record<string, string>;
}

/** Decoded data of the Secrets and ConfigMaps a template references (undefined: not found). */
export interface ReferencedData {
  secrets: Record<string, Record<string, string> | undefined>;
  configMaps: Record<string, Record<string, string> | undefined>;
}

export type BuildResult =
  | { ok: true; request: LaunchRequest }
  | { ok: false; errorClass: 'Unexpressible' | 'Unresolved'; message: string };

/** Names of the Secrets and ConfigMaps a container's env references. */
export function referencedObjects(job: Job): { secrets: string[]; configMaps: string[] } {
  const secrets = new Set<string>();
  const configMaps = new Set<string>();
  for (const c of job.spec?.template?.spec?.containers ?? []) {
    for (const e of c.envFrom ?? []) {
      if (e.secretRef?.name) secrets.add(e.secretRef.name);
      if (e.configMapRef?.name) configMaps.add(e.configMapRef.name);
    }
    for (const e of c.env ?? []) {
      if (e.valueFrom?.secretKeyRef?.name) secrets.add(e.valueFrom.secretKeyRef.name);
      if (e.valueFrom?.configMapKeyRef?.name) configMaps.add(e.valueFrom.configMapKeyRef.name);
    }
  }
  return { secrets: [...secrets], configMaps: [...configMaps] };
}

export function remotePodName(job: Job): string {
  const uid = (job.metadata.uid ?? '').replace(/-/g, '').slice(0, 8);
  const base = `troupe-${job.metadata.namespace}-${job.metadata.name}`
    .slice(0, 63 - uid.length - 1)
    .replace(/-+$/, '');
  return `${base}-${uid}`;
}

export function virtualPodName(job: Job): string {
  return `${job.metadata.name}-runpod`;
}

const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

export function buildLaunchRequest(
  job: Job,
  cfg: JobConfig,
  refs: ReferencedData,
  ctx: { clusterName: string; marker: string; defaultDiskGb: number; defaultCloud: CloudType },
): BuildResult {
  const spec = job.spec ?? {};
  const tpl = spec.template?.spec;
  const no = (message: string): BuildResult => ({ ok: false, errorClass: 'Unexpressible', message });
  if (!tpl || tpl.containers.length === 0) return no('the Job has no pod template containers');
  if (tpl.containers.length !== 1)
    return no(`a RunPod pod runs one container; this Job's pods have ${tpl.containers.length}`);
  if (tpl.initContainers?.length) return no('init containers cannot be run on RunPod');
  if ((spec.parallelism ?? 1) > 1 || (spec.completions ?? 1) > 1) {
    return no(
      'a Job with parallelism or completions above 1 needs several pods; troupe offloads one pod per Job',
    );
  }
  if (spec.completionMode === 'Indexed') return no('Indexed Jobs cannot be offloaded');
  const c: Container = tpl.containers[0]!;
  if (!c.image) return no('the container has no image');
  if (c.volumeMounts?.length) return no('volume mounts cannot be expressed on RunPod');
  if (tpl.imagePullSecrets?.length && !cfg.registry) {
    return no(`the image needs pull secrets; name a RunPod registry credential in ${K.REGISTRY_AUTH}`);
  }

  const env = resolveEnv(c, job, refs);
  if (!env.ok) return env;
  const expand = (s: string) => expandRefs(s, env.values);
  const command = c.command?.map(expand);
  const args = c.args?.map(expand);

  const res = { ...(c.resources?.requests ?? {}), ...(c.resources?.limits ?? {}) };
  let gpuVendor: 'NVIDIA' | 'AMD' = 'NVIDIA';
  let gpuCount = 1;
  if (res['amd.com/gpu'] !== undefined) {
    gpuVendor = 'AMD';
    gpuCount = Number(quantityValue(res['amd.com/gpu']));
  } else if (res['nvidia.com/gpu'] !== undefined) {
    gpuCount = Number(quantityValue(res['nvidia.com/gpu']));
  }
  if (!Number.isInteger(gpuCount) || gpuCount < 1)
    return no('the container must ask for at least one whole GPU');
  const requests = c.resources?.requests ?? c.resources?.limits ?? {};
  const cpu = tryParseQuantity(requests.cpu);
  const mem = tryParseQuantity(requests.memory);
  const disk = tryParseQuantity(requests['ephemeral-storage']);
  const GB = 1_000_000_000n;
  const uid = job.metadata.uid ?? '';
  return {
    ok: true,
    request: {
      name: remotePodName(job),
      image: c.image,
      command,
      args,
      wrapped: command !== undefined && command.length > 0,
      env: {
        ...env.values,
        [K.TAG_CLUSTER]: ctx.clusterName,
        [K.TAG_NAMESPACE]: job.metadata.namespace ?? '',
        [K.TAG_JOB]: job.metadata.name ?? '',
        [K.TAG_JOB_UID]: uid,
        [K.TAG_EXIT_MARKER]: ctx.marker,
      },
      gpuCount,
      gpuVendor,
      gpuMemoryGb: cfg.gpuMemoryGb,
      minVcpuPerGpu: cpu ? Math.max(1, Math.ceil(Number(milliValue(cpu)) / 1000 / gpuCount)) : undefined,
      minRamGbPerGpu: mem
        ? Math.max(1, Math.ceil(Number(quantityValue(mem)) / 1024 ** 3 / gpuCount))
        : undefined,
      diskGb: disk ? Math.max(1, Number((quantityValue(disk) + GB - 1n) / GB)) : ctx.defaultDiskGb,
      cloud: cfg.cloud ?? ctx.defaultCloud,
      registry: cfg.registry,
      ...(c.resources ? { resources: structuredClone(c.resources) } : {}),
      ...(spec.template?.metadata?.annotations
        ? { podAnnotations: { ...spec.template.metadata.annotations } }
        : {}),
      tags: {
        cluster: ctx.clusterName,
        namespace: job.metadata.namespace ?? '',
        job: job.metadata.name ?? '',
        jobUid: uid,
        marker: ctx.marker,
      },
    },
  };
}

function resolveEnv(
  c: Container,
  job: Job,
  refs: ReferencedData,
):
  | { ok: true; values: Record<string, string> }
  | { ok: false; errorClass: 'Unexpressible' | 'Unresolved'; message: string } {
  const values: Record<string, string> = {};
  for (const src of c.envFrom ?? []) {
    const ref = src.secretRef ?? src.configMapRef;
    if (!ref) continue;
    const kind = src.secretRef ? 'Secret' : 'ConfigMap';
    const data = src.secretRef ? refs.secrets[ref.name ?? ''] : refs.configMaps[ref.name ?? ''];
    if (!data) {
      if (ref.optional) continue;
      return {
        ok: false,
        errorClass: 'Unresolved',
        message: `${kind} ${ref.name} referenced by envFrom was not found`,
      };
    }
    for (const [k, v] of Object.entries(data)) {
      const name = `${src.prefix ?? ''}${k}`;
      if (ENV_NAME.test(name)) values[name] = v;
    }
  }
  for (const e of c.env ?? []) {
    const r = envValue(e, job, refs, values);
    if (r === null) continue;
    if (typeof r === 'object') return { ok: false, ...r };
    values[e.name] = r;
  }
  return { ok: true, values };
}

function envValue(
  e: EnvVar,
  job: Job,
  refs: ReferencedData,
  defined: Record<string, string>,
): string | null | { errorClass: 'Unexpressible' | 'Unresolved'; message: string } {
  if (e.value !== undefined) return expandRefs(e.value, defined);
  const vf = e.valueFrom;
  if (!vf) return '';
  const keyRef = vf.secretKeyRef ?? vf.configMapKeyRef;
  if (keyRef) {
    const kind = vf.secretKeyRef ? 'Secret' : 'ConfigMap';
    const data = vf.secretKeyRef ? refs.secrets[keyRef.name ?? ''] : refs.configMaps[keyRef.name ?? ''];
    const v = data?.[keyRef.key];
    if (v === undefined) {
      if (keyRef.optional) return null;
      return {
        errorClass: 'Unresolved',
        message: `env ${e.name}: ${kind} ${keyRef.name}${data ? ` has no key ${keyRef.key}` : ' was not found'}`,
      };
    }
    return v;
  }
  if (vf.fieldRef) {
    const path = vf.fieldRef.fieldPath;
    const meta = job.spec?.template?.metadata ?? {};
    if (path === 'metadata.name') return virtualPodName(job);
    if (path === 'metadata.namespace') return job.metadata.namespace ?? '';
    if (path === 'spec.nodeName') return K.VIRTUAL_NODE_NAME;
    if (path === 'spec.serviceAccountName')
      return String(
        (job.spec?.template?.spec as { serviceAccountName?: string })?.serviceAccountName ?? 'default',
      );
    const m = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
    if (m) return (m[1] === 'labels' ? meta.labels : meta.annotations)?.[m[2]!] ?? '';
    return { errorClass: 'Unexpressible', message: `env ${e.name}: field ${path} has no value on RunPod` };
  }
  if (vf.resourceFieldRef) {
    return {
      errorClass: 'Unexpressible',
      message: `env ${e.name}: resource field ${vf.resourceFieldRef.resource} has no value on RunPod`,
    };
  }
  return '';
}

/** `$(VAR)` expansion as the kubelet does it: `$$` escapes, unknown references stay as written. */
export function expandRefs(s: string, vars: Record<string, string>): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === '$' && s[i + 1] === '$') {
      out += '$';
      i++;
      continue;
    }
    if (ch === '$' && s[i + 1] === '(') {
      const end = s.indexOf(')', i + 2);
      if (end > 0) {
        const name = s.slice(i + 2, end);
        if (Object.hasOwn(vars, name)) {
          out += vars[name];
          i = end;
          continue;
        }
      }
    }
    out += ch;
  }
  return out;
}
