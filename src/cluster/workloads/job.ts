/**
 * The Job controller (pkg/controller/job) as Kubernetes 1.31+ runs it: pods tracked with
 * the `batch.kubernetes.io/job-tracking` finalizer and `status.uncountedTerminatedPods`
 * (so every finished pod is counted exactly once even across crashes), interim
 * SuccessCriteriaMet / FailureTarget conditions before the terminal Complete / Failed
 * ones (set only once no pod is terminating), NonIndexed and Indexed completion, backoff
 * between failed pods, backoffLimit, activeDeadlineSeconds, suspend/resume and
 * `spec.managedBy`.
 *
 * Not implemented: podFailurePolicy, backoffLimitPerIndex/maxFailedIndexes, successPolicy
 * (Jobs using them are synced as if the fields were absent).
 *
 * Why one file: the pure pieces (API shape, conditions, backoff, indexes) live in
 * job-util.ts; what is left is the controller, one sync pass that follows upstream's syncJob
 * step by step, kept whole so it reads side by side with job_controller.go.
 */
import { rfc3339 } from '../../kube/conditions.ts';
import { objectKey } from '../../kube/keys.ts';
import type { Selector } from '../../kube/labels.ts';
import { jsonEqual } from '../../lib/json.ts';
import { GVR, isNotFound } from '../client.ts';
import { type ControllerContext, int, LoopController } from './context.ts';
import { BY_CONTROLLER_UID, claimCandidates, type Informer, type InformerEvent } from './informer.ts';
import { IndexSet } from './job-indexes.ts';
import {
  activePodsForRemoval,
  addCompletionIndexEnv,
  adoptingSelector,
  type BackoffRecord,
  CONTROLLER_UID_LABEL,
  cleanUncounted,
  completionIndex,
  ensureCondition,
  generateNameWithIndex,
  hasFinalizer,
  isIndexed,
  isJobFinished,
  isPodFailed,
  JOB_COMPLETION_INDEX,
  JOB_NAME_LABEL,
  JOB_TRACKING_FINALIZER,
  type Job,
  type JobCondition,
  type JobStatus,
  jobSelector,
  LEGACY_CONTROLLER_UID_LABEL,
  LEGACY_JOB_NAME_LABEL,
  managedByOther,
  newCondition,
  nextBackoffRecord,
  onlyReplaceFailedPods,
  pastActiveDeadline,
  pastBackoffLimitOnFailure,
  remainingBackoff,
  serializedStatus,
  suspended,
} from './job-util.ts';
import {
  adopterCandidates,
  claimObjects,
  controllerRefOf,
  isPodActive,
  isPodReady,
  isPodTerminating,
  type Pod,
  PodControl,
  podFromTemplate,
} from './pods.ts';
import { writeStatus } from './status.ts';
import { errMessage, parseTime, slowStartBatch } from './util.ts';

/** Finished pods moved into status per sync (MaxUncountedPods), bounding status size. */
const MAX_UNCOUNTED = 500;
/** Pods created or deleted per sync (MaxPodCreateDeletePerSync). */
const MAX_CREATE_DELETE = 500;

export interface JobControllerOptions {
  /** Delay before re-creating pods after failures: base * 2^(failures-1), at most max (10 s / 6 min upstream). */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
}

interface SyncCtx {
  job: Job;
  key: string;
  status: JobStatus;
  pods: Pod[];
  activePods: Pod[];
  active: number;
  ready: number;
  terminating: number;
  succeeded: number;
  failed: number;
  uncountedSucceeded: Set<string>;
  uncountedFailed: Set<string>;
  prevSucceededIndexes: IndexSet;
  succeededIndexes: IndexSet;
  finished: JobCondition | undefined;
  backoff: BackoffRecord;
  completions: number | undefined;
  parallelism: number;
}

export class JobController extends LoopController {
  private readonly jobs: Informer;
  private readonly pods: Informer;
  private readonly podControl: PodControl;
  private readonly backoffStore = new Map<string, BackoffRecord>();
  private readonly baseMs: number;
  private readonly maxMs: number;

  constructor(ctx: ControllerContext, opts: JobControllerOptions = {}) {
    super(ctx, 'job');
    this.baseMs = opts.backoffBaseMs ?? 10_000;
    this.maxMs = opts.backoffMaxMs ?? 360_000;
    this.jobs = ctx.informers.for(GVR.jobs);
    this.pods = ctx.informers.for(GVR.pods);
    this.podControl = new PodControl(ctx.client, ctx.recorder);
    this.unsubscribeOnStop(
      this.jobs.subscribe((t, o, old) => this.onJob(t, o as Job, old as Job | undefined)),
    );
    this.unsubscribeOnStop(
      this.pods.subscribe((t, o, old) => this.onPod(t, o as Pod, old as Pod | undefined)),
    );
  }

  // ---------- event handlers ----------

  private onJob(type: string, job: Job, old: Job | undefined): void {
    // Spec changes sync at once; status-only updates (mostly our own) are batched like pod events.
    if (type === 'MODIFIED' && old && old.metadata.generation === job.metadata.generation) {
      this.loop.enqueueAfter(`job:${objectKey(job)}`, this.ctx.batchMs);
    } else this.loop.enqueue(`job:${objectKey(job)}`);
    if (type === 'DELETED' || isJobFinished(job)) this.cleanupPodFinalizers(job);
    const ads = job.spec?.activeDeadlineSeconds;
    const start = parseTime(job.status?.startTime);
    if (
      type === 'MODIFIED' &&
      ads !== undefined &&
      start !== undefined &&
      old?.spec?.activeDeadlineSeconds !== ads
    ) {
      this.loop.enqueueAfter(`job:${objectKey(job)}`, start + ads * 1000 - this.ctx.clock.now());
    }
  }

  /** Pods of a deleted or finished Job lose their tracking finalizer (the orphan-pod worker). */
  private cleanupPodFinalizers(job: Job): void {
    for (const p of this.pods.byIndex(BY_CONTROLLER_UID, job.metadata.uid!)) {
      if (hasFinalizer(p as Pod)) this.loop.enqueue(`pod:${objectKey(p)}`);
    }
  }

  private onPod(type: InformerEvent, pod: Pod, old: Pod | undefined): void {
    const ref = controllerRefOf(pod);
    if (ref) {
      if (ref.kind !== 'Job' || ref.apiVersion !== 'batch/v1') return;
      const job = this.jobs.getByName(pod.metadata.namespace ?? '', ref.name) as Job | undefined;
      if (!job || job.metadata.uid !== ref.uid || (isJobFinished(job) && type !== 'ADDED')) {
        if (hasFinalizer(pod) && type !== 'DELETED') this.loop.enqueue(`pod:${objectKey(pod)}`);
        if (!job || job.metadata.uid !== ref.uid) return;
      }
      this.loop.enqueueAfter(`job:${objectKey(job)}`, this.ctx.batchMs);
      return;
    }
    if (type === 'DELETED') return;
    if (hasFinalizer(pod)) this.loop.enqueue(`pod:${objectKey(pod)}`);
    for (const j of adopterCandidates(this.jobs, adoptingSelector, type, pod, old))
      this.loop.enqueueAfter(`job:${objectKey(j)}`, this.ctx.batchMs);
  }

  // ---------- sync ----------

  protected async sync(key: string): Promise<void> {
    if (key.startsWith('pod:')) return this.syncOrphanPod(key.slice(4));
    return this.syncJob(key.slice(4));
  }

  /** syncOrphanPod: drops the tracking finalizer of a pod no live, unfinished Job owns. */
  private async syncOrphanPod(key: string): Promise<void> {
    const pod = this.pods.get(key) as Pod | undefined;
    if (!pod || !hasFinalizer(pod)) return;
    const ref = controllerRefOf(pod);
    if (ref) {
      if (ref.kind !== 'Job' || ref.apiVersion !== 'batch/v1') return;
      const job = this.jobs.getByName(pod.metadata.namespace ?? '', ref.name) as Job | undefined;
      if (job && job.metadata.uid === ref.uid) {
        if (managedByOther(job)) return;
        if (!isJobFinished(job)) return;
      }
    }
    await this.removeFinalizer(pod);
  }

  private async syncJob(key: string): Promise<void> {
    const job = this.jobs.get(key) as Job | undefined;
    if (!job) {
      this.backoffStore.delete(key);
      return;
    }
    if (managedByOther(job)) return;
    if (isJobFinished(job)) {
      this.backoffStore.delete(key);
      return;
    }
    const mode = job.spec?.completionMode;
    if (mode !== undefined && mode !== 'NonIndexed' && mode !== 'Indexed') {
      this.ctx.recorder.event(
        job,
        'Warning',
        'UnknownCompletionMode',
        'Skipped Job sync because completion mode is unknown',
      );
      return;
    }
    const selector = jobSelector(job);
    if (!selector) return;
    const spec = job.spec ?? {};
    const parallelism = int(spec.parallelism, 1);
    // The API server defaults completions to 1 only when parallelism is unset too.
    const completions =
      typeof spec.completions === 'number'
        ? spec.completions
        : spec.parallelism === undefined
          ? 1
          : undefined;
    if (isIndexed(job) && completions === undefined) return;
    const backoffLimit = int(spec.backoffLimit, 6);
    const now = new Date(this.ctx.clock.now());
    const status: JobStatus = structuredClone(job.status ?? {});
    status.uncountedTerminatedPods ??= {};

    const pods = await this.podsForJob(job, selector);
    const activePods = pods.filter(isPodActive);
    const uncountedSucceeded = new Set(status.uncountedTerminatedPods.succeeded ?? []);
    const uncountedFailed = new Set(status.uncountedTerminatedPods.failed ?? []);
    const valid = (p: Pod, uncounted: Set<string>) => {
      if (!hasFinalizer(p) || uncounted.has(p.metadata.uid!)) return false;
      if (isIndexed(job)) {
        const ix = completionIndex(p);
        if (ix < 0 || ix >= completions!) return false;
      }
      return true;
    };
    const newSucceeded = pods.filter((p) => valid(p, uncountedSucceeded) && p.status?.phase === 'Succeeded');
    const newFailed = pods.filter((p) => valid(p, uncountedFailed) && isPodFailed(p, job));
    const c: SyncCtx = {
      job,
      key,
      status,
      pods,
      activePods,
      active: activePods.length,
      ready: activePods.filter(isPodReady).length,
      terminating: pods.filter(isPodTerminating).length,
      succeeded: (status.succeeded ?? 0) + newSucceeded.length + uncountedSucceeded.size,
      failed: (status.failed ?? 0) + newFailed.length + uncountedFailed.size,
      uncountedSucceeded,
      uncountedFailed,
      prevSucceededIndexes: new IndexSet(),
      succeededIndexes: new IndexSet(),
      finished: undefined,
      backoff: nextBackoffRecord(
        this.backoffStore.get(key) ?? { failuresAfterLastSuccess: 0 },
        newSucceeded,
        newFailed,
        now.getTime(),
      ),
      completions,
      parallelism,
    };

    if (!status.startTime && !suspended(job)) status.startTime = rfc3339(now);

    const scm = status.conditions?.find((x) => x.type === 'SuccessCriteriaMet' && x.status === 'True');
    if (scm) c.finished = scm;
    if (!c.finished) {
      const ft = status.conditions?.find((x) => x.type === 'FailureTarget' && x.status === 'True');
      if (ft) c.finished = newCondition('Failed', 'True', ft.reason ?? '', ft.message ?? '', now);
    }
    if (!c.finished) {
      if (c.failed > backoffLimit || pastBackoffLimitOnFailure(job, pods, backoffLimit)) {
        c.finished = newCondition(
          'FailureTarget',
          'True',
          'BackoffLimitExceeded',
          'Job has reached the specified backoff limit',
          now,
        );
      } else if (pastActiveDeadline(job, status, now.getTime())) {
        c.finished = newCondition(
          'FailureTarget',
          'True',
          'DeadlineExceeded',
          'Job was active longer than specified deadline',
          now,
        );
      } else if (spec.activeDeadlineSeconds !== undefined && !suspended(job) && status.startTime) {
        const left = parseTime(status.startTime)! + spec.activeDeadlineSeconds * 1000 - now.getTime();
        this.loop.enqueueAfter(`job:${key}`, left);
      }
    }

    if (isIndexed(job)) {
      c.prevSucceededIndexes = IndexSet.parse(status.completedIndexes, completions!);
      const fresh: number[] = [];
      for (const p of pods) {
        const ix = completionIndex(p);
        if (p.status?.phase === 'Succeeded' && ix >= 0 && ix < completions! && hasFinalizer(p))
          fresh.push(ix);
      }
      c.succeededIndexes = c.prevSucceededIndexes.with(fresh);
      c.succeeded = c.succeededIndexes.total;
    }

    let manageErr: unknown;
    if (c.finished) {
      manageErr = await this.deletePods(c, activePods, false);
      // The Job finishes only once none of its pods is left active.
      if (c.active !== 0) c.finished = undefined;
    } else {
      let manageCalled = false;
      if (!job.metadata.deletionTimestamp) {
        manageErr = await this.manageJob(c);
        manageCalled = true;
      }
      const complete =
        completions === undefined
          ? c.succeeded > 0 && c.active === 0
          : c.succeeded >= completions && c.active === 0;
      if (complete) {
        c.finished = newCondition(
          'SuccessCriteriaMet',
          'True',
          'CompletionsReached',
          'Reached expected number of succeeded pods',
          now,
        );
      } else if (manageCalled) {
        status.conditions ??= [];
        if (suspended(job)) {
          if (ensureCondition(status.conditions, 'Suspended', 'True', 'JobSuspended', 'Job suspended', now)) {
            this.ctx.recorder.event(job, 'Normal', 'Suspended', 'Job suspended');
          }
        } else if (
          ensureCondition(status.conditions, 'Suspended', 'False', 'JobResumed', 'Job resumed', now)
        ) {
          this.ctx.recorder.event(job, 'Normal', 'Resumed', 'Job resumed');
          // activeDeadlineSeconds counts continuous activity, so resuming restarts the clock.
          status.startTime = rfc3339(now);
        }
        if (status.conditions.length === 0) delete status.conditions;
      }
    }

    status.active = c.active;
    status.ready = c.ready;
    status.terminating = c.terminating;
    await this.trackStatusAndRemoveFinalizers(c, !jsonEqual(serializedStatus(status), job.status ?? {}));
    if (manageErr) throw manageErr;
  }

  /** getPodsForJob: claims pods by selector; adopted pods get the tracking finalizer. */
  private async podsForJob(job: Job, selector: Selector): Promise<Pod[]> {
    const candidates = claimCandidates(this.pods, job) as Pod[];
    return claimObjects(this.ctx.client, GVR.pods, job, selector, candidates, {
      onAdopt: (p) => {
        const f = p.metadata.finalizers ?? [];
        if (!f.includes(JOB_TRACKING_FINALIZER)) p.metadata.finalizers = [...f, JOB_TRACKING_FINALIZER];
      },
    });
  }

  /** manageJob: deletes surplus pods or creates missing ones (never both in one sync). */
  private async manageJob(c: SyncCtx): Promise<unknown> {
    const job = c.job;
    if (suspended(job)) {
      return this.deletePods(
        c,
        activePodsForRemoval(job, c.activePods, c.activePods.length, c.completions),
        true,
      );
    }
    let wantActive: number;
    if (c.completions === undefined) wantActive = c.succeeded > 0 ? c.active : c.parallelism;
    else wantActive = Math.max(0, Math.min(c.completions - c.succeeded, c.parallelism));
    const rmAtLeast = Math.max(0, c.active - wantActive);
    const toDelete = activePodsForRemoval(job, c.activePods, rmAtLeast, c.completions).slice(
      0,
      MAX_CREATE_DELETE,
    );
    if (toDelete.length > 0) return this.deletePods(c, toDelete, true);
    const terminating = onlyReplaceFailedPods(job) ? c.terminating : 0;
    let diff = wantActive - terminating - c.active;
    if (diff <= 0) return undefined;
    const wait = remainingBackoff(c.backoff, this.ctx.clock.now(), this.baseMs, this.maxMs);
    if (wait > 0) {
      this.loop.enqueueAfter(`job:${c.key}`, wait);
      return undefined;
    }
    diff = Math.min(diff, MAX_CREATE_DELETE);
    let indexes: number[] = [];
    if (isIndexed(job)) {
      indexes = firstPendingIndexes(c, diff);
      diff = indexes.length;
    }
    const res = await slowStartBatch(diff, 1, async (i) => {
      const pod = this.newPod(job, isIndexed(job) ? indexes[i]! : -1);
      await this.podControl.create(job, pod);
    });
    c.active += res.ok;
    return res.error;
  }

  private newPod(job: Job, index: number): Pod {
    const name = job.metadata.name!;
    const pod = podFromTemplate(job.spec?.template, job, {
      generateName: index >= 0 ? generateNameWithIndex(name, index) : undefined,
    });
    const meta = pod.metadata;
    const labels = meta.labels!;
    if (!job.spec?.manualSelector) {
      // The API server puts these in the template; they are set again here so pods carry them
      // even for a Job stored before that defaulting existed.
      labels[CONTROLLER_UID_LABEL] ??= job.metadata.uid!;
      labels[JOB_NAME_LABEL] ??= name;
      labels[LEGACY_CONTROLLER_UID_LABEL] ??= job.metadata.uid!;
      labels[LEGACY_JOB_NAME_LABEL] ??= name;
    }
    const f = meta.finalizers ?? [];
    if (!f.includes(JOB_TRACKING_FINALIZER)) meta.finalizers = [...f, JOB_TRACKING_FINALIZER];
    if (index >= 0) {
      const spec = pod.spec!;
      addCompletionIndexEnv(spec.initContainers);
      addCompletionIndexEnv(spec.containers);
      meta.annotations = { ...(meta.annotations ?? {}), [JOB_COMPLETION_INDEX]: String(index) };
      labels[JOB_COMPLETION_INDEX] = String(index);
      spec.hostname = `${name}-${index}`;
    }
    return pod;
  }

  /**
   * Deletes pods, moving each deleted one from active (and ready) to terminating. Pods that
   * will never be counted (upstream's deleteJobPods: surplus, or the Job suspended) lose their
   * tracking finalizer first; otherwise (deleteActivePods, for a finishing Job) the tracking
   * step removes it once the pod is counted.
   */
  private async deletePods(c: SyncCtx, pods: Pod[], uncounted: boolean): Promise<unknown> {
    let error: unknown;
    await Promise.all(
      pods.map(async (p) => {
        try {
          if (uncounted) await this.removeFinalizer(p);
          await this.podControl.delete(c.job, p);
          c.active--;
          c.terminating++;
          if (isPodReady(p)) c.ready--;
        } catch (err) {
          error ??= err;
        }
      }),
    );
    return error;
  }

  private async removeFinalizer(pod: Pod): Promise<void> {
    if (!hasFinalizer(pod)) return;
    try {
      await this.ctx.client.mutate(GVR.pods, pod.metadata.namespace!, pod.metadata.name!, (cur) => {
        if (cur.metadata.uid !== pod.metadata.uid) return;
        const f = (cur.metadata.finalizers ?? []).filter((x) => x !== JOB_TRACKING_FINALIZER);
        if (f.length) cur.metadata.finalizers = f;
        else delete cur.metadata.finalizers;
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /**
   * trackJobStatusAndRemoveFinalizers: (1) record newly finished pods in
   * uncountedTerminatedPods (and the interim condition) in status, (2) remove their
   * finalizers, (3) move them into the counters, (4) add the terminal condition once
   * nothing is uncounted and no pod is terminating.
   */
  private async trackStatusAndRemoveFinalizers(c: SyncCtx, needsFlushIn: boolean): Promise<void> {
    let needsFlush = needsFlushIn;
    const job = c.job;
    const indexed = isIndexed(job);
    const uncounted = c.status.uncountedTerminatedPods!;
    uncounted.succeeded ??= [];
    uncounted.failed ??= [];
    const pods = indexed ? [...c.pods].sort((a, b) => completionIndex(a) - completionIndex(b)) : c.pods;
    const withFinalizer = new Set(pods.filter(hasFinalizer).map((p) => p.metadata.uid!));
    if (cleanUncounted(c.status, withFinalizer)) needsFlush = true;
    const toRemove: Pod[] = [];
    const newSucceededIndexes: number[] = [];
    let reachedMax = false;
    for (const pod of pods) {
      if (!hasFinalizer(pod)) continue;
      const uid = pod.metadata.uid!;
      const failed = isPodFailed(pod, job);
      const canRemove =
        !!job.metadata.deletionTimestamp ||
        c.finished !== undefined ||
        pod.status?.phase === 'Succeeded' ||
        failed;
      if (!canRemove) continue;
      toRemove.push(pod);
      if (pod.status?.phase === 'Succeeded' && !c.uncountedFailed.has(uid)) {
        if (indexed) {
          const ix = completionIndex(pod);
          if (ix >= 0 && ix < c.completions! && !c.prevSucceededIndexes.has(ix)) {
            newSucceededIndexes.push(ix);
            needsFlush = true;
          }
        } else if (!c.uncountedSucceeded.has(uid)) {
          uncounted.succeeded.push(uid);
          c.uncountedSucceeded.add(uid);
          needsFlush = true;
        }
      } else if (failed || (c.finished !== undefined && c.finished.type !== 'SuccessCriteriaMet')) {
        // Once the Job is failing, every pod not succeeded counts as failed.
        const ix = completionIndex(pod);
        if (!c.uncountedFailed.has(uid) && (!indexed || (ix >= 0 && ix < c.completions!))) {
          uncounted.failed.push(uid);
          c.uncountedFailed.add(uid);
          needsFlush = true;
        }
      }
      if (
        newSucceededIndexes.length + uncounted.succeeded.length + uncounted.failed.length >=
        MAX_UNCOUNTED
      ) {
        reachedMax = true;
        break;
      }
    }
    if (indexed) {
      c.succeededIndexes = c.succeededIndexes.with(newSucceededIndexes);
      const s = c.succeededIndexes.toString();
      if (s !== (c.status.completedIndexes ?? '')) needsFlush = true;
      c.status.succeeded = c.succeededIndexes.total;
      c.status.completedIndexes = s;
    }
    const now = new Date(this.ctx.clock.now());
    if (c.finished?.type === 'FailureTarget') {
      c.status.conditions = [...(c.status.conditions ?? []), c.finished];
      needsFlush = true;
      c.finished = newCondition('Failed', 'True', c.finished.reason ?? '', c.finished.message ?? '', now);
    }
    if (c.finished?.type === 'SuccessCriteriaMet') {
      if (!c.status.conditions?.some((x) => x.type === 'SuccessCriteriaMet' && x.status === 'True')) {
        c.status.conditions = [...(c.status.conditions ?? []), c.finished];
        needsFlush = true;
      }
      c.finished = newCondition('Complete', 'True', c.finished.reason ?? '', c.finished.message ?? '', now);
    }

    if (needsFlush) {
      await this.writeStatus(c);
      this.backoffStore.set(c.key, c.backoff);
      needsFlush = false;
    }
    let rmError: unknown;
    if (toRemove.length > 0) {
      await Promise.all(
        toRemove.map(async (p) => {
          try {
            await this.removeFinalizer(p);
            withFinalizer.delete(p.metadata.uid!);
          } catch (err) {
            rmError ??= err;
          }
        }),
      );
    }
    if (cleanUncounted(c.status, withFinalizer)) needsFlush = true;
    if (rmError) {
      if (needsFlush) await this.writeStatus(c);
      throw new Error(`removing tracking finalizers: ${errMessage(rmError)}`);
    }
    const finished = !reachedMax && this.enactFinished(c, now);
    if (finished) needsFlush = true;
    if (needsFlush) {
      await this.writeStatus(c);
      if (finished) this.recordFinished(c);
    }
  }

  private enactFinished(c: SyncCtx, now: Date): boolean {
    const f = c.finished;
    if (!f) return false;
    const u = c.status.uncountedTerminatedPods;
    if ((u?.succeeded?.length ?? 0) + (u?.failed?.length ?? 0) > 0) return false;
    if (c.terminating > 0) return false;
    c.status.conditions ??= [];
    ensureCondition(c.status.conditions, f.type, f.status, f.reason ?? '', f.message ?? '', now);
    if (f.type === 'Complete') {
      c.status.completionTime = c.status.conditions.find((x) => x.type === 'Complete')!.lastTransitionTime;
    }
    return true;
  }

  private recordFinished(c: SyncCtx): void {
    const f = c.finished!;
    if (f.type === 'Complete') {
      if (c.completions !== undefined && (c.status.succeeded ?? 0) > c.completions) {
        this.ctx.recorder.event(
          c.job,
          'Warning',
          'TooManySucceededPods',
          'Too many succeeded pods running after completion count reached',
        );
      }
      this.ctx.recorder.event(c.job, 'Normal', 'Completed', 'Job completed');
    } else {
      this.ctx.recorder.event(c.job, 'Warning', f.reason ?? 'Failed', f.message ?? '');
    }
  }

  private async writeStatus(c: SyncCtx): Promise<void> {
    c.job = await writeStatus(this.ctx.client, GVR.jobs, c.job, serializedStatus(c.status));
  }
}

/** firstPendingIndexes: the lowest indexes neither succeeded nor held by an active pod. */
function firstPendingIndexes(c: SyncCtx, count: number): number[] {
  const busy = new Set<number>();
  for (const p of c.activePods) {
    const ix = completionIndex(p);
    if (ix >= 0) busy.add(ix);
  }
  if (onlyReplaceFailedPods(c.job)) {
    for (const p of c.pods) if (isPodTerminating(p)) busy.add(completionIndex(p));
  }
  const out: number[] = [];
  for (let i = 0; i < c.completions! && out.length < count; i++) {
    if (!c.succeededIndexes.has(i) && !busy.has(i)) out.push(i);
  }
  return out;
}
