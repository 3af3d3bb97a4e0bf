/**
 * Cohorts (borrowing and lending limits), preemption within a ClusterQueue and reclaim within
 * a cohort, and the scheduler's cycle order, as Kueue v0.19 decides them (kueue
 * pkg/cache/scheduler/resource_node.go, pkg/scheduler/flavorassigner, pkg/scheduler/preemption,
 * pkg/scheduler/scheduler.go). Expected values are worked out by hand from those rules.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { schedule, usageList } from '../../../src/cluster/kueue/admission.ts';
import type { ClusterQueue } from '../../../src/cluster/kueue/api.ts';
import { admittedWith, cq, lq, snap, wl } from './fixtures.ts';

function quotaQueue(
  name: string,
  cpu: number,
  opts: {
    cohort?: string;
    borrowingLimit?: number;
    lendingLimit?: number;
    preemption?: Record<string, unknown>;
    strategy?: 'StrictFIFO' | 'BestEffortFIFO';
  } = {},
): ClusterQueue {
  const resource: Record<string, unknown> = { name: 'cpu', nominalQuota: cpu };
  if (opts.borrowingLimit !== undefined) resource.borrowingLimit = opts.borrowingLimit;
  if (opts.lendingLimit !== undefined) resource.lendingLimit = opts.lendingLimit;
  return cq(name, {
    ...(opts.cohort ? { cohortName: opts.cohort } : {}),
    ...(opts.preemption ? { preemption: opts.preemption } : {}),
    queueingStrategy: opts.strategy ?? 'BestEffortFIFO',
    resourceGroups: [
      {
        coveredResources: ['cpu'],
        flavors: [
          { name: 'default-flavor', resources: [resource as { name: string; nominalQuota: number }] },
        ],
      },
    ],
  });
}

/** Two ClusterQueues `cq-a` and `cq-b` with LocalQueues `a` and `b` in `default`. */
function pair(a: ClusterQueue, b: ClusterQueue) {
  return {
    clusterQueues: new Map([
      ['cq-a', a],
      ['cq-b', b],
    ]),
    localQueues: new Map([
      ['default/a', lq('a', 'cq-a')],
      ['default/b', lq('b', 'cq-b')],
    ]),
  };
}

const keys = (xs: { key: string }[]) => xs.map((x) => x.key);

describe('cohorts', () => {
  test('a ClusterQueue borrows what the rest of its cohort does not use', () => {
    const queues = pair(quotaQueue('cq-a', 4, { cohort: 'team' }), quotaQueue('cq-b', 4, { cohort: 'team' }));
    const r = schedule(snap([wl('big', '6', { queue: 'a' })], queues));
    assert.deepEqual(keys(r.admit), ['default/big']);
    assert.equal(r.admit[0]!.admission.clusterQueue, 'cq-a');
    // The QuotaReserved event says it borrowed (one level up: the cohort).
    assert.equal(r.admit[0]!.flavorsConsidered, 'main: default-flavor(Fit;borrow=1)');
  });

  test('without a cohort the nominal quota is the maximum capacity', () => {
    const queues = pair(quotaQueue('cq-a', 4), quotaQueue('cq-b', 4));
    const r = schedule(snap([wl('big', '6', { queue: 'a' })], queues));
    assert.equal(
      r.pending[0]!.message,
      "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default-flavor, previously considered podsets requests (0) + current podset request (6) > maximum capacity (4)",
    );
  });

  test('borrowingLimit caps what a queue may take from its cohort', () => {
    const queues = pair(
      quotaQueue('cq-a', 4, { cohort: 'team', borrowingLimit: 1 }),
      quotaQueue('cq-b', 4, { cohort: 'team' }),
    );
    const r = schedule(snap([wl('big', '6', { queue: 'a' })], queues));
    assert.deepEqual(r.admit, []);
    assert.match(r.pending[0]!.message, /current podset request \(6\) > maximum capacity \(5\)$/);
  });

  test('lendingLimit caps what a queue lends to its cohort', () => {
    const queues = pair(
      quotaQueue('cq-a', 4, { cohort: 'team' }),
      quotaQueue('cq-b', 4, { cohort: 'team', lendingLimit: 1 }),
    );
    const r = schedule(
      snap([wl('big', '6', { queue: 'a' }), wl('fits', '5', { queue: 'a', created: 1 })], queues),
    );
    assert.match(r.pending.find((p) => p.key === 'default/big')!.message, /> maximum capacity \(5\)$/);
    assert.deepEqual(keys(r.admit), ['default/fits']);
  });

  test('what another queue borrows is not available; the message counts what is missing', () => {
    const queues = pair(quotaQueue('cq-a', 4, { cohort: 'team' }), quotaQueue('cq-b', 4, { cohort: 'team' }));
    const borrower = admittedWith(wl('borrower', '6', { queue: 'b' }), 'cq-b', '6');
    const r = schedule(snap([borrower, wl('mine', '4', { queue: 'a' })], queues));
    assert.deepEqual(r.admit, []);
    assert.equal(
      r.pending[0]!.message,
      "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 2 more needed",
    );
    assert.deepEqual(r.preempt, [], 'reclaimWithinCohort defaults to Never');
  });

  test('status: usage past the nominal quota is reported as borrowed', () => {
    const q = quotaQueue('cq-a', 4, { cohort: 'team' });
    const usage = new Map([['default-flavor', new Map([['cpu', 6000n]])]]);
    assert.deepEqual(usageList(usage, q, true), [
      { name: 'default-flavor', resources: [{ name: 'cpu', total: '6', borrowed: '2' }] },
    ]);
  });

  test('heads within nominal quota go before heads that borrow, whatever their priority', () => {
    const queues = pair(quotaQueue('cq-a', 4, { cohort: 'team' }), quotaQueue('cq-b', 4, { cohort: 'team' }));
    const held = admittedWith(wl('held', '4', { queue: 'a' }), 'cq-a', '4');
    const r = schedule(
      snap(
        [
          held,
          wl('borrows', '2', { queue: 'a', priority: 100 }),
          wl('nominal', '4', { queue: 'b', created: 5 }),
        ],
        queues,
      ),
    );
    assert.deepEqual(keys(r.admit), ['default/nominal']);
    assert.equal(
      r.pending.find((p) => p.key === 'default/borrows')!.message,
      "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 2 more needed",
    );
  });
});

describe('preemption within a ClusterQueue', () => {
  const single = (preemption?: Record<string, unknown>) => ({
    clusterQueues: new Map([
      ['cluster-queue', quotaQueue('cluster-queue', 4, preemption ? { preemption } : {})],
    ]),
  });

  test('LowerPriority: a higher-priority workload preempts, with Kueue’s message on both sides', () => {
    const low = admittedWith(wl('low', '4', { priority: 0 }), 'cluster-queue', '4');
    const high = wl('high', '2', { priority: 10, created: 5 });
    const r = schedule(snap([low, high], single({ withinClusterQueue: 'LowerPriority' })));
    assert.deepEqual(r.admit, []);
    assert.deepEqual(r.preempt, [
      {
        key: 'default/low',
        reason: 'InClusterQueue',
        preemptorKey: 'default/high',
        message: `Preempted to accommodate a workload (UID: ${high.metadata.uid}, JobUID: UNKNOWN) due to prioritization in the ClusterQueue; preemptor path: /cluster-queue; preemptee path: /cluster-queue`,
      },
    ]);
    assert.deepEqual(r.pending, [
      {
        key: 'default/high',
        reason: 'Pending',
        message:
          "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 2 more needed. Pending the preemption of 1 workload(s)",
      },
    ]);
  });

  test('Never (the default) and equal priorities under LowerPriority preempt nothing', () => {
    const low = admittedWith(wl('low', '4'), 'cluster-queue', '4');
    assert.deepEqual(schedule(snap([low, wl('high', '2', { priority: 10 })], single())).preempt, []);
    const r = schedule(
      snap([low, wl('same', '2', { created: 5 })], single({ withinClusterQueue: 'LowerPriority' })),
    );
    assert.deepEqual(r.preempt, []);
    assert.match(r.pending[0]!.message, /2 more needed$/);
  });

  test('LowerOrNewerEqualPriority: an older workload of equal priority preempts a newer one', () => {
    const newer = admittedWith(wl('newer', '4', { created: 10 }), 'cluster-queue', '4');
    const older = wl('older', '2', { created: 0 });
    const r = schedule(snap([newer, older], single({ withinClusterQueue: 'LowerOrNewerEqualPriority' })));
    assert.deepEqual(keys(r.preempt), ['default/newer']);
    const r2 = schedule(
      snap(
        [
          admittedWith(wl('old', '4', { created: 0 }), 'cluster-queue', '4'),
          wl('young', '2', { created: 10 }),
        ],
        single({ withinClusterQueue: 'LowerOrNewerEqualPriority' }),
      ),
    );
    assert.deepEqual(r2.preempt, []);
  });

  test('only as many as needed are preempted: lowest priority first, then the most recently admitted', () => {
    const a = admittedWith(wl('a', '1', { priority: 1 }), 'cluster-queue', '1', 0);
    const b = admittedWith(wl('b', '1', { priority: 0 }), 'cluster-queue', '1', 1);
    const c = admittedWith(wl('c', '2', { priority: 0 }), 'cluster-queue', '2', 2);
    const r = schedule(
      snap([a, b, c, wl('high', '2', { priority: 5 })], single({ withinClusterQueue: 'LowerPriority' })),
    );
    // Order: c (prio 0, newest), b (prio 0), a (prio 1). c alone frees 2 CPUs: b and a stay.
    assert.deepEqual(keys(r.preempt), ['default/c']);
  });

  test('fill-back: a target found unnecessary once later ones are chosen is given back', () => {
    const small = admittedWith(wl('small', '1', { priority: 0 }), 'cluster-queue', '1', 5);
    const big = admittedWith(wl('big', '3', { priority: 0 }), 'cluster-queue', '3', 0);
    const r = schedule(
      snap([small, big, wl('high', '3', { priority: 5 })], single({ withinClusterQueue: 'LowerPriority' })),
    );
    // small (newest) is taken first, then big; with big gone small is not needed.
    assert.deepEqual(keys(r.preempt), ['default/big']);
  });

  test('a workload already evicted is counted, not preempted again', () => {
    const low = admittedWith(wl('low', '4'), 'cluster-queue', '4');
    low.status!.conditions!.push({
      type: 'Evicted',
      status: 'True',
      reason: 'Preempted',
      message: 'x',
      lastTransitionTime: '2026-01-01T00:00:01Z',
    });
    const r = schedule(
      snap([low, wl('high', '2', { priority: 10 })], single({ withinClusterQueue: 'LowerPriority' })),
    );
    assert.deepEqual(r.preempt, []);
    assert.match(r.pending[0]!.message, /Pending the preemption of 1 workload\(s\)$/);
  });
});

describe('reclaim within a cohort', () => {
  const borrowerSetup = (reclaim: string) => {
    const queues = pair(
      quotaQueue('cq-a', 4, { cohort: 'team', preemption: { reclaimWithinCohort: reclaim } }),
      quotaQueue('cq-b', 4, { cohort: 'team' }),
    );
    const b1 = admittedWith(wl('b1', '3', { queue: 'b', priority: 100 }), 'cq-b', '3', 0);
    const b2 = admittedWith(wl('b2', '3', { queue: 'b', priority: 100 }), 'cq-b', '3', 1);
    return { queues, b1, b2 };
  };

  test('a queue reclaims its nominal quota from a borrowing queue, whatever the priorities (Any)', () => {
    const { queues, b1, b2 } = borrowerSetup('Any');
    const mine = wl('mine', '4', { queue: 'a' });
    const r = schedule(snap([b1, b2, mine], queues));
    assert.deepEqual(r.preempt, [
      {
        key: 'default/b2',
        reason: 'InCohortReclamation',
        preemptorKey: 'default/mine',
        message: `Preempted to accommodate a workload (UID: ${mine.metadata.uid}, JobUID: UNKNOWN) due to reclamation within the cohort; preemptor path: /team/cq-a; preemptee path: /team/cq-b`,
      },
    ]);
  });

  test('LowerPriority reclaims only from lower priorities; Never not at all', () => {
    const { queues, b1, b2 } = borrowerSetup('LowerPriority');
    assert.deepEqual(
      schedule(snap([b1, b2, wl('mine', '4', { queue: 'a', priority: 0 })], queues)).preempt,
      [],
    );
    const never = borrowerSetup('Never');
    assert.deepEqual(
      schedule(snap([never.b1, never.b2, wl('mine', '4', { queue: 'a', priority: 1000 })], never.queues))
        .preempt,
      [],
    );
  });

  test('a queue within its nominal quota is not reclaimed from', () => {
    const queues = pair(
      quotaQueue('cq-a', 4, { cohort: 'team', preemption: { reclaimWithinCohort: 'Any' } }),
      quotaQueue('cq-b', 4, { cohort: 'team' }),
    );
    const b = admittedWith(wl('b', '4', { queue: 'b' }), 'cq-b', '4');
    const a = admittedWith(wl('a', '4', { queue: 'a' }), 'cq-a', '4');
    const r = schedule(snap([a, b, wl('more', '1', { queue: 'a', created: 3 })], queues));
    assert.deepEqual(r.preempt, []);
  });
});

describe('waitForPodsReady.blockAdmission', () => {
  test('one admission at a time while admitted pods are not ready', () => {
    const r = schedule(snap([wl('a', '1'), wl('b', '1', { created: 1 })], { blockAdmission: true }));
    assert.deepEqual(keys(r.admit), ['default/a']);
    assert.deepEqual(r.pending, [
      {
        key: 'default/b',
        reason: 'Waiting',
        message: 'waiting for all admitted workloads to be in PodsReady condition',
      },
    ]);
  });
});
