/**
 * The thin shell of burst offloading: two controllers on the troupe runtime.
 *
 * - `offload` reconciles Jobs. Watch events (a Job added or changed, a pod of a Job
 *   becoming unschedulable) decide at once; the reconcile interval is only a resync and the
 *   period of the orphan sweep. Each reconcile goes to one step: the launch (launch.ts,
 *   resumed by resume.ts), following an offloaded Job (follow.ts) or cleanup (cleanup.ts).
 * - `offload-node` (node.ts) keeps the virtual node registered, Ready and heartbeating.
 *
 * Everything that matters lives in the cluster (annotations, labels, finalizers) and in
 * the remote pods' tags; memory holds only caches (the GPU catalog, log watchers, spend
 * reservations while a launch is in flight).
 */
import { type Clock, realClock } from '../../lib/clock.ts';
import {
  type Check,
  type ControllerDefinition,
  getControllerOf,
  type KubeObject,
  keyOf,
  objectKey,
  type ReconcileContext,
  type ReconcileResult,
  type WatchEvent,
} from '../../runtime/index.ts';
import { endDeletedOffload, finalizeDeleted, sweep } from './cleanup.ts';
import { JOB, type OffloadContext, type OffloadShared, POD, podsOf } from './context.ts';
import {
  alreadyOffloaded,
  decideOffload,
  isVirtualPod,
  type JobObservation,
  jobFinished,
  pendingState,
  readJobConfig,
} from './core.ts';
import { syncOffloaded } from './follow.ts';
import { removeJobFinalizer, reportRunningLocally } from './job-writes.ts';
import * as K from './keys.ts';
import { offload } from './launch.ts';
import { freshForLaunch, isLinked } from './launch-state.ts';
import { type OffloadMetrics, offloadMetrics } from './metrics.ts';
import { providerProbe, virtualNodeController } from './node.ts';
import type { OffloadOptions } from './options.ts';
import type { OffloadProvider } from './provider.ts';
import { resumeLaunch } from './resume.ts';
import { exclusiveUnderCap } from './spend.ts';
import type { Job } from './types.ts';
import { deleteVirtualPod } from './virtual-pod-writes.ts';

const NAMESPACE = { apiVersion: 'v1', kind: 'Namespace' };

/** The key of the orphan sweep (Job names cannot contain `~`, so it never names a Job). */
export const SWEEP_KEY = '~offload-sweep';

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
  /** Default the real clock. */
  clock?: Clock;
}

export function offloadController(deps: OffloadDeps): OffloadController {
  const { options: opts, provider } = deps;
  const clock = deps.clock ?? realClock;
  const now = () => clock.now();
  const shared: OffloadShared = {
    opts,
    provider,
    now,
    intervalMs: opts.reconcileInterval * 1000,
    pollMs: opts.statusPollInterval * 1000,
    settleMs: Math.max(2 * opts.requestTimeout * 1000, 1000),
    watchers: new Map(),
    reservations: new Map(),
    exclusive: exclusiveUnderCap(opts.maxHourlySpend),
  };
  const probeProvider = providerProbe(provider, opts.requestTimeout * 1000, now);

  // Keys of managed, unfinished Jobs not handed to a provider, kept from watch events only
  // (rebuilt on every start). When there are more of them than the pending-job threshold, a
  // change of one Job's pending state re-evaluates the others' threshold rank; below it no
  // rank can decide anything, and offloaded Jobs are never ranked, so nothing fans out.
  const candidateKeys = new Set<string>();

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

  const observations = async (c: OffloadContext): Promise<JobObservation[]> => {
    const jobs = (await c.cache.list(JOB)) as Job[];
    const out: JobObservation[] = [];
    for (const job of jobs) {
      if (readJobConfig(job).managed) out.push({ job, pods: await podsOf(c, job) });
    }
    return out;
  };

  const reconcileJob = async (
    key: string,
    ctx: ReconcileContext<OffloadMetrics>,
  ): Promise<ReconcileResult | undefined> => {
    provider.attach?.(ctx.client);
    const c: OffloadContext = { ...ctx, ...shared };
    if (key === SWEEP_KEY) return sweep(c);
    const job = (await c.cache.get(JOB, c.name, c.namespace)) as Job | undefined;
    if (!job) return undefined;
    const pods = await podsOf(c, job);
    const vpod = pods.find(isVirtualPod);
    if (job.metadata.deletionTimestamp) return finalizeDeleted(c, job, vpod);
    if (vpod && isLinked(vpod)) return syncOffloaded(c, job, vpod, pods);
    const state = job.metadata.annotations?.[K.STATE];
    if (state === 'Launching') return resumeLaunch(c, job, pods);
    if (vpod) {
      // An unlinked virtual pod without a launch behind it (a rollback cut short), unless the
      // cache has not shown this Job's Launching yet.
      const fresh = await freshForLaunch(c, job);
      if (fresh?.metadata.annotations?.[K.STATE] === 'Launching') return resumeLaunch(c, fresh, pods);
      await deleteVirtualPod(c, vpod);
      return { requeue: true };
    }
    if (state === 'Offloaded') return endDeletedOffload(c, job);
    if (jobFinished(job)) {
      await removeJobFinalizer(c, job);
      return undefined;
    }
    const cfg = readJobConfig(job);
    if (!cfg.managed) {
      await removeJobFinalizer(c, job);
      return undefined;
    }
    if (job.metadata.labels?.[K.MANAGED] !== 'true' || job.spec?.podReplacementPolicy !== 'Failed') {
      // podReplacementPolicy Failed long before any offload: the Job controller has seen it by
      // the time troupe deletes local pods, and does not count them as failures.
      await c.client.mergePatch(job, {
        metadata: { labels: { [K.MANAGED]: 'true' } },
        spec: { podReplacementPolicy: 'Failed' },
      });
    }
    if (alreadyOffloaded(job, pods)) return undefined;
    // Every managed Job is read only when the threshold rank can decide (a pending Job that
    // was not asked for, with more candidates than the threshold).
    const ranked =
      !cfg.requested && pendingState(job, pods).pending && candidateKeys.size > opts.pendingJobThreshold;
    const managed = ranked ? await observations(c) : [{ job, pods }];
    const decision = decideOffload({ job, pods }, managed, opts, now());
    if (!decision.offload) {
      if (decision.runningLocally) await reportRunningLocally(c, job);
      return decision.recheckAfterMs !== undefined
        ? { requeueAfter: Math.min(decision.recheckAfterMs, shared.intervalMs) }
        : undefined;
    }
    return offload(c, job, pods, decision);
  };

  const jobController: ControllerDefinition<OffloadMetrics> = {
    name: 'offload',
    for: JOB,
    watches: [
      { ...JOB, map: jobMap },
      { ...POD, map: podMap },
      // Every cluster has namespaces: their initial list starts the periodic orphan sweep.
      { ...NAMESPACE, map: (_o, e) => (e.initialList ? [SWEEP_KEY] : []) },
    ],
    maxConcurrentReconciles: 4,
    metrics: offloadMetrics,
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
      for (const stop of shared.watchers.values()) stop();
      shared.watchers.clear();
      void provider.close?.();
    },
  };
}
