import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Collector, DEADLOCK_GRACE_MS } from '../../src/simulate/collector.ts';
import { policyResult, reportTable } from '../../src/simulate/report.ts';
import { reportHtml } from '../../src/simulate/report-html.ts';
import type { Gang, Policy, Scenario } from '../../src/simulate/scenario.ts';

function gang(name: string, size: number, durationMs: number | undefined = 60_000): Gang {
  return {
    name,
    atMs: 0,
    kind: 'Job',
    podGroup: 'troupe',
    size,
    gpus: 1,
    cpu: '1',
    memory: '1Gi',
    durationMs,
    fail: undefined,
    priority: 0,
    orderedReady: false,
    startupSeconds: 0,
    tiers: undefined,
  };
}

const POLICY: Policy = {
  name: 'default',
  description: '',
  gangScheduling: false,
  scoring: 'LeastAllocated',
  podManagementPolicy: undefined,
  deadlockPolicy: undefined,
  queues: false,
  offload: undefined,
};

function pod(g: string, i: number, phase: string, node = '', unschedulable = false) {
  return {
    metadata: { uid: `${g}-${i}`, name: `${g}-${i}`, labels: { 'troupe.dev/sim-gang': g } },
    spec: { nodeName: node, containers: [{ resources: { requests: { 'nvidia.com/gpu': '1' } } }] },
    status: {
      phase,
      conditions: unschedulable ? [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] : [],
    },
  };
}

test('two gangs on four GPUs: one deadlocks half-placed, one runs and finishes; the figures follow', () => {
  const a = gang('a', 3);
  const b = gang('b', 3);
  const scenario: Scenario = {
    name: 's',
    description: '',
    seed: 1,
    endMs: 600_000,
    nodeLeaseRenewMs: 300_000,
    nodes: { pools: [] },
    gangs: [a, b],
    policies: [POLICY, POLICY],
  };
  const c = new Collector([a, b]);
  const running: string[] = [];
  c.onAllRunning = (name) => running.push(name);
  c.node('ADDED', { metadata: { name: 'n0' }, status: { allocatable: { 'nvidia.com/gpu': '4' } } }, 0);
  c.arrived('a', 0);
  c.arrived('b', 0);
  // a: all three placed at 10 s, running at 20 s; b: two placed, the third unschedulable.
  for (let i = 0; i < 3; i++) c.pod('ADDED', pod('a', i, 'Pending', 'n0'), 10_000);
  c.pod('ADDED', pod('b', 0, 'Pending', 'n0'), 10_000);
  c.pod('ADDED', pod('b', 1, 'Pending', '', true), 10_000);
  c.pod('ADDED', pod('b', 2, 'Pending', '', true), 10_000);
  for (let i = 0; i < 3; i++) c.pod('MODIFIED', pod('a', i, 'Running', 'n0'), 20_000);
  assert.deepEqual(running, ['a']);
  // a's members succeed at 80 s; b stays stuck until the end (10 min).
  for (let i = 0; i < 3; i++) c.pod('MODIFIED', pod('a', i, 'Succeeded', 'n0'), 80_000);
  c.finish(600_000);
  const r = policyResult(scenario, POLICY, c);
  assert.deepEqual(r.gangs, { total: 2, started: 1, finished: 1, failed: 0 });
  assert.equal(r.makespanSeconds, null, 'b never finished');
  assert.deepEqual(r.perGang[0], {
    name: 'a',
    kind: 'Job',
    size: 3,
    gpusPerMember: 1,
    arrivalSeconds: 0,
    waitSeconds: 10,
    allRunningSeconds: 20,
    finishedSeconds: 80,
    status: 'succeeded',
    deadlockedSeconds: 0,
  });
  assert.equal(r.perGang[1]!.deadlockedSeconds, 590);
  assert.equal(r.deadlockedGangMinutes, 9.833);
  // Waits: a 10 s, b never (≥ 600 s): p50 is a's, p95 is b's lower bound.
  assert.deepEqual(r.waitSeconds.p50, { seconds: 10, atLeast: false });
  assert.deepEqual(r.waitSeconds.p95, { seconds: 600, atLeast: true });
  assert.equal(r.firstAllRunningSeconds, 20);
  // GPUs: a holds 3 of 4 from 10 s to 80 s, b one from 10 s on; useful only a's, 20 s to 80 s.
  assert.equal(r.gpu.capacity, 4);
  assert.equal(r.gpu.meanAllocated, Math.round(((3 * 70_000 + 590_000) / 4 / 600_000) * 1e4) / 1e4);
  assert.equal(r.gpu.meanUseful, Math.round(((3 * 60_000) / 4 / 600_000) * 1e4) / 1e4);
  const table = reportTable({ scenario: 's', description: '', seed: 1, endSeconds: 600, policies: [r] });
  assert.match(table, /gang wait p95\s+≥10m00s\n/);
  assert.match(table, /makespan\s+>10m00s\n/);
  assert.match(
    reportHtml({ scenario: 's', description: '', seed: 1, endSeconds: 600, policies: [r] }),
    /≥10m00s/,
  );
});

test('a stretch shorter than the grace is a scheduler retry, not a deadlock', () => {
  const a = gang('a', 2);
  const c = new Collector([a]);
  c.arrived('a', 0);
  c.pod('ADDED', pod('a', 0, 'Running', 'n0'), 0);
  c.pod('ADDED', pod('a', 1, 'Pending', '', true), 0);
  c.pod('MODIFIED', pod('a', 1, 'Running', 'n0'), DEADLOCK_GRACE_MS - 1);
  c.finish(DEADLOCK_GRACE_MS * 2);
  assert.equal(c.gangs.get('a')!.deadlockedMs, 0);
});
