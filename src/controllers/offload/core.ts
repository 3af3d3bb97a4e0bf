/**
 * Pure decisions of burst offloading: observed Jobs and pods in, intended changes out.
 *
 * - Which managed Jobs are pending and which of them to offload (requested, pending too
 *   long, or beyond the pending-job threshold, oldest first).
 * - What an offloaded Job's virtual pod must show for the remote pod's status.
 * - Which remote pods are orphans (their Job is gone) and must be terminated.
 *
 * Nothing here does I/O or reads a clock: `now` is an argument.
 */
import * as K from './keys.ts';
import type { CloudType, OffloadOptions } from './options.ts';
import type { Condition, Job, Pod, RemotePod } from './types.ts';

// ---- reading Jobs -----------------------------------------------------------

export interface JobConfig {
  managed: boolean;
  requested: boolean;
  /** Minimum GPU memory in GB (0 when not given). */
  gpuMemoryGb: number;
  cloud: CloudType | undefined;
  registry: string | undefined;
  /** Annotation values that cannot be used (the Job then stays local). */
  errors: string[];
}

const TRUE = (v: string | undefined) => v?.trim().toLowerCase() === 'true';

export function readJobConfig(job: Job): JobConfig {
  const a = job.metadata.annotations ?? {};
  const errors: string[] = [];
  let gpuMemoryGb = 0;
  const mem = a[K.REQUIRED_GPU_MEMORY];
  if (mem !== undefined) {
    const n = Number(mem.trim());
    if (mem.trim() === '' || !Number.isFinite(n) || n < 0) {
      errors.push(`${K.REQUIRED_GPU_MEMORY} must be a non-negative number of GB, got "${mem}"`);
    } else {
      gpuMemoryGb = n;
    }
  }
  let cloud: CloudType | undefined;
  const c = a[K.CLOUD_TYPE];
  if (c !== undefined) {
    const u = c.trim().toUpperCase();
    if (u === 'SECURE' || u === 'COMMUNITY') cloud = u;
    else errors.push(`${K.CLOUD_TYPE} must be SECURE or COMMUNITY, got "${c}"`);
  }
  return {
    managed: TRUE(a[K.MANAGED]),
    requested: TRUE(a[K.OFFLOAD]),
    gpuMemoryGb,
    cloud,
    registry: a[K.REGISTRY_AUTH]?.trim() || undefined,
    errors,
  };
}

/**
 * Whether the Job has ended, or the Job controller has decided it will (SuccessCriteriaMet
 * and FailureTarget come first, while the Job's last pods terminate): such a Job is never
 * offloaded, or it would run again.
 */
export function jobFinished(job: Job): 'Complete' | 'Failed' | undefined {
  for (const c of job.status?.conditions ?? []) {
    if (c.status !== 'True') continue;
    if (c.type === 'Complete' || c.type === 'SuccessCriteriaMet') return 'Complete';
    if (c.type === 'Failed' || c.type === 'FailureTarget') return 'Failed';
  }
  return undefined;
}

/**
 * A local pod that ended (Succeeded or Failed) and that the Job controller has not counted
 * yet (it still carries the tracking finalizer): until it is counted, the Job may be about
 * to end (its backoff limit reached), so offloading it now could run it a second time.
 */
export function uncountedLocalEnd(pods: readonly Pod[]): boolean {
  return pods.some(
    (p) =>
      !isVirtualPod(p) &&
      (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') &&
      (p.metadata.finalizers ?? []).includes(K.JOB_TRACKING_FINALIZER),
  );
}

export function isVirtualPod(pod: Pod): boolean {
  return pod.metadata.labels?.[K.MANAGED] === 'true' && pod.metadata.annotations?.[K.PROVIDER] !== undefined;
}

function podScheduledCondition(pod: Pod): Condition | undefined {
  return pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
}

/** An active local pod the scheduler could not place. */
export function isUnschedulable(pod: Pod): boolean {
  const c = podScheduledCondition(pod);
  return (
    !pod.metadata.deletionTimestamp &&
    (pod.status?.phase ?? 'Pending') === 'Pending' &&
    !pod.spec?.nodeName &&
    c?.status === 'False' &&
    c.reason === 'Unschedulable'
  );
}

export interface PendingState {
  /** No local pod runs and at least one cannot be scheduled. */
  pending: boolean;
  /** Since when (ms) the Job has been pending. */
  sinceMs?: number;
  /** A local pod is running (or bound to a node and starting): the Job runs locally. */
  runningLocally: boolean;
}

/**
 * Whether a Job is pending: not finished, not suspended, no local pod running or bound to
 * a node, and at least one local pod the scheduler reported Unschedulable. A pod bound to
 * a node but not yet running is starting locally: offloading it then would run it twice.
 */
export function pendingState(job: Job, pods: readonly Pod[]): PendingState {
  const local = pods.filter((p) => !isVirtualPod(p) && !p.metadata.deletionTimestamp);
  const runningLocally = local.some(
    (p) =>
      p.status?.phase === 'Running' ||
      p.status?.phase === 'Succeeded' ||
      (p.spec?.nodeName && p.status?.phase === 'Pending'),
  );
  if (jobFinished(job) || job.spec?.suspend || runningLocally) return { pending: false, runningLocally };
  const stuck = local.filter(isUnschedulable);
  if (stuck.length === 0) return { pending: false, runningLocally };
  const since = Math.min(
    ...stuck.map((p) =>
      Date.parse(podScheduledCondition(p)?.lastTransitionTime ?? p.metadata.creationTimestamp ?? ''),
    ),
  );
  return { pending: true, sinceMs: Number.isNaN(since) ? undefined : since, runningLocally };
}

// ---- the offload decision ---------------------------------------------------

export type OffloadReason = 'Requested' | 'PendingTooLong' | 'TooManyPending';

export interface JobObservation {
  job: Job;
  /** Pods the Job owns. */
  pods: readonly Pod[];
}

export type Decision =
  | { offload: true; reason: OffloadReason; message: string }
  | {
      offload: false;
      /** Why not, for logs. */
      why: string;
      /** Look again after this long (the max-pending-time countdown). */
      recheckAfterMs?: number;
      /** The Job was requested but runs locally already (reported once). */
      runningLocally?: boolean;
    };

/** A Job already handed to a provider (or being handed over): never decided again. */
export function alreadyOffloaded(job: Job, pods: readonly Pod[]): boolean {
  const s = job.metadata.annotations?.[K.STATE];
  return pods.some(isVirtualPod) || s === 'Launching' || s === 'Offloaded';
}

/** A permanent error (bad annotations, unexpressible spec, rejected or unauthorized) keeps a Job local. */
export function blockedByError(job: Job): boolean {
  const cls = job.metadata.annotations?.[K.ERROR_CLASS];
  return cls === 'Invalid' || cls === 'Unexpressible' || cls === 'Rejected' || cls === 'Unauthorized';
}

function creationMs(job: Job): number {
  const t = Date.parse(job.metadata.creationTimestamp ?? '');
  return Number.isNaN(t) ? 0 : t;
}

/**
 * Decides whether to offload `target` given every managed Job of the cluster (including
 * `target`). Rules, in order: not managed / finished / offloaded / blocked → no; requested
 * (`runpod.io/offload: "true"`) → yes unless it already runs locally; pending longer than
 * `maxPendingTime` → yes; more pending managed Jobs than `pendingJobThreshold` → the
 * oldest pending ones beyond the threshold → yes.
 */
export function decideOffload(
  target: JobObservation,
  managed: readonly JobObservation[],
  opts: Pick<OffloadOptions, 'maxPendingTime' | 'pendingJobThreshold'>,
  now: number,
): Decision {
  const { job, pods } = target;
  const cfg = readJobConfig(job);
  if (!cfg.managed) return { offload: false, why: 'not managed' };
  if (job.metadata.deletionTimestamp) return { offload: false, why: 'being deleted' };
  if (jobFinished(job)) return { offload: false, why: 'finished' };
  if (alreadyOffloaded(job, pods)) return { offload: false, why: 'already offloaded' };
  if (blockedByError(job))
    return { offload: false, why: `blocked: ${job.metadata.annotations?.[K.ERROR] ?? ''}` };
  const retryAt = Number(job.metadata.annotations?.[K.RETRY_AT]);
  if (Number.isFinite(retryAt) && now < retryAt) {
    return {
      offload: false,
      why: `refused earlier (${job.metadata.annotations?.[K.ERROR_CLASS] ?? ''}); tried again at the resync`,
      recheckAfterMs: retryAt - now,
    };
  }
  if (uncountedLocalEnd(pods))
    return { offload: false, why: 'a local pod ended and the Job controller has not counted it yet' };
  const state = pendingState(job, pods);
  if (cfg.requested) {
    if (state.runningLocally) {
      return { offload: false, why: 'requested, but a local pod already runs', runningLocally: true };
    }
    if (job.spec?.suspend) return { offload: false, why: 'suspended' };
    return { offload: true, reason: 'Requested', message: `${K.OFFLOAD} is "true"` };
  }
  if (!state.pending) return { offload: false, why: 'not pending' };
  const pendingFor = state.sinceMs === undefined ? 0 : now - state.sinceMs;
  const maxMs = opts.maxPendingTime * 1000;
  if (pendingFor > maxMs || (maxMs === 0 && state.pending)) {
    return {
      offload: true,
      reason: 'PendingTooLong',
      message: `pending for ${Math.round(pendingFor / 1000)}s, longer than the max pending time of ${opts.maxPendingTime}s`,
    };
  }
  const pendingJobs = managed
    .filter((o) => {
      const c = readJobConfig(o.job);
      return (
        c.managed &&
        !alreadyOffloaded(o.job, o.pods) &&
        !blockedByError(o.job) &&
        pendingState(o.job, o.pods).pending
      );
    })
    .sort(
      (a, b) =>
        creationMs(a.job) - creationMs(b.job) ||
        (a.job.metadata.name ?? '').localeCompare(b.job.metadata.name ?? ''),
    );
  const excess = pendingJobs.length - opts.pendingJobThreshold;
  if (excess > 0) {
    const rank = pendingJobs.findIndex((o) => o.job.metadata.uid === job.metadata.uid);
    if (rank >= 0 && rank < excess) {
      return {
        offload: true,
        reason: 'TooManyPending',
        message: `${pendingJobs.length} managed Jobs are pending, more than the threshold of ${opts.pendingJobThreshold}`,
      };
    }
  }
  return {
    offload: false,
    why: 'pending within limits',
    recheckAfterMs: Math.max(1, maxMs - pendingFor + 1),
  };
}

// ---- spending ----------------------------------------------------------------

/** USD per hour of every remote pod still running for this cluster, from virtual pods' annotations. */
export function currentSpend(virtualPods: readonly Pod[]): number {
  let sum = 0;
  for (const p of virtualPods) {
    const phase = p.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') continue;
    const c = Number(p.metadata.annotations?.[K.COST_PER_HR]);
    if (Number.isFinite(c)) sum += c;
  }
  return Math.round(sum * 1000) / 1000;
}

// ---- remote status → virtual pod ---------------------------------------------

export type RemoteOutcome =
  | { kind: 'pending' }
  | { kind: 'running' }
  | { kind: 'finished'; exitCode: number; assumed: boolean; message: string }
  | { kind: 'lost'; message: string };

/**
 * What the remote pod's state means for the Job. `exitCode` is what troupe captured from
 * the log stream; `firstStartedMs` is the container start troupe saw first, in epoch ms
 * (a later `startedAt` means RunPod restarted an exited container).
 */
export function remoteOutcome(
  remote: RemotePod | undefined,
  captured: { exitCode?: number; firstStartedMs?: number; wrapped: boolean },
): RemoteOutcome {
  const exitCode = captured.exitCode ?? remote?.exitCode;
  if (exitCode !== undefined) {
    return { kind: 'finished', exitCode, assumed: false, message: `exited with code ${exitCode}` };
  }
  if (!remote || remote.status === 'TERMINATED')
    return { kind: 'lost', message: 'the remote pod no longer exists' };
  if (remote.status === 'ERROR')
    return { kind: 'lost', message: 'the remote pod is in an unrecoverable error state' };
  if (remote.status === 'EXITED') return { kind: 'lost', message: 'the remote pod was stopped' };
  if (remote.status === 'PROVISIONING' || remote.status === 'STARTING') return { kind: 'pending' };
  if (
    !captured.wrapped &&
    captured.firstStartedMs !== undefined &&
    remote.startedAt !== null &&
    Date.parse(remote.startedAt) !== captured.firstStartedMs
  ) {
    return {
      kind: 'finished',
      exitCode: 0,
      assumed: true,
      message:
        'the container exited and RunPod restarted it; RunPod reports no exit code and the Job gives no command troupe could wrap, so success is assumed',
    };
  }
  return { kind: 'running' };
}

/** The virtual pod's status for an outcome (written through the status subresource). */
export function virtualPodStatus(
  outcome: RemoteOutcome,
  remote: RemotePod | undefined,
  containerName: string,
  image: string,
  now: string,
  startTime: string,
): Record<string, unknown> {
  const cond = (type: string, status: string, reason?: string) => ({
    type,
    status,
    lastProbeTime: null,
    lastTransitionTime: now,
    ...(reason ? { reason } : {}),
  });
  // Always scheduled (to the virtual node) and initialized; Ready and ContainersReady move together.
  const conditions = (ready: boolean, reason?: string) => [
    cond('PodScheduled', 'True'),
    cond('Initialized', 'True'),
    cond('Ready', ready ? 'True' : 'False', reason),
    cond('ContainersReady', ready ? 'True' : 'False', reason),
  ];
  const base = { hostIP: '127.0.0.1', podIP: undefined, startTime, qosClass: 'BestEffort' };
  const cs = (state: Record<string, unknown>, ready: boolean) => [
    {
      name: containerName,
      image,
      imageID: '',
      containerID: remote ? `runpod://${remote.id}` : '',
      ready,
      started: ready,
      restartCount: 0,
      state,
    },
  ];
  switch (outcome.kind) {
    case 'pending':
      return {
        ...base,
        phase: 'Pending',
        conditions: conditions(false, 'ContainersNotReady'),
        containerStatuses: cs(
          {
            waiting: {
              reason: 'ContainerCreating',
              message: `remote pod is ${remote?.status ?? 'starting'}`,
            },
          },
          false,
        ),
      };
    case 'running':
      return {
        ...base,
        phase: 'Running',
        conditions: conditions(true),
        containerStatuses: cs({ running: { startedAt: remote?.startedAt ?? now } }, true),
      };
    case 'finished': {
      const ok = outcome.exitCode === 0;
      return {
        ...base,
        phase: ok ? 'Succeeded' : 'Failed',
        conditions: conditions(false, 'PodCompleted'),
        containerStatuses: cs(
          {
            terminated: {
              exitCode: outcome.exitCode,
              reason: ok ? 'Completed' : 'Error',
              message: outcome.message,
              startedAt: remote?.startedAt ?? startTime,
              finishedAt: now,
            },
          },
          false,
        ),
      };
    }
    case 'lost':
      return {
        ...base,
        phase: 'Failed',
        reason: 'RemotePodLost',
        message: outcome.message,
        conditions: conditions(false, 'PodFailed'),
        containerStatuses: cs(
          {
            terminated: {
              exitCode: 137,
              reason: 'RemotePodLost',
              message: outcome.message,
              startedAt: startTime,
              finishedAt: now,
            },
          },
          false,
        ),
      };
  }
}

// ---- orphans -------------------------------------------------------------------

/**
 * Remote pods of this cluster whose Job no longer exists (by uid), or whose Job exists but
 * was never offloaded and is not being offloaded (a launch interrupted before troupe wrote
 * anything down), or whose virtual pod already finished.
 */
export function orphanRemotePods(
  remote: readonly RemotePod[],
  clusterName: string,
  jobs: readonly JobObservation[],
): RemotePod[] {
  const byUid = new Map(jobs.map((o) => [o.job.metadata.uid, o]));
  return remote.filter((r) => {
    if (r.tags.cluster !== clusterName) return false;
    const o = r.tags.jobUid ? byUid.get(r.tags.jobUid) : undefined;
    if (!o) return true;
    if (o.job.metadata.annotations?.[K.STATE] === 'Launching') return false;
    const vpod = o.pods.find(isVirtualPod);
    if (!vpod) return true;
    if (vpod.metadata.annotations?.[K.POD_ID] !== r.id) return true;
    const phase = vpod.status?.phase;
    return phase === 'Succeeded' || phase === 'Failed';
  });
}

// ---- exit-code capture ---------------------------------------------------------

/**
 * The wrapper troupe runs the Job's command in: RunPod restarts a container whose
 * entrypoint exits and reports no exit code, so the wrapper prints the code after a
 * per-pod marker and then sleeps until troupe terminates the pod.
 */
export const EXIT_WRAPPER = '"$@"; code=$?; echo "$TROUPE_EXIT_MARKER $code"; exec sleep infinity';

/** The exit code in a log line that carries the marker, if it does. */
export function exitCodeFromLogLine(line: string, marker: string): number | undefined {
  const t = line.trim();
  if (!marker || !t.startsWith(`${marker} `)) return undefined;
  const n = Number(t.slice(marker.length + 1).trim());
  return Number.isInteger(n) && n >= 0 && n <= 255 ? n : undefined;
}
