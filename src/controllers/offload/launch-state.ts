/** Where a Job's launch stands, read from the Job and its virtual pod (nothing in memory). */

import { JOB, type OffloadContext } from './context.ts';
import { blockedByError, jobFinished, readJobConfig } from './core.ts';
import * as K from './keys.ts';
import type { Job, Pod } from './types.ts';

export const isLinked = (vpod: Pod) => !!vpod.metadata.annotations?.[K.POD_ID];

const createSentAt = (job: Job): number | undefined => {
  const v = Number(job.metadata.annotations?.[K.CREATE_SENT_AT]);
  return Number.isFinite(v) && v > 0 ? v : undefined;
};

/** Milliseconds a create sent earlier may still take to show up (0: none can). */
export const settling = (c: OffloadContext, job: Job): number => {
  const sent = createSentAt(job);
  return sent === undefined ? 0 : Math.max(0, sent + c.settleMs - c.now());
};

/** Whether a Job being launched still wants to be (a local pod running is checked by `clearLocal`). */
export const stillWanted = (job: Job) =>
  readJobConfig(job).managed &&
  !job.metadata.deletionTimestamp &&
  !jobFinished(job) &&
  !job.spec?.suspend &&
  !blockedByError(job);

/** The live Job, when a launch for it is still wanted. */
export async function freshForLaunch(c: OffloadContext, job: Job): Promise<Job | undefined> {
  // The cache may not show this controller's own last writes yet (a reconcile queued while
  // the previous one ran): the live Job decides, so a stale read never launches twice.
  const fresh = await c.client.tryGet<Job>(JOB, job.metadata.name ?? '', job.metadata.namespace, {
    signal: c.signal,
  });
  if (!fresh || fresh.metadata.uid !== job.metadata.uid) return undefined;
  return fresh;
}
