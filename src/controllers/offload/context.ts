/**
 * What every step of the offload shell is handed: the reconcile's own context (client,
 * cache, log, recorder, signal) together with the controller's provider, options, clock
 * and the little it keeps in memory. Built once per reconcile, so the steps are plain
 * functions of it rather than closures over one controller.
 */
import { OWNER_UID_INDEX, type ReconcileContext } from '../../runtime/index.ts';
import type { OffloadMetrics } from './metrics.ts';
import type { OffloadOptions } from './options.ts';
import type { OffloadProvider } from './provider.ts';
import type { Job, Pod } from './types.ts';

export const JOB = { apiVersion: 'batch/v1', kind: 'Job' };
export const POD = { apiVersion: 'v1', kind: 'Pod' };

/** The part that lives as long as the controller. */
export interface OffloadShared {
  opts: OffloadOptions;
  provider: OffloadProvider;
  now: () => number;
  /** The resync period, also the wait before a passing refusal is tried again. */
  intervalMs: number;
  /** How often an offloaded Job's remote pod is polled. */
  pollMs: number;
  /** How long a create that got no answer may still land. */
  settleMs: number;
  /** Stops of the exit-code log watchers, by remote pod id. */
  watchers: Map<string, () => void>;
  /** Cost per hour of launched remote pods whose virtual pod the cache may not show yet, by Job uid. */
  reservations: Map<string, number>;
  /** Runs a launch alone when a spending cap is set, so two Jobs never both spend the last of it. */
  exclusive: <T>(fn: () => Promise<T>) => Promise<T>;
}

export type OffloadContext = ReconcileContext<OffloadMetrics> & OffloadShared;

/** The Job's pods as the cache has them. */
export const podsOf = async (c: OffloadContext, job: Job): Promise<Pod[]> =>
  (await c.cache.list(POD, {
    namespace: job.metadata.namespace,
    index: { name: OWNER_UID_INDEX, value: job.metadata.uid ?? '' },
  })) as Pod[];

export const stopWatcher = (c: OffloadShared, id: string | undefined) => {
  if (!id) return;
  c.watchers.get(id)?.();
  c.watchers.delete(id);
};
