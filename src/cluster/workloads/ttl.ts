/**
 * The TTL-after-finished controller (pkg/controller/ttlafterfinished): a finished Job with
 * `ttlSecondsAfterFinished` is deleted, with background propagation, that many seconds
 * after its Complete/Failed condition; the garbage collector then removes its pods.
 */

import { objectKey, parseKey } from '../../kube/keys.ts';
import { GVR, isConflict } from '../client.ts';
import { type ControllerContext, LoopController } from './context.ts';
import type { Informer } from './informer.ts';
import { finishedCondition, type Job } from './job-util.ts';
import { parseTime } from './util.ts';

export class TtlAfterFinishedController extends LoopController {
  private readonly jobs: Informer;

  constructor(ctx: ControllerContext) {
    super(ctx, 'ttl-after-finished');
    this.jobs = ctx.informers.for(GVR.jobs);
    this.unsubscribeOnStop(
      this.jobs.subscribe((type, obj) => {
        const job = obj as Job;
        if (type !== 'DELETED' && needsCleanup(job)) this.loop.enqueue(objectKey(job));
      }),
    );
  }

  protected async sync(key: string): Promise<void> {
    const job = this.jobs.get(key) as Job | undefined;
    if (!job || !needsCleanup(job)) return;
    const left = expiresAt(job)! - this.ctx.clock.now();
    if (left > 0) {
      this.loop.enqueueAfter(key, left);
      return;
    }
    // Re-check the live object: the TTL may have been changed since the cache saw it.
    const { namespace = '', name } = parseKey(key);
    const fresh = this.ctx.client.get<Job>(GVR.jobs, namespace, name);
    if (!fresh || fresh.metadata.uid !== job.metadata.uid || !needsCleanup(fresh)) return;
    const freshLeft = expiresAt(fresh)! - this.ctx.clock.now();
    if (freshLeft > 0) {
      this.loop.enqueueAfter(key, freshLeft);
      return;
    }
    try {
      await this.ctx.client.delete(GVR.jobs, namespace, name, {
        propagationPolicy: 'Background',
        preconditions: { resourceVersion: fresh.metadata.resourceVersion },
      });
    } catch (err) {
      // Changed between the read and the delete: the next event brings it back here.
      if (!isConflict(err)) throw err;
    }
  }
}

function needsCleanup(job: Job): boolean {
  return (
    typeof job.spec?.ttlSecondsAfterFinished === 'number' &&
    !job.metadata.deletionTimestamp &&
    finishedCondition(job) !== undefined
  );
}

function expiresAt(job: Job): number | undefined {
  const finished =
    parseTime(finishedCondition(job)?.lastTransitionTime) ?? parseTime(job.status?.completionTime);
  if (finished === undefined) return undefined;
  return finished + job.spec!.ttlSecondsAfterFinished! * 1000;
}
