/**
 * The CronJob controller (pkg/controller/cronjob/cronjob_controllerv2.go and utils.go): at
 * each schedule time (in `spec.timeZone`, UTC otherwise) it creates the Job
 * `<name>-<minutes since the epoch>` from `jobTemplate`, honouring `suspend`,
 * `startingDeadlineSeconds` and `concurrencyPolicy` (Allow, Forbid, Replace); it keeps
 * `status.active`, `lastScheduleTime` and `lastSuccessfulTime`, and deletes finished Jobs
 * beyond `successfulJobsHistoryLimit` (3) and `failedJobsHistoryLimit` (1), with upstream's
 * Events. Schedules are parsed by cron-parser (robfig/cron's standard five fields and
 * `@hourly`-style descriptors).
 *
 * Simulated time: schedules run on the cluster's timeline, where `timeScale` simulated
 * seconds pass per real second from the controller's start (`--time-scale`). Job names use
 * the simulated minute; the times written (`lastScheduleTime`, the Job's scheduled-timestamp
 * annotation) are the real instants, rounded up to the second, so `kubectl get` ages read
 * right. At scales where one real second spans several schedule times, the later ones are
 * taken as missed.
 */

import { CronExpressionParser } from 'cron-parser';
import type { CronJob, CronJobSpec } from '../../kube/builtin.ts';
import { rfc3339 } from '../../kube/conditions.ts';
import { objectKey, parseKey } from '../../kube/keys.ts';
import { ApiError } from '../apiserver/errors.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { GVR, isNotFound } from '../client.ts';
import { type ControllerContext, int, LoopController } from './context.ts';
import { BY_CONTROLLER_UID, type Informer } from './informer.ts';
import { finishedCondition, type Job } from './job-util.ts';
import { controllerRefOf, newControllerRef } from './pods.ts';
import { writeStatusIfChanged } from './status.ts';
import { errMessage } from './util.ts';

/** More missed start times than this and the controller warns (TooManyMissedTimes). */
const MAX_MISSED = 100;
const SCHEDULED_TIMESTAMP_ANNOTATION = 'batch.kubernetes.io/cronjob-scheduled-timestamp';

interface ObjectRef {
  kind: string;
  namespace: string;
  name: string;
  uid: string;
  apiVersion: string;
  resourceVersion?: string;
}

export type { CronJob } from '../../kube/builtin.ts';

export class CronJobController extends LoopController {
  private readonly cronjobs: Informer;
  private readonly jobs: Informer;
  private readonly timeScale: number;
  private readonly startedAt: number;

  constructor(ctx: ControllerContext, opts: { timeScale?: number } = {}) {
    super(ctx, 'cronjob');
    this.timeScale = opts.timeScale ?? 1;
    this.startedAt = ctx.clock.now();
    this.cronjobs = ctx.informers.for(GVR.cronjobs);
    this.jobs = ctx.informers.for(GVR.jobs);
    this.unsubscribeOnStop(this.cronjobs.subscribe((_t, o) => this.loop.enqueue(objectKey(o))));
    this.unsubscribeOnStop(
      this.jobs.subscribe((_t, o) => {
        const ref = controllerRefOf(o);
        if (ref?.kind === 'CronJob')
          this.loop.enqueueAfter(`${o.metadata.namespace}/${ref.name}`, this.ctx.batchMs);
      }),
    );
  }

  /** Now on the simulated timeline. */
  private simNow(): number {
    return this.toSim(this.ctx.clock.now());
  }

  /** A real instant on the simulated timeline (instants before the start are unchanged). */
  private toSim(real: number): number {
    return real <= this.startedAt ? real : this.startedAt + (real - this.startedAt) * this.timeScale;
  }

  /** A simulated instant in real time, rounded up to the second (what timestamps hold). */
  private toRealStamp(sim: number): string {
    const real = sim <= this.startedAt ? sim : this.startedAt + (sim - this.startedAt) / this.timeScale;
    return rfc3339(new Date(Math.ceil(real / 1000) * 1000));
  }

  /** Real milliseconds until a simulated instant. */
  private realDelay(simAt: number): number {
    return Math.max(1, Math.ceil((simAt - this.simNow()) / this.timeScale));
  }

  protected async sync(key: string): Promise<void> {
    const cj = this.cronjobs.get(key) as CronJob | undefined;
    if (!cj) return;
    const { namespace = '' } = parseKey(key);
    const owned = this.jobs
      .byIndex(BY_CONTROLLER_UID, cj.metadata.uid!)
      .filter((j) => controllerRefOf(j)?.kind === 'CronJob') as Job[];
    const status = structuredClone(cj.status ?? {});
    // The API server filled every reference it stored: kind, namespace, name, uid.
    let active = [...(status.active ?? [])] as ObjectRef[];

    // Reconcile the active list with the Jobs that exist and have not finished.
    for (const job of owned) {
      const inActive = active.some((r) => r.uid === job.metadata.uid);
      const done = finishedCondition(job);
      if (!done && !inActive && !job.metadata.deletionTimestamp) {
        active.push(jobRef(job));
      } else if (done && inActive) {
        active = active.filter((r) => r.uid !== job.metadata.uid);
        this.ctx.recorder.event(
          cj,
          'Normal',
          'SawCompletedJob',
          `Saw completed job: ${job.metadata.name}, status: ${done.type}`,
        );
        if (done.type === 'Complete') {
          const completion = (job.status as { completionTime?: string } | undefined)?.completionTime;
          if (completion && (!status.lastSuccessfulTime || completion > status.lastSuccessfulTime))
            status.lastSuccessfulTime = completion;
        }
      }
    }
    // A listed Job the cache has not seen yet (just created) stays unless the API says it is gone.
    active = active.filter((r) => {
      const cached = owned.find((j) => j.metadata.uid === r.uid);
      if (cached) return !finishedCondition(cached);
      const live = this.ctx.client.get<Job>(GVR.jobs, r.namespace, r.name);
      return live?.metadata.uid === r.uid && !finishedCondition(live);
    });

    let requeueAt: number | undefined;
    if (!cj.metadata.deletionTimestamp) {
      try {
        requeueAt = await this.schedule(cj, namespace, status, active);
      } catch (err) {
        if (!(err instanceof ScheduleError)) throw err;
      }
      await this.cleanupHistory(cj, owned);
    }
    if (active.length) status.active = active;
    else delete status.active;
    await writeStatusIfChanged(this.ctx.client, GVR.cronjobs, cj, status);
    if (requeueAt !== undefined) this.loop.enqueueAfter(key, this.realDelay(requeueAt) + 100);
  }

  /** Starts the Job of the latest missed schedule time, if due; returns the next time to look. */
  private async schedule(
    cj: CronJob,
    namespace: string,
    status: NonNullable<CronJob['status']>,
    active: ObjectRef[],
  ): Promise<number | undefined> {
    const spec: Partial<CronJobSpec> = cj.spec ?? {};
    const tz = spec.timeZone || 'UTC';
    let expr: ReturnType<typeof CronExpressionParser.parse>;
    const now = this.simNow();
    try {
      expr = CronExpressionParser.parse(spec.schedule ?? '', { currentDate: new Date(now), tz });
    } catch (err) {
      this.ctx.recorder.event(
        cj,
        'Warning',
        'UnparseableSchedule',
        `unparseable schedule: "${spec.schedule}" : ${errMessage(err)}`,
      );
      throw new ScheduleError();
    }
    const next = expr.next().toDate().getTime();
    if (spec.suspend) return undefined;
    const createdAt = Date.parse(cj.metadata.creationTimestamp ?? '') || now;
    const earliest = this.toSim(status.lastScheduleTime ? Date.parse(status.lastScheduleTime) : createdAt);
    // The latest schedule time in (earliest, now], counting the missed ones.
    const back = CronExpressionParser.parse(spec.schedule ?? '', { currentDate: new Date(now + 1), tz });
    let scheduled: number | undefined;
    let missed = 0;
    for (;;) {
      const t = back.prev().toDate().getTime();
      if (t <= earliest) break;
      scheduled ??= t;
      if (++missed > MAX_MISSED) break;
    }
    if (scheduled === undefined) return next;
    if (missed > MAX_MISSED) {
      this.ctx.recorder.event(
        cj,
        'Warning',
        'TooManyMissedTimes',
        'too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew',
      );
    }
    const deadline = spec.startingDeadlineSeconds;
    if (typeof deadline === 'number' && scheduled + deadline * 1000 < now) {
      this.ctx.recorder.event(
        cj,
        'Warning',
        'MissSchedule',
        `Missed scheduled time to start a job: ${rfc3339(new Date(scheduled))}`,
      );
      return next;
    }
    const policy = spec.concurrencyPolicy ?? 'Allow';
    if (policy === 'Forbid' && active.length > 0) {
      this.ctx.recorder.event(
        cj,
        'Normal',
        'JobAlreadyActive',
        'Not starting job because prior execution is running and concurrency policy is Forbid',
      );
      return next;
    }
    if (policy === 'Replace') {
      for (const ref of active.splice(0)) {
        try {
          await this.ctx.client.delete(GVR.jobs, namespace, ref.name, { propagationPolicy: 'Background' });
          this.ctx.recorder.event(cj, 'Normal', 'SuccessfulDelete', `Deleted job ${ref.name}`);
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
    }
    const name = `${cj.metadata.name}-${Math.floor(scheduled / 60_000)}`;
    const template = spec.jobTemplate ?? {};
    const job: KubeObject = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name,
        namespace,
        labels: { ...(template.metadata?.labels ?? {}) },
        annotations: {
          ...(template.metadata?.annotations ?? {}),
          [SCHEDULED_TIMESTAMP_ANNOTATION]: this.toRealStamp(scheduled),
        },
        ownerReferences: [newControllerRef(cj)],
      },
      spec: structuredClone(template.spec ?? {}),
    };
    let created: Job;
    try {
      created = await this.ctx.client.create<Job>(GVR.jobs, job);
      this.ctx.recorder.event(cj, 'Normal', 'SuccessfulCreate', `Created job ${name}`);
    } catch (err) {
      if (err instanceof ApiError && err.code === 409) {
        // Made by an earlier sync whose status write was lost: take it if it is ours.
        const existing = this.ctx.client.get<Job>(GVR.jobs, namespace, name);
        if (!existing || controllerRefOf(existing)?.uid !== cj.metadata.uid) throw err;
        created = existing;
      } else {
        this.ctx.recorder.event(cj, 'Warning', 'FailedCreate', `Error creating job: ${errMessage(err)}`);
        throw err;
      }
    }
    if (!active.some((r) => r.uid === created.metadata.uid)) active.push(jobRef(created));
    status.lastScheduleTime = this.toRealStamp(scheduled);
    return next;
  }

  /** Deletes the oldest finished Jobs beyond the history limits. */
  private async cleanupHistory(cj: CronJob, owned: Job[]): Promise<void> {
    const limits = {
      Complete: int(cj.spec?.successfulJobsHistoryLimit, 3),
      Failed: int(cj.spec?.failedJobsHistoryLimit, 1),
    };
    for (const type of ['Complete', 'Failed'] as const) {
      const finished = owned
        .filter((j) => !j.metadata.deletionTimestamp && finishedCondition(j)?.type === type)
        .sort((a, b) => startOf(a).localeCompare(startOf(b)));
      for (const job of finished.slice(0, Math.max(0, finished.length - limits[type]))) {
        try {
          await this.ctx.client.delete(GVR.jobs, job.metadata.namespace!, job.metadata.name!, {
            propagationPolicy: 'Background',
          });
          this.ctx.recorder.event(cj, 'Normal', 'SuccessfulDelete', `Deleted job ${job.metadata.name}`);
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
    }
  }
}

class ScheduleError extends Error {}

function startOf(job: Job): string {
  return (
    (job.status as { startTime?: string } | undefined)?.startTime ?? job.metadata.creationTimestamp ?? ''
  );
}

function jobRef(job: KubeObject): ObjectRef {
  return {
    kind: 'Job',
    namespace: job.metadata.namespace!,
    name: job.metadata.name!,
    uid: job.metadata.uid!,
    apiVersion: 'batch/v1',
    resourceVersion: job.metadata.resourceVersion,
  };
}
