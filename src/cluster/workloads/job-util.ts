/**
 * The Job controller's pure pieces (pkg/controller/job utils.go, backoff_utils.go,
 * indexed_job_utils.go): the Job API shape, conditions, pod classification, failure
 * backoff, index bookkeeping and status serialization. No I/O and no clock of their own:
 * times come in as arguments. The controller that drives them is job.ts.
 */
import type { Job, JobCondition, JobStatus } from '../../kube/builtin.ts';
import { rfc3339 } from '../../kube/conditions.ts';
import { type Selector, selectorFromObject } from '../../kube/labels.ts';
import { backoffDelay } from '../../lib/backoff.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { compareForDeletion, type Pod, readyCondition } from './pods.ts';
import { parseTime } from './util.ts';

export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';
export const JOB_COMPLETION_INDEX = 'batch.kubernetes.io/job-completion-index';
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';
export const CONTROLLER_UID_LABEL = 'batch.kubernetes.io/controller-uid';
export const LEGACY_JOB_NAME_LABEL = 'job-name';
export const LEGACY_CONTROLLER_UID_LABEL = 'controller-uid';
export const JOB_CONTROLLER_NAME = 'kubernetes.io/job-controller';

export type { Job, JobCondition, JobSpec, JobStatus } from '../../kube/builtin.ts';

export function managedByOther(job: Job): boolean {
  const m = job.spec?.managedBy;
  return m !== undefined && m !== null && m !== JOB_CONTROLLER_NAME;
}

/** The Job's terminal condition (Complete or Failed with status True), if any. */
export function finishedCondition(job: Job): JobCondition | undefined {
  return job.status?.conditions?.find(
    (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
}

export function isJobFinished(job: Job): boolean {
  return finishedCondition(job) !== undefined;
}

export function hasFinalizer(pod: Pod): boolean {
  return pod.metadata.finalizers?.includes(JOB_TRACKING_FINALIZER) ?? false;
}

export function completionIndex(pod: Pod): number {
  const v = pod.metadata.annotations?.[JOB_COMPLETION_INDEX];
  if (v === undefined || !/^\d+$/.test(v)) return -1;
  return Number(v);
}

export function isIndexed(job: Job): boolean {
  return job.spec?.completionMode === 'Indexed';
}

export function suspended(job: Job): boolean {
  return job.spec?.suspend === true;
}

/** podReplacementPolicy Failed (or a podFailurePolicy) replaces a pod only once it is Failed. */
export function onlyReplaceFailedPods(job: Job): boolean {
  return (
    job.spec?.podReplacementPolicy === 'Failed' ||
    (job.spec?.podFailurePolicy !== undefined && job.spec?.podFailurePolicy !== null)
  );
}

export function isPodFailed(pod: Pod, job: Job): boolean {
  if (pod.status?.phase === 'Failed') return true;
  if (onlyReplaceFailedPods(job)) return false;
  // Deleted pods count as failures: an orphaned pod never gets the chance to reach Failed.
  return !!pod.metadata.deletionTimestamp && pod.status?.phase !== 'Succeeded';
}

export function newCondition(
  type: string,
  status: string,
  reason: string,
  message: string,
  now: Date,
): JobCondition {
  const t = rfc3339(now);
  return { type, status, lastProbeTime: t, lastTransitionTime: t, reason, message };
}

/** ensureJobConditionStatus: a False condition is never added, only updated to. */
export function ensureCondition(
  list: JobCondition[],
  type: string,
  status: string,
  reason: string,
  message: string,
  now: Date,
): boolean {
  const i = list.findIndex((c) => c.type === type);
  if (i >= 0) {
    const c = list[i]!;
    if (c.status === status && c.reason === reason && c.message === message) return false;
    list[i] = newCondition(type, status, reason, message, now);
    return true;
  }
  if (status === 'False') return false;
  list.push(newCondition(type, status, reason, message, now));
  return true;
}

/** The time a pod finished, for failure backoff (getFinishedTime). */
export function finishedTime(pod: Pod, now: number): number {
  let latest: number | undefined;
  for (const c of pod.status?.containerStatuses ?? []) {
    const t = parseTime(c.state?.terminated?.finishedAt);
    if (t !== undefined && (latest === undefined || t > latest)) latest = t;
  }
  if (latest !== undefined) return latest;
  const ready = readyCondition(pod);
  if (ready?.status === 'False') {
    const t = parseTime(ready.lastTransitionTime);
    if (t !== undefined) return t;
  }
  return parseTime(pod.metadata.deletionTimestamp) ?? parseTime(pod.metadata.creationTimestamp) ?? now;
}

export interface BackoffRecord {
  failuresAfterLastSuccess: number;
  lastFailureTime?: number;
}

/** backoffStore.newBackoffRecord: failures since the last success, and when the last one happened. */
export function nextBackoffRecord(
  prev: BackoffRecord,
  newSucceeded: Pod[],
  newFailed: Pod[],
  now: number,
): BackoffRecord {
  const failedTimes = newFailed.map((p) => finishedTime(p, now)).sort((a, b) => a - b);
  if (newSucceeded.length === 0) {
    if (failedTimes.length === 0) return prev;
    return {
      failuresAfterLastSuccess: prev.failuresAfterLastSuccess + failedTimes.length,
      lastFailureTime: failedTimes.at(-1),
    };
  }
  const lastSuccess = Math.max(...newSucceeded.map((p) => finishedTime(p, now)));
  const after = failedTimes.filter((t) => t > lastSuccess);
  return { failuresAfterLastSuccess: after.length, lastFailureTime: after.at(-1) };
}

export function remainingBackoff(rec: BackoffRecord, now: number, baseMs: number, maxMs: number): number {
  if (rec.failuresAfterLastSuccess === 0) return 0;
  const backoff = backoffDelay(rec.failuresAfterLastSuccess - 1, baseMs, maxMs);
  const elapsed = rec.lastFailureTime === undefined ? 0 : now - rec.lastFailureTime;
  return backoff < elapsed ? 0 : backoff - elapsed;
}

/** podGenerateNameWithIndex: `<job>-<index>-`, the job name cut so the result fits 58 characters. */
export function generateNameWithIndex(jobName: string, index: number): string {
  const suffix = `-${index}-`;
  const full = jobName + suffix;
  return full.length > 58 ? jobName.slice(0, 58 - suffix.length) + suffix : full;
}

export function jobSelector(job: Job): Selector | undefined {
  try {
    const sel = job.spec?.selector;
    if (sel) return selectorFromObject(sel);
    // A Job stored without the server-generated selector: its pods carry the uid label.
    return selectorFromObject({ matchLabels: { [CONTROLLER_UID_LABEL]: job.metadata.uid! } });
  } catch {
    return undefined;
  }
}

/** A Job adopts orphans only through a non-empty selector. */
export function adoptingSelector(job: KubeObject): Selector | undefined {
  const sel = jobSelector(job as Job);
  return sel && !sel.empty ? sel : undefined;
}

/** The status as batch/v1 serializes it: omitempty counters and lists dropped, pointer fields kept. */
export function serializedStatus(s: JobStatus): JobStatus {
  const status = structuredClone(s);
  const u = status.uncountedTerminatedPods;
  if (u) {
    if (!u.succeeded?.length) delete u.succeeded;
    if (!u.failed?.length) delete u.failed;
  }
  if (!status.completedIndexes) delete status.completedIndexes;
  if (!status.active) delete status.active;
  if (!status.succeeded) delete status.succeeded;
  if (!status.failed) delete status.failed;
  if (status.conditions && status.conditions.length === 0) delete status.conditions;
  return status;
}

/** cleanUncountedPodsWithoutFinalizers: pods whose finalizer is gone move into the counters. */
export function cleanUncounted(status: JobStatus, withFinalizer: Set<string>): boolean {
  const u = status.uncountedTerminatedPods ?? {};
  let changed = false;
  const s = (u.succeeded ?? []).filter((x) => withFinalizer.has(x));
  if (s.length !== (u.succeeded ?? []).length) {
    status.succeeded = (status.succeeded ?? 0) + (u.succeeded!.length - s.length);
    u.succeeded = s;
    changed = true;
  }
  const f = (u.failed ?? []).filter((x) => withFinalizer.has(x));
  if (f.length !== (u.failed ?? []).length) {
    status.failed = (status.failed ?? 0) + (u.failed!.length - f.length);
    u.failed = f;
    changed = true;
  }
  status.uncountedTerminatedPods = u;
  return changed;
}

export function pastBackoffLimitOnFailure(job: Job, pods: Pod[], backoffLimit: number): boolean {
  if (job.spec?.template?.spec?.restartPolicy !== 'OnFailure') return false;
  let restarts = 0;
  for (const p of pods) {
    const phase = p.status?.phase;
    if (phase !== 'Running' && phase !== 'Pending') continue;
    for (const s of p.status?.initContainerStatuses ?? []) restarts += s.restartCount ?? 0;
    for (const s of p.status?.containerStatuses ?? []) restarts += s.restartCount ?? 0;
  }
  return backoffLimit === 0 ? restarts > 0 : restarts >= backoffLimit;
}

export function pastActiveDeadline(job: Job, status: JobStatus, now: number): boolean {
  const ads = job.spec?.activeDeadlineSeconds;
  const start = parseTime(status.startTime);
  if (ads === undefined || start === undefined || suspended(job)) return false;
  return now - start >= ads * 1000;
}

/** activePodsForRemoval: duplicate or invalid indexes first, then by deletion rank. */
export function activePodsForRemoval(
  job: Job,
  pods: Pod[],
  rmAtLeast: number,
  completions: number | undefined,
): Pod[] {
  let rm: Pod[] = [];
  let left: Pod[] = pods;
  if (isIndexed(job)) {
    rm = [];
    left = [];
    const byIndex = new Map<number, Pod[]>();
    for (const p of pods) {
      const ix = completionIndex(p);
      if (ix < 0 || ix >= completions!) {
        rm.push(p);
        continue;
      }
      let g = byIndex.get(ix);
      if (!g) {
        g = [];
        byIndex.set(ix, g);
      }
      g.push(p);
    }
    for (const g of byIndex.values()) {
      // Keep the most advanced pod of an index; the rest are duplicates.
      g.sort((a, b) => compareForDeletion(a, b));
      rm.push(...g.slice(0, -1));
      left.push(g.at(-1)!);
    }
  }
  if (rm.length < rmAtLeast) {
    const sorted = [...left].sort((a, b) => compareForDeletion(a, b));
    rm.push(...sorted.slice(0, rmAtLeast - rm.length));
  }
  return rm;
}

export function addCompletionIndexEnv(containers: { env?: unknown[] }[] | undefined): void {
  for (const ctr of containers ?? []) {
    const env = (ctr.env ?? []) as { name?: string }[];
    if (env.some((e) => e.name === 'JOB_COMPLETION_INDEX')) continue;
    ctr.env = [
      ...env,
      {
        name: 'JOB_COMPLETION_INDEX',
        valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${JOB_COMPLETION_INDEX}']` } },
      },
    ];
  }
}
