/**
 * The spending cap's bookkeeping: what offloaded Jobs cost now (their virtual pods plus the
 * launches whose virtual pods the cache does not show yet), and the serialization of
 * launches while a cap is set.
 */

import { type OffloadContext, POD } from './context.ts';
import { currentSpend, isVirtualPod } from './core.ts';
import * as K from './keys.ts';
import type { Pod } from './types.ts';

/**
 * USD per hour spent now, reservations included. A reservation ends when the cache shows
 * its virtual pod carrying the remote pod's cost: the virtual pod exists from the claim on,
 * before the remote create, and costs nothing in `currentSpend` until it is linked.
 */
export async function spendNow(c: OffloadContext): Promise<number> {
  const vpods = ((await c.cache.list(POD, { labelSelector: `${K.MANAGED}=true` })) as Pod[]).filter(
    isVirtualPod,
  );
  const seen = new Set(
    vpods
      .filter((p) => p.metadata.annotations?.[K.COST_PER_HR] !== undefined)
      .map((p) => p.metadata.ownerReferences?.[0]?.uid),
  );
  for (const uid of [...c.reservations.keys()]) if (seen.has(uid)) c.reservations.delete(uid);
  let reserved = 0;
  for (const v of c.reservations.values()) reserved += v;
  return currentSpend(vpods) + reserved;
}

/** With a spending cap, launches run one at a time so two Jobs never both spend the last of it. */
export function exclusiveUnderCap(maxHourlySpend: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let chain: Promise<unknown> = Promise.resolve();
  const serialized = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = chain.then(fn, fn);
    chain = run.catch(() => undefined);
    return run;
  };
  return (fn) => (maxHourlySpend > 0 ? serialized(fn) : fn());
}
