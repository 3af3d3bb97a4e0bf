import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  AUTO_CREATED_ANNOTATION,
  type PodGroup,
  type PodGroupPhase,
  type PodObject,
} from '../../../src/apis/scheduling.incubator.k8s.io/v1alpha1.ts';
import {
  chooseVictim,
  deadlockTimeoutMs,
  decide,
  type PeerGroup,
} from '../../../src/controllers/podgroup/core.ts';
import { claimOf, groupKeysOf, invalidGroupName } from '../../../src/controllers/podgroup/membership.ts';
import { at, input, NS, pod, podGroup, step, T0 } from './fixtures.ts';

const names = (refs: { name: string }[]) => refs.map((r) => r.name).sort();
const running = (...podNames: string[]) => podNames.map((n) => pod(n, { phase: 'Running' }));

/** Puts a PodGroup in `phase` with the counts a previous reconcile would have written. */
function inPhase(
  phase: PodGroupPhase,
  counts: { running?: number; succeeded?: number; failed?: number } = {},
  spec = { minMember: 3 },
) {
  const pg = podGroup('g', spec);
  pg.status = {
    state: { phase, reason: 'X', message: 'm', lastTransitionTime: '2025-12-31T23:00:00Z' },
    running: counts.running ?? 0,
    succeeded: counts.succeeded ?? 0,
    failed: counts.failed ?? 0,
  };
  return pg;
}

describe('membership', () => {
  test('the label names the group; the annotation does when there is no label', () => {
    assert.equal(claimOf(pod('a', { group: 'x' })).group, 'x');
    assert.equal(claimOf(pod('a', { group: '', annotation: 'y' })).group, 'y');
    assert.equal(claimOf(pod('a', { group: 'x', annotation: 'x' })).conflict, false);
  });

  test('a label and an annotation that disagree: the label wins and both groups hear of the pod', () => {
    const p = pod('a', { group: 'x', annotation: 'y' });
    assert.deepEqual(claimOf(p), { group: 'x', label: 'x', annotation: 'y', conflict: true });
    assert.deepEqual(groupKeysOf(p), [`${NS}/x`, `${NS}/y`]);
  });

  test('group names must be usable as object names', () => {
    assert.equal(invalidGroupName('training-job-1'), undefined);
    assert.match(invalidGroupName('Training_Job') ?? '', /RFC 1123/);
    assert.match(invalidGroupName('a'.repeat(254)) ?? '', /253/);
  });
});

describe('ready labels (the seed rule: every member Running)', () => {
  test('labels every member once all are Running', () => {
    const pods = running('w1', 'w2', 'w3');
    const d = decide(input(pods, undefined));
    assert.deepEqual(names(d.label), ['w1', 'w2', 'w3']);
    assert.equal(d.phase, 'Running');
  });

  test('labels nobody while a member is not Running', () => {
    const pods = [...running('w1', 'w2'), pod('w3')];
    const d = decide(input(pods, undefined));
    assert.deepEqual(d.label, []);
    assert.equal(d.phase, 'Pending');
  });

  test('waits out the formation window after the newest member joined', () => {
    const pods = running('w1', 'w2');
    const joinedAt = new Map([
      [pods[0]!.metadata.uid!, T0.getTime() - 5000],
      [pods[1]!.metadata.uid!, T0.getTime() - 200],
    ]);
    const d = decide(input(pods, undefined, { joinedAt }));
    assert.deepEqual(d.label, []);
    assert.equal(d.requeueAfterMs, 800);
    const later = decide(input(pods, undefined, { joinedAt, now: at(1) }));
    assert.deepEqual(names(later.label), ['w1', 'w2']);
  });

  test('does not label pods that carry the label or that this process already labelled', () => {
    const pods = [
      pod('w1', { phase: 'Running', ready: true }),
      pod('w2', { phase: 'Running' }),
      pod('w3', { phase: 'Running' }),
    ];
    const d = decide(input(pods, undefined, { labelled: new Set([pods[2]!.metadata.uid!]) }));
    assert.deepEqual(names(d.label), ['w2']);
  });

  test('members that already succeeded count as having made it; only Running members are labelled', () => {
    const pods = [pod('w1', { phase: 'Succeeded', ready: true }), pod('w2', { phase: 'Running' })];
    assert.deepEqual(names(decide(input(pods, undefined)).label), ['w2']);
  });

  test('a late joiner is labelled once it runs', () => {
    const old = [
      pod('w1', { phase: 'Succeeded', ready: true }),
      pod('w2', { phase: 'Succeeded', ready: true }),
    ];
    const pending = decide(input([...old, pod('w3')], undefined));
    assert.deepEqual(pending.label, []);
    const ran = decide(input([...old, pod('w3', { phase: 'Running' })], undefined));
    assert.deepEqual(names(ran.label), ['w3']);
  });

  test('pods being deleted are neither counted nor labelled', () => {
    const pods = [pod('w1', { phase: 'Running' }), pod('w2', { phase: 'Running', deleting: true })];
    assert.deepEqual(names(decide(input(pods, undefined)).label), ['w1']);
  });

  test('with minMember, the gang is complete with minMember members running; later ones join when Running', () => {
    const pg = podGroup('g', { minMember: 2 });
    const pods = [...running('w1', 'w2'), pod('w3')];
    const d = step(pg, pods);
    assert.deepEqual(names(d.label), ['w1', 'w2']);
    assert.equal(d.phase, 'Running');
    const late = step(pg, [
      pod('w1', { phase: 'Running', ready: true }),
      pod('w2', { phase: 'Running', ready: true }),
      pod('w3', { phase: 'Running' }),
    ]);
    assert.deepEqual(names(late.label), ['w3']);
  });

  test('with minMember, fewer members than required: Pending, NotEnoughTasks, nobody labelled', () => {
    const pg = podGroup('g', { minMember: 4 });
    const d = step(pg, running('w1', 'w2'));
    assert.deepEqual(d.label, []);
    assert.equal(d.phase, 'Pending');
    assert.equal(d.reason, 'NotEnoughTasks');
    assert.equal(d.message, '2 of 4 required members exist');
  });

  test('without minMember the formation window does not apply to minMember groups', () => {
    const pg = podGroup('g', { minMember: 1 });
    const p = pod('w1', { phase: 'Running' });
    const d = step(pg, [p], { joinedAt: new Map([[p.metadata.uid!, T0.getTime()]]) });
    assert.deepEqual(names(d.label), ['w1']);
  });
});

/** One observation of a group: its status before, the members seen, and the phase decided. */
interface Transition {
  name: string;
  group: PodGroup;
  pods: PodObject[];
  phase: PodGroupPhase;
  reason?: string;
  message?: string | RegExp;
}

function transitionTests(rows: Transition[]) {
  for (const t of rows) {
    test(t.name, () => {
      const d = step(t.group, t.pods);
      assert.equal(d.phase, t.phase);
      if (t.reason !== undefined) assert.equal(d.reason, t.reason);
      if (typeof t.message === 'string') assert.equal(d.message, t.message);
      else if (t.message) assert.match(d.message, t.message);
    });
  }
}

const gpuFull = '0/2 nodes are available: 2 Insufficient nvidia.com/gpu.';

describe('the design transition table', () => {
  transitionTests([
    {
      name: 'Pending → Running: every required member runs',
      group: inPhase('Pending'),
      pods: running('a', 'b', 'c'),
      phase: 'Running',
      reason: 'MembersRunning',
      message: '3 of 3 required members running or succeeded',
    },
    {
      name: 'Pending → Recovering: part runs, the rest was rejected by the kubelet (PodFailed)',
      group: inPhase('Pending'),
      pods: [...running('a', 'b'), pod('c', { phase: 'Failed' })],
      phase: 'Recovering',
      reason: 'PodFailed',
      message: '1 member failed; 2 of 3 required members running or succeeded',
    },
    {
      name: 'Running → Recovering: a member is killed (PodFailed)',
      group: inPhase('Running', { running: 3 }),
      pods: [...running('a', 'b'), pod('c', { phase: 'Failed' })],
      phase: 'Recovering',
      reason: 'PodFailed',
    },
    {
      name: 'Running → Recovering: a member is being deleted (PodDeleted)',
      group: inPhase('Running', { running: 3 }),
      pods: [...running('a', 'b'), pod('c', { phase: 'Running', deleting: true })],
      phase: 'Recovering',
      reason: 'PodDeleted',
      message: '1 member being deleted; 2 of 3 required members running or succeeded',
    },
    {
      name: 'Running → Recovering: a member vanished between two observations (PodDeleted)',
      group: inPhase('Running', { running: 3 }),
      pods: running('a', 'b'),
      phase: 'Recovering',
      reason: 'PodDeleted',
    },
    {
      name: 'Running → Recovering: a member vanished and its replacement is pending (PodDeleted)',
      group: inPhase('Running', { running: 3 }),
      pods: [...running('a', 'b'), pod('c2')],
      phase: 'Recovering',
      reason: 'PodDeleted',
    },
    {
      name: 'Recovering → Running: the failed member re-runs',
      group: inPhase('Recovering', { running: 2, failed: 1 }),
      pods: [...running('a', 'b'), pod('c', { phase: 'Failed' }), pod('c2', { phase: 'Running' })],
      phase: 'Running',
      reason: 'MembersRunning',
    },
    {
      name: 'Recovering → Unschedulable: the new pod cannot be scheduled (NotEnoughResources)',
      group: inPhase('Recovering', { running: 2, failed: 1 }),
      pods: [...running('a', 'b'), pod('c', { phase: 'Failed' }), pod('c2', { unschedulable: gpuFull })],
      phase: 'Unschedulable',
      reason: 'NotEnoughResources',
      message: `1 member cannot be scheduled: ${gpuFull}; 2 of 3 required members running or succeeded`,
    },
    {
      name: 'Unschedulable → Pending: every member is deleted',
      group: inPhase('Unschedulable', { running: 2 }),
      pods: [],
      phase: 'Pending',
      reason: 'NotEnoughTasks',
      message: '0 of 3 required members exist',
    },
    {
      name: 'Unschedulable → Pending: every placed member is gone and the recreated ones wait',
      group: inPhase('Unschedulable', { running: 2 }),
      pods: [pod('a2'), pod('b2'), pod('c2')],
      phase: 'Pending',
      reason: 'MembersStarting',
    },
    {
      name: 'Unschedulable stays while deleted members are still terminating on their nodes',
      group: inPhase('Unschedulable', { running: 2 }),
      pods: [pod('a', { phase: 'Running', deleting: true }), pod('c', { unschedulable: 'full' })],
      phase: 'Unschedulable',
    },
    {
      name: 'Unschedulable → Running: the missing members get placed and run (the ambiguous last row)',
      group: inPhase('Unschedulable', { running: 2 }),
      pods: running('a', 'b', 'c'),
      phase: 'Running',
    },
  ]);
});

describe('losses made good between two observations', () => {
  const seen = (...ps: ReturnType<typeof pod>[]) =>
    new Map(ps.map((p) => [p.metadata.uid!, p.status!.phase!]));

  test('a running member deleted and already replaced: Recovering (PodDeleted), then Running', () => {
    const pg = inPhase('Running', { running: 3 });
    const [a, b, c, d] = running('a', 'b', 'c', 'd');
    const d1 = step(pg, [a!, b!, d!], { previous: seen(a!, b!, c!) });
    assert.equal(d1.phase, 'Recovering');
    assert.equal(d1.reason, 'PodDeleted');
    assert.equal(d1.message, '1 running member deleted; 3 of 3 required members running or succeeded');
    assert.equal(step(pg, [a!, b!, d!], { previous: d1.observed }).phase, 'Running');
  });

  test('a running member failed and already replaced: Recovering (PodFailed)', () => {
    const pg = inPhase('Running', { running: 3 });
    const [a, b, c] = running('a', 'b', 'c');
    const failedC = { ...c!, status: { ...c!.status, phase: 'Failed' } };
    const d = step(pg, [a!, b!, failedC, pod('d', { phase: 'Running' })], { previous: seen(a!, b!, c!) });
    assert.equal(d.phase, 'Recovering');
    assert.equal(d.reason, 'PodFailed');
  });

  test('a spare member lost above minMember: still Running', () => {
    const pg = inPhase('Running', { running: 3 }, { minMember: 2 });
    const [a, b, c] = running('a', 'b', 'c');
    assert.equal(step(pg, [a!, b!], { previous: seen(a!, b!, c!) }).phase, 'Running');
  });

  test('without a previous observation (a restarted controller) nothing is presumed lost', () => {
    const pg = inPhase('Running', { running: 3 });
    assert.equal(step(pg, running('a', 'b', 'd')).phase, 'Running');
  });
});

describe('troupe transitions beyond the table', () => {
  transitionTests([
    {
      name: 'Pending → Unschedulable: partly placed, the rest unschedulable (a deadlock)',
      group: inPhase('Pending'),
      pods: [...running('a', 'b'), pod('c', { unschedulable: 'Insufficient gpu' })],
      phase: 'Unschedulable',
      reason: 'NotEnoughResources',
    },
    {
      name: 'Pending stays Pending with NotEnoughResources when nothing could be placed',
      group: inPhase('Pending'),
      pods: ['a', 'b', 'c'].map((n) => pod(n, { unschedulable: 'Insufficient gpu' })),
      phase: 'Pending',
      reason: 'NotEnoughResources',
    },
    {
      name: 'Unschedulable → Recovering when a member fails',
      group: inPhase('Unschedulable', { running: 2 }),
      pods: [pod('a', { phase: 'Running' }), pod('b', { phase: 'Failed' }), pod('c', { unschedulable: 'x' })],
      phase: 'Recovering',
      reason: 'PodFailed',
    },
    {
      name: 'Completed with too few successes is not Completed: Recovering (PodFailed)',
      group: inPhase('Running', { running: 3 }),
      pods: [
        pod('a', { phase: 'Succeeded' }),
        pod('b', { phase: 'Succeeded' }),
        pod('c', { phase: 'Failed' }),
      ],
      phase: 'Recovering',
      reason: 'PodFailed',
    },
    {
      name: 'without minMember a pending newcomer keeps a running group Running',
      group: inPhase('Running', { running: 2 }, {} as { minMember: number }),
      pods: [...running('a', 'b'), pod('c')],
      phase: 'Running',
      message: /waiting for new members to run/,
    },
    {
      name: 'a group with no pods at all is Pending with NotEnoughTasks',
      group: podGroup('g'),
      pods: [],
      phase: 'Pending',
      reason: 'NotEnoughTasks',
      message: 'no member pods exist',
    },
  ]);

  test('Running → Completed → stays Completed when the finished pods are cleaned up', () => {
    const pg = inPhase('Running', { running: 3 });
    const done = step(
      pg,
      ['a', 'b', 'c'].map((n) => pod(n, { phase: 'Succeeded' })),
    );
    assert.equal(done.phase, 'Completed');
    assert.equal(done.reason, 'MembersFinished');
    assert.equal(done.message, 'every member finished: 3 succeeded, 0 failed');
    assert.equal(step(pg, [pod('a', { phase: 'Succeeded' })]).phase, 'Completed');
    assert.equal(step(pg, []).phase, 'Completed');
  });

  test('without minMember a deleted member is reported, then the smaller group runs on', () => {
    const pg = inPhase('Running', { running: 3 }, {} as { minMember: number });
    const d = step(pg, running('a', 'b'));
    assert.equal(d.phase, 'Recovering');
    assert.equal(d.reason, 'PodDeleted');
    assert.equal(step(pg, running('a', 'b')).phase, 'Running');
  });
});

describe('status writes and events', () => {
  test('a first status: phase, counts, conditions, an event; nothing written when unchanged', () => {
    const pg = podGroup('g', { minMember: 2 });
    const pods = [
      pod('a', { phase: 'Running' }),
      pod('b', { phase: 'Running' }),
      pod('c', { phase: 'Succeeded' }),
    ];
    const d = step(pg, pods);
    assert.ok(d.status);
    assert.deepEqual(
      { ...d.status.state },
      {
        phase: 'Running',
        reason: 'MembersRunning',
        message: '3 of 2 required members running or succeeded',
        lastProbeTime: '2026-01-01T00:00:00Z',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    );
    assert.equal(d.status.running, 2);
    assert.equal(d.status.succeeded, 1);
    assert.equal(d.status.failed, 0);
    assert.equal(d.status.observedGeneration, 1);
    const types = Object.fromEntries(d.status.conditions!.map((c) => [c.type, c.status]));
    assert.deepEqual(types, {
      GangReady: 'True',
      Unschedulable: 'False',
      SpecValid: 'True',
      MembershipConflict: 'False',
    });
    assert.deepEqual(d.events, [
      {
        target: { kind: 'group' },
        type: 'Normal',
        reason: 'MembersRunning',
        action: 'PhaseTransition',
        note: 'Running: 3 of 2 required members running or succeeded',
      },
    ]);
    const again = step(pg, pods, { now: at(30) });
    assert.equal(again.status, undefined);
    assert.deepEqual(again.events, []);
  });

  test('a stored status differing only outside the counts and state is still rewritten', () => {
    const pods = running('a', 'b');
    const stored = () => {
      const pg = podGroup('g', { minMember: 2 });
      step(pg, pods);
      return pg;
    };
    const probeOnly = stored();
    probeOnly.status!.state!.lastProbeTime = '2025-01-01T00:00:00Z';
    assert.equal(step(probeOnly, pods, { now: at(5) }).status, undefined, 'lastProbeTime alone: not written');
    const condition = stored();
    condition.status!.conditions![0]!.message = 'stale';
    assert.ok(step(condition, pods, { now: at(5) }).status, 'a condition message differs');
    const generation = stored();
    generation.metadata.generation = 2;
    assert.equal(step(generation, pods, { now: at(5) }).status?.observedGeneration, 2);
    const extra = stored();
    (extra.status as Record<string, unknown>).scheduled = 2;
    assert.ok(step(extra, pods, { now: at(5) }).status, 'a field this controller does not write');
    const state = stored();
    (state.status!.state as unknown as Record<string, unknown>).since = 'x';
    assert.ok(step(state, pods, { now: at(5) }).status, 'a state field this controller does not write');
    const malformed = stored();
    (malformed.status!.conditions as unknown[]).push(null);
    assert.ok(step(malformed, pods, { now: at(5) }).status, 'a condition that is not an object');
  });

  test('a transition moves lastTransitionTime and lastProbeTime; a count change moves only lastProbeTime', () => {
    const pg = podGroup('g', { minMember: 2 });
    step(pg, [pod('a', { phase: 'Running' }), pod('b')]);
    assert.equal(pg.status?.state?.phase, 'Pending');
    const same = step(pg, [pod('a', { phase: 'Running' }), pod('b')], { now: at(5) });
    assert.equal(same.status, undefined, 'same counts and message: not written');
    assert.equal(pg.status?.state?.lastProbeTime, '2026-01-01T00:00:00Z');
    const run = step(pg, running('a', 'b'), { now: at(10) });
    assert.equal(run.status?.state?.lastTransitionTime, '2026-01-01T00:00:10Z');
    assert.equal(run.status?.state?.lastProbeTime, '2026-01-01T00:00:10Z');
    assert.equal(run.events[0]?.note, 'Pending → Running: 2 of 2 required members running or succeeded');
    const three = step(pg, running('a', 'b', 'c'), { now: at(20) });
    assert.equal(three.status?.state?.lastTransitionTime, '2026-01-01T00:00:10Z');
    assert.equal(three.status?.state?.lastProbeTime, '2026-01-01T00:00:20Z');
    assert.deepEqual(three.events, []);
  });

  test('Recovering and Unschedulable transitions are Warning events', () => {
    const pg = inPhase('Running', { running: 3 });
    const d = step(pg, [...running('a', 'b'), pod('c', { phase: 'Failed' })]);
    assert.equal(d.events[0]?.type, 'Warning');
    assert.equal(d.events[0]?.reason, 'PodFailed');
    assert.equal(
      d.events[0]?.note,
      'Running → Recovering: 1 member failed; 2 of 3 required members running or succeeded',
    );
  });

  test('the Unschedulable condition carries the scheduler message', () => {
    const pg = podGroup('g', { minMember: 2 });
    const d = step(pg, [
      pod('a', { phase: 'Running' }),
      pod('b', { unschedulable: '0/3 nodes are available: 3 Insufficient cpu.' }),
    ]);
    const c = d.status?.conditions?.find((x) => x.type === 'Unschedulable');
    assert.equal(c?.status, 'True');
    assert.equal(c?.reason, 'NotEnoughResources');
    assert.equal(
      c?.message,
      '1 of 2 members cannot be scheduled: 0/3 nodes are available: 3 Insufficient cpu.',
    );
  });

  test("a gang scheduler's verdict is quoted as it is; a gang holding nothing stays Pending", () => {
    // As kube-batch and Volcano: phase Pending (nothing allocated), condition Unschedulable.
    const verdict =
      '2/3 pods of g could not be placed: 0/2 nodes are available: 2 Insufficient nvidia.com/gpu.';
    const pg = podGroup('g', { minMember: 3 });
    const d = step(pg, [
      pod('a', { unschedulable: verdict }),
      pod('b', { unschedulable: verdict }),
      pod('c', { unschedulable: '0/2 nodes are available: podGroup ns/g failed recently.' }),
    ]);
    assert.equal(d.phase, 'Pending');
    assert.equal(d.status?.state?.reason, 'NotEnoughResources');
    assert.equal(d.status?.state?.message, verdict);
    const c = d.status?.conditions?.find((x) => x.type === 'Unschedulable');
    assert.deepEqual([c?.status, c?.reason, c?.message], ['True', 'NotEnoughResources', verdict]);
    // Another group's verdict is not this group's.
    const other = step(pg, [pod('a', { unschedulable: verdict.replace('of g ', 'of h ') })]);
    assert.match(other.status?.state?.message ?? '', /^1 of 3 required members exist$/);
  });

  test('the Unschedulable condition says NotEnoughTasks while the gang lacks members', () => {
    const pg = podGroup('g', { minMember: 3 });
    const d = step(pg, [
      pod('a', {
        unschedulable:
          '0/2 nodes are available: pre-filter pod a cannot find enough sibling pods, current pods number: 1, minMember of group: 3.',
      }),
    ]);
    assert.equal(d.status?.state?.reason, 'NotEnoughTasks');
    const c = d.status?.conditions?.find((x) => x.type === 'Unschedulable');
    assert.equal(c?.reason, 'NotEnoughTasks');
  });
});

describe('bad input', () => {
  for (const bad of [-1, 2.5, 'three']) {
    test(`minMember ${JSON.stringify(bad)}: SpecValid False, a Warning, every member required`, () => {
      const pg = podGroup('g', { minMember: bad as number });
      const d = step(pg, running('a', 'b'));
      const c = d.status?.conditions?.find((x) => x.type === 'SpecValid');
      assert.equal(c?.status, 'False');
      assert.match(c?.message ?? '', /spec\.minMember .* is not a non-negative integer/);
      assert.ok(d.events.some((e) => e.type === 'Warning' && e.reason === 'InvalidSpec'));
      assert.equal(d.phase, 'Running');
      assert.deepEqual(names(d.label), ['a', 'b']);
      assert.ok(!step(pg, running('a', 'b')).events.some((e) => e.reason === 'InvalidSpec'));
    });
  }

  test('pods whose label and annotation disagree: counted by label, reported to both groups', () => {
    const x = podGroup('x');
    const y = podGroup('y');
    const torn = pod('torn', { group: 'x', annotation: 'y', phase: 'Running' });
    const pods = [
      torn,
      pod('x1', { group: 'x', phase: 'Running' }),
      pod('y1', { group: '', annotation: 'y', phase: 'Running' }),
    ];
    const dx = step(x, pods);
    assert.deepEqual(names(dx.label), ['torn', 'x1']);
    assert.equal(dx.status?.running, 2);
    const cx = dx.status?.conditions?.find((c) => c.type === 'MembershipConflict');
    assert.equal(cx?.status, 'True');
    assert.match(cx?.message ?? '', /torn/);
    assert.ok(dx.events.some((e) => e.target.kind === 'pod' && e.reason === 'GroupConflict'));
    const dy = step(y, pods);
    assert.deepEqual(names(dy.label), ['y1']);
    assert.equal(dy.status?.running, 1);
    assert.equal(dy.status?.conditions?.find((c) => c.type === 'MembershipConflict')?.status, 'True');
  });

  test('a label value that cannot name an object: ready labels, no PodGroup, a warning per pod', () => {
    const pods = [
      pod('a', { group: 'Team_A', phase: 'Running' }),
      pod('b', { group: 'Team_A', phase: 'Running' }),
    ];
    const d = decide(input(pods, undefined, { name: 'Team_A' }));
    assert.deepEqual(names(d.label), ['a', 'b']);
    assert.equal(d.create, undefined);
    assert.equal(d.events.filter((e) => e.reason === 'InvalidGroupName').length, 2);
  });
});

describe('auto-created PodGroups', () => {
  test('a labelled group without a PodGroup gets one, owned by the members’ shared controller', () => {
    const pods = [pod('a', { owner: 'train' }), pod('b', { owner: 'train' })];
    const d = decide(input(pods, undefined));
    assert.equal(d.create?.metadata.name, 'g');
    assert.equal(d.create?.metadata.namespace, NS);
    assert.equal(d.create?.metadata.annotations?.[AUTO_CREATED_ANNOTATION], 'true');
    assert.deepEqual(d.create?.spec, {});
    assert.deepEqual(d.create?.metadata.ownerReferences, [
      { apiVersion: 'batch/v1', kind: 'Job', name: 'train', uid: 'job-train' },
    ]);
  });

  test('bare pods or mixed owners: no owner reference', () => {
    assert.equal(
      decide(input([pod('a'), pod('b', { owner: 'j' })], undefined)).create?.metadata.ownerReferences,
      undefined,
    );
    assert.equal(decide(input([pod('a'), pod('b')], undefined)).create?.metadata.ownerReferences, undefined);
  });

  test('not when switched off, nor for groups named only by annotation', () => {
    assert.equal(decide(input([pod('a')], undefined, { autoCreate: false })).create, undefined);
    assert.equal(decide(input([pod('a', { group: '', annotation: 'g' })], undefined)).create, undefined);
  });
});

describe('deadlock policy', () => {
  const stuckPods = (job: string | null = 'job') => {
    const owner = job ?? undefined;
    return [
      pod('a', { phase: 'Running', owner }),
      pod('b', { phase: 'Running', owner }),
      pod('c', { unschedulable: 'Insufficient nvidia.com/gpu', owner }),
    ];
  };
  const policy = { minMember: 3, deadlockPolicy: { action: 'Restart' as const, timeoutSeconds: 30 } };
  const peer = (name: string, creationTimestamp: string, over: Partial<PeerGroup> = {}): PeerGroup => ({
    namespace: NS,
    name,
    priority: 0,
    creationTimestamp,
    phase: 'Unschedulable',
    ...over,
  });

  test('waits for the timeout, then deletes the controller-owned members once', () => {
    const pg = podGroup('g', policy);
    const first = step(pg, stuckPods());
    assert.equal(first.phase, 'Unschedulable');
    assert.deepEqual(first.restart, []);
    assert.equal(first.requeueAfterMs, 30_000);
    const early = step(pg, stuckPods(), { now: at(20) });
    assert.equal(early.requeueAfterMs, 10_000);
    const due = step(pg, stuckPods(), { now: at(30) });
    assert.deepEqual(names(due.restart), ['a', 'b', 'c']);
    assert.equal(pg.status?.restarts, 1);
    assert.equal(pg.status?.lastRestartTime, '2026-01-01T00:00:30Z');
    const ev = due.events.find((e) => e.reason === 'DeadlockRestart');
    assert.equal(ev?.type, 'Warning');
    assert.match(
      ev?.note ?? '',
      /Unschedulable for 30s with 2 of 3 members placed: deleting 3 members .*next timeout 60s/,
    );
    const again = step(pg, stuckPods(), { now: at(40) });
    assert.deepEqual(again.restart, [], 'one restart per Unschedulable episode');
  });

  test('the timeout doubles with each restart, up to the cap', () => {
    const pg = podGroup('g', {
      deadlockPolicy: { action: 'Restart', timeoutSeconds: 30, maxTimeoutSeconds: 100 },
    });
    assert.deepEqual(
      [0, 1, 2, 3].map((r) => deadlockTimeoutMs(pg, r)),
      [30_000, 60_000, 100_000, 100_000],
    );
    assert.equal(
      deadlockTimeoutMs(
        podGroup('g', { scheduleTimeoutSeconds: 5, deadlockPolicy: { action: 'Restart' } }),
        0,
      ),
      5000,
    );
    assert.equal(deadlockTimeoutMs(podGroup('g', { deadlockPolicy: { action: 'Restart' } }), 0), 60_000);
  });

  test('gives way to a younger stuck group, and restarts when it is the younger one', () => {
    const older = peer('old', '2025-12-01T00:00:00Z');
    const younger = peer('young', '2026-02-01T00:00:00Z');
    const pg = podGroup('g', policy);
    step(pg, stuckPods());
    const defer = step(pg, stuckPods(), { now: at(30), peers: [younger] });
    assert.deepEqual(defer.restart, []);
    assert.equal(defer.deferredTo, `${NS}/young`);
    assert.equal(defer.requeueAfterMs, 5000);
    const go = step(pg, stuckPods(), { now: at(35), peers: [older] });
    assert.equal(go.restart.length, 3);
  });

  test('priority before age: the lower-priority group gives way', () => {
    const low = peer('low', '2025-01-01T00:00:00Z');
    const high = peer('high', '2026-06-01T00:00:00Z', { priority: 100 });
    assert.equal(chooseVictim([high, low]).name, 'low');
    const pg = podGroup('g', policy);
    const pods = stuckPods().map((p) => ({ ...p, spec: { ...p.spec, priority: 10 } }));
    step(pg, pods);
    assert.equal(step(pg, pods, { now: at(30), peers: [low] }).deferredTo, `${NS}/low`);
    assert.equal(step(pg, pods, { now: at(35), peers: [high] }).restart.length, 3);
  });

  test('a group that just gave way makes the others wait; one that is no longer stuck is no candidate', () => {
    const pg = podGroup('g', policy);
    step(pg, stuckPods());
    const justRestarted = peer('other', '2026-06-01T00:00:00Z', {
      phase: 'Pending',
      lastRestartTime: '2026-01-01T00:00:25Z',
    });
    const wait = step(pg, stuckPods(), { now: at(30), peers: [justRestarted] });
    assert.deepEqual(wait.restart, []);
    assert.equal(wait.deferredTo, `${NS}/other`);
    assert.equal(wait.requeueAfterMs, 25_000);
    const go = step(pg, stuckPods(), { now: at(56), peers: [justRestarted] });
    assert.equal(go.restart.length, 3, 'a younger peer that is Pending again is not stuck: no candidate');
  });

  test('members without a controller are never deleted: a RestartBlocked warning', () => {
    const pg = podGroup('g', policy);
    step(pg, stuckPods(null));
    const d = step(pg, stuckPods(null), { now: at(30) });
    assert.deepEqual(d.restart, []);
    assert.match(
      d.events.find((e) => e.reason === 'RestartBlocked')?.note ?? '',
      /a, b, c have no controller/,
    );
  });

  test('off unless asked for', () => {
    const pg = podGroup('g', { minMember: 3 });
    step(pg, stuckPods());
    const d = step(pg, stuckPods(), { now: at(3600) });
    assert.deepEqual(d.restart, []);
    assert.equal(d.requeueAfterMs, undefined);
  });
});
