/**
 * What troupe writes on a Job, shared by the launch, following and cleanup: refusals,
 * the link to its remote pod, the way back to local, and the cleanup finalizer's release.
 */

import { isConflict } from '../../runtime/index.ts';
import type { OffloadContext } from './context.ts';
import { readJobConfig } from './core.ts';
import * as K from './keys.ts';
import type { Job, Pod } from './types.ts';
import { deleteVirtualPod } from './virtual-pod-writes.ts';

/** Merges annotations (and labels) into the Job; `ifUnchanged`: only onto this very version of it (else 409). */
export const annotateJob = (
  c: OffloadContext,
  job: Job,
  annotations: Record<string, string | null>,
  labels?: Record<string, string>,
  opts: { ifUnchanged?: boolean } = {},
) =>
  c.client.mergePatch<Job>(
    job,
    {
      metadata: {
        ...(opts.ifUnchanged ? { resourceVersion: job.metadata.resourceVersion } : {}),
        annotations,
        ...(labels ? { labels } : {}),
      },
    },
    { signal: c.signal },
  );

/** Refusals that pass: the Job is tried again at the next resync, not before. */
export const retryLater = (c: OffloadContext, errorClass: string): Record<string, string> =>
  ['NoCapacity', 'Budget', 'Payment', 'Unresolved'].includes(errorClass)
    ? { [K.RETRY_AT]: String(c.now() + c.intervalMs) }
    : {};

/**
 * A refusal before anything was written for the launch (an Event only when it is news). The
 * write is conditional on the Job's resourceVersion: a reconcile on a cache that has not yet
 * seen an earlier refusal's annotation gets a 409 instead of reporting and counting it again
 * (the change that caused the 409 brings the Job back with its annotations).
 */
export async function markError(c: OffloadContext, job: Job, errorClass: string, message: string) {
  const a = job.metadata.annotations ?? {};
  if (a[K.ERROR] === message && a[K.ERROR_CLASS] === errorClass) return;
  try {
    await annotateJob(
      c,
      job,
      { [K.ERROR]: message, [K.ERROR_CLASS]: errorClass, ...retryLater(c, errorClass) },
      undefined,
      { ifUnchanged: true },
    );
  } catch (err) {
    if (isConflict(err)) return;
    throw err;
  }
  c.recorder.warning(job, `Offload${errorClass}`, 'Offload', message);
  c.metrics.launchFailed(errorClass);
}

/** A refusal after the intent was written: the launch rolled back, then reported and counted. */
export async function refuseLaunch(
  c: OffloadContext,
  job: Job,
  vpod: Pod | undefined,
  errorClass: string,
  message: string,
) {
  await rollback(c, job, vpod, {
    [K.ERROR]: message,
    [K.ERROR_CLASS]: errorClass,
    ...retryLater(c, errorClass),
  });
  c.recorder.warning(job, `Offload${errorClass}`, 'Offload', message);
  c.metrics.launchFailed(errorClass);
}

export async function removeJobFinalizer(c: OffloadContext, job: Job) {
  if (job.metadata.finalizers?.includes(K.CLEANUP_FINALIZER))
    await c.client.removeFinalizer(job, K.CLEANUP_FINALIZER);
  c.metrics.forget(job.metadata.uid ?? '');
}

export async function reportRunningLocally(c: OffloadContext, job: Job) {
  if (!readJobConfig(job).requested || job.metadata.annotations?.[K.ERROR_CLASS] === 'RunningLocally') return;
  await annotateJob(c, job, {
    [K.ERROR_CLASS]: 'RunningLocally',
    [K.ERROR]:
      'offload was requested, but a local pod already runs; it was not offloaded, so it does not run twice',
  });
  c.recorder.warning(
    job,
    'RunningLocally',
    'Offload',
    'offload was requested, but a local pod already runs; the Job stays local',
  );
}

/** Back to local in one write (a reader never sees Local with the finalizer still on), after dropping the claim. */
export async function rollback(
  c: OffloadContext,
  job: Job,
  vpod: Pod | undefined,
  annotations: Record<string, string | null> = {},
) {
  if (vpod) await deleteVirtualPod(c, vpod);
  await c.client.modify<Job>(
    job,
    (j) => {
      const next: Record<string, string> = { ...j.metadata.annotations, [K.STATE]: 'Local' };
      delete next[K.CREATE_SENT_AT];
      for (const [k, v] of Object.entries(annotations)) {
        if (v === null) delete next[k];
        else next[k] = v;
      }
      j.metadata.annotations = next;
      j.metadata.finalizers = (j.metadata.finalizers ?? []).filter((f) => f !== K.CLEANUP_FINALIZER);
    },
    { signal: c.signal },
  );
}

/** The Job's side of the link (also finishes a link a crash cut short). */
export async function markOffloaded(c: OffloadContext, job: Job, vpod: Pod, message: string) {
  const a = vpod.metadata.annotations ?? {};
  const id = a[K.POD_ID] ?? '';
  const reason = job.metadata.annotations?.[K.REASON] ?? 'Requested';
  await annotateJob(
    c,
    job,
    {
      [K.OFFLOADED]: 'true',
      [K.POD_ID]: id,
      [K.COST_PER_HR]: a[K.COST_PER_HR] ?? '0',
      [K.PROVIDER]: c.provider.name,
      [K.STATE]: 'Offloaded',
      [K.REASON]: reason,
      ...(a[K.GPU_TYPE] ? { [K.GPU_TYPE]: a[K.GPU_TYPE] } : {}),
      [K.CREATE_SENT_AT]: null,
      [K.RETRY_AT]: null,
      [K.ERROR]: null,
      [K.ERROR_CLASS]: null,
    },
    { [K.MANAGED]: 'true' },
  );
  c.metrics.offloaded(job.metadata.uid ?? '', reason);
  c.recorder.normal(
    job,
    'Offloaded',
    'Offload',
    `offloaded to ${c.provider.name} pod ${id}${a[K.GPU_TYPE] ? ` on ${a[K.GPU_TYPE]}` : ''} at $${a[K.COST_PER_HR] ?? '0'}/h: ${message}`,
  );
}
