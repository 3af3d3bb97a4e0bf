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
 * - `offload-node` (node.ts) keeps the virtual node registered, Ready and heartbeating.
 *
 * Everything that matters lives in the cluster (annotations, labels, finalizers) and in
 * the remote pods' tags; memory holds only caches (the GPU catalog, log watchers, spend
 * reservations while a launch is in flight).
 */
import { randomBytes } from 'node:crypto';
import {
  type Check,
  type ControllerDefinition,
  getControllerOf,
  isAlreadyExists,
  isConflict,
  type KubeObject,
  keyOf,
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
  pendingState,
  readJobConfig,
  type RemoteOutcome,
  remoteOutcome,
  virtualPodStatus,
} from './core.ts';
import * as K from './keys.ts';
import type { OffloadOptions } from './options.ts';
import { type OffloadProvider, ProviderError } from './provider.ts';
import type { Job, Pod, RemotePod } from './types.ts';
import { ensureVirtualNode, providerProbe, virtualNodeController } from './node.ts';
import { virtualPod } from './virtual.ts';
import {
  buildLaunchRequest,
  type LaunchRequest,
  type ReferencedData,
  referencedObjects,
  virtualPodName,
} from './workload.ts';

const JOB = { apiVersion: 'batch/v1', kind: 'Job' };
const POD = { apiVersion: 'v1', kind: 'Pod' };
const NAMESPACE = { apiVersion: 'v1', kind: 'Namespace' };
const SECRET = { apiVersion: 'v1', kind: 'Secret' };
const CONFIGMAP = { apiVersion: 'v1', kind: 'ConfigMap' };

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

  // Keys of managed, unfinished Jobs not handed to a provider, kept from watch events only
  // (rebuilt on every start). When there are more of them than the pending-job threshold, a
  // change of one Job's pending state re-evaluates the others' threshold rank; below it no
  // rank can decide anything, and offloaded Jobs are never ranked, so nothing fans out.
  const candidateKeys = new Set<string>();
  const watchers = new Map<string, () => void>();
  const reservations = new Map<string, number>();
  let launchChain: Promise<unknown> = Promise.resolve();
  const probeProvider = providerProbe(provider, opts.requestTimeout * 1000, now);

  const isManagedJob = (o: KubeObject) =>
    o.metadata.annotations?.[K.MANAGED]?.toLowerCase() === 'true' && !jobFinished(o as Job);

  const isCandidate = (o: KubeObject) => {
    const state = o.metadata.annotations?.[K.STATE];
    return (
      isManagedJob(o) &&
      state !== 'Launching' &&
      state !== 'Offloaded' &&
      state !== 'Completed' &&
      state !== 'Failed'
    );
  };

  const fanOut = (): string[] => (candidateKeys.size > opts.pendingJobThreshold ? [...candidateKeys] : []);

  const jobMap = (_obj: KubeObject, e: WatchEvent): string[] => {
    const key = objectKey(e.obj);
    if (e.type === 'delete') {
      const was = candidateKeys.delete(key);
      return [SWEEP_KEY, ...(was ? fanOut() : [])];
    }
    const was = candidateKeys.has(key);
    if (isCandidate(e.obj)) candidateKeys.add(key);
    else candidateKeys.delete(key);
    return was || candidateKeys.has(key) ? fanOut() : [];
  };

  const podMap = (pod: KubeObject): string[] => {
    const owner = getControllerOf(pod);
    if (owner?.kind !== 'Job') return [];
    const key = keyOf(pod.metadata.namespace, owner.name);
    return candidateKeys.has(key) ? [key, ...fanOut()] : [key];
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

  /** Refusals that pass: the Job is tried again at the next resync, not before. */
  const retryLater = (errorClass: string): Record<string, string> =>
    ['NoCapacity', 'Budget', 'Payment', 'Unresolved'].includes(errorClass)
      ? { [K.RETRY_AT]: String(now() + intervalMs) }
      : {};

  const markError = async (ctx: ReconcileContext, job: Job, errorClass: string, message: string) => {
    const a = job.metadata.annotations ?? {};
    if (a[K.ERROR] !== message || a[K.ERROR_CLASS] !== errorClass) {
      await annotateJob(ctx, job, {
        [K.ERROR]: message,
        [K.ERROR_CLASS]: errorClass,
        ...retryLater(errorClass),
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
    if (vpod.metadata.finalizers?.includes(K.JOB_TRACKING_FINALIZER)) {
      await ctx.client.removeFinalizer(vpod, K.JOB_TRACKING_FINALIZER);
    }
    // No kubelet confirms a virtual pod's termination: troupe is its kubelet, and deletes
    // it at once once the remote pod is gone (as virtual-kubelet does).
    await ctx.client.delete(vpod, { gracePeriodSeconds: 0, preconditions: { uid: vpod.metadata.uid } });
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

  // ---- offloading a Job -------------------------------------------------------
  //
  // The launch protocol. Each step is stored in the cluster before the next one starts, so
  // a restarted troupe resumes from what it finds (resumeLaunch):
  //  1. intent: the cleanup finalizer, `offload-state: Launching`, podReplacementPolicy Failed;
  //  2. claim: the virtual pod, not linked to a remote pod yet, takes the Job's active slot,
  //     so the Job controller creates no local pod while it exists;
  //  3. clear: the Job's local pods that no node holds are deleted, each with a
  //     resourceVersion precondition (a pod the scheduler bound in the meantime is never
  //     deleted blind, and a pod being deleted can no longer be bound). A local pod that is
  //     bound or running wins: the offload is rolled back and the Job runs locally;
  //  4. create: `create-sent-at` on the Job, then the remote create;
  //  5. link: the remote id and status on the virtual pod, then the Job's annotations.
  // Remote work can only start after step 3, so a Job never runs locally and remotely.

  /** How long a create that got no answer may still land. */
  const settleMs = Math.max(2 * opts.requestTimeout * 1000, 1000);

  /** With a spending cap, launches are serialized so two Jobs never both spend the last of it. */
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> =>
    opts.maxHourlySpend > 0 ? serialized(fn) : fn();

  const createSentAt = (job: Job): number | undefined => {
    const v = Number(job.metadata.annotations?.[K.CREATE_SENT_AT]);
    return Number.isFinite(v) && v > 0 ? v : undefined;
  };

  /** Milliseconds a create sent earlier may still take to show up (0: none can). */
  const settling = (job: Job): number => {
    const sent = createSentAt(job);
    return sent === undefined ? 0 : Math.max(0, sent + settleMs - now());
  };

  const isLinked = (vpod: Pod) => !!vpod.metadata.annotations?.[K.POD_ID];

  /** The virtual pod's status for the remote pod's outcome, its container named as the Job's. */
  const writeVirtualPodStatus = async (
    ctx: ReconcileContext,
    job: Job,
    vpod: Pod,
    outcome: RemoteOutcome,
    remote: RemotePod | undefined,
  ) => {
    const container = job.spec?.template?.spec?.containers[0];
    const stamp = new Date(now()).toISOString();
    const status = virtualPodStatus(
      outcome,
      remote,
      container?.name ?? 'runpod',
      container?.image ?? '',
      stamp,
      vpod.status?.startTime ?? stamp,
    );
    await ctx.client.patchStatus(vpod, { status }, { signal: ctx.signal });
  };

  /** Whether a Job being launched still wants to be (a local pod running is checked by `clearLocal`). */
  const stillWanted = (job: Job) =>
    readJobConfig(job).managed &&
    !job.metadata.deletionTimestamp &&
    !jobFinished(job) &&
    !job.spec?.suspend &&
    !blockedByError(job);

  /** The Job's pods as the API server has them now (the cache may lag behind the scheduler). */
  const livePods = async (ctx: ReconcileContext, job: Job): Promise<Pod[]> => {
    const match = job.spec?.selector?.matchLabels ?? {
      'batch.kubernetes.io/controller-uid': job.metadata.uid ?? '',
    };
    const labelSelector = Object.entries(match)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const list = await ctx.client.list<Pod>(POD, {
      namespace: job.metadata.namespace,
      labelSelector,
      signal: ctx.signal,
    });
    return list.items.filter((p) => p.metadata.ownerReferences?.some((r) => r.uid === job.metadata.uid));
  };

  const buildRequest = async (ctx: ReconcileContext, job: Job) => {
    const cfg = readJobConfig(job);
    const refs = await readRefs(ctx, job);
    const marker = `troupe-exit-${randomBytes(9).toString('hex')}`;
    return buildLaunchRequest(job, cfg, refs, {
      clusterName: opts.clusterName,
      marker,
      defaultDiskGb: opts.defaultDiskGb,
      defaultCloud: opts.cloud,
    });
  };

  /** Back to local in one write (a reader never sees Local with the finalizer still on), after dropping the claim. */
  const rollback = async (
    ctx: ReconcileContext,
    job: Job,
    vpod: Pod | undefined,
    annotations: Record<string, string | null> = {},
  ) => {
    if (vpod) await deleteVirtualPod(ctx, vpod);
    await ctx.client.modify<Job>(
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
      { signal: ctx.signal },
    );
  };

  const reportRunningLocally = async (ctx: ReconcileContext, job: Job) => {
    if (!readJobConfig(job).requested || job.metadata.annotations?.[K.ERROR_CLASS] === 'RunningLocally')
      return;
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
  };

  /** Step 2: the unlinked virtual pod; 'taken' when a pod of its name is someone else's, 'busy' while one is going. */
  const claim = async (ctx: ReconcileContext, job: Job): Promise<Pod | 'taken' | 'busy'> => {
    await ensureVirtualNode(ctx, provider.name);
    let vpod: Pod;
    try {
      vpod = await ctx.client.create(virtualPod(job, { provider: provider.name }), { signal: ctx.signal });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const existing = await ctx.client.tryGet<Pod>(POD, virtualPodName(job), job.metadata.namespace, {
        signal: ctx.signal,
      });
      if (!existing) return 'busy';
      if (!existing.metadata.ownerReferences?.some((r) => r.uid === job.metadata.uid)) return 'taken';
      if (existing.metadata.deletionTimestamp) return 'busy';
      return existing;
    }
    // Its status is written once it is linked: nothing before the remote create waits for it.
    return vpod;
  };

  /**
   * Step 3: deletes the Job's local pods no node holds. 'local' when a local pod is bound,
   * running or succeeded (it runs here, so the offload must not happen); 'wait' when one
   * bound to a node is still terminating.
   */
  const clearLocal = async (ctx: ReconcileContext, job: Job): Promise<'clear' | 'local' | 'wait'> => {
    for (let round = 0; round < 5; round++) {
      let again = false;
      for (const p of await livePods(ctx, job)) {
        if (isVirtualPod(p)) continue;
        const phase = p.status?.phase;
        if (phase === 'Succeeded') return 'local';
        if (phase === 'Failed') continue;
        if (p.spec?.nodeName) return p.metadata.deletionTimestamp ? 'wait' : 'local';
        if (p.metadata.deletionTimestamp) continue;
        try {
          await ctx.client.delete(p, {
            preconditions: { uid: p.metadata.uid, resourceVersion: p.metadata.resourceVersion },
          });
        } catch (err) {
          if (!isConflict(err)) throw err;
          again = true;
        }
      }
      if (!again) return 'clear';
    }
    return 'wait';
  };

  /** Step 5: the virtual pod and the Job say where the Job runs. */
  const link = async (
    ctx: ReconcileContext,
    job: Job,
    vpod: Pod,
    remote: RemotePod,
    info: { costPerHr: number; gpuTypeId?: string; message: string },
  ): Promise<ReconcileResult> => {
    const linked = await ctx.client.mergePatch<Pod>(
      vpod,
      {
        metadata: {
          annotations: {
            [K.POD_ID]: remote.id,
            [K.COST_PER_HR]: String(info.costPerHr),
            [K.REMOTE_STATUS]: remote.status,
            ...(info.gpuTypeId ? { [K.GPU_TYPE]: info.gpuTypeId } : {}),
          },
        },
      },
      { signal: ctx.signal },
    );
    await writeVirtualPodStatus(
      ctx,
      job,
      linked,
      remote.status === 'RUNNING' ? { kind: 'running' } : { kind: 'pending' },
      remote,
    );
    await markOffloaded(ctx, job, linked, info.message);
    return { requeueAfter: Math.min(pollMs, 1000) };
  };

  /** The Job's side of the link (also finishes a link a crash cut short). */
  const markOffloaded = async (ctx: ReconcileContext, job: Job, vpod: Pod, message: string) => {
    const a = vpod.metadata.annotations ?? {};
    const id = a[K.POD_ID] ?? '';
    await annotateJob(
      ctx,
      job,
      {
        [K.OFFLOADED]: 'true',
        [K.POD_ID]: id,
        [K.COST_PER_HR]: a[K.COST_PER_HR] ?? '0',
        [K.PROVIDER]: provider.name,
        [K.STATE]: 'Offloaded',
        [K.REASON]: job.metadata.annotations?.[K.REASON] ?? 'Requested',
        ...(a[K.GPU_TYPE] ? { [K.GPU_TYPE]: a[K.GPU_TYPE] } : {}),
        [K.CREATE_SENT_AT]: null,
        [K.RETRY_AT]: null,
        [K.ERROR]: null,
        [K.ERROR_CLASS]: null,
      },
      { [K.MANAGED]: 'true' },
    );
    ctx.recorder.normal(
      job,
      'Offloaded',
      'Offload',
      `offloaded to ${provider.name} pod ${id}${a[K.GPU_TYPE] ? ` on ${a[K.GPU_TYPE]}` : ''} at $${a[K.COST_PER_HR] ?? '0'}/h: ${message}`,
    );
  };

  /** Step 4 and 5: the remote create, then the link; a definite refusal rolls the launch back. */
  const createAndLink = async (
    ctx: ReconcileContext,
    job: Job,
    vpod: Pod,
    request: LaunchRequest,
    message: string,
  ): Promise<ReconcileResult | undefined> => {
    const spend = await spendNow(ctx);
    const budgetLeft =
      opts.maxHourlySpend > 0 ? Math.max(0, opts.maxHourlySpend - spend) : Number.POSITIVE_INFINITY;
    let current = job;
    // A throw (5xx after retries, a timeout, a dropped connection) leaves the Job Launching
    // with its claim: the retry looks for a pod the failed call may have made.
    const outcome = await provider.launch(request, { maxPrice: opts.maxGpuPrice, budgetLeft }, ctx.signal, {
      beforeCreate: async () => {
        current = await annotateJob(ctx, current, { [K.CREATE_SENT_AT]: String(now()) });
      },
    });
    if (outcome.kind === 'launched') {
      reservations.set(job.metadata.uid ?? '', outcome.costPerHr);
      return link(ctx, current, vpod, outcome.pod, {
        costPerHr: outcome.costPerHr,
        gpuTypeId: outcome.gpuTypeId,
        message,
      });
    }
    if (outcome.kind === 'rateLimited') {
      // Every create was answered, none placed a pod: keep the claim, try again after Retry-After.
      await annotateJob(ctx, current, { [K.CREATE_SENT_AT]: null });
      return { requeueAfter: Math.max(outcome.retryAfterMs, 100) };
    }
    await rollback(ctx, current, vpod, {
      [K.ERROR]: outcome.message,
      [K.ERROR_CLASS]: outcome.errorClass,
      ...retryLater(outcome.errorClass),
    });
    ctx.recorder.warning(current, `Offload${outcome.errorClass}`, 'Offload', outcome.message);
    const retry = outcome.kind === 'unavailable' || outcome.errorClass === 'Payment';
    return retry ? { requeueAfter: intervalMs } : undefined;
  };

  /** Steps 2 to 5 (the intent is written). */
  const proceed = async (
    ctx: ReconcileContext,
    job: Job,
    vpod: Pod | undefined,
    message: string,
  ): Promise<ReconcileResult | undefined> => {
    const claimed = vpod ?? (await claim(ctx, job));
    if (claimed === 'busy') return { requeueAfter: 1000 };
    // Already linked (the cache had not shown it yet): following it is the next reconcile's job.
    if (claimed !== 'taken' && isLinked(claimed)) return { requeueAfter: 200 };
    if (claimed === 'taken') {
      const msg = `a pod named ${virtualPodName(job)} already exists and is not this Job's`;
      await rollback(ctx, job, undefined, { [K.ERROR]: msg, [K.ERROR_CLASS]: 'Unexpressible' });
      ctx.recorder.warning(job, 'OffloadUnexpressible', 'Offload', msg);
      return undefined;
    }
    const clear = await clearLocal(ctx, job);
    if (clear !== 'clear') {
      await rollback(ctx, job, claimed);
      if (clear === 'local') await reportRunningLocally(ctx, job);
      return clear === 'wait' ? { requeueAfter: 1000 } : undefined;
    }
    const built = await buildRequest(ctx, job);
    if (!built.ok) {
      await rollback(ctx, job, claimed, {
        [K.ERROR]: built.message,
        [K.ERROR_CLASS]: built.errorClass,
        ...retryLater(built.errorClass),
      });
      ctx.recorder.warning(job, `Offload${built.errorClass}`, 'Offload', built.message);
      return built.errorClass === 'Unresolved' ? { requeueAfter: intervalMs } : undefined;
    }
    return createAndLink(ctx, job, claimed, built.request, message);
  };

  /** The live Job, when a launch for it is still wanted. */
  const freshForLaunch = async (ctx: ReconcileContext, job: Job): Promise<Job | undefined> => {
    // The cache may not show this controller's own last writes yet (a reconcile queued while
    // the previous one ran): the live Job decides, so a stale read never launches twice.
    const fresh = await ctx.client.tryGet<Job>(JOB, job.metadata.name ?? '', job.metadata.namespace, {
      signal: ctx.signal,
    });
    if (!fresh || fresh.metadata.uid !== job.metadata.uid) return undefined;
    return fresh;
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
    // Checked before anything is written, so a Job that cannot go stays untouched.
    const built = await buildRequest(ctx, job);
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
    return exclusive(async () => {
      const fresh = await freshForLaunch(ctx, job);
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
      let current = await ctx.client.addFinalizer(fresh, K.CLEANUP_FINALIZER);
      // podReplacementPolicy Failed: the local pods troupe deletes are then not counted as
      // failures against the Job's backoffLimit (the Job controller counts a deleted,
      // unfinished pod as failed otherwise). Also written when troupe first sees the Job.
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
      return proceed(ctx, current, undefined, decision.message);
    });
  };

  /** A launch was interrupted (crash, timeout, rate limit): continue it, adopt its remote pod, or let go. */
  const resumeLaunch = async (
    ctx: ReconcileContext,
    job: Job,
    pods: Pod[],
  ): Promise<ReconcileResult | undefined> => {
    return exclusive(async () => {
      const fresh = await freshForLaunch(ctx, job);
      if (fresh?.metadata.annotations?.[K.STATE] !== 'Launching') return undefined;
      if (fresh.metadata.deletionTimestamp) return finalizeDeleted(ctx, fresh, pods.find(isVirtualPod));
      const vpod = pods.find(isVirtualPod);
      const mine = (await provider.list(ctx.signal)).filter((r) => r.tags.jobUid === fresh.metadata.uid);
      const letGo = async (why: string): Promise<ReconcileResult> => {
        for (const r of mine) await provider.terminate(r.id, ctx.signal);
        // A create may still land: look again before letting go of the Job.
        const wait = settling(fresh);
        if (wait > 0) return { requeueAfter: wait };
        await rollback(ctx, fresh, vpod);
        ctx.log.info({ why }, 'an interrupted launch was abandoned; the Job is local');
        return { requeue: true };
      };
      if (vpod?.metadata.deletionTimestamp) return letGo('its virtual pod was deleted');
      if (!stillWanted(fresh)) return letGo('the Job no longer wants to be offloaded');
      if (mine.length === 0 && settling(fresh) > 0) return { requeueAfter: settling(fresh) };
      if (mine.length === 0) return proceed(ctx, fresh, vpod, 'resumed an interrupted launch');
      // The remote pod exists: the launch got as far as the create.
      const claimed = vpod ?? (await claim(ctx, fresh));
      if (claimed === 'busy') return { requeueAfter: 1000 };
      if (claimed === 'taken' || (await clearLocal(ctx, fresh)) !== 'clear') {
        return letGo('a local pod runs, or the virtual pod name is taken');
      }
      const [keep, ...extra] = mine;
      for (const r of extra) await provider.terminate(r.id, ctx.signal);
      reservations.set(fresh.metadata.uid ?? '', keep!.costPerHr);
      return link(ctx, fresh, claimed, keep!, {
        costPerHr: keep!.costPerHr,
        gpuTypeId: keep!.gpuTypeId,
        message: 'adopted the remote pod of an interrupted launch',
      });
    });
  };

  // ---- following an offloaded Job -----------------------------------------------

  const finish = async (
    ctx: ReconcileContext,
    job: Job,
    vpod: Pod,
    remoteId: string,
    outcome: Extract<RemoteOutcome, { kind: 'finished' | 'lost' }>,
    remote: RemotePod | undefined,
  ) => {
    const code = outcome.kind === 'finished' ? outcome.exitCode : undefined;
    const recorded = {
      ...(code !== undefined ? { [K.EXIT_CODE]: String(code) } : {}),
      ...(outcome.kind === 'finished' && outcome.assumed ? { [K.EXIT_CODE_ASSUMED]: 'true' } : {}),
    };
    // The outcome is stored before the remote pod goes: after a crash in between, a gone
    // remote pod would otherwise read as lost.
    if (Object.entries(recorded).some(([k, v]) => vpod.metadata.annotations?.[k] !== v))
      await ctx.client.mergePatch(vpod, { metadata: { annotations: recorded } });
    await provider.terminate(remoteId, ctx.signal);
    stopWatcher(remoteId);
    await ctx.client.mergePatch(vpod, {
      metadata: { annotations: { [K.REMOTE_TERMINATED]: 'true', ...recorded } },
    });
    await writeVirtualPodStatus(ctx, job, vpod, outcome, remote);
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
    pods: Pod[],
  ): Promise<ReconcileResult | undefined> => {
    const a = vpod.metadata.annotations ?? {};
    const remoteId = a[K.POD_ID] ?? '';
    const phase = vpod.status?.phase;
    if (vpod.metadata.deletionTimestamp) {
      // Someone deleted the virtual pod: stop the remote one, then confirm the deletion.
      if (a[K.REMOTE_TERMINATED] !== 'true') await provider.terminate(remoteId, ctx.signal);
      stopWatcher(remoteId);
      await ctx.client.delete(vpod, { gracePeriodSeconds: 0, preconditions: { uid: vpod.metadata.uid } });
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
    if (job.metadata.annotations?.[K.STATE] === 'Launching') {
      // A crash cut the link short after the virtual pod was linked: finish it.
      await markOffloaded(ctx, job, vpod, 'finished linking an interrupted launch');
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
    if (await settleLocalConflict(ctx, job, vpod, pods, remote)) return undefined;
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
    if (phase !== wantPhase) await writeVirtualPodStatus(ctx, job, vpod, outcome, remote);
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

  /**
   * A local pod next to a linked virtual pod (the Job controller created it before it saw the
   * virtual pod): one not bound to a node is deleted; one already bound or running keeps the
   * Job unless the remote pod already runs, so the work never runs in both places if it can
   * be helped. True when the offload was given up.
   */
  const settleLocalConflict = async (
    ctx: ReconcileContext,
    job: Job,
    vpod: Pod,
    pods: Pod[],
    remote: RemotePod | undefined,
  ): Promise<boolean> => {
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
        await provider.terminate(id, ctx.signal);
        stopWatcher(id);
        await rollback(ctx, job, vpod);
        ctx.recorder.warning(
          job,
          'RunningLocally',
          'Offload',
          `a local pod (${p.metadata.name}) started before ${provider.name} pod ${id} did; the remote pod was terminated and the Job stays local`,
        );
        return true;
      }
      try {
        await ctx.client.delete(p, {
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
  };

  // ---- Job deletion and orphans --------------------------------------------------

  const finalizeDeleted = async (
    ctx: ReconcileContext,
    job: Job,
    vpod: Pod | undefined,
  ): Promise<ReconcileResult | undefined> => {
    if (!job.metadata.finalizers?.includes(K.CLEANUP_FINALIZER)) return undefined;
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
    // A create that got no answer may still land: hold the Job until it would have shown.
    const wait = settling(job);
    if (wait > 0) return { requeueAfter: wait };
    await removeJobFinalizer(ctx, job);
    return undefined;
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
    const remoteJobUids = new Set(remote.map((r) => r.tags.jobUid));
    const observed: JobObservation[] = [];
    for (const j of jobs) {
      if (remoteJobUids.has(j.metadata.uid)) observed.push({ job: j, pods: await podsOf(ctx, j) });
    }
    const linkedTo = new Map<string, string>();
    for (const o of observed) {
      const id = o.pods.find(isVirtualPod)?.metadata.annotations?.[K.POD_ID];
      if (id) linkedTo.set(o.job.metadata.uid ?? '', id);
    }
    for (const r of orphanRemotePods(remote, opts.clusterName, observed)) {
      const jobGone = !r.tags.jobUid || !uids.has(r.tags.jobUid);
      // A Job whose virtual pod is linked to another remote pod has its pod: this one is a
      // duplicate (a create that landed late) and goes at once.
      const duplicate =
        !jobGone && linkedTo.has(r.tags.jobUid ?? '') && linkedTo.get(r.tags.jobUid ?? '') !== r.id;
      const age = r.createdAt ? now() - Date.parse(r.createdAt) : Number.POSITIVE_INFINITY;
      if (!jobGone && !duplicate && age < ORPHAN_GRACE_MS) continue;
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
    provider.attach?.(ctx.client);
    if (key === SWEEP_KEY) return sweep(ctx);
    const job = (await ctx.cache.get(JOB, ctx.name, ctx.namespace)) as Job | undefined;
    if (!job) return undefined;
    const pods = await podsOf(ctx, job);
    const vpod = pods.find(isVirtualPod);
    if (job.metadata.deletionTimestamp) return finalizeDeleted(ctx, job, vpod);
    if (vpod && isLinked(vpod)) return syncOffloaded(ctx, job, vpod, pods);
    const state = job.metadata.annotations?.[K.STATE];
    if (state === 'Launching') return resumeLaunch(ctx, job, pods);
    if (vpod) {
      // An unlinked virtual pod without a launch behind it (a rollback cut short), unless the
      // cache has not shown this Job's Launching yet.
      const fresh = await freshForLaunch(ctx, job);
      if (fresh?.metadata.annotations?.[K.STATE] === 'Launching') return resumeLaunch(ctx, fresh, pods);
      await deleteVirtualPod(ctx, vpod);
      return { requeue: true };
    }
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
    if (job.metadata.labels?.[K.MANAGED] !== 'true' || job.spec?.podReplacementPolicy !== 'Failed') {
      // podReplacementPolicy Failed long before any offload: the Job controller has seen it by
      // the time troupe deletes local pods, and does not count them as failures.
      await ctx.client.mergePatch(job, {
        metadata: { labels: { [K.MANAGED]: 'true' } },
        spec: { podReplacementPolicy: 'Failed' },
      });
    }
    if (alreadyOffloaded(job, pods)) return undefined;
    // Every managed Job is read only when the threshold rank can decide (a pending Job that
    // was not asked for, with more candidates than the threshold).
    const ranked =
      !cfg.requested && pendingState(job, pods).pending && candidateKeys.size > opts.pendingJobThreshold;
    const managed = ranked ? await observations(ctx) : [{ job, pods }];
    const decision = decideOffload({ job, pods }, managed, opts, now());
    if (!decision.offload) {
      if (decision.runningLocally) await reportRunningLocally(ctx, job);
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

  const nodeController = virtualNodeController({ provider, probe: probeProvider, now });

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
      void provider.close?.();
    },
  };
}
