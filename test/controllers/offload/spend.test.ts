/**
 * The spending cap's bookkeeping: a launch's reservation stands until the cache shows its
 * virtual pod carrying the remote cost. The virtual pod is created at the claim, before the
 * remote create, so seeing it without a cost must not end the reservation (the next launch
 * would otherwise believe the money unspent).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { OffloadContext } from '../../../src/controllers/offload/context.ts';
import * as K from '../../../src/controllers/offload/keys.ts';
import { spendNow } from '../../../src/controllers/offload/spend.ts';
import type { Pod } from '../../../src/controllers/offload/types.ts';

function virtualPod(jobUid: string, cost?: number): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `vp-${jobUid}`,
      namespace: 'default',
      labels: { [K.MANAGED]: 'true' },
      annotations: {
        [K.PROVIDER]: 'runpod',
        ...(cost !== undefined ? { [K.COST_PER_HR]: String(cost) } : {}),
      },
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: jobUid, uid: jobUid }],
    },
    status: { phase: 'Pending' },
  };
}

/** The two things spendNow reads: the cached virtual pods and the reservations. */
function context(pods: Pod[], reservations: Map<string, number>): OffloadContext {
  return { cache: { list: async () => pods }, reservations } as unknown as OffloadContext;
}

test('a reservation outlives a cached virtual pod without a cost, and ends once the cost shows', async () => {
  const reservations = new Map([['job-a', 0.4]]);
  assert.equal(await spendNow(context([virtualPod('job-a')], reservations)), 0.4);
  assert.equal(reservations.size, 1, 'claimed but not linked: still reserved');
  assert.equal(await spendNow(context([virtualPod('job-a', 0.4)], reservations)), 0.4);
  assert.equal(reservations.size, 0, 'linked: the virtual pod carries the cost now');
});
