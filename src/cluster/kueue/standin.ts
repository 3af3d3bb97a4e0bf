/**
 * The Kueue stand-in of the embedded cluster. It installs Kueue's CRDs and plays Kueue's part
 * for AppWrappers and batch/v1 Jobs that name a queue: it creates their Workload, admits
 * Workloads within their ClusterQueue's quota, starts (unsuspends) admitted jobs with the
 * flavors' PodSetInfo, suspends jobs whose Workload is evicted, releases quota when a job
 * finishes or stops holding resources, and keeps queue status current. It talks to the API
 * only through ClusterClient, so real Kueue could replace it.
 *
 * Three loops: jobs (`Kind|ns/name`: Kueue's job reconciler), workloads (`ns/name`: eviction
 * and requeueing) and the scheduler (one pass over every queue, then queue status).
 *
 * Why one file: the three loops share the stand-in's cache and queues; the decisions are pure
 * and elsewhere (admission.ts, quota.ts, preemption.ts).
 */

import {
  type Condition,
  findCondition,
  isConditionTrue,
  rfc3339,
  setCondition,
} from '../../kube/conditions.ts';
import { objectKey } from '../../kube/keys.ts';
import { type Clock, holdClock, realClock } from '../../lib/clock.ts';
import type { KubeObject } from '../apiserver/types.ts';
import type { ClusterClient, Gvr } from '../client.ts';
import { GVR, isNotFound } from '../client.ts';
import { EventRecorder } from '../workloads/events.ts';
import { Informer } from '../workloads/informer.ts';
import { type LogFn, Loop } from '../workloads/loop.ts';
import {
  clusterQueueInactive,
  hasQuotaReservation,
  isAdmitted,
  isFinished,
  pendingGist,
  queueCounts,
  type Snapshot,
  schedule,
  usageList,
} from './admission.ts';
import {
  type ClusterQueue,
  DEFAULT_LOCAL_QUEUE,
  KGVR,
  type LocalQueue,
  QUEUE_NAME_ANNOTATION,
  QUEUE_NAME_LABEL,
  RESOURCE_IN_USE_FINALIZER,
  type ResourceFlavor,
  type Workload,
  WorkloadConditions,
} from './api.ts';
import { ensureKueueCRDs } from './crds.ts';
import { type DefaultQueuesOptions, defaultQueueObjects } from './defaults.ts';
import {
  appWrapperAdapter,
  batchJobAdapter,
  type JobAdapter,
  PodSetInfoError,
  STOPPING_ANNOTATION,
} from './jobs.ts';
import {
  notReadyTimeout,
  podsReadyCondition,
  podsReadySettings,
  requeueBackoffMs,
  type WaitForPodsReadyConfig,
} from './podsready.ts';
import { PriorityClassNotFound, workloadPriority } from './priority.ts';
import {
  admissionEvents,
  admit,
  evict,
  finish,
  markPending,
  newWorkload,
  podSetInfos,
  preempt,
  requeue,
  unsetQuota,
} from './workloads.ts';

export type Integration = 'workload.codeflare.dev/appwrapper' | 'batch/job';

export interface KueueOptions {
  /** Kueue's integrations.frameworks (default both). */
  integrations?: Integration[];
  /** Queue jobs that name no queue too (Kueue's manageJobsWithoutQueueName; default false). */
  manageJobsWithoutQueueName?: boolean;
  /** Create the seed's setup: `default-flavor`, `cluster-queue` (4 CPUs), `user-queue` in `default`. */
  defaultQueues?: boolean | DefaultQueuesOptions;
  /** Jobs synced concurrently (default 4). */
  workers?: number;
  log?: LogFn;
  /** Admission, eviction and condition times; default the real clock. */
  clock?: Clock;
  /**
   * Kueue's waitForPodsReady configuration section (off when absent): PodsReady conditions
   * on Workloads, eviction after `timeout` (default 30m) with re-queueing backoff.
   */
  waitForPodsReady?: WaitForPodsReadyConfig;
  /** Runs waitForPodsReady's timeouts and backoff this many times faster (the cluster's --time-scale). */
  timeScale?: number;
}

export interface KueueStandIn {
  stop(): Promise<void>;
  /**
   * True when the job and workload loops have nothing queued or running. Handlers enqueue
   * inside the write that caused them, so after a write returns this is a barrier for tests:
   * once idle, the stand-in has acted on that write (for a decision that writes nothing).
   */
  idle(): boolean;
}

/** The identity real Kueue runs as. */
export const KUEUE_USER = 'system:serviceaccount:kueue-system:kueue-controller-manager';

const AW_CRD = 'appwrappers.workload.codeflare.dev';
const STATUS_DELAY_MS = 100;
const SCHEDULE_DELAY_MS = 5;

const ADAPTERS: Record<Integration, JobAdapter> = {
  'workload.codeflare.dev/appwrapper': appWrapperAdapter,
  'batch/job': batchJobAdapter,
};

async function waitServed(client: ClusterClient, gvrs: Gvr[]): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (gvrs.every((g) => client.served(g))) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('Kueue CRDs were not served within 5 s');
}

export async function startKueue(client: ClusterClient, opts: KueueOptions = {}): Promise<KueueStandIn> {
  const log: LogFn = opts.log ?? (() => {});
  const clock = opts.clock ?? realClock;
  const now = () => new Date(clock.now());
  const podsReady = opts.waitForPodsReady
    ? podsReadySettings(opts.waitForPodsReady, opts.timeScale)
    : undefined;
  const c = client.as(KUEUE_USER);
  await ensureKueueCRDs(client);
  await waitServed(client, [KGVR.resourceFlavors, KGVR.clusterQueues, KGVR.localQueues, KGVR.workloads]);
  if (opts.defaultQueues) {
    for (const [gvr, obj] of defaultQueueObjects(opts.defaultQueues === true ? {} : opts.defaultQueues)) {
      if (client.get(gvr, obj.metadata.namespace ?? '', obj.metadata.name!)) continue;
      try {
        await client.create(gvr, obj);
      } catch (err) {
        log('warn', 'kueue: default queue not created', { name: obj.metadata.name, error: String(err) });
      }
    }
  }

  const recorder = new EventRecorder(c, 'kueue', log, clock);
  const integrations = new Set(opts.integrations ?? (Object.keys(ADAPTERS) as Integration[]));
  const adapters = new Map<string, JobAdapter>();
  for (const i of integrations) adapters.set(ADAPTERS[i].kind, ADAPTERS[i]);

  const flavors = new Informer(c, KGVR.resourceFlavors, { log });
  const clusterQueues = new Informer(c, KGVR.clusterQueues, { log });
  const localQueues = new Informer(c, KGVR.localQueues, { log });
  const namespaces = new Informer(c, GVR.namespaces, { log });
  const workloads = new Informer(c, KGVR.workloads, { log });
  workloads.addIndex('owner', (o) => {
    const ref = o.metadata.ownerReferences?.find((r) => r.controller);
    return ref ? [`${ref.kind}|${o.metadata.namespace ?? ''}/${ref.name}`] : [];
  });
  workloads.addIndex('queue', (o) => [
    `${o.metadata.namespace ?? ''}/${(o as Workload).spec?.queueName ?? ''}`,
  ]);
  const jobInformers = new Map<string, Informer>();
  const crds = new Informer(c, KGVR.crds, { cache: false, log });

  // First-seen order breaks ties between workloads created in the same second.
  let seq = 0;
  const firstSeen = new Map<string, number>();

  const jobLoop = new Loop({
    name: 'kueue-jobs',
    workers: opts.workers ?? 4,
    sync: (k) => syncJob(k),
    log,
    clock,
  });
  const wlLoop = new Loop({ name: 'kueue-workloads', workers: 2, sync: (k) => syncWorkload(k), log, clock });
  const schedLoop = new Loop({
    name: 'kueue-scheduler',
    clock,
    workers: 1,
    sync: (k) => (k === 'schedule' ? schedulePass() : statusPass()),
    log,
  });
  const kick = () => {
    // A pass looks at every pending workload: let a burst of changes land first.
    schedLoop.enqueueAfter('schedule', SCHEDULE_DELAY_MS);
    // Queue status is for people and dashboards: one recount per burst of changes is enough.
    schedLoop.enqueueAfter('status', STATUS_DELAY_MS);
  };

  const flavorsByName = () => new Map(flavors.list().map((f) => [f.metadata.name!, f as ResourceFlavor]));
  // The workloads not finished, in the informer's order, kept as their events arrive: finished
  // ones stay until their job goes and no pass reads them, so a pass does not walk them all.
  const open = new Map<string, Workload>();
  const snapshot = (): Snapshot => ({
    flavors: flavorsByName(),
    clusterQueues: new Map(clusterQueues.list().map((q) => [q.metadata.name!, q as ClusterQueue])),
    localQueues: new Map(localQueues.list().map((q) => [objectKey(q), q as LocalQueue])),
    namespaces: new Map(namespaces.list().map((n) => [n.metadata.name!, n.metadata.labels ?? {}])),
    workloads: [...open.values()],
    order: (wl) => firstSeen.get(wl.metadata.uid ?? '') ?? 0,
    blockAdmission: podsReady?.blockAdmission ?? false,
    requeuingTimestamp: podsReady?.timestamp ?? 'Eviction',
  });

  // ---- event handlers (they run inside the write that caused them: enqueue only) ----

  for (const inf of [flavors, clusterQueues, localQueues, namespaces]) {
    inf.subscribe((type, obj, old) => {
      // Our own queue status writes change nothing that admission reads.
      if (
        type === 'MODIFIED' &&
        old &&
        inf !== namespaces &&
        old.metadata.generation === obj.metadata.generation
      )
        return;
      kick();
      if (inf === namespaces) return;
      for (const wl of workloads.list() as Workload[])
        if (dependsOn(wl, inf, obj)) wlLoop.enqueue(objectKey(wl));
    });
  }
  /**
   * Whether a workload's eviction or requeueing (syncWorkload) reads this queue or flavor:
   * its LocalQueue, the ClusterQueue that queue points to or that admitted it, and for
   * flavors (which decide whether a ClusterQueue is active) the workloads held back by a
   * stopped ClusterQueue. A queue edit then wakes its own workloads, not every workload.
   */
  const dependsOn = (wl: Workload, inf: Informer, obj: KubeObject): boolean => {
    const ns = wl.metadata.namespace ?? '';
    if (inf === localQueues) return obj.metadata.namespace === ns && obj.metadata.name === wl.spec.queueName;
    if (inf === clusterQueues) {
      const name = obj.metadata.name;
      if (wl.status?.admission?.clusterQueue === name) return true;
      const lq = localQueues.getByName(ns, wl.spec.queueName ?? '') as LocalQueue | undefined;
      return lq?.spec?.clusterQueue === name;
    }
    return (
      findCondition(wl.status?.conditions, WorkloadConditions.Requeued)?.reason === 'ClusterQueueStopped'
    );
  };
  workloads.subscribe((type, obj) => {
    const key = objectKey(obj);
    // Finished is for good (Kueue never admits a finished workload again).
    if (type === 'DELETED' || isFinished(obj as Workload)) open.delete(key);
    else open.set(key, obj as Workload);
    const uid = obj.metadata.uid ?? '';
    if (type === 'ADDED' && !firstSeen.has(uid)) firstSeen.set(uid, ++seq);
    if (type === 'DELETED') firstSeen.delete(uid);
    const ref = obj.metadata.ownerReferences?.find((r) => r.controller);
    if (ref && adapters.has(ref.kind))
      jobLoop.enqueue(`${ref.kind}|${obj.metadata.namespace ?? ''}/${ref.name}`);
    wlLoop.enqueue(key);
    kick();
  });

  const watchJobs = (adapter: JobAdapter) => {
    if (jobInformers.has(adapter.kind) || !c.served(adapter.gvr)) return;
    const inf = new Informer(c, adapter.gvr, { log });
    inf.subscribe((_type, obj) => jobLoop.enqueue(`${adapter.kind}|${objectKey(obj)}`));
    jobInformers.set(adapter.kind, inf);
    inf.start();
    log('info', `kueue: watching ${adapter.gvr.resource}`);
  };
  let crdTimer: NodeJS.Timeout | undefined;
  let releaseCrdHold: (() => void) | undefined;
  const refreshIntegrations = () => {
    const aw = adapters.get('AppWrapper');
    if (!aw) return;
    if (c.served(aw.gvr)) watchJobs(aw);
    else if (jobInformers.has('AppWrapper')) {
      jobInformers.get('AppWrapper')!.stop();
      jobInformers.delete('AppWrapper');
    }
  };
  crds.subscribe((_type, obj) => {
    if (obj.metadata.name !== AW_CRD) return;
    // The CRD's resource is served once the API server has processed the write that sent
    // this event: look again right after it.
    clearTimeout(crdTimer);
    // A virtual clock waits for the look (the AppWrapper integration starts at this instant).
    releaseCrdHold?.();
    const release = holdClock(clock, 'kueue AppWrapper integration');
    releaseCrdHold = release;
    crdTimer = setTimeout(() => {
      release();
      refreshIntegrations();
    }, 20);
  });

  // ---- the job reconciler ----

  const queueNameOf = (job: KubeObject): string | undefined => {
    const q = job.metadata.labels?.[QUEUE_NAME_LABEL] || job.metadata.annotations?.[QUEUE_NAME_ANNOTATION];
    if (q) return q;
    if (localQueues.getByName(job.metadata.namespace ?? '', DEFAULT_LOCAL_QUEUE)) return DEFAULT_LOCAL_QUEUE;
    return opts.manageJobsWithoutQueueName ? '' : undefined;
  };

  const writeWorkloadStatus = async (
    wl: Workload,
    change: (cur: Workload) => boolean | undefined,
  ): Promise<void> => {
    try {
      await c.mutate<Workload>(
        KGVR.workloads,
        wl.metadata.namespace ?? '',
        wl.metadata.name!,
        (cur) => {
          if (change(cur) === false) return cur;
        },
        'status',
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  };

  const removeFinalizer = async (wl: Workload): Promise<void> => {
    if (!(wl.metadata.finalizers ?? []).includes(RESOURCE_IN_USE_FINALIZER)) return;
    try {
      await c.mutate(KGVR.workloads, wl.metadata.namespace ?? '', wl.metadata.name!, (cur) => {
        cur.metadata.finalizers = (cur.metadata.finalizers ?? []).filter(
          (f) => f !== RESOURCE_IN_USE_FINALIZER,
        );
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  };

  const writeJob = async (
    adapter: JobAdapter,
    job: KubeObject,
    change: (cur: KubeObject) => void,
  ): Promise<void> => {
    await c.mutate(adapter.gvr, job.metadata.namespace ?? '', job.metadata.name!, (cur) => {
      if (cur.metadata.uid !== job.metadata.uid) throw new Error('job replaced');
      change(cur);
    });
  };

  const isStopping = (job: KubeObject) => job.metadata.annotations?.[STOPPING_ANNOTATION] === 'true';

  const stopJob = async (
    adapter: JobAdapter,
    job: KubeObject,
    wl: Workload | undefined,
    message: string,
  ): Promise<void> => {
    if (!adapter.isSuspended(job)) {
      await writeJob(adapter, job, (cur) => adapter.stop(cur, wl));
      recorder.event(job, 'Normal', 'Stopped', message);
    }
    const restore = adapter.restore;
    if (!restore) return;
    // Job.Stop: a started Job's template is immutable until its startTime is reset.
    const cur = c.get(adapter.gvr, job.metadata.namespace ?? '', job.metadata.name!);
    if (!cur || !isStopping(cur)) return;
    if ((cur.status as { startTime?: string } | undefined)?.startTime) {
      await c.mutate(
        adapter.gvr,
        job.metadata.namespace ?? '',
        job.metadata.name!,
        (o) => {
          delete (o.status as { startTime?: string }).startTime;
        },
        'status',
      );
    }
    await writeJob(adapter, job, (o) => {
      restore(o, wl);
    });
  };

  async function syncJob(key: string): Promise<void> {
    const bar = key.indexOf('|');
    const kind = key.slice(0, bar);
    const nsName = key.slice(bar + 1);
    const adapter = adapters.get(kind);
    const inf = jobInformers.get(kind);
    if (!adapter) return;
    const job = inf?.get(nsName);
    const owned = workloads.byIndex('owner', key) as Workload[];
    if (!inf) return; // the kind is not served (yet): nothing can be known about the job
    if (!job) {
      // The job is gone: its workloads hold nothing any more.
      for (const wl of owned) {
        await removeFinalizer(wl);
        await c.delete(KGVR.workloads, wl.metadata.namespace ?? '', wl.metadata.name!, {
          propagationPolicy: 'Background',
        });
      }
      return;
    }
    if (adapter.skip(job)) return;
    const mine = owned.filter((w) => w.metadata.ownerReferences?.some((r) => r.uid === job.metadata.uid));
    const wl = mine.find((w) => !isFinished(w)) ?? mine[0];
    const queue = queueNameOf(job);
    if (queue === undefined && !wl) return;

    if (wl && isFinished(wl)) {
      await removeFinalizer(wl);
      return;
    }
    if (wl?.metadata.deletionTimestamp) {
      await stopJob(adapter, job, wl, 'Workload is deleted');
      await removeFinalizer(wl);
      return;
    }
    const fin = adapter.finished(job);
    if (fin.finished) {
      if (wl) {
        await writeWorkloadStatus(wl, (cur) => {
          if (isFinished(cur)) return false;
          finish(cur, fin.success ? 'Succeeded' : 'Failed', fin.message, now());
        });
        recorder.event(job, 'Normal', 'FinishedWorkload', `Workload '${objectKey(wl)}' is declared finished`);
        await removeFinalizer(wl);
      }
      return;
    }
    if (!wl) {
      const podSets = adapter.podSets(job);
      if (!podSets) return; // nothing to queue (yet): the next change of the job brings it back
      let priority: ReturnType<typeof workloadPriority>;
      try {
        priority = workloadPriority(c, KGVR.workloadPriorityClasses, job, podSets);
      } catch (err) {
        if (!(err instanceof PriorityClassNotFound)) throw err;
        // As Kueue: no Workload until the class exists; the job is retried with backoff.
        throw new Error(`${kind} ${nsName}: ${err.message}`);
      }
      const created = newWorkload(job, adapter.kind, adapter.group, queue ?? '', podSets, priority);
      try {
        await c.create(KGVR.workloads, created);
        recorder.event(job, 'Normal', 'CreatedWorkload', `Created Workload: ${objectKey(created)}`);
      } catch (err) {
        if ((err as { code?: number }).code !== 409) throw err;
      }
      return;
    }

    if (podsReady) {
      const want = podsReadyCondition(wl, isAdmitted(wl), adapter.podsReady(job));
      const cur = findCondition(wl.status?.conditions, WorkloadConditions.PodsReady);
      if (cur?.status !== want.status || cur.reason !== want.reason) {
        await writeWorkloadStatus(wl, (w) => {
          w.status ??= {};
          w.status.conditions ??= [];
          setCondition(
            w.status.conditions,
            { type: WorkloadConditions.PodsReady, ...want, lastTransitionTime: '' },
            now(),
          );
        });
        return;
      }
    }

    const evicted = findCondition(wl.status?.conditions, WorkloadConditions.Evicted);
    if (evicted?.status === 'True') {
      await stopJob(adapter, job, wl, evicted.message);
      if (hasQuotaReservation(wl) && !adapter.isActive(job)) {
        await writeWorkloadStatus(wl, (cur) => {
          if (!hasQuotaReservation(cur)) return false;
          unsetQuota(cur, evicted.reason, evicted.message, now());
        });
      }
      return;
    }

    if (adapter.isSuspended(job)) {
      if (isAdmitted(wl)) {
        const infos = podSetInfos(wl, flavorsByName());
        try {
          await writeJob(adapter, job, (cur) => adapter.run(cur, infos));
          recorder.event(
            job,
            'Normal',
            'Started',
            `Admitted by clusterQueue ${wl.status?.admission?.clusterQueue ?? ''}`,
          );
        } catch (err) {
          if (!(err instanceof PodSetInfoError)) throw err;
          await writeWorkloadStatus(wl, (cur) => {
            finish(cur, 'FailedToStart', err.message, now());
          });
        }
        return;
      }
      if (queue !== undefined && wl.spec.queueName !== queue && !hasQuotaReservation(wl)) {
        await c.mutate<Workload>(KGVR.workloads, wl.metadata.namespace ?? '', wl.metadata.name!, (cur) => {
          cur.spec.queueName = queue;
        });
      }
      return;
    }
    if (!isAdmitted(wl)) await stopJob(adapter, job, wl, 'Not admitted by cluster queue');
  }

  // ---- the workload controller: eviction and requeueing ----

  async function syncWorkload(key: string): Promise<void> {
    const wl = workloads.get(key) as Workload | undefined;
    if (!wl || isFinished(wl)) return;
    const lq = localQueues.getByName(wl.metadata.namespace ?? '', wl.spec.queueName ?? '') as
      | LocalQueue
      | undefined;
    const cq = clusterQueues.getByName('', lq?.spec?.clusterQueue ?? '') as ClusterQueue | undefined;
    const dt = findCondition(wl.status?.conditions, WorkloadConditions.DeactivationTarget);
    if (dt?.status === 'True' && wl.spec.active !== false) {
      // A workload marked for deactivation (re-queueing limit) is deactivated, then evicted.
      await c.mutate<Workload>(KGVR.workloads, wl.metadata.namespace ?? '', wl.metadata.name!, (cur) => {
        cur.spec.active = false;
      });
      return;
    }
    if (wl.spec.active === false && wl.status?.requeueState && !hasQuotaReservation(wl)) {
      await writeWorkloadStatus(wl, (cur) => {
        if (!cur.status?.requeueState) return false;
        delete cur.status.requeueState;
      });
      return;
    }
    if (hasQuotaReservation(wl) && !isConditionTrue(wl.status?.conditions, WorkloadConditions.Evicted)) {
      const admittedIn = clusterQueues.getByName('', wl.status!.admission!.clusterQueue) as
        | ClusterQueue
        | undefined;
      let reason: string | undefined;
      let message = '';
      let eventReason = '';
      if (wl.spec.active === false) {
        // Kueue names the cause: DeactivatedDueToRequeuingLimitExceeded and its message.
        reason = dt?.status === 'True' ? `DeactivatedDueTo${dt.reason}` : 'Deactivated';
        message =
          dt?.status === 'True'
            ? `The workload is deactivated due to ${dt.message}`
            : 'The workload is deactivated';
        eventReason =
          dt?.status === 'True' ? `EvictedDueToDeactivatedDueTo${dt.reason}` : 'EvictedDueToDeactivated';
      } else if (admittedIn?.spec?.stopPolicy === 'HoldAndDrain')
        [reason, message] = ['ClusterQueueStopped', 'The ClusterQueue is stopped'];
      else if (lq?.spec?.stopPolicy === 'HoldAndDrain')
        [reason, message] = ['LocalQueueStopped', 'The LocalQueue is stopped'];
      if (reason) {
        const r = reason;
        await writeWorkloadStatus(wl, (cur) => {
          if (!hasQuotaReservation(cur)) return false;
          evict(cur, r, message, now());
          if (cur.spec.active === false) {
            cur.status!.conditions = cur.status!.conditions!.filter(
              (x) => x.type !== WorkloadConditions.DeactivationTarget,
            );
            delete cur.status!.requeueState;
          }
        });
        recorder.event(wl, 'Normal', eventReason || `EvictedDueTo${r}`, message);
        return;
      }
      if (podsReady && isAdmitted(wl)) await checkPodsReadyTimeout(key, wl);
      return;
    }
    const rq = findCondition(wl.status?.conditions, WorkloadConditions.Requeued);
    if (!hasQuotaReservation(wl) && rq?.status === 'False') {
      let reason: string | undefined;
      let message = '';
      if (rq.reason.startsWith('Deactivated') && wl.spec.active !== false)
        [reason, message] = ['Reactivated', 'The workload was reactivated'];
      else if (rq.reason === 'PodsReadyTimeout') {
        const at = Date.parse(wl.status?.requeueState?.requeueAt ?? '') || 0;
        const wait = at - now().getTime();
        if (wait > 0) {
          wlLoop.enqueueAfter(key, wait);
          return;
        }
        [reason, message] = ['BackoffFinished', 'The workload backoff was finished'];
      } else if (rq.reason === 'ClusterQueueStopped' && cq && !clusterQueueInactive(cq, flavorsByName())) {
        [reason, message] = ['ClusterQueueRestarted', 'The ClusterQueue was restarted after being stopped'];
      } else if (
        rq.reason === 'LocalQueueStopped' &&
        lq &&
        (!lq.spec?.stopPolicy || lq.spec.stopPolicy === 'None')
      ) {
        [reason, message] = ['LocalQueueRestarted', 'The LocalQueue was restarted after being stopped'];
      }
      if (reason) {
        const r = reason;
        await writeWorkloadStatus(wl, (cur) => {
          requeue(cur, r, message, now());
          if (r === 'BackoffFinished' && cur.status?.requeueState) delete cur.status.requeueState.requeueAt;
        });
      }
    }
  }

  /**
   * reconcileNotReadyTimeout: an admitted workload whose pods are not ready in time is
   * evicted (PodsReadyTimeout) and re-queued after a backoff, or past backoffLimitCount
   * marked for deactivation.
   */
  async function checkPodsReadyTimeout(key: string, wl: Workload): Promise<void> {
    const settings = podsReady!;
    const t = notReadyTimeout(wl, settings, now().getTime());
    if (!t) return;
    if (t.remainingMs > 0) {
      wlLoop.enqueueAfter(key, t.remainingMs);
      return;
    }
    const count = wl.status?.requeueState?.count ?? 0;
    if (settings.backoffLimitCount !== undefined && count + 1 > settings.backoffLimitCount) {
      await writeWorkloadStatus(wl, (cur) => {
        cur.status ??= {};
        cur.status.conditions ??= [];
        setCondition(
          cur.status.conditions,
          {
            type: WorkloadConditions.DeactivationTarget,
            status: 'True',
            reason: 'RequeuingLimitExceeded',
            message: 'exceeding the maximum number of re-queuing retries',
            lastTransitionTime: '',
          },
          now(),
        );
      });
      return;
    }
    const message = `Exceeded the PodsReady timeout ${key}`;
    let evicted = false;
    await writeWorkloadStatus(wl, (cur) => {
      if (!hasQuotaReservation(cur) || isConditionTrue(cur.status?.conditions, WorkloadConditions.Evicted))
        return false;
      const n = (cur.status?.requeueState?.count ?? 0) + 1;
      const delay =
        requeueBackoffMs(n, settings.backoffBaseSeconds, settings.backoffMaxSeconds) / settings.timeScale;
      evict(cur, 'PodsReadyTimeout', message, now());
      cur.status!.requeueState = { count: n, requeueAt: rfc3339(new Date(now().getTime() + delay)) };
      evicted = true;
    });
    if (evicted) recorder.event(wl, 'Normal', 'EvictedDueToPodsReadyTimeout', message);
  }

  // ---- the scheduler ----

  async function schedulePass(): Promise<void> {
    const snap = snapshot();
    const result = schedule(snap);
    for (const a of result.admit) {
      let events: ReturnType<typeof admissionEvents> | undefined;
      await writeWorkloadStatus(a.workload, (cur) => {
        if (hasQuotaReservation(cur) || isFinished(cur) || cur.spec.active === false) return false;
        const at = now();
        admit(cur, a.admission, at);
        events = admissionEvents(cur, at, a.flavorsConsidered);
      });
      if (events) {
        recorder.event(a.workload, 'Normal', 'QuotaReserved', events.quotaReserved);
        recorder.event(a.workload, 'Normal', 'Admitted', events.admitted);
      }
    }
    for (const p of result.preempt) {
      const target = workloads.get(p.key) as Workload | undefined;
      const preemptor = workloads.get(p.preemptorKey) as Workload | undefined;
      if (!target) continue;
      let done = false;
      await writeWorkloadStatus(target, (cur) => {
        if (!hasQuotaReservation(cur) || isConditionTrue(cur.status?.conditions, WorkloadConditions.Evicted))
          return false;
        preempt(cur, p.reason, p.message, now());
        done = true;
      });
      if (!done) continue;
      // IssuePreemptions' events (no priority boost: base and effective priority agree).
      const pp = preemptor?.spec.priority ?? 0;
      const tp = target.spec.priority ?? 0;
      const priorities = `preemptor effective priority: ${pp} (base: ${pp}, boost: 0); preemptee effective priority: ${tp} (base: ${tp}, boost: 0)`;
      recorder.event(target, 'Normal', 'EvictedDueToPreempted', p.message);
      recorder.event(target, 'Normal', 'Preempted', `${p.message}; ${priorities}`);
      if (preemptor)
        recorder.event(
          preemptor,
          'Normal',
          'PreemptedWorkload',
          `Preempted workload ${p.key} (UID: ${target.metadata.uid ?? ''}) in ClusterQueue ${target.status?.admission?.clusterQueue ?? ''}; ${priorities}`,
        );
    }
    for (const p of result.pending) {
      const wl = workloads.get(p.key) as Workload | undefined;
      const current = wl && findCondition(wl.status?.conditions, WorkloadConditions.QuotaReserved);
      if (
        !wl ||
        (current &&
          current.status === 'False' &&
          current.reason === p.reason &&
          pendingGist(current.message) === pendingGist(p.message))
      )
        continue;
      let marked = false;
      await writeWorkloadStatus(wl, (cur) => {
        if (hasQuotaReservation(cur)) return false;
        markPending(cur, p.reason, p.message, now());
        marked = true;
      });
      // requeueAndUpdate's Warning beside the condition (not for Waiting or Inadmissible,
      // which Kueue writes elsewhere without one); as often as the condition is written.
      if (marked && p.reason === 'Pending') recorder.event(wl, 'Warning', 'Pending', p.message);
    }
  }

  async function statusPass(): Promise<void> {
    const snap = snapshot();
    const counts = queueCounts(snap);
    for (const [name, cq] of snap.clusterQueues) {
      const n = counts.clusterQueues.get(name)!;
      const inactive = clusterQueueInactive(cq, snap.flavors);
      const desired = {
        pendingWorkloads: n.pending,
        reservingWorkloads: n.reserving,
        admittedWorkloads: n.admitted,
        flavorsReservation: usageList(n.reservation, cq, true),
        flavorsUsage: usageList(n.usage, cq, true),
      };
      const active = inactive
        ? {
            status: 'False',
            reason: inactive,
            message: `Can't admit new workloads: ${inactive === 'Stopped' ? 'is stopped' : 'references missing ResourceFlavor(s)'}`,
          }
        : { status: 'True', reason: 'Ready', message: 'Can admit new workloads' };
      await writeQueueStatus(KGVR.clusterQueues, cq, desired, active);
    }
    for (const [key, lq] of snap.localQueues) {
      const n = counts.localQueues.get(key)!;
      const cq = snap.clusterQueues.get(lq.spec?.clusterQueue ?? '');
      const desired = {
        pendingWorkloads: n.pending,
        reservingWorkloads: n.reserving,
        admittedWorkloads: n.admitted,
        flavorsReservation: usageList(n.reservation, cq, false),
        flavorsUsage: usageList(n.usage, cq, false),
      };
      const active =
        lq.spec?.stopPolicy && lq.spec.stopPolicy !== 'None'
          ? { status: 'False', reason: 'Stopped', message: 'LocalQueue is stopped' }
          : !cq
            ? {
                status: 'False',
                reason: 'ClusterQueueDoesNotExist',
                message: "Can't submit new workloads to clusterQueue",
              }
            : clusterQueueInactive(cq, snap.flavors)
              ? {
                  status: 'False',
                  reason: 'ClusterQueueIsInactive',
                  message: "Can't submit new workloads to clusterQueue",
                }
              : { status: 'True', reason: 'Ready', message: 'Can submit new workloads to localQueue' };
      await writeQueueStatus(KGVR.localQueues, lq, desired, active);
    }
  }

  async function writeQueueStatus(
    gvr: Gvr,
    obj: KubeObject,
    desired: Record<string, unknown>,
    active: { status: string; reason: string; message: string },
  ): Promise<void> {
    const status = (obj.status ?? {}) as Record<string, unknown>;
    const conds = (status.conditions ?? []) as {
      type: string;
      status: string;
      reason: string;
      message: string;
    }[];
    const cur = conds.find((x) => x.type === 'Active');
    const same =
      Object.entries(desired).every(([k, v]) => JSON.stringify(status[k]) === JSON.stringify(v)) &&
      cur?.status === active.status &&
      cur.reason === active.reason &&
      cur.message === active.message;
    if (same) return;
    try {
      await c.mutate(
        gvr,
        obj.metadata.namespace ?? '',
        obj.metadata.name!,
        (o) => {
          const s = (o.status ?? {}) as Record<string, unknown>;
          Object.assign(s, desired);
          const list = (s.conditions ?? []) as Condition[];
          setCondition(list, { type: 'Active', ...active }, now());
          s.conditions = list;
          o.status = s;
        },
        'status',
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  // ---- start ----

  for (const inf of [flavors, clusterQueues, localQueues, namespaces, workloads]) inf.start();
  crds.start();
  if (adapters.has('Job')) watchJobs(adapters.get('Job')!);
  refreshIntegrations();
  jobLoop.start();
  wlLoop.start();
  schedLoop.start();
  kick();
  log('info', 'kueue stand-in started', { integrations: [...integrations] });

  let stopped: Promise<void> | undefined;
  return {
    idle: () => jobLoop.idle && wlLoop.idle,
    stop: () => {
      stopped ??= (async () => {
        clearTimeout(crdTimer);
        releaseCrdHold?.();
        crds.stop();
        for (const inf of [
          flavors,
          clusterQueues,
          localQueues,
          namespaces,
          workloads,
          ...jobInformers.values(),
        ])
          inf.stop();
        await Promise.all([jobLoop.stop(), wlLoop.stop(), schedLoop.stop()]);
        await recorder.stop();
      })();
      return stopped;
    },
  };
}
