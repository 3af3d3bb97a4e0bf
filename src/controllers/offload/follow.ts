/**
 * Following an offloaded Job: the remote pod is polled and its state mirrored onto the
 * virtual pod (whose status the Job controller counts), the exit code is captured from the
 * log stream where the provider can, and a finished or lost remote pod is terminated and
 * its outcome written to the virtual pod and the Job.
 */
import { isConflict, type ReconcileResult } from '../../runtime/index.ts';
import { type OffloadContext, stopWatcher } from './context.ts';
import { isVirtualPod, type RemoteOutcome, remoteOutcome } from './core.ts';
import { annotateJob, markOffloaded, removeJobFinalizer, rollback } from './job-writes.ts';
import * as K from './keys.ts';
import { ProviderError } from './provider.ts';
import type { Job, Pod, RemotePod } from './types.ts';
import { writeVirtualPodStatus } from './virtual-pod-writes.ts';

async function finish(
  c: OffloadContext,
  job: Job,
  vpod: Pod,
  remoteId: string,
  outcome: Extract<RemoteOutcome, { kind: 'finished' | 'lost' }>,
  remote: RemotePod | undefined,
) {
  const code = outcome.kind === 'finished' ? outcome.exitCode : undefined;
  const recorded = {
    ...(code !== undefined ? { [K.EXIT_CODE]: String(code) } : {}),
    ...(outcome.kind === 'finished' && outcome.assumed ? { [K.EXIT_CODE_ASSUMED]: 'true' } : {}),
  };
  // The outcome is stored before the remote pod goes: after a crash in between, a gone
  // remote pod would otherwise read as lost.
  if (Object.entries(recorded).some(([k, v]) => vpod.metadata.annotations?.[k] !== v))
    await c.client.mergePatch(vpod, { metadata: { annotations: recorded } });
  await c.provider.terminate(remoteId, c.signal);
  stopWatcher(c, remoteId);
  await c.client.mergePatch(vpod, {
    metadata: { annotations: { [K.REMOTE_TERMINATED]: 'true', ...recorded } },
  });
  await writeVirtualPodStatus(c, job, vpod, outcome, remote);
  const ok = code === 0;
  await annotateJob(c, job, {
    [K.STATE]: ok ? 'Completed' : 'Failed',
    ...(code !== undefined ? { [K.EXIT_CODE]: String(code) } : {}),
  });
  if (outcome.kind === 'finished' && outcome.assumed)
    c.recorder.warning(job, 'ExitCodeUnknown', 'Offload', outcome.message);
  if (ok)
    c.recorder.normal(
      job,
      'RemoteCompleted',
      'Offload',
      `${c.provider.name} pod ${remoteId} ${outcome.message}; terminated`,
    );
  else
    c.recorder.warning(
      job,
      'RemoteFailed',
      'Offload',
      `${c.provider.name} pod ${remoteId}: ${outcome.message}; terminated`,
    );
  await removeJobFinalizer(c, job);
}

/**
 * A local pod next to a linked virtual pod (the Job controller created it before it saw the
 * virtual pod): one not bound to a node is deleted; one already bound or running keeps the
 * Job unless the remote pod already runs, so the work never runs in both places if it can
 * be helped. True when the offload was given up.
 */
async function settleLocalConflict(
  c: OffloadContext,
  job: Job,
  vpod: Pod,
  pods: Pod[],
  remote: RemotePod | undefined,
): Promise<boolean> {
  const local = pods.filter(
    (p) =>
      !isVirtualPod(p) &&
      !p.metadata.deletionTimestamp &&
      p.status?.phase !== 'Succeeded' &&
      p.status?.phase !== 'Failed',
  );
  for (const p of local) {
    if (p.spec?.nodeName && remote?.status !== 'RUNNING') {
      const id = vpod.metadata.annotations?.[K.POD_ID] ?? '';
      await c.provider.terminate(id, c.signal);
      stopWatcher(c, id);
      await rollback(c, job, vpod);
      c.recorder.warning(
        job,
        'RunningLocally',
        'Offload',
        `a local pod (${p.metadata.name}) started before ${c.provider.name} pod ${id} did; the remote pod was terminated and the Job stays local`,
      );
      return true;
    }
    try {
      await c.client.delete(p, {
        preconditions: {
          uid: p.metadata.uid,
          ...(p.spec?.nodeName ? {} : { resourceVersion: p.metadata.resourceVersion }),
        },
      });
    } catch (err) {
      // A changed pod is looked at again on its next event.
      if (!isConflict(err)) throw err;
    }
  }
  return false;
}

/** Starts reading the remote pod's log for the exit marker, once per remote pod. */
function watchExitCode(c: OffloadContext, vpod: Pod, remoteId: string, remote: RemotePod) {
  if (!c.provider.watchExit || c.watchers.has(remoteId) || c.signal.aborted) return;
  c.signal.addEventListener('abort', () => c.watchers.delete(remoteId), { once: true });
  const ref = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: vpod.metadata.name, namespace: vpod.metadata.namespace },
  };
  const { client, log } = c;
  c.watchers.set(
    remoteId,
    c.provider.watchExit(
      remote,
      (code) => {
        // Written to the virtual pod: the exit code survives a restart, and the write
        // is the event that wakes this Job's reconcile.
        client
          .mergePatch(ref, { metadata: { annotations: { [K.EXIT_CODE]: String(code) } } })
          .catch((err) =>
            log.warn({ err }, 'could not record the remote exit code; the next poll will not see it'),
          );
      },
      c.signal,
    ),
  );
}

/** One look at an offloaded Job (its virtual pod linked to a remote pod). */
export async function syncOffloaded(
  c: OffloadContext,
  job: Job,
  vpod: Pod,
  pods: Pod[],
): Promise<ReconcileResult | undefined> {
  const a = vpod.metadata.annotations ?? {};
  const remoteId = a[K.POD_ID] ?? '';
  const phase = vpod.status?.phase;
  if (vpod.metadata.deletionTimestamp) {
    // Someone deleted the virtual pod: stop the remote one, then confirm the deletion.
    if (a[K.REMOTE_TERMINATED] !== 'true') await c.provider.terminate(remoteId, c.signal);
    stopWatcher(c, remoteId);
    await c.client.delete(vpod, { gracePeriodSeconds: 0, preconditions: { uid: vpod.metadata.uid } });
    return undefined;
  }
  if (phase === 'Succeeded' || phase === 'Failed') {
    stopWatcher(c, remoteId);
    if (a[K.REMOTE_TERMINATED] !== 'true') {
      await c.provider.terminate(remoteId, c.signal);
      await c.client.mergePatch(vpod, { metadata: { annotations: { [K.REMOTE_TERMINATED]: 'true' } } });
    }
    await removeJobFinalizer(c, job);
    return undefined;
  }
  if (job.metadata.annotations?.[K.STATE] === 'Launching') {
    // A crash cut the link short after the virtual pod was linked: finish it.
    await markOffloaded(c, job, vpod, 'finished linking an interrupted launch');
  }
  const wrapped = (job.spec?.template?.spec?.containers[0]?.command?.length ?? 0) > 0;
  const captured = a[K.EXIT_CODE] !== undefined ? Number(a[K.EXIT_CODE]) : undefined;
  let remote: RemotePod | undefined;
  try {
    remote = await c.provider.get(remoteId, c.signal);
  } catch (err) {
    if (err instanceof ProviderError && err.status === 429) return { requeueAfter: err.retryAfterMs ?? 1000 };
    throw err;
  }
  if (await settleLocalConflict(c, job, vpod, pods, remote)) return undefined;
  const first = a[K.REMOTE_STARTED_AT] !== undefined ? Number(a[K.REMOTE_STARTED_AT]) : undefined;
  const outcome = remoteOutcome(remote, { exitCode: captured, firstStartedMs: first, wrapped });
  if (outcome.kind === 'finished' || outcome.kind === 'lost') {
    await finish(c, job, vpod, remoteId, outcome, remote);
    return undefined;
  }
  const annotations: Record<string, string> = {};
  if (remote && a[K.REMOTE_STATUS] !== remote.status) annotations[K.REMOTE_STATUS] = remote.status;
  // Epoch ms, not RFC 3339: a timestamp-looking value may be truncated to seconds by the
  // API server, which would hide a restart within the same second.
  if (remote?.startedAt && !a[K.REMOTE_STARTED_AT])
    annotations[K.REMOTE_STARTED_AT] = String(Date.parse(remote.startedAt));
  if (remote && remote.costPerHr > 0 && a[K.COST_PER_HR] !== String(remote.costPerHr)) {
    annotations[K.COST_PER_HR] = String(remote.costPerHr);
  }
  if (Object.keys(annotations).length) await c.client.mergePatch(vpod, { metadata: { annotations } });
  const wantPhase = outcome.kind === 'running' ? 'Running' : 'Pending';
  if (phase !== wantPhase) await writeVirtualPodStatus(c, job, vpod, outcome, remote);
  if (wrapped && remote) watchExitCode(c, vpod, remoteId, remote);
  return { requeueAfter: c.pollMs };
}
