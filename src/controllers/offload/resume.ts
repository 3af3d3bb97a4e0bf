/**
 * A Job left `Launching` (a crash, a create that timed out, a rate limit): its launch is
 * continued, the remote pod it made is adopted, or, when the Job no longer wants to go, its
 * remote pods are terminated and it returns local.
 */
import type { ReconcileResult } from '../../runtime/index.ts';
import { claim, clearLocal } from './claim.ts';
import { finalizeDeleted } from './cleanup.ts';
import type { OffloadContext } from './context.ts';
import { isVirtualPod } from './core.ts';
import { rollback } from './job-writes.ts';
import * as K from './keys.ts';
import { link, proceed } from './launch.ts';
import { freshForLaunch, settling, stillWanted } from './launch-state.ts';
import type { Job, Pod } from './types.ts';

export function resumeLaunch(c: OffloadContext, job: Job, pods: Pod[]): Promise<ReconcileResult | undefined> {
  return c.exclusive(async () => {
    const fresh = await freshForLaunch(c, job);
    if (fresh?.metadata.annotations?.[K.STATE] !== 'Launching') return undefined;
    if (fresh.metadata.deletionTimestamp) return finalizeDeleted(c, fresh, pods.find(isVirtualPod));
    const vpod = pods.find(isVirtualPod);
    const mine = (await c.provider.list(c.signal)).filter((r) => r.tags.jobUid === fresh.metadata.uid);
    const letGo = async (why: string): Promise<ReconcileResult> => {
      for (const r of mine) await c.provider.terminate(r.id, c.signal);
      // A create may still land: look again before letting go of the Job.
      const wait = settling(c, fresh);
      if (wait > 0) return { requeueAfter: wait };
      await rollback(c, fresh, vpod);
      c.log.info({ why }, 'an interrupted launch was abandoned; the Job is local');
      return { requeue: true };
    };
    if (vpod?.metadata.deletionTimestamp) return letGo('its virtual pod was deleted');
    if (!stillWanted(fresh)) return letGo('the Job no longer wants to be offloaded');
    if (mine.length === 0 && settling(c, fresh) > 0) return { requeueAfter: settling(c, fresh) };
    if (mine.length === 0) return proceed(c, fresh, vpod, 'resumed an interrupted launch');
    // The remote pod exists: the launch got as far as the create.
    const claimed = vpod ?? (await claim(c, fresh));
    if (claimed === 'busy') return { requeueAfter: 1000 };
    if (claimed === 'taken' || (await clearLocal(c, fresh)) !== 'clear') {
      return letGo('a local pod runs, or the virtual pod name is taken');
    }
    const [keep, ...extra] = mine;
    for (const r of extra) await c.provider.terminate(r.id, c.signal);
    c.reservations.set(fresh.metadata.uid ?? '', keep!.costPerHr);
    return link(c, fresh, claimed, keep!, {
      costPerHr: keep!.costPerHr,
      gpuTypeId: keep!.gpuTypeId,
      message: 'adopted the remote pod of an interrupted launch',
    });
  });
}
