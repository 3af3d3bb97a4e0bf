/** What troupe, as the virtual pod's kubelet, writes on it: its status and its removal. */

import { type PodLike, podQOSClass } from '../../kube/pod.ts';
import type { OffloadContext } from './context.ts';
import { type RemoteOutcome, virtualPodStatus } from './core.ts';
import * as K from './keys.ts';
import type { Job, Pod, RemotePod } from './types.ts';

export async function deleteVirtualPod(c: OffloadContext, vpod: Pod): Promise<void> {
  if (vpod.metadata.finalizers?.includes(K.JOB_TRACKING_FINALIZER)) {
    await c.client.removeFinalizer(vpod, K.JOB_TRACKING_FINALIZER);
  }
  // No kubelet confirms a virtual pod's termination: troupe is its kubelet, and deletes
  // it at once once the remote pod is gone (as virtual-kubelet does).
  await c.client.delete(vpod, { gracePeriodSeconds: 0, preconditions: { uid: vpod.metadata.uid } });
}

/** The virtual pod's status for the remote pod's outcome, its container named as the Job's. */
export async function writeVirtualPodStatus(
  c: OffloadContext,
  job: Job,
  vpod: Pod,
  outcome: RemoteOutcome,
  remote: RemotePod | undefined,
): Promise<void> {
  const container = job.spec?.template?.spec?.containers[0];
  const stamp = new Date(c.now()).toISOString();
  const status = virtualPodStatus(
    outcome,
    remote,
    container?.name ?? 'runpod',
    container?.image ?? '',
    stamp,
    vpod.status?.startTime ?? stamp,
  );
  // The API server fixed the QoS class from the containers' resources at creation (copied
  // from the Job: a GPU Job's is rarely BestEffort), and refuses any other.
  const qosClass = vpod.status?.qosClass ?? podQOSClass(vpod as PodLike);
  await c.client.patchStatus(vpod, { status: { ...status, qosClass } }, { signal: c.signal });
}
