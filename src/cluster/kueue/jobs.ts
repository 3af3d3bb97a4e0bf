/**
 * Kueue's GenericJob contract for the two kinds the stand-in integrates: AppWrapper
 * (workload.codeflare.dev/v1beta2, as Kueue's own AppWrapper integration treats it) and
 * batch/v1 Job. Each adapter reads a job's state and changes a copy of it; the stand-in
 * writes the copy.
 */

import { jsonEqual } from '../../lib/json.ts';
import type { KubeObject } from '../apiserver/types.ts';
import type { Gvr } from '../client.ts';
import { GVR } from '../client.ts';
import { KGVR, type PodSet, type PodSetInfo, type Workload } from './api.ts';
import { appWrapperPodSets, inferAppWrapperPodSets, jobPodSets } from './podsets.ts';

type Json = Record<string, unknown>;

/** Injecting a PodSetInfo failed in a way no retry can fix (Kueue's ErrInvalidPodsetInfo). */
export class PodSetInfoError extends Error {}

export interface JobAdapter {
  /** `AppWrapper` or `Job`: part of the work-queue key and of the Workload's name. */
  kind: string;
  group: string;
  gvr: Gvr;
  /** Jobs this integration leaves alone (owned by another managed job, managed elsewhere). */
  skip(job: KubeObject): boolean;
  podSets(job: KubeObject): PodSet[] | undefined;
  isSuspended(job: KubeObject): boolean;
  /** Still holds resources (Kueue waits for this to end before releasing quota on eviction). */
  isActive(job: KubeObject): boolean;
  finished(job: KubeObject): { finished: boolean; success: boolean; message: string };
  podsReady(job: KubeObject): boolean;
  /** Unsuspends `job` (in place) with what admission assigned. */
  run(job: KubeObject, infos: PodSetInfo[]): void;
  /** Suspends `job` (in place) and undoes what `run` injected. */
  stop(job: KubeObject, wl: Workload | undefined): void;
  /**
   * For kinds whose pod template may change only while suspended (batch/v1 Job): `stop`
   * only suspends and marks the job, and this second write, once the suspension is stored,
   * undoes what `run` injected. Returns false when there is nothing to undo.
   */
  restore?(job: KubeObject, wl: Workload | undefined): boolean;
}

/** Kueue's mark on a Job it suspended but has not restored yet (job_controller.go StoppingAnnotation). */
export const STOPPING_ANNOTATION = 'kueue.x-k8s.io/stopping';

/** Labels the Job controller owns in the template, kept when restoring (job_controller.go managedLabels). */
const MANAGED_LABELS = [
  'job-name',
  'controller-uid',
  'batch.kubernetes.io/job-name',
  'batch.kubernetes.io/controller-uid',
];

function conditions(obj: KubeObject): { type?: string; status?: string; message?: string }[] {
  const c = (obj.status as { conditions?: unknown } | undefined)?.conditions;
  return Array.isArray(c) ? c : [];
}

function condTrue(obj: KubeObject, type: string): { message?: string } | undefined {
  return conditions(obj).find((c) => c.type === type && c.status === 'True');
}

function spec(obj: KubeObject): Json {
  if (!obj.spec || typeof obj.spec !== 'object') obj.spec = {};
  return obj.spec as Json;
}

/** Kinds whose children Kueue does not queue on their own (the parent holds the quota). */
const MANAGED_OWNERS = new Set([
  'AppWrapper',
  'JobSet',
  'RayJob',
  'RayCluster',
  'PyTorchJob',
  'MPIJob',
  'TFJob',
  'TrainJob',
]);

export const appWrapperAdapter: JobAdapter = {
  kind: 'AppWrapper',
  group: 'workload.codeflare.dev',
  gvr: KGVR.appWrappers,
  skip(job) {
    const managedBy = spec(job).managedBy;
    return (
      typeof managedBy === 'string' &&
      managedBy !== '' &&
      managedBy !== 'workload.codeflare.dev/appwrapper-controller'
    );
  },
  podSets: appWrapperPodSets,
  isSuspended: (job) => spec(job).suspend === true,
  isActive: (job) => Boolean(condTrue(job, 'QuotaReserved')),
  finished(job) {
    const phase = (job.status as { phase?: string } | undefined)?.phase;
    if (phase === 'Succeeded')
      return { finished: true, success: true, message: 'AppWrapper finished successfully' };
    if (phase === 'Failed') {
      if (condTrue(job, 'ResourcesDeployed'))
        return { finished: false, success: false, message: 'Still deleting resources for failed AppWrapper' };
      return { finished: true, success: false, message: 'AppWrapper failed' };
    }
    return { finished: false, success: false, message: '' };
  },
  podsReady: (job) => Boolean(condTrue(job, 'PodsReady')),
  run(job, infos) {
    // The AppWrapper library's SetPodSetInfos: infos are spread over the components in the
    // order of their pod sets (recorded in status, else inferred).
    const s = spec(job);
    const components = (Array.isArray(s.components) ? s.components : []) as Json[];
    const recorded = (job.status as { componentStatus?: { podSets?: unknown[] }[] } | undefined)
      ?.componentStatus;
    const useStatus = Array.isArray(recorded) && recorded.length === components.length;
    let next = 0;
    components.forEach((c, i) => {
      const declared = Array.isArray(c.podSets) && c.podSets.length > 0 ? c.podSets.length : undefined;
      const n = useStatus
        ? (recorded[i]?.podSets?.length ?? 0)
        : (declared ??
          (c.template && typeof c.template === 'object'
            ? inferAppWrapperPodSets(c.template as Json).length
            : 0));
      const own = infos.slice(next, next + n);
      next += n;
      c.podSetInfos = own.map((info) => {
        const out: Json = {};
        if (Object.keys(info.annotations).length > 0) out.annotations = info.annotations;
        if (Object.keys(info.labels).length > 0) out.labels = info.labels;
        if (Object.keys(info.nodeSelector).length > 0) out.nodeSelector = info.nodeSelector;
        if (info.tolerations.length > 0) out.tolerations = info.tolerations;
        if (info.schedulingGates.length > 0) out.schedulingGates = info.schedulingGates;
        return out;
      });
    });
    if (next !== infos.length)
      throw new PodSetInfoError(`invalid podset infos: expecting ${next} podsets, got ${infos.length}`);
    s.suspend = false;
  },
  stop(job) {
    const s = spec(job);
    s.suspend = true;
    for (const c of (Array.isArray(s.components) ? s.components : []) as Json[]) delete c.podSetInfos;
  },
};

function mergeNoConflict(
  what: string,
  base: Record<string, string> | undefined,
  add: Record<string, string>,
): Record<string, string> {
  const out = { ...(base ?? {}) };
  for (const [k, v] of Object.entries(add)) {
    if (k in out && out[k] !== v) {
      throw new PodSetInfoError(
        `invalid admission check PodSetUpdate: conflict for ${what}: conflict for key=${k}, value1=${out[k]}, value2=${v}`,
      );
    }
    out[k] = v;
  }
  return out;
}

export const batchJobAdapter: JobAdapter = {
  kind: 'Job',
  group: 'batch',
  gvr: GVR.jobs,
  skip(job) {
    return (job.metadata.ownerReferences ?? []).some((r) => r.controller && MANAGED_OWNERS.has(r.kind));
  },
  podSets: jobPodSets,
  isSuspended: (job) => spec(job).suspend === true,
  isActive(job) {
    const st = (job.status ?? {}) as { active?: number; terminating?: number };
    return (st.active ?? 0) > 0 || (st.terminating ?? 0) > 0;
  },
  finished(job) {
    if (condTrue(job, 'Complete'))
      return { finished: true, success: true, message: 'Job finished successfully' };
    const failed = condTrue(job, 'Failed');
    if (failed) return { finished: true, success: false, message: failed.message || 'Job failed' };
    return { finished: false, success: false, message: '' };
  },
  podsReady(job) {
    const st = (job.status ?? {}) as { ready?: number; succeeded?: number };
    const parallelism = typeof spec(job).parallelism === 'number' ? (spec(job).parallelism as number) : 1;
    return (st.ready ?? 0) + (st.succeeded ?? 0) >= parallelism;
  },
  run(job, infos) {
    const info = infos[0];
    if (!info || infos.length !== 1)
      throw new PodSetInfoError(`invalid podset infos: expecting 1 podset, got ${infos.length}`);
    const s = spec(job);
    const t = (s.template ?? {}) as { metadata?: Json; spec?: Json };
    t.metadata ??= {};
    t.spec ??= {};
    const md = t.metadata as { labels?: Record<string, string>; annotations?: Record<string, string> };
    md.labels = mergeNoConflict('labels', md.labels, info.labels);
    md.annotations = mergeNoConflict('annotations', md.annotations, info.annotations);
    if (Object.keys(md.annotations).length === 0) delete md.annotations;
    const ps = t.spec as {
      nodeSelector?: Record<string, string>;
      tolerations?: unknown[];
      schedulingGates?: { name: string }[];
    };
    const sel = mergeNoConflict('nodeSelector', ps.nodeSelector, info.nodeSelector);
    if (Object.keys(sel).length > 0) ps.nodeSelector = sel;
    for (const tol of info.tolerations) {
      ps.tolerations ??= [];
      if (!ps.tolerations.some((x) => jsonEqual(x, tol))) ps.tolerations.push(tol);
    }
    for (const g of info.schedulingGates) {
      ps.schedulingGates ??= [];
      if (!ps.schedulingGates.some((x) => x.name === g.name)) ps.schedulingGates.push(g);
    }
    s.template = t;
    s.suspend = false;
  },
  // Job.Stop: the API server lets a Job's template change only while it is suspended, so
  // suspend first (marked as stopping), then restore in a second write.
  stop(job) {
    spec(job).suspend = true;
    job.metadata.annotations = { ...(job.metadata.annotations ?? {}), [STOPPING_ANNOTATION]: 'true' };
  },
  restore(job, wl) {
    if (job.metadata.annotations?.[STOPPING_ANNOTATION] !== 'true') return false;
    delete job.metadata.annotations[STOPPING_ANNOTATION];
    // RestorePodSetsInfo: back to the template the Workload was made from.
    const original = wl?.spec.podSets?.[0]?.template;
    const t = spec(job).template as { metadata?: Json; spec?: Json } | undefined;
    if (!original || !t) return true;
    t.metadata ??= {};
    t.spec ??= {};
    const put = (target: Json, key: string, value: unknown) => {
      if (value === undefined) delete target[key];
      else target[key] = structuredClone(value);
    };
    const labels = { ...(original.metadata?.labels ?? {}) };
    const current = (t.metadata.labels ?? {}) as Record<string, string>;
    for (const l of MANAGED_LABELS) if (l in current) labels[l] = current[l]!;
    put(t.metadata, 'labels', Object.keys(labels).length > 0 ? labels : undefined);
    put(t.metadata, 'annotations', original.metadata?.annotations);
    put(t.spec, 'nodeSelector', original.spec?.nodeSelector);
    put(t.spec, 'tolerations', original.spec?.tolerations);
    put(t.spec, 'schedulingGates', original.spec?.schedulingGates);
    return true;
  },
};
