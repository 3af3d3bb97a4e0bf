/**
 * Nothing left running or billing: a deleted Job's remote pods are terminated before its
 * finalizer is released, a Job whose virtual pod was deleted by hand returns local, and
 * the orphan sweep terminates remote pods no Job stands behind and deletes virtual pods
 * whose Job is gone.
 */
import type { ReconcileResult } from '../../runtime/index.ts';
import { JOB, type OffloadContext, POD, podsOf, stopWatcher } from './context.ts';
import { isVirtualPod, type JobObservation, orphanRemotePods } from './core.ts';
import { annotateJob, removeJobFinalizer } from './job-writes.ts';
import * as K from './keys.ts';
import { settling } from './launch-state.ts';
import { ProviderError } from './provider.ts';
import type { Job, Pod, RemotePod } from './types.ts';
import { deleteVirtualPod } from './virtual-pod-writes.ts';

/** Remote pods younger than this are not collected while their Job exists (a launch may be mid-way). */
const ORPHAN_GRACE_MS = 60_000;

export async function finalizeDeleted(
  c: OffloadContext,
  job: Job,
  vpod: Pod | undefined,
): Promise<ReconcileResult | undefined> {
  if (!job.metadata.finalizers?.includes(K.CLEANUP_FINALIZER)) return undefined;
  const ids = new Set<string>();
  if (vpod?.metadata.annotations?.[K.POD_ID]) ids.add(vpod.metadata.annotations[K.POD_ID]);
  if (job.metadata.annotations?.[K.POD_ID]) ids.add(job.metadata.annotations[K.POD_ID]);
  if (job.metadata.annotations?.[K.STATE] === 'Launching' || ids.size === 0) {
    for (const r of await c.provider.list(c.signal)) if (r.tags.jobUid === job.metadata.uid) ids.add(r.id);
  }
  for (const id of ids) {
    await c.provider.terminate(id, c.signal);
    stopWatcher(c, id);
    c.log.info({ remote: id }, 'terminated the remote pod of a deleted Job');
  }
  if (vpod) await deleteVirtualPod(c, vpod);
  // A create that got no answer may still land: hold the Job until it would have shown.
  const wait = settling(c, job);
  if (wait > 0) return { requeueAfter: wait };
  await removeJobFinalizer(c, job);
  return undefined;
}

/** An offloaded Job whose virtual pod someone deleted: the offload is over, the Job is local again. */
export async function endDeletedOffload(c: OffloadContext, job: Job): Promise<undefined> {
  const id = job.metadata.annotations?.[K.POD_ID];
  if (id) await c.provider.terminate(id, c.signal);
  await annotateJob(c, job, { [K.STATE]: 'Local' });
  await removeJobFinalizer(c, job);
  c.recorder.warning(
    job,
    'VirtualPodDeleted',
    'Offload',
    `the virtual pod was deleted; remote pod ${id ?? ''} terminated`,
  );
  return undefined;
}

export async function sweep(c: OffloadContext): Promise<ReconcileResult> {
  let remote: RemotePod[] = [];
  try {
    remote = await c.provider.list(c.signal);
  } catch (err) {
    if (err instanceof ProviderError && err.status === 429) return { requeueAfter: err.retryAfterMs ?? 1000 };
    if (!c.provider.configured()) return { requeueAfter: c.intervalMs };
    throw err;
  }
  const jobs = (await c.cache.list(JOB)) as Job[];
  const uids = new Set(jobs.map((j) => j.metadata.uid));
  const remoteJobUids = new Set(remote.map((r) => r.tags.jobUid));
  const observed: JobObservation[] = [];
  for (const j of jobs) {
    if (remoteJobUids.has(j.metadata.uid)) observed.push({ job: j, pods: await podsOf(c, j) });
  }
  const linkedTo = new Map<string, string>();
  for (const o of observed) {
    const id = o.pods.find(isVirtualPod)?.metadata.annotations?.[K.POD_ID];
    if (id) linkedTo.set(o.job.metadata.uid ?? '', id);
  }
  for (const r of orphanRemotePods(remote, c.opts.clusterName, observed)) {
    const jobGone = !r.tags.jobUid || !uids.has(r.tags.jobUid);
    // A Job whose virtual pod is linked to another remote pod has its pod: this one is a
    // duplicate (a create that landed late) and goes at once.
    const duplicate =
      !jobGone && linkedTo.has(r.tags.jobUid ?? '') && linkedTo.get(r.tags.jobUid ?? '') !== r.id;
    const age = r.createdAt ? c.now() - Date.parse(r.createdAt) : Number.POSITIVE_INFINITY;
    if (!jobGone && !duplicate && age < ORPHAN_GRACE_MS) continue;
    await c.provider.terminate(r.id, c.signal);
    stopWatcher(c, r.id);
    c.log.info(
      { remote: r.id, job: `${r.tags.namespace}/${r.tags.job}` },
      'terminated an orphaned remote pod',
    );
  }
  // Virtual pods whose Job is gone (deleted with orphan propagation, or force-removed).
  const vpods = ((await c.cache.list(POD, { labelSelector: `${K.MANAGED}=true` })) as Pod[]).filter(
    isVirtualPod,
  );
  for (const v of vpods) {
    const owner = v.metadata.ownerReferences?.find((o) => o.kind === 'Job');
    if (owner && uids.has(owner.uid)) continue;
    const id = v.metadata.annotations?.[K.POD_ID];
    if (id && v.metadata.annotations?.[K.REMOTE_TERMINATED] !== 'true')
      await c.provider.terminate(id, c.signal);
    stopWatcher(c, id);
    await deleteVirtualPod(c, v);
  }
  return { requeueAfter: c.intervalMs };
}
