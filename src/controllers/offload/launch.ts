/**
 * Offloading a Job. Each step is stored in the cluster before the next one starts, so a
 * restarted troupe resumes from what it finds (resume.ts):
 *  1. intent: the cleanup finalizer, `offload-state: Launching`, podReplacementPolicy Failed;
 *  2. claim: the virtual pod, not linked to a remote pod yet, takes the Job's active slot,
 *     so the Job controller creates no local pod while it exists;
 *  3. clear: the Job's local pods that no node holds are deleted, each with a
 *     resourceVersion precondition (a pod the scheduler bound in the meantime is never
 *     deleted blind, and a pod being deleted can no longer be bound). A local pod that is
 *     bound or running wins: the offload is rolled back and the Job runs locally;
 *  4. create: `create-sent-at` on the Job, then the remote create;
 *  5. link: the remote id and status on the virtual pod, then the Job's annotations.
 * Remote work can only start after step 3, so a Job never runs locally and remotely.
 */
import type { ReconcileResult } from '../../runtime/index.ts';
import { claim, clearLocal } from './claim.ts';
import type { OffloadContext } from './context.ts';
import { alreadyOffloaded, blockedByError, jobFinished, readJobConfig } from './core.ts';
import {
  annotateJob,
  markError,
  markOffloaded,
  refuseLaunch,
  reportRunningLocally,
  rollback,
} from './job-writes.ts';
import * as K from './keys.ts';
import { buildRequest } from './launch-request.ts';
import { freshForLaunch, isLinked } from './launch-state.ts';
import { spendNow } from './spend.ts';
import type { Job, Pod, RemotePod } from './types.ts';
import { podIdLabel } from './virtual.ts';
import { writeVirtualPodStatus } from './virtual-pod-writes.ts';
import { type LaunchRequest, virtualPodName } from './workload.ts';

/** Step 5: the virtual pod and the Job say where the Job runs. */
export async function link(
  c: OffloadContext,
  job: Job,
  vpod: Pod,
  remote: RemotePod,
  info: { costPerHr: number; gpuTypeId?: string; message: string },
): Promise<ReconcileResult> {
  const linked = await c.client.mergePatch<Pod>(
    vpod,
    {
      metadata: {
        labels: podIdLabel(remote.id),
        annotations: {
          [K.POD_ID]: remote.id,
          [K.COST_PER_HR]: String(info.costPerHr),
          [K.REMOTE_STATUS]: remote.status,
          ...(info.gpuTypeId ? { [K.GPU_TYPE]: info.gpuTypeId } : {}),
        },
      },
    },
    { signal: c.signal },
  );
  await writeVirtualPodStatus(
    c,
    job,
    linked,
    remote.status === 'RUNNING' ? { kind: 'running' } : { kind: 'pending' },
    remote,
  );
  await markOffloaded(c, job, linked, info.message);
  return { requeueAfter: Math.min(c.pollMs, 1000) };
}

/** Step 4 and 5: the remote create, then the link; a definite refusal rolls the launch back. */
async function createAndLink(
  c: OffloadContext,
  job: Job,
  vpod: Pod,
  request: LaunchRequest,
  message: string,
): Promise<ReconcileResult | undefined> {
  const spend = await spendNow(c);
  const budgetLeft =
    c.opts.maxHourlySpend > 0 ? Math.max(0, c.opts.maxHourlySpend - spend) : Number.POSITIVE_INFINITY;
  let current = job;
  // A throw (5xx after retries, a timeout, a dropped connection) leaves the Job Launching
  // with its claim: the retry looks for a pod the failed call may have made.
  const outcome = await c.provider.launch(request, { maxPrice: c.opts.maxGpuPrice, budgetLeft }, c.signal, {
    beforeCreate: async () => {
      current = await annotateJob(c, current, { [K.CREATE_SENT_AT]: String(c.now()) });
    },
  });
  if (outcome.kind === 'launched') {
    c.reservations.set(job.metadata.uid ?? '', outcome.costPerHr);
    return link(c, current, vpod, outcome.pod, {
      costPerHr: outcome.costPerHr,
      gpuTypeId: outcome.gpuTypeId,
      message,
    });
  }
  if (outcome.kind === 'rateLimited') {
    // Every create was answered, none placed a pod: keep the claim, try again after Retry-After.
    await annotateJob(c, current, { [K.CREATE_SENT_AT]: null });
    return { requeueAfter: Math.max(outcome.retryAfterMs, 100) };
  }
  await refuseLaunch(c, current, vpod, outcome.errorClass, outcome.message);
  const retry = outcome.kind === 'unavailable' || outcome.errorClass === 'Payment';
  return retry ? { requeueAfter: c.intervalMs } : undefined;
}

/**
 * Steps 2 to 5 (the intent is written). `request` is the one built before the intent was
 * written; a resumed launch has none and builds it once it has cleared.
 */
export async function proceed(
  c: OffloadContext,
  job: Job,
  vpod: Pod | undefined,
  message: string,
  request?: LaunchRequest,
): Promise<ReconcileResult | undefined> {
  const claimed = vpod ?? (await claim(c, job));
  if (claimed === 'busy') return { requeueAfter: 1000 };
  // Already linked (the cache had not shown it yet): following it is the next reconcile's job.
  if (claimed !== 'taken' && isLinked(claimed)) return { requeueAfter: 200 };
  if (claimed === 'taken') {
    const msg = `a pod named ${virtualPodName(job)} already exists and is not this Job's`;
    await refuseLaunch(c, job, undefined, 'Unexpressible', msg);
    return undefined;
  }
  const clear = await clearLocal(c, job);
  if (clear !== 'clear') {
    await rollback(c, job, claimed);
    if (clear === 'local') await reportRunningLocally(c, job);
    return clear === 'wait' ? { requeueAfter: 1000 } : undefined;
  }
  if (request) return createAndLink(c, job, claimed, request, message);
  const built = await buildRequest(c, job);
  if (!built.ok) {
    await refuseLaunch(c, job, claimed, built.errorClass, built.message);
    return built.errorClass === 'Unresolved' ? { requeueAfter: c.intervalMs } : undefined;
  }
  return createAndLink(c, job, claimed, built.request, message);
}

/** Offloads a Job the decision picked: checks what can be checked, writes the intent, then proceeds. */
export async function offload(
  c: OffloadContext,
  job: Job,
  pods: Pod[],
  decision: { reason: string; message: string },
): Promise<ReconcileResult | undefined> {
  const cfg = readJobConfig(job);
  if (cfg.errors.length) {
    await markError(c, job, 'Invalid', cfg.errors.join('; '));
    return undefined;
  }
  // Built before anything is written, so a Job that cannot go stays untouched, and only
  // once: the launch below sends this request.
  const built = await buildRequest(c, job);
  if (!built.ok) {
    await markError(c, job, built.errorClass, built.message);
    return built.errorClass === 'Unresolved' ? { requeueAfter: c.intervalMs } : undefined;
  }
  if (!c.provider.configured()) {
    await markError(
      c,
      job,
      'Unauthorized',
      'no provider credentials are configured (RUNPOD_KEY); the Job stays local',
    );
    return undefined;
  }
  return c.exclusive(async () => {
    const fresh = await freshForLaunch(c, job);
    if (
      !fresh ||
      fresh.metadata.deletionTimestamp ||
      jobFinished(fresh) ||
      alreadyOffloaded(fresh, pods) ||
      blockedByError(fresh)
    ) {
      return undefined;
    }
    // Step 1, the intent: a crash from here on leaves a Job that says Launching.
    let current = await c.client.addFinalizer(fresh, K.CLEANUP_FINALIZER);
    // podReplacementPolicy Failed: the local pods troupe deletes are then not counted as
    // failures against the Job's backoffLimit (the Job controller counts a deleted,
    // unfinished pod as failed otherwise). Also written when troupe first sees the Job.
    const replace =
      current.spec?.podReplacementPolicy === 'Failed' ? {} : { spec: { podReplacementPolicy: 'Failed' } };
    current = await c.client.mergePatch<Job>(
      current,
      {
        metadata: {
          annotations: { [K.STATE]: 'Launching', [K.REASON]: decision.reason },
          labels: { [K.MANAGED]: 'true' },
        },
        ...replace,
      },
      { signal: c.signal },
    );
    return proceed(c, current, undefined, decision.message, built.request);
  });
}
