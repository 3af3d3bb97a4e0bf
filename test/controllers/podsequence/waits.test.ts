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
      'Invalid wait duration in Database: time: invalid duration "ten seconds"',
    );
    // With another problem besides, both are listed under troupe's prefix.
    const two = decide(
      input(
        seqOf([{ ...bad[0]!, timeoutPolicy: 'Later' as 'Fail' }, bad[1]!]),
        [pod('db'), pod('app')],
        at(T0),
      ),
    );
    assert.equal(
      two.status.message,
      'Invalid PodSequence: Invalid wait duration in Database: time: invalid duration "ten seconds"; spec.podGroups[0] \'Database\': timeoutPolicy must be "Fail" or "Continue", not "Later"',
    );
  });
});

/** Node scope: each node waits on its own clock, from its own pods' Ready transitions. */
describe('waitDuration and timeout in Node scope', () => {
  const nodeSeq = (podGroups: PodGroup[], createdMs = T0 - 600_000) => {
    const s = seqOf(podGroups, createdMs);
    s.spec.scope = 'Node';
    return s;
  };
  const onNode = (name: string, node: string, ms: number): Pod => {
    const p = readyAt(name, ms);
    p.spec!.nodeName = node;
    return p;
  };
  const groups: PodGroup[] = [
    { name: 'agent', pods: ['agent-a', 'agent-b'], waitDuration: '10s' },
    { name: 'app', pods: ['app-a', 'app-b'] },
  ];

  test('a node releases the next group waitDuration after the group is Ready there, each node on its own clock', () => {
    const pods = [
      onNode('agent-a', 'node-a', T0),
      onNode('agent-b', 'node-b', T0 + 5_000),
      pod('app-a', { pinned: 'node-a' }),
      pod('app-b', { pinned: 'node-b' }),
    ];
    const waiting = decide(input(nodeSeq(groups), pods, at(T0 + 4_000)));
    assert.deepEqual(waiting.releases, []);
    assert.equal(waiting.status.phase, 'InProgress');
    assert.equal(waiting.status.waitingUntil, iso(T0 + 10_000));
    assert.equal(waiting.requeueAfterMs, 6_000);
    const a = waiting.status.nodeStatus!.find((s) => s.nodeName === 'node-a')!;
    assert.match(
      a.conditions![0]!.message!,
      /group 'app' \(2\/2\): released on this node at 2026-06-01T12:00:10Z, 10s \(waitDuration of 'agent' \(1\/2\)\) after agent became Ready here/,
    );
    assert.match(waiting.status.message!, /node node-a waits for group 'app'/);
    assert.deepEqual(
      waiting.events.filter((e) => e.reason === 'Waiting').map((e) => e.note),
      [
        "All pods in agent ready on node node-a, waiting 10s before next group: 'app' (2/2) is released there at 2026-06-01T12:00:10Z",
      ],
    );

    const half = decide(input(nodeSeq(groups), pods, at(T0 + 10_000)));
    assert.deepEqual(names(half.releases), ['app-a']);
    assert.equal(half.status.waitingUntil, iso(T0 + 15_000));
    assert.equal(half.requeueAfterMs, 5_000);

    const both = decide(input(nodeSeq(groups), pods, at(T0 + 15_000)));
    assert.deepEqual(names(both.releases).sort(), ['app-a', 'app-b']);
    assert.equal(both.status.waitingUntil, undefined);
  });

  test('explain names the node and the time its wait ends', () => {
    const pods = [onNode('agent-a', 'node-a', T0), pod('app-a', { pinned: 'node-a' })];
    const seq = nodeSeq([
      { name: 'agent', pods: ['agent-a'], waitDuration: '10s' },
      { name: 'app', pods: ['app-a'] },
    ]);
    const text = explainPod(pods[1]!, { sequences: [seq], pods, now: new Date(T0 + 1_000) });
    assert.match(text, /on node node-a: group 'app' \(2\/2\): released on this node at 2026-06-01T12:00:10Z/);
  });

  test('timeout Fail: a group not Ready on a node in time fails the sequence, naming the node', () => {
    const tg: PodGroup[] = [
      { name: 'agent', pods: ['agent-a'], timeout: '1m' },
      { name: 'app', pods: ['app-a'] },
    ];
    const agent = pod('agent-a', { state: 'scheduled', node: 'node-a' });
    const pods = [agent, pod('app-a', { pinned: 'node-a' })];
    const early = decide(input(nodeSeq(tg, T0), pods, at(T0 + 30_000)));
    assert.equal(early.status.phase, 'InProgress');
    assert.equal(early.requeueAfterMs, 30_000);
    const late = decide(input(nodeSeq(tg, T0), pods, at(T0 + 60_000)));
    assert.equal(late.status.phase, 'Failed');
    assert.deepEqual(late.releases, []);
    assert.match(
      late.status.message!,
      /Group 'agent' \(1\/2\) was not Ready within its timeout of 1m0s on node node-a/,
    );
    assert.ok(late.events.some((e) => e.reason === 'GroupTimeout' && e.type === 'Warning'));
  });

  test('a node that joins later: its first group’s timeout runs from its pods’ creation there', () => {
    const tg: PodGroup[] = [
      { name: 'agent', pods: ['agent-c'], timeout: '1m' },
      { name: 'app', pods: ['app-c'] },
    ];
    const agent = pod('agent-c', { state: 'scheduled', node: 'node-c' });
    agent.metadata.creationTimestamp = iso(T0 + 3_600_000);
    const plan = decide(
      input(nodeSeq(tg, T0), [agent, pod('app-c', { pinned: 'node-c' })], at(T0 + 3_630_000)),
    );
    assert.equal(plan.status.phase, 'InProgress');
    assert.equal(plan.requeueAfterMs, 30_000);
  });

  test('timeout Continue: the next group is released on that node anyway, and it is recorded', () => {
    const tg: PodGroup[] = [
      { name: 'agent', pods: ['agent-a'], timeout: '1m', timeoutPolicy: 'Continue' },
      { name: 'app', pods: ['app-a'] },
    ];
    const pods = [pod('agent-a', { state: 'scheduled', node: 'node-a' }), pod('app-a', { pinned: 'node-a' })];
    const early = decide(input(nodeSeq(tg, T0), pods, at(T0 + 59_000)));
    assert.deepEqual(early.releases, []);
    const late = decide(input(nodeSeq(tg, T0), pods, at(T0 + 60_000)));
    assert.deepEqual(names(late.releases), ['app-a']);
    assert.notEqual(late.status.phase, 'Failed');
    assert.deepEqual(late.status.timedOutGroups, ['agent']);
    assert.ok(late.events.some((e) => e.reason === 'GroupTimeout' && /releasing group 'app'/.test(e.note)));
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
