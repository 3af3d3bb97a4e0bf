/**
 * The thin shell of burst offloading: two controllers on the troupe runtime.
 *
 * - `offload` reconciles Jobs. Watch events (a Job added or changed, a pod of a Job
 *   becoming unschedulable) decide at once; the reconcile interval is only a resync and the
 *   period of the orphan sweep. An offload records its intent on the Job (finalizer and
 *   `runpod.io/offload-state: Launching`) before creating anything remotely, creates the
 *   remote pod, then the virtual pod (counted by the Job controller as the Job's pod), then
 *   removes the Job's local pods. Offloaded Jobs are followed by polling the provider and,
 *   for RunPod, by reading the log stream for the exit-code marker; the outcome is written
 *   to the virtual pod's status, and the Job controller ends the Job from it.
 * - `offload-node` keeps the virtual node registered, Ready and heartbeating.
 *
 * Everything that matters lives in the cluster (annotations, labels, finalizers) and in
 * the remote pods' tags; memory holds only caches (the GPU catalog, log watchers, spend
 * reservations while a launch is in flight).
 */
import { randomBytes } from 'node:crypto';
import {
  type Check,
  type ControllerDefinition,
  isAlreadyExists,
  isNotFound,
  type KubeObject,
  keyOf,
  microTime,
  OWNER_UID_INDEX,
  objectKey,
  type ReconcileContext,
  type ReconcileResult,
  type WatchEvent,
} from '../../runtime/index.ts';
import {
  alreadyOffloaded,
  blockedByError,
  currentSpend,
  decideOffload,
  isVirtualPod,
  type JobObservation,
  jobFinished,
  orphanRemotePods,
  readJobConfig,
  remoteOutcome,
  virtualPodStatus,
} from './core.ts';
import * as K from './keys.ts';
import type { OffloadOptions } from './options.ts';
import { type OffloadProvider, ProviderError } from './provider.ts';
import type { Job, Pod, RemotePod } from './types.ts';
import {
  nodeLease,
  NODE_HEARTBEAT_MS,
  NODE_LEASE_NAMESPACE,
  virtualNode,
  virtualNodeStatus,
  virtualPod,
} from './virtual.ts';
import { buildLaunchRequest, type ReferencedData, referencedObjects } from './workload.ts';

const JOB = { apiVersion: 'batch/v1', kind: 'Job' };
const POD = { apiVersion: 'v1', kind: 'Pod' };
const NODE = { apiVersion: 'v1', kind: 'Node' };
const NAMESPACE = { apiVersion: 'v1', kind: 'Namespace' };
const SECRET = { apiVersion: 'v1', kind: 'Secret' };
const CONFIGMAP = { apiVersion: 'v1', kind: 'ConfigMap' };
const LEASE = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' };

/** The key of the orphan sweep (Job names cannot contain `~`, so it never names a Job). */
export const SWEEP_KEY = '~offload-sweep';
/** Remote pods younger than this are not collected while their Job exists (a launch may be mid-way). */
const ORPHAN_GRACE_MS = 60_000;

export interface OffloadController {
  controllers: ControllerDefinition[];
  /** Readiness: the provider answers with a configured key. */
  readyChecks: [string, Check][];
  /** Stops log watchers (also stopped when the controllers stop). */
  stop(): void;
}

export interface OffloadDeps {
  options: OffloadOptions;
  provider: OffloadProvider;
  now?: () => number;
}

export function offloadController(deps: OffloadDeps): OffloadController {
  const { options: opts, provider } = deps;
  const now = deps.now ?? Date.now;
  const intervalMs = opts.reconcileInterval * 1000;
  const pollMs = opts.statusPollInterval * 1000;

  // Keys of managed, unfinished Jobs, kept from watch events only (rebuilt on every start),
  // so a change of one Job's pending state re-evaluates the others' threshold rank.
  const managedKeys = new Set<string>();
  const watchers = new Map<string, () => void>();
  const reservations = new Map<string, number>();
  let launchChain: Promise<unknown> = Promise.resolve();
  let readiness: { at: number; ok: boolean; message: string } | undefined;

  const probeProvider = async (): Promise<{ ok: boolean; message: string }> => {
    if (readiness && now() - readiness.at < 5000) return readiness;
    let result: { ok: boolean; message: string };
    if (!provider.configured())
      result = { ok: false, message: 'no provider credentials are configured (RUNPOD_KEY)' };
    else {
      try {
        await provider.ping(AbortSignal.timeout(opts.requestTimeout * 1000));
        result = { ok: true, message: `${provider.name} answers` };
      } catch (err) {
        result = { ok: false, message: `${provider.name} does not answer: ${(err as Error).message}` };
      }
    }
    readiness = { at: now(), ...result };
    return result;
  };

  const isManagedJob = (o: KubeObject) =>
    o.metadata.annotations?.[K.MANAGED]?.toLowerCase() === 'true' && !jobFinished(o as Job);

  const jobMap = (_obj: KubeObject, e: WatchEvent): string[] => {
    const key = objectKey(e.obj);
    if (e.type === 'delete') {
      managedKeys.delete(key);
      return [SWEEP_KEY, ...managedKeys];
    }
    const wasManaged = managedKeys.has(key);
    if (isManagedJob(e.obj)) managedKeys.add(key);
    else managedKeys.delete(key);
    return wasManaged || managedKeys.has(key) ? [...managedKeys] : [];
  };

  const podMap = (pod: KubeObject): string[] => {
    const owner = pod.metadata.ownerReferences?.find((r) => r.controller && r.kind === 'Job');
    if (!owner) return [];
    const key = keyOf(pod.metadata.namespace, owner.name);
    return managedKeys.has(key) ? [...managedKeys] : [key];
  };

  // ---- helpers over the cluster ------------------------------------------------

  const podsOf = async (ctx: ReconcileContext, job: Job): Promise<Pod[]> =>
    (await ctx.cache.list(POD, {
      namespace: job.metadata.namespace,
      index: { name: OWNER_UID_INDEX, value: job.metadata.uid ?? '' },
    })) as Pod[];

  const observations = async (ctx: ReconcileContext): Promise<JobObservation[]> => {
    const jobs = (await ctx.cache.list(JOB)) as Job[];
    const out: JobObservation[] = [];
    for (const job of jobs) {
      if (readJobConfig(job).managed) out.push({ job, pods: await podsOf(ctx, job) });
    }
    return out;
  };

  const annotateJob = (
    ctx: ReconcileContext,
    job: Job,
    annotations: Record<string, string | null>,
    labels?: Record<string, string>,
  ) =>
    ctx.client.mergePatch<Job>(
      job,
      { metadata: { annotations, ...(labels ? { labels } : {}) } },
      { signal: ctx.signal },
    );

  const markError = async (
    ctx: ReconcileContext,
    job: Job,
    errorClass: string,
    message: string,
    state?: string,
  ) => {
    const a = job.metadata.annotations ?? {};
    if (a[K.ERROR] !== message || a[K.ERROR_CLASS] !== errorClass || (state && a[K.STATE] !== state)) {
      await annotateJob(ctx, job, {
        [K.ERROR]: message,
        [K.ERROR_CLASS]: errorClass,
        ...(state ? { [K.STATE]: state } : {}),
      });
      ctx.recorder.warning(job, `Offload${errorClass}`, 'Offload', message);
    }
  };

  const removeJobFinalizer = async (ctx: ReconcileContext, job: Job) => {
    if (job.metadata.finalizers?.includes(K.CLEANUP_FINALIZER))
      await ctx.client.removeFinalizer(job, K.CLEANUP_FINALIZER);
  };

  const stopWatcher = (id: string | undefined) => {
    if (!id) return;
    watchers.get(id)?.();
    watchers.delete(id);
  };

  const deleteVirtualPod = async (ctx: ReconcileContext, vpod: Pod) => {
    try {
      if (vpod.metadata.finalizers?.includes(K.JOB_TRACKING_FINALIZER)) {
        await ctx.client.removeFinalizer(vpod, K.JOB_TRACKING_FINALIZER);
      }
      // No kubelet confirms a virtual pod's termination: troupe is its kubelet, and deletes
      // it at once once the remote pod is gone (as virtual-kubelet does).
      await ctx.client.delete(vpod, { gracePeriodSeconds: 0, preconditions: { uid: vpod.metadata.uid } });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  };

  const readRefs = async (ctx: ReconcileContext, job: Job): Promise<ReferencedData> => {
    const refs: ReferencedData = { secrets: {}, configMaps: {} };
    const wanted = referencedObjects(job);
    for (const name of wanted.secrets) {
      const s = await ctx.client.tryGet<
        KubeObject & { data?: Record<string, string>; stringData?: Record<string, string> }
      >(SECRET, name, job.metadata.namespace, { signal: ctx.signal });
      refs.secrets[name] = s
        ? Object.fromEntries(
            Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
          )
        : undefined;
    }
    for (const name of wanted.configMaps) {
      const cm = await ctx.client.tryGet<KubeObject & { data?: Record<string, string> }>(
        CONFIGMAP,
        name,
        job.metadata.namespace,
        {
          signal: ctx.signal,
        },
      );
      refs.configMaps[name] = cm ? { ...(cm.data ?? {}) } : undefined;
    }
    return refs;
  };

  /** Serializes launches so two Jobs never both spend the last of the budget. */
  const serialized = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = launchChain.then(fn, fn);
    launchChain = run.catch(() => undefined);
    return run;
  };

  const spendNow = async (ctx: ReconcileContext): Promise<number> => {
    const vpods = ((await ctx.cache.list(POD, { labelSelector: `${K.MANAGED}=true` })) as Pod[]).filter(
      isVirtualPod,
    );
    const seen = new Set(vpods.map((p) => p.metadata.ownerReferences?.[0]?.uid));
    for (const uid of [...reservations.keys()]) if (seen.has(uid)) reservations.delete(uid);
    let reserved = 0;
    for (const v of reservations.values()) reserved += v;
    return currentSpend(vpods) + reserved;
  };

  const ensureVirtualNode = async (ctx: ReconcileContext) => {
    if (await ctx.cache.get(NODE, K.VIRTUAL_NODE_NAME)) return;
    try {
      await ctx.client.create(virtualNode(K.VIRTUAL_NODE_NAME, provider.name));
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  };

  // ---- offloading a Job -------------------------------------------------------

  const materialize = async (
    ctx: ReconcileContext,
    job: Job,
    pods: Pod[],
    remote: RemotePod,
    info: { costPerHr: number; gpuTypeId?: string; reason: string; message: string },
  ): Promise<ReconcileResult> => {
    await ensureVirtualNode(ctx);
    let vpod: Pod;
    try {
      vpod = await ctx.client.create(
        virtualPod(job, {
          remoteId: remote.id,
          costPerHr: info.costPerHr,
          gpuTypeId: info.gpuTypeId,
          provider: provider.name,
          remoteStatus: remote.status,
        }),
        { signal: ctx.signal },
      );
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const existing = await ctx.client.get<Pod>(POD, `${job.metadata.name}-runpod`, job.metadata.namespace);
      if (!existing.metadata.ownerReferences?.some((r) => r.uid === job.metadata.uid)) {
        await provider.terminate(remote.id, ctx.signal);
        await markError(
          ctx,
          job,
          'Unexpressible',
          `a pod named ${existing.metadata.name} already exists and is not this Job's`,
          'Local',
        );
        await annotateJob(ctx, job, { [K.STATE]: 'Local' });
        await removeJobFinalizer(ctx, job);
        return {};
      }
      vpod = existing;
    }
    const stamp = new Date(now()).toISOString();
    const outcome =
      remote.status === 'RUNNING' ? ({ kind: 'running' } as const) : ({ kind: 'pending' } as const);
    const container = job.spec?.template?.spec?.containers[0];
    await ctx.client.patchStatus(
      vpod,
      {
        status: virtualPodStatus(
          outcome,
          remote,
          container?.name ?? 'runpod',
          container?.image ?? '',
          stamp,
          stamp,
        ),
      },
      { signal: ctx.signal },
    );
    // The virtual pod is the Job's active pod now: the local ones go, so nothing runs twice.
    for (const p of pods) {
      if (isVirtualPod(p) || p.metadata.deletionTimestamp) continue;
      if (p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') continue;
      try {
        await ctx.client.delete(p, { preconditions: { uid: p.metadata.uid } });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    await annotateJob(
      ctx,
      job,
      {
        [K.OFFLOADED]: 'true',
        [K.POD_ID]: remote.id,
        [K.COST_PER_HR]: String(info.costPerHr),
        [K.PROVIDER]: provider.name,
        [K.STATE]: 'Offloaded',
        [K.REASON]: info.reason,
        ...(info.gpuTypeId ? { [K.GPU_TYPE]: info.gpuTypeId } : {}),
        [K.ERROR]: null,
        [K.ERROR_CLASS]: null,
      },
      { [K.MANAGED]: 'true' },
    );
    ctx.recorder.normal(
      job,
      'Offloaded',
      'Offload',
      `offloaded to ${provider.name} pod ${remote.id}${info.gpuTypeId ? ` on ${info.gpuTypeId}` : ''} at $${info.costPerHr}/h: ${info.message}`,
    );
    return { requeueAfter: Math.min(pollMs, 1000) };
  };

  const offload = async (
    ctx: ReconcileContext,
    job: Job,
    pods: Pod[],
    decision: { reason: string; message: string },
  ): Promise<ReconcileResult | undefined> => {
    const cfg = readJobConfig(job);
    if (cfg.errors.length) {
      await markError(ctx, job, 'Invalid', cfg.errors.join('; '));
      return undefined;
    }
    const refs = await readRefs(ctx, job);
    const marker = `troupe-exit-${randomBytes(9).toString('hex')}`;
    const built = buildLaunchRequest(job, cfg, refs, {
      clusterName: opts.clusterName,
      marker,
      defaultDiskGb: opts.defaultDiskGb,
      defaultCloud: opts.cloud,
    });
    if (!built.ok) {
      await markError(ctx, job, built.errorClass, built.message);
      return built.errorClass === 'Unresolved' ? { requeueAfter: intervalMs } : undefined;
    }
    if (!provider.configured()) {
      await markError(
        ctx,
        job,
        'Unauthorized',
        'no provider credentials are configured (RUNPOD_KEY); the Job stays local',
      );
      return undefined;
    }
    return serialized(async () => {
      // The cache may not show this controller's own last writes yet (a reconcile queued
      // while the previous one ran): the live Job decides whether a launch is still wanted,
      // so a stale read never launches twice.
      const fresh = await ctx.client.tryGet<Job>(JOB, job.metadata.name ?? '', job.metadata.namespace, {
        signal: ctx.signal,
      });
      if (
        !fresh ||
        fresh.metadata.uid !== job.metadata.uid ||
        fresh.metadata.deletionTimestamp ||
        jobFinished(fresh) ||
        alreadyOffloaded(fresh, pods) ||
        blockedByError(fresh)
      ) {
        return { result: undefined };
      }
      job = fresh;
      const spend = await spendNow(ctx);
      const budgetLeft =
        opts.maxHourlySpend > 0 ? Math.max(0, opts.maxHourlySpend - spend) : Number.POSITIVE_INFINITY;
      // Intent first: a crash after the remote create leaves a Job that says Launching,
      // whose remote pod is found again by its tags.
      let current = await ctx.client.addFinalizer(job, K.CLEANUP_FINALIZER);
      // podReplacementPolicy Failed: the local pods troupe deletes once the virtual pod
      // stands in are then not counted as failures against the Job's backoffLimit (the Job
      // controller counts a deleted, unfinished pod as failed otherwise). Written now, well
      // before those deletions, so the Job controller has seen it by then.
      const replace =
        current.spec?.podReplacementPolicy === 'Failed' ? {} : { spec: { podReplacementPolicy: 'Failed' } };
      current = await ctx.client.mergePatch<Job>(
        current,
        {
          metadata: {
            annotations: { [K.STATE]: 'Launching', [K.REASON]: decision.reason },
            labels: { [K.MANAGED]: 'true' },
          },
          ...replace,
        },
        { signal: ctx.signal },
      );
      const outcome = await provider
        .launch(built.request, { maxPrice: opts.maxGpuPrice, budgetLeft }, ctx.signal)
        .catch(async (err) => {
          // Left Launching on purpose: the retry looks for a pod the failed call may have made.
          throw err;
        });
      if (outcome.kind === 'launched') {
        reservations.set(job.metadata.uid ?? '', outcome.costPerHr);
        return { outcome, current };
      }
      const back = { [K.STATE]: 'Local' };
      if (outcome.kind === 'rateLimited') {
        await annotateJob(ctx, current, back);
        await removeJobFinalizer(ctx, current);
        return { result: { requeueAfter: Math.max(outcome.retryAfterMs, 100) } };
      }
      // One write: a reader never sees the Job back to Local without its reason, or with
      // the cleanup finalizer still on.
      await ctx.client.modify<Job>(current, (j) => {
        j.metadata.annotations = {
          ...j.metadata.annotations,
          ...back,
          [K.ERROR]: outcome.message,
          [K.ERROR_CLASS]: outcome.errorClass,
        };
        j.metadata.finalizers = (j.metadata.finalizers ?? []).filter((f) => f !== K.CLEANUP_FINALIZER);
      });
      ctx.recorder.warning(current, `Offload${outcome.errorClass}`, 'Offload', outcome.message);
      const retry = outcome.kind === 'unavailable' || outcome.errorClass === 'Payment';
      return { result: retry ? { requeueAfter: intervalMs } : undefined };
    }).then(async (r) => {
      if ('result' in r) return r.result;
      const { outcome, current } = r as {
        outcome: Extract<Awaited<ReturnType<OffloadProvider['launch']>>, { kind: 'launched' }>;
        current: Job;
      };
      return materialize(ctx, current, pods, outcome.pod, {
        costPerHr: outcome.costPerHr,
        gpuTypeId: outcome.gpuTypeId,
        reason: decision.reason,
        message: decision.message,
      });
    });
  };

  /** A launch was interrupted (crash, timeout): adopt the remote pod it made, or start over. */
  const resumeLaunch = async (
    ctx: ReconcileContext,
    job: Job,
    pods: Pod[],
  ): Promise<ReconcileResult | undefined> => {
    const mine = (await provider.list(ctx.signal)).filter((r) => r.tags.jobUid === job.metadata.uid);
    const keep = mine[0];
    for (const extra of mine.slice(1)) await provider.terminate(extra.id, ctx.signal);
    const cleared: Job = {
      ...job,
      metadata: { ...job.metadata, annotations: { ...job.metadata.annotations, [K.STATE]: 'Local' } },
    };
    const managed = await observations(ctx);
    const decision = decideOffload({ job: cleared, pods }, managed, opts, now());
    if (keep && decision.offload) {
      return materialize(ctx, job, pods, keep, {
        costPerHr: keep.costPerHr,
        gpuTypeId: keep.gpuTypeId,
        reason: job.metadata.annotations?.[K.REASON] ?? decision.reason,
        message: `resumed an interrupted launch (${decision.message})`,
      });
    }
    if (keep) await provider.terminate(keep.id, ctx.signal);
    await annotateJob(ctx, job, { [K.STATE]: 'Local' });
    await removeJobFinalizer(ctx, job);
    return { requeue: true };
  };

  // ---- following an offloaded Job -----------------------------------------------

  const finish = async (
    ctx: ReconcileContext,
    job: Job,
    vpod: Pod,
    remoteId: string,
    outcome: Extract<ReturnType<typeof remoteOutcome>, { kind: 'finished' | 'lost' }>,
    remote: RemotePod | undefined,
  ) => {
    await provider.terminate(remoteId, ctx.signal);
    stopWatcher(remoteId);
    const code = outcome.kind === 'finished' ? outcome.exitCode : undefined;
    await ctx.client.mergePatch(vpod, {
      metadata: {
        annotations: {
          [K.REMOTE_TERMINATED]: 'true',
          ...(code !== undefined ? { [K.EXIT_CODE]: String(code) } : {}),
          ...(outcome.kind === 'finished' && outcome.assumed ? { [K.EXIT_CODE_ASSUMED]: 'true' } : {}),
        },
      },
    });
    const container = job.spec?.template?.spec?.containers[0];
    const stamp = new Date(now()).toISOString();
    await ctx.client.patchStatus(vpod, {
      status: virtualPodStatus(
        outcome,
        remote,
        container?.name ?? 'runpod',
        container?.image ?? '',
        stamp,
        vpod.status?.startTime ?? stamp,
      ),
    });
    const ok = code === 0;
    await annotateJob(ctx, job, {
      [K.STATE]: ok ? 'Completed' : 'Failed',
      ...(code !== undefined ? { [K.EXIT_CODE]: String(code) } : {}),
    });
    if (outcome.kind === 'finished' && outcome.assumed)
      ctx.recorder.warning(job, 'ExitCodeUnknown', 'Offload', outcome.message);
    if (ok)
      ctx.recorder.normal(
        job,
        'RemoteCompleted',
        'Offload',
        `${provider.name} pod ${remoteId} ${outcome.message}; terminated`,
      );
    else
      ctx.recorder.warning(
        job,
        'RemoteFailed',
        'Offload',
        `${provider.name} pod ${remoteId}: ${outcome.message}; terminated`,
      );
    await removeJobFinalizer(ctx, job);
  };

  const syncOffloaded = async (
    ctx: ReconcileContext,
    job: Job,
    vpod: Pod,
  ): Promise<ReconcileResult | undefined> => {
    const a = vpod.metadata.annotations ?? {};
    const remoteId = a[K.POD_ID] ?? '';
    const phase = vpod.status?.phase;
    if (vpod.metadata.deletionTimestamp) {
      // Someone deleted the virtual pod: stop the remote one, then confirm the deletion.
      if (a[K.REMOTE_TERMINATED] !== 'true') await provider.terminate(remoteId, ctx.signal);
      stopWatcher(remoteId);
      try {
        await ctx.client.delete(vpod, { gracePeriodSeconds: 0, preconditions: { uid: vpod.metadata.uid } });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      return undefined;
    }
    if (phase === 'Succeeded' || phase === 'Failed') {
      stopWatcher(remoteId);
      if (a[K.REMOTE_TERMINATED] !== 'true') {
        await provider.terminate(remoteId, ctx.signal);
        await ctx.client.mergePatch(vpod, { metadata: { annotations: { [K.REMOTE_TERMINATED]: 'true' } } });
      }
      await removeJobFinalizer(ctx, job);
      return undefined;
    }
    const wrapped = (job.spec?.template?.spec?.containers[0]?.command?.length ?? 0) > 0;
    const captured = a[K.EXIT_CODE] !== undefined ? Number(a[K.EXIT_CODE]) : undefined;
    let remote: RemotePod | undefined;
    try {
      remote = await provider.get(remoteId, ctx.signal);
    } catch (err) {
      if (err instanceof ProviderError && err.status === 429)
        return { requeueAfter: err.retryAfterMs ?? 1000 };
      throw err;
    }
    const first = a[K.REMOTE_STARTED_AT] !== undefined ? Number(a[K.REMOTE_STARTED_AT]) : undefined;
    const outcome = remoteOutcome(remote, { exitCode: captured, firstStartedMs: first, wrapped });
    if (outcome.kind === 'finished' || outcome.kind === 'lost') {
      await finish(ctx, job, vpod, remoteId, outcome, remote);
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
    if (Object.keys(annotations).length) await ctx.client.mergePatch(vpod, { metadata: { annotations } });
    const wantPhase = outcome.kind === 'running' ? 'Running' : 'Pending';
    if (phase !== wantPhase) {
      const container = job.spec?.template?.spec?.containers[0];
      const stamp = new Date(now()).toISOString();
      await ctx.client.patchStatus(vpod, {
        status: virtualPodStatus(
          outcome,
          remote,
          container?.name ?? 'runpod',
          container?.image ?? '',
          stamp,
          vpod.status?.startTime ?? stamp,
        ),
      });
    }
    if (wrapped && remote && provider.watchExit && !watchers.has(remoteId) && !ctx.signal.aborted) {
      ctx.signal.addEventListener('abort', () => watchers.delete(remoteId), { once: true });
      const ref = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: vpod.metadata.name, namespace: vpod.metadata.namespace },
      };
      const client = ctx.client;
      const log = ctx.log;
      watchers.set(
        remoteId,
        provider.watchExit(
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
          ctx.signal,
        ),
      );
    }
    return { requeueAfter: pollMs };
  };

  // ---- Job deletion and orphans --------------------------------------------------

  const finalizeDeleted = async (ctx: ReconcileContext, job: Job, vpod: Pod | undefined) => {
    if (!job.metadata.finalizers?.includes(K.CLEANUP_FINALIZER)) return;
    const ids = new Set<string>();
    if (vpod?.metadata.annotations?.[K.POD_ID]) ids.add(vpod.metadata.annotations[K.POD_ID]);
    if (job.metadata.annotations?.[K.POD_ID]) ids.add(job.metadata.annotations[K.POD_ID]);
    if (job.metadata.annotations?.[K.STATE] === 'Launching' || ids.size === 0) {
      for (const r of await provider.list(ctx.signal)) if (r.tags.jobUid === job.metadata.uid) ids.add(r.id);
    }
    for (const id of ids) {
      await provider.terminate(id, ctx.signal);
      stopWatcher(id);
      ctx.log.info({ remote: id }, 'terminated the remote pod of a deleted Job');
    }
    if (vpod) await deleteVirtualPod(ctx, vpod);
    await removeJobFinalizer(ctx, job);
  };

  const sweep = async (ctx: ReconcileContext): Promise<ReconcileResult> => {
    let remote: RemotePod[] = [];
    try {
      remote = await provider.list(ctx.signal);
    } catch (err) {
      if (err instanceof ProviderError && err.status === 429)
        return { requeueAfter: err.retryAfterMs ?? 1000 };
      if (!provider.configured()) return { requeueAfter: intervalMs };
      throw err;
    }
    const jobs = (await ctx.cache.list(JOB)) as Job[];
    const uids = new Set(jobs.map((j) => j.metadata.uid));
    const observed: JobObservation[] = [];
    for (const j of jobs) {
      if (remote.some((r) => r.tags.jobUid === j.metadata.uid))
        observed.push({ job: j, pods: await podsOf(ctx, j) });
    }
    for (const r of orphanRemotePods(remote, opts.clusterName, observed)) {
      const jobGone = !r.tags.jobUid || !uids.has(r.tags.jobUid);
      const age = r.createdAt ? now() - Date.parse(r.createdAt) : Number.POSITIVE_INFINITY;
      if (!jobGone && age < ORPHAN_GRACE_MS) continue;
      await provider.terminate(r.id, ctx.signal);
      stopWatcher(r.id);
      ctx.log.info(
        { remote: r.id, job: `${r.tags.namespace}/${r.tags.job}` },
        'terminated an orphaned remote pod',
      );
    }
    // Virtual pods whose Job is gone (deleted with orphan propagation, or force-removed).
    const vpods = ((await ctx.cache.list(POD, { labelSelector: `${K.MANAGED}=true` })) as Pod[]).filter(
      isVirtualPod,
    );
    for (const v of vpods) {
      const owner = v.metadata.ownerReferences?.find((o) => o.kind === 'Job');
      if (owner && uids.has(owner.uid)) continue;
      const id = v.metadata.annotations?.[K.POD_ID];
      if (id && v.metadata.annotations?.[K.REMOTE_TERMINATED] !== 'true')
        await provider.terminate(id, ctx.signal);
      stopWatcher(id);
      await deleteVirtualPod(ctx, v);
    }
    return { requeueAfter: intervalMs };
  };

  // ---- the Job controller ----------------------------------------------------------

  const reconcileJob = async (key: string, ctx: ReconcileContext): Promise<ReconcileResult | undefined> => {
    if (key === SWEEP_KEY) return sweep(ctx);
    const job = (await ctx.cache.get(JOB, ctx.name, ctx.namespace)) as Job | undefined;
    if (!job) return undefined;
    const pods = await podsOf(ctx, job);
    const vpod = pods.find(isVirtualPod);
    if (job.metadata.deletionTimestamp) {
      await finalizeDeleted(ctx, job, vpod);
      return undefined;
    }
    if (vpod) return syncOffloaded(ctx, job, vpod);
    const state = job.metadata.annotations?.[K.STATE];
    if (state === 'Launching') return resumeLaunch(ctx, job, pods);
    if (state === 'Offloaded') {
      // The virtual pod was deleted by someone: the offload is over, the Job is local again.
      const id = job.metadata.annotations?.[K.POD_ID];
      if (id) await provider.terminate(id, ctx.signal);
      await annotateJob(ctx, job, { [K.STATE]: 'Local' });
      await removeJobFinalizer(ctx, job);
      ctx.recorder.warning(
        job,
        'VirtualPodDeleted',
        'Offload',
        `the virtual pod was deleted; remote pod ${id ?? ''} terminated`,
      );
      return undefined;
    }
    if (jobFinished(job)) {
      await removeJobFinalizer(ctx, job);
      return undefined;
    }
    const cfg = readJobConfig(job);
    if (!cfg.managed) {
      await removeJobFinalizer(ctx, job);
      return undefined;
    }
    if (job.metadata.labels?.[K.MANAGED] !== 'true') {
      await ctx.client.mergePatch(job, { metadata: { labels: { [K.MANAGED]: 'true' } } });
    }
    if (alreadyOffloaded(job, pods)) return undefined;
    const decision = decideOffload({ job, pods }, await observations(ctx), opts, now());
    if (!decision.offload) {
      if (decision.runningLocally && job.metadata.annotations?.[K.ERROR_CLASS] !== 'RunningLocally') {
        await annotateJob(ctx, job, {
          [K.ERROR_CLASS]: 'RunningLocally',
          [K.ERROR]:
            'offload was requested, but a local pod already runs; it was not offloaded, so it does not run twice',
        });
        ctx.recorder.warning(
          job,
          'RunningLocally',
          'Offload',
          'offload was requested, but a local pod already runs; the Job stays local',
        );
      }
      return decision.recheckAfterMs !== undefined
        ? { requeueAfter: Math.min(decision.recheckAfterMs, intervalMs) }
        : undefined;
    }
    return offload(ctx, job, pods, decision);
  };

  const jobController: ControllerDefinition = {
    name: 'offload',
    for: JOB,
    watches: [
      { ...JOB, map: jobMap },
      { ...POD, map: podMap },
      // Every cluster has namespaces: their initial list starts the periodic orphan sweep.
      { ...NAMESPACE, map: (_o, e) => (e.initialList ? [SWEEP_KEY] : []) },
    ],
    maxConcurrentReconciles: 4,
    reconcile: reconcileJob,
  };

  // ---- the virtual node ----------------------------------------------------------------

  const nodeController: ControllerDefinition = {
    name: 'offload-node',
    for: NODE,
    predicates: [(e) => e.obj.metadata.name === K.VIRTUAL_NODE_NAME],
    watches: [{ ...NAMESPACE, map: (_o, e) => (e.initialList ? [K.VIRTUAL_NODE_NAME] : []) }],
    async reconcile(_key, ctx) {
      let node = (await ctx.cache.get(NODE, K.VIRTUAL_NODE_NAME)) as
        | (KubeObject & {
            status?: { conditions?: { type: string; status: string; lastHeartbeatTime?: string }[] };
          })
        | undefined;
      if (!node) {
        try {
          node = await ctx.client.create(virtualNode(K.VIRTUAL_NODE_NAME, provider.name));
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
          node = await ctx.client.get(NODE, K.VIRTUAL_NODE_NAME);
        }
      }
      const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
      const last = Date.parse(ready?.lastHeartbeatTime ?? '');
      const probe = await probeProvider();
      const stale = Number.isNaN(last) || now() - last >= NODE_HEARTBEAT_MS;
      if (stale || (ready?.status === 'True') !== probe.ok) {
        const stamp = new Date(now()).toISOString().replace(/\.\d+Z$/, 'Z');
        await ctx.client.patchStatus(node, { status: virtualNodeStatus(probe.ok, probe.message, stamp) });
        const renew = microTime(now());
        const lease = await ctx.client.tryGet(LEASE, K.VIRTUAL_NODE_NAME, NODE_LEASE_NAMESPACE);
        if (!lease) {
          try {
            await ctx.client.create(nodeLease(K.VIRTUAL_NODE_NAME, renew));
          } catch (err) {
            if (!isAlreadyExists(err) && !isNotFound(err)) throw err;
          }
        } else {
          await ctx.client.mergePatch(lease, {
            spec: { renewTime: renew, holderIdentity: K.VIRTUAL_NODE_NAME },
          });
        }
      }
      return { requeueAfter: NODE_HEARTBEAT_MS };
    },
  };

  return {
    controllers: [jobController, nodeController],
    readyChecks: [
      [
        `offload-${provider.name.replace(/[^a-z0-9-]/g, '-')}`,
        async () => {
          const r = await probeProvider();
          if (!r.ok) throw new Error(r.message);
        },
      ],
    ],
    stop: () => {
      for (const stop of watchers.values()) stop();
      watchers.clear();
    },
  };
}
