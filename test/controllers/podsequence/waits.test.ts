/**
 * waitDuration (upstream's) and per-group timeout with its policy (troupe's), decided from
 * what is observed: pods' Ready transition times and the sequence's creation time.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { PodGroup, PodSequence } from '../../../src/apis/scheduling.example.com/v1alpha1.ts';
import { decide } from '../../../src/controllers/podsequence/core.ts';
import { explainPod, explainSequence } from '../../../src/controllers/podsequence/explain.ts';
import type { Pod } from '../../../src/controllers/podsequence/objects.ts';
import { input, names, pod, sequence } from './fixtures.ts';

const T0 = Date.parse('2026-06-01T12:00:00Z');
const iso = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;

function readyAt(name: string, ms: number): Pod {
  const p = pod(name, { state: 'ready' });
  p.status!.conditions = [{ type: 'Ready', status: 'True', lastTransitionTime: iso(ms) } as never];
  return p;
}

function seqOf(podGroups: PodGroup[], createdMs = T0 - 600_000): PodSequence {
  const s = sequence({ podGroups });
  s.metadata.creationTimestamp = iso(createdMs);
  return s;
}

const at = (ms: number) => ({ now: new Date(ms) });

describe('waitDuration', () => {
  const groups: PodGroup[] = [
    { name: 'Database', pods: ['db'], waitDuration: '10s' },
    { name: 'Application', pods: ['app'] },
  ];

  test('the next group waits that long after the group is Ready, with upstream’s message', () => {
    const pods = [readyAt('db', T0), pod('app')];
    const plan = decide(input(seqOf(groups), pods, at(T0 + 4_000)));
    assert.deepEqual(plan.releases, []);
    assert.equal(plan.status.phase, 'InProgress');
    assert.equal(plan.status.waitingUntil, iso(T0 + 10_000));
    assert.match(
      plan.status.message!,
      /^All pods in Database ready, waiting 10s before next group \('Application' \(2\/2\) is released at 2026-06-01T12:00:10Z\)$/,
    );
    assert.equal(plan.requeueAfterMs, 6_000);
    assert.deepEqual(
      plan.events.filter((e) => e.reason === 'Waiting').map((e) => e.note),
      [
        "All pods in Database ready, waiting 10s before next group: 'Application' (2/2) is released at 2026-06-01T12:00:10Z",
      ],
    );
  });

  test('once the wait has passed the next group is released', () => {
    const plan = decide(input(seqOf(groups), [readyAt('db', T0), pod('app')], at(T0 + 10_000)));
    assert.deepEqual(names(plan.releases), ['app']);
    assert.equal(plan.status.waitingUntil, undefined);
  });

  test('an invalid duration fails the sequence with a clear message, as upstream', () => {
    const bad: PodGroup[] = [
      { name: 'Database', pods: ['db'], waitDuration: 'ten seconds' },
      { pods: ['app'] },
    ];
    const plan = decide(input(seqOf(bad), [pod('db'), pod('app')], at(T0)));
    assert.equal(plan.status.phase, 'Failed');
    assert.deepEqual(plan.releases, []);
    assert.equal(
      plan.status.message,
      'Invalid PodSequence: Invalid wait duration in Database: time: invalid duration "ten seconds"',
    );
  });

  test('Node scope refuses waits it does not implement, saying so', () => {
    const s = seqOf(groups);
    s.spec.scope = 'Node';
    const plan = decide(input(s, [pod('db'), pod('app')], at(T0)));
    assert.equal(plan.status.phase, 'Failed');
    assert.match(plan.status.message!, /waitDuration and timeout are supported in Cluster scope only/);
  });
});

describe('timeout', () => {
  test('Fail (the default): a group not Ready in time fails the sequence and releases nothing more', () => {
    const groups: PodGroup[] = [{ name: 'Database', pods: ['db'], timeout: '1m' }, { pods: ['app'] }];
    const db = pod('db', { state: 'scheduled' });
    const early = decide(input(seqOf(groups, T0), [db, pod('app')], at(T0 + 30_000)));
    assert.equal(early.status.phase, 'InProgress');
    assert.equal(early.requeueAfterMs, 30_000);
    const late = decide(input(seqOf(groups, T0), [db, pod('app')], at(T0 + 61_000)));
    assert.equal(late.status.phase, 'Failed');
    assert.deepEqual(late.releases, []);
    assert.match(late.status.message!, /^Group 'Database' \(1\/2\) was not Ready within its timeout of 1m0s/);
    assert.deepEqual(
      late.events.filter((e) => e.type === 'Warning').map((e) => e.reason),
      ['GroupTimeout'],
    );
  });

  test('Continue: the next group is released anyway and the timed-out group is reported', () => {
    const groups: PodGroup[] = [
      { name: 'Warmup', pods: ['warm'], timeout: '1m', timeoutPolicy: 'Continue' },
      { name: 'Main', pods: ['main'] },
    ];
    const plan = decide(
      input(seqOf(groups, T0), [pod('warm', { state: 'scheduled' }), pod('main')], at(T0 + 61_000)),
    );
    assert.deepEqual(names(plan.releases), ['main']);
    assert.notEqual(plan.status.phase, 'Failed');
    assert.deepEqual(plan.status.timedOutGroups, ['Warmup']);
    assert.match(
      plan.events.find((e) => e.reason === 'GroupTimeout')!.note,
      /Group 'Warmup' \(1\/2\) was not Ready within its timeout of 1m0s; releasing group 'Main' \(2\/2\) anyway \(timeoutPolicy Continue\)/,
    );
  });

  test('the timeout of a later group runs from its release (after the previous wait)', () => {
    const groups: PodGroup[] = [
      { name: 'A', pods: ['a'], waitDuration: '30s' },
      { name: 'B', pods: ['b'], timeout: '1m' },
      { pods: ['c'] },
    ];
    const pods = [readyAt('a', T0), pod('b', { state: 'scheduled' }), pod('c')];
    // B released at T0+30s: its minute runs until T0+90s.
    assert.equal(decide(input(seqOf(groups), pods, at(T0 + 80_000))).status.phase, 'InProgress');
    assert.equal(decide(input(seqOf(groups), pods, at(T0 + 91_000))).status.phase, 'Failed');
  });
});

describe('troupe explain', () => {
  test('shows each group’s wait and timeout, and why a pod is held by a wait', () => {
    const groups: PodGroup[] = [
      { name: 'Database', pods: ['db'], waitDuration: '10s' },
      { name: 'Application', pods: ['app'], timeout: '2m', timeoutPolicy: 'Continue' },
    ];
    const seq = seqOf(groups);
    const pods = [readyAt('db', T0), pod('app')];
    const now = new Date(T0 + 4_000);
    const text = explainSequence({ seq, pods, now });
    assert.match(text, /Group 'Database' \(1\/2\) \[Ready\], pods 1, then waits 10s:/);
    assert.match(text, /Group 'Application' \(2\/2\) \[current\], pods 1, timeout 2m0s \(Continue\):/);
    assert.match(
      explainPod(pods[1]!, { sequences: [seq], pods, now }),
      /group 'Database' \(1\/2\) is Ready; its waitDuration 10s holds group 'Application' \(2\/2\) until 2026-06-01T12:00:10Z/,
    );
  });
});
