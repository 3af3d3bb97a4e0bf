import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { queueCounts, schedule } from '../../../src/cluster/kueue/admission.ts';
import type { Workload } from '../../../src/cluster/kueue/api.ts';
import { admittedWith, cq, flavor, lq, snap, wl } from './fixtures.ts';

describe('quota', () => {
  test('admits within nominal quota and records flavors, usage and count', () => {
    const r = schedule(snap([wl('a', '1', { count: 3 })]));
    assert.equal(r.admit.length, 1);
    assert.deepEqual(r.admit[0]!.admission, {
      clusterQueue: 'cluster-queue',
      podSetAssignments: [
        { name: 'main', flavors: { cpu: 'default-flavor' }, resourceUsage: { cpu: '3' }, count: 3 },
      ],
    });
  });

  test("a second workload waits for quota with Kueue's message", () => {
    const r = schedule(snap([wl('a', '3', { created: 0 }), wl('b', '2', { created: 1 })]));
    assert.deepEqual(
      r.admit.map((a) => a.key),
      ['default/a'],
    );
    assert.deepEqual(r.pending, [
      {
        key: 'default/b',
        reason: 'Pending',
        message:
          "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 1 more needed",
      },
    ]);
  });

  test('admitted workloads hold their quota; finished ones do not', () => {
    const holder = admittedWith(wl('a', '4'), 'cluster-queue', '4');
    assert.equal(schedule(snap([holder, wl('b', '1')])).admit.length, 0);
    const done = {
      ...holder,
      status: {
        ...holder.status,
        conditions: [
          ...holder.status!.conditions!,
          {
            type: 'Finished',
            status: 'True' as const,
            reason: 'Succeeded',
            message: '',
            lastTransitionTime: '',
          },
        ],
      },
    };
    assert.deepEqual(
      schedule(snap([done, wl('b', '1')])).admit.map((a) => a.key),
      ['default/b'],
    );
  });

  test('more than the whole quota can never fit', () => {
    const r = schedule(snap([wl('big', '5')]));
    // Kueue v0.15+ wording (flavorassigner.fitsResourceQuota).
    assert.equal(
      r.pending[0]!.message,
      "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default-flavor, previously considered podsets requests (0) + current podset request (5) > maximum capacity (4)",
    );
  });

  test('every resource that does not fit is named (requests.ForEach goes on); memory in binary units', () => {
    const both = cq('cluster-queue', {
      resourceGroups: [
        {
          coveredResources: ['cpu', 'memory'],
          flavors: [
            {
              name: 'default-flavor',
              resources: [
                { name: 'cpu', nominalQuota: 4 },
                { name: 'memory', nominalQuota: '4Gi' },
              ],
            },
          ],
        },
      ],
    });
    const r = schedule(
      snap([wl('big', '5', { memory: '8Gi' }), wl('small', '1', { memory: '1536Mi', created: 1 })], {
        clusterQueues: new Map([['cluster-queue', both]]),
      }),
    );
    // Memory in binary units, as Kueue's ResourceFormatter writes it.
    assert.deepEqual(r.admit[0]!.admission.podSetAssignments[0]!.resourceUsage, {
      cpu: '1',
      memory: '1536Mi',
    });
    assert.equal(
      r.pending[0]!.message,
      "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default-flavor, previously considered podsets requests (0) + current podset request (5) > maximum capacity (4), insufficient quota for memory in flavor default-flavor, previously considered podsets requests (0) + current podset request (8Gi) > maximum capacity (4Gi)",
    );
  });

  test('a resource the queue does not cover makes a workload inadmissible there', () => {
    const r = schedule(snap([wl('m', '1', { memory: '1Gi' })]));
    assert.match(r.pending[0]!.message, /resource memory unavailable in ClusterQueue/);
  });

  test('milli-CPU quantities add up exactly', () => {
    const r = schedule(
      snap([wl('a', '1500m'), wl('b', '2500m', { created: 1 }), wl('c', '1m', { created: 2 })]),
    );
    assert.deepEqual(
      r.admit.map((a) => a.key),
      ['default/a', 'default/b'],
    );
    assert.equal(r.admit[0]!.admission.podSetAssignments[0]!.resourceUsage!.cpu, '1500m');
  });

  test('pods are counted when the queue covers them', () => {
    const q = cq('cluster-queue', {
      resourceGroups: [
        {
          coveredResources: ['cpu', 'pods'],
          flavors: [
            {
              name: 'default-flavor',
              resources: [
                { name: 'cpu', nominalQuota: 100 },
                { name: 'pods', nominalQuota: 2 },
              ],
            },
          ],
        },
      ],
    });
    const r = schedule(
      snap([wl('a', '1', { count: 2 }), wl('b', '1', { created: 1 })], {
        clusterQueues: new Map([['cluster-queue', q]]),
      }),
    );
    assert.deepEqual(
      r.admit.map((a) => a.key),
      ['default/a'],
    );
    assert.equal(r.admit[0]!.admission.podSetAssignments[0]!.resourceUsage!.pods, '2');
  });
});

describe('flavors', () => {
  const twoFlavors = cq('cluster-queue', {
    resourceGroups: [
      {
        coveredResources: ['cpu'],
        flavors: [
          { name: 'on-demand', resources: [{ name: 'cpu', nominalQuota: 2 }] },
          { name: 'spot', resources: [{ name: 'cpu', nominalQuota: 4 }] },
        ],
      },
    ],
  });
  const flavors = new Map([
    ['on-demand', flavor('on-demand', { nodeLabels: { tier: 'on-demand' } })],
    [
      'spot',
      flavor('spot', {
        nodeLabels: { tier: 'spot' },
        nodeTaints: [{ key: 'spot', value: 'true', effect: 'NoSchedule' }],
      }),
    ],
  ]);

  test('the first flavor with room wins; the next is tried when it is full', () => {
    const s = snap(
      [wl('a', '2'), wl('b', '2', { created: 1, tolerations: [{ key: 'spot', operator: 'Exists' }] })],
      {
        clusterQueues: new Map([['cluster-queue', twoFlavors]]),
        flavors,
      },
    );
    const r = schedule(s);
    assert.deepEqual(
      r.admit.map((a) => a.admission.podSetAssignments[0]!.flavors),
      [{ cpu: 'on-demand' }, { cpu: 'spot' }],
    );
    // The QuotaReserved event's "Flavors considered": nothing when the first flavor simply fit.
    assert.deepEqual(
      r.admit.map((a) => a.flavorsConsidered),
      [
        '',
        'main: on-demand(preemptionMode=NoCandidates;insufficient unused quota for cpu in flavor on-demand, 2 more needed)',
      ],
    );
  });

  test('untolerated taints and conflicting node selectors rule a flavor out', () => {
    const s = snap([wl('a', '3'), wl('b', '1', { created: 1, nodeSelector: { tier: 'spot' } })], {
      clusterQueues: new Map([['cluster-queue', twoFlavors]]),
      flavors,
    });
    const r = schedule(s);
    assert.equal(r.admit.length, 0);
    assert.match(r.pending[0]!.message, /untolerated taint spot=true:NoSchedule in flavor spot/);
    assert.match(r.pending[1]!.message, /flavor on-demand doesn't match node affinity/);
  });

  test('a missing flavor makes the queue inactive', () => {
    const r = schedule(snap([wl('a', '1')], { flavors: new Map() }));
    assert.deepEqual(r.pending, [
      { key: 'default/a', reason: 'Inadmissible', message: 'ClusterQueue cluster-queue is inactive' },
    ]);
  });
});

describe('ordering', () => {
  test('BestEffortFIFO: a workload that does not fit does not block smaller ones behind it', () => {
    const r = schedule(
      snap([wl('a', '3', { created: 0 }), wl('b', '2', { created: 1 }), wl('c', '1', { created: 2 })]),
    );
    assert.deepEqual(
      r.admit.map((a) => a.key),
      ['default/a', 'default/c'],
    );
  });

  test('StrictFIFO: the oldest workload that does not fit blocks the rest', () => {
    const strict = new Map([['cluster-queue', cq('cluster-queue', { queueingStrategy: 'StrictFIFO' })]]);
    const r = schedule(
      snap([wl('a', '3', { created: 0 }), wl('b', '2', { created: 1 }), wl('c', '1', { created: 2 })], {
        clusterQueues: strict,
      }),
    );
    assert.deepEqual(
      r.admit.map((a) => a.key),
      ['default/a'],
    );
    assert.deepEqual(
      r.pending.map((p) => p.key),
      ['default/b'],
    );
  });

  test('age decides, then the order workloads were first seen, and priority before both', () => {
    const older = wl('z-older', '4', { created: 0 });
    const newer = wl('a-newer', '4', { created: 5 });
    assert.deepEqual(
      schedule(snap([newer, older])).admit.map((a) => a.key),
      ['default/z-older'],
    );
    const x = wl('x', '4', { created: 0 });
    const y = wl('y', '4', { created: 0 });
    const order = (w: Workload) => (w.metadata.name === 'y' ? 1 : 2);
    assert.deepEqual(
      schedule(snap([x, y], { order })).admit.map((a) => a.key),
      ['default/y'],
    );
    const urgent = wl('urgent', '4', { created: 9, priority: 100 });
    assert.deepEqual(
      schedule(snap([older, urgent])).admit.map((a) => a.key),
      ['default/urgent'],
    );
  });
});

describe('queues and namespaces', () => {
  test('missing queues and unselected namespaces are reported', () => {
    const s = snap([wl('a', '1', { queue: 'nope' }), wl('b', '1', { ns: 'other' })], {
      localQueues: new Map([
        ['default/user-queue', lq('user-queue', 'cluster-queue')],
        ['other/user-queue', lq('user-queue', 'cluster-queue', 'other')],
      ]),
      clusterQueues: new Map([
        ['cluster-queue', cq('cluster-queue', { namespaceSelector: { matchLabels: { team: 'a' } } })],
      ]),
      namespaces: new Map<string, Record<string, string>>([
        ['other', {}],
        ['default', { team: 'a' }],
      ]),
    });
    const r = schedule(s);
    assert.deepEqual(
      r.pending.map((p) => p.message),
      ["LocalQueue nope doesn't exist", "Workload namespace doesn't match ClusterQueue selector"],
    );
    const noSelector = cq('cluster-queue');
    delete noSelector.spec!.namespaceSelector;
    assert.equal(
      schedule(snap([wl('c', '1')], { clusterQueues: new Map([['cluster-queue', noSelector]]) })).admit
        .length,
      0,
    );
  });

  test('inactive or held workloads are not candidates', () => {
    const off = wl('off', '1');
    off.spec.active = false;
    const held = wl('held', '1');
    held.status = {
      conditions: [
        { type: 'Requeued', status: 'False', reason: 'Deactivated', message: '', lastTransitionTime: '' },
      ],
    };
    assert.deepEqual(schedule(snap([off, held])), { admit: [], pending: [], preempt: [] });
  });

  test('queue counts: pending, reserving, admitted and usage per queue', () => {
    const s = snap([admittedWith(wl('a', '1')), wl('b', '9', { created: 1 }), wl('c', '1', { created: 2 })]);
    const counts = queueCounts(s);
    const c = counts.clusterQueues.get('cluster-queue')!;
    assert.deepEqual([c.pending, c.reserving, c.admitted], [2, 1, 1]);
    assert.equal(c.usage.get('default-flavor')?.get('cpu'), 1000n);
    const l = counts.localQueues.get('default/user-queue')!;
    assert.deepEqual([l.pending, l.reserving, l.admitted], [2, 1, 1]);
  });
});

describe("the QuotaReserved event's Flavors considered", () => {
  const twoFlavorQueue = (name: string, onDemand: number, spot: number, spec = {}) =>
    cq(name, {
      resourceGroups: [
        {
          coveredResources: ['cpu'],
          flavors: [
            { name: 'on-demand', resources: [{ name: 'cpu', nominalQuota: onDemand }] },
            { name: 'spot', resources: [{ name: 'cpu', nominalQuota: spot }] },
          ],
        },
      ],
      ...spec,
    });
  const flavors = new Map([
    ['on-demand', flavor('on-demand')],
    ['spot', flavor('spot')],
  ]);

  test('a flavor that can never fit, then one that fits by borrowing (as Kueue scheduler_test)', () => {
    const s = snap([wl('big', '8')], {
      flavors,
      clusterQueues: new Map([
        ['cluster-queue', twoFlavorQueue('cluster-queue', 6, 4, { cohortName: 'team' })],
        [
          'lender',
          cq('lender', {
            cohortName: 'team',
            resourceGroups: [
              {
                coveredResources: ['cpu'],
                flavors: [{ name: 'spot', resources: [{ name: 'cpu', nominalQuota: 4 }] }],
              },
            ],
          }),
        ],
      ]),
    });
    const [admitted] = schedule(s).admit;
    assert.deepEqual(admitted?.admission.podSetAssignments[0]?.flavors, { cpu: 'spot' });
    assert.equal(
      admitted?.flavorsConsidered,
      'main: on-demand(NoFit;insufficient quota for cpu in flavor on-demand, previously considered podsets requests (0) + current podset request (8) > maximum capacity (6)), spot(Fit;borrow=1)',
    );
  });

  test('a flavor that needs preemption is passed for the next (whenCanPreempt: TryNextFlavor)', () => {
    const blocker = admittedWith(wl('blocker', '1', { priority: 50 }));
    blocker.status!.admission!.podSetAssignments[0]!.flavors = { cpu: 'on-demand' };
    const s = snap([blocker, wl('test-wl', '1', { priority: 100, created: 1 })], {
      flavors,
      clusterQueues: new Map([
        [
          'cluster-queue',
          twoFlavorQueue('cluster-queue', 1, 1, { preemption: { withinClusterQueue: 'LowerPriority' } }),
        ],
      ]),
    });
    const [admitted] = schedule(s).admit;
    assert.deepEqual(admitted?.admission.podSetAssignments[0]?.flavors, { cpu: 'spot' });
    assert.equal(
      admitted?.flavorsConsidered,
      'main: on-demand(preemptionMode=Preempt;insufficient unused quota for cpu in flavor on-demand, 1 more needed)',
    );
  });
});
