/**
 * `troupe simulate` as a user runs it: a real process on a small scenario, its table, and the
 * JSON and HTML it writes with --out, which must say the same; bad scenario files fail with
 * one clear message naming the file.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import type { Report } from '../../src/simulate/report.ts';
import { MAIN, ROOT } from '../support/troupe-process.ts';

const run = promisify(execFile);

/** Two gangs of two one-GPU members on two GPUs: one runs, then the other. */
const SMALL = `
name: small
description: two gangs take turns on two GPUs
seed: 3
end: 10m
nodes:
  pools:
    - {name: gpu, count: 1, capacity: {cpu: 8, memory: 32Gi, nvidia.com/gpu: 2}}
workload:
  - {name: first, at: 0s, kind: Job, size: 2, gpus: 1, duration: 30s}
  - {name: second, at: 5s, kind: Job, size: 2, gpus: 1, duration: 30s}
policies:
  - {name: default}
  - {name: coscheduling, gangScheduling: true}
`;

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'troupe-simulate-'));
});
after(() => rm(dir, { recursive: true, force: true }));

test('a small scenario: the table, report.json and report.html agree', async () => {
  const file = join(dir, 'small.yaml');
  await writeFile(file, SMALL);
  const out = join(dir, 'out');
  const r = await run(process.execPath, [MAIN, 'simulate', file, '--out', out], { cwd: ROOT });
  const report = JSON.parse(await readFile(join(out, 'report.json'), 'utf8')) as Report;
  const html = await readFile(join(out, 'report.html'), 'utf8');
  assert.equal(report.scenario, 'small');
  assert.deepEqual(
    report.policies.map((p) => p.policy),
    ['default', 'coscheduling'],
  );
  for (const p of report.policies) {
    // Both gangs run to completion, one after the other: the second waits for the first.
    assert.deepEqual(p.gangs, { total: 2, started: 2, finished: 2, failed: 0 }, p.policy);
    assert.equal(p.gpu.capacity, 2);
    const [first, second] = p.perGang;
    assert.equal(first!.name, 'first');
    assert.ok(second!.waitSeconds! >= first!.finishedSeconds! - 5 - 1, JSON.stringify(p.perGang));
    assert.ok(p.makespanSeconds! >= 60 && p.makespanSeconds! < 600, String(p.makespanSeconds));
    assert.equal(p.deadlockedGangMinutes, 0);
    assert.ok(p.gpu.meanUseful > 0 && p.gpu.meanUseful <= p.gpu.meanAllocated);
    assert.equal(p.gpuSeries.length, 120);
  }
  // The terminal table and the HTML table carry the JSON's figures.
  const lines = r.stdout.split('\n');
  assert.equal(lines[0], 'scenario small (seed 3, 10m00s simulated)');
  assert.match(lines.find((l) => l.startsWith('policy '))!, /^policy\s+default\s+coscheduling$/);
  assert.match(lines.find((l) => l.startsWith('gangs finished'))!, /^gangs finished\s+2\/2\s+2\/2$/);
  for (const p of report.policies) {
    const makespan = `${Math.floor(Math.round(p.makespanSeconds!) / 60)}m${String(Math.round(p.makespanSeconds!) % 60).padStart(2, '0')}s`;
    assert.ok(lines.find((l) => l.startsWith('makespan'))!.includes(makespan), makespan);
    assert.ok(html.includes(`<td>${makespan}</td>`), makespan);
  }
  assert.match(html, /^<!doctype html>/);
  assert.equal((html.match(/<svg /g) ?? []).length, 3);
  assert.doesNotMatch(html, /<script|https?:\/\/(?!www\.w3\.org)/);
  // Both gangs are done long before the end: the run stops there.
  for (const p of report.policies) {
    assert.ok(
      p.simulatedSeconds >= p.makespanSeconds! && p.simulatedSeconds < 600,
      String(p.simulatedSeconds),
    );
    assert.match(
      r.stderr,
      new RegExp(`policy ${p.policy}: ${Math.round(p.simulatedSeconds)}s simulated in [\\d.]+s of wall time`),
    );
  }
});

/** Every kind of gang, and offloading: what each becomes runs, fails or is offloaded as asked. */
const KINDS = `
name: kinds
end: 15m
nodes:
  pools:
    - {name: gpu, count: 2, capacity: {cpu: 16, memory: 64Gi, nvidia.com/gpu: 2}}
workload:
  - {name: wrapped, at: 0s, kind: AppWrapper, size: 2, gpus: 1, duration: 1m}
  - {name: xpg, at: 0s, kind: Job, podGroup: scheduler-plugins, size: 2, gpus: 1, duration: 1m}
  - {name: mesh, at: 0s, kind: PodSequence, tiers: [{name: db, size: 1, readySeconds: 5}, {name: web, size: 2}]}
  - {name: bare, at: 70s, kind: Pods, size: 2, gpus: 1, duration: 1m}
  - {name: sts, at: 70s, kind: StatefulSet, size: 2, gpus: 1, duration: 1m}
  - {name: broken, at: 150s, kind: Job, size: 2, duration: 5m, fail: {after: 20s, exitCode: 3}}
  - {name: late, at: 80s, kind: Job, size: 1, gpus: 2, duration: 2m}
policies:
  - {name: queued, queues: true}
  - {name: offload, offload: {maxPendingTime: 10}}
`;

test('every kind of gang runs through its controllers; offloading spends', async () => {
  const file = join(dir, 'kinds.yaml');
  await writeFile(file, KINDS);
  const out = join(dir, 'kinds');
  await run(process.execPath, [MAIN, 'simulate', file, '--out', out, '--time-scale', '20', '--quiet'], {
    cwd: ROOT,
  });
  const report = JSON.parse(await readFile(join(out, 'report.json'), 'utf8')) as Report;
  for (const p of report.policies) {
    const status = Object.fromEntries(p.perGang.map((g) => [g.name, g.status]));
    assert.deepEqual(
      status,
      {
        wrapped: 'succeeded',
        xpg: 'succeeded',
        mesh: 'running',
        bare: 'succeeded',
        sts: 'succeeded',
        broken: 'failed',
        late: 'succeeded',
      },
      p.policy,
    );
  }
  const [queued, offload] = report.policies;
  assert.equal(queued!.offloadedSpendUsd, 0);
  // bare and sts hold the four GPUs when late arrives: offloaded after 10 s, it costs money.
  assert.ok(offload!.offloadedSpendUsd > 0, JSON.stringify(offload!.perGang));
});

/**
 * Two gangs of three Parallel StatefulSet members on four GPUs under coscheduling: it used to
 * livelock the virtual clock at one instant (siblings re-activated at once, rejected again).
 */
const COMPETING = `
name: competing
seed: 1
end: 8m
nodes:
  pools:
    - {name: gpu, count: 2, capacity: {cpu: 8, memory: 32Gi, nvidia.com/gpu: 2}}
workload:
  - {name: a, at: 0s, kind: StatefulSet, orderedReady: true, size: 3, gpus: 1, duration: 2m}
  - {name: b, at: 0s, kind: StatefulSet, orderedReady: true, size: 3, gpus: 1, duration: 2m}
policies:
  - {name: parallel, gangScheduling: true, podManagementPolicy: Parallel}
  - {name: ordered, gangScheduling: true}
`;

test('competing gangs of Parallel StatefulSets under coscheduling take turns and finish', async () => {
  const file = join(dir, 'competing.yaml');
  await writeFile(file, COMPETING);
  const out = join(dir, 'competing');
  await run(process.execPath, [MAIN, 'simulate', file, '--out', out, '--quiet'], {
    cwd: ROOT,
    timeout: 240_000,
  });
  const report = JSON.parse(await readFile(join(out, 'report.json'), 'utf8')) as Report;
  const [parallel, ordered] = report.policies;
  assert.deepEqual(parallel!.gangs, { total: 2, started: 2, finished: 2, failed: 0 });
  // One gang at a time: the second is placed whole once the first is done, holding nothing before.
  const [first, second] = [...parallel!.perGang].sort((x, y) => x.waitSeconds! - y.waitSeconds!);
  assert.equal(first!.waitSeconds, 0);
  assert.ok(second!.waitSeconds! >= 120, JSON.stringify(parallel!.perGang));
  assert.equal(parallel!.deadlockedGangMinutes, 0);
  // OrderedReady members are created one by one: under coscheduling no gang ever forms.
  assert.equal(ordered!.gangs.started, 0, JSON.stringify(ordered!.gangs));
});

test('on the virtual clock, the same scenario and seed give the same report, byte for byte', async () => {
  const file = join(dir, 'small.yaml');
  await writeFile(file, SMALL);
  const reports: string[] = [];
  for (const k of [1, 2]) {
    const out = join(dir, `again-${k}`);
    await run(process.execPath, [MAIN, 'simulate', file, '--out', out, '--quiet'], { cwd: ROOT });
    reports.push(await readFile(join(out, 'report.json'), 'utf8'));
  }
  assert.equal(reports[1], reports[0]);
});

test('bad scenario files: one message naming the file, the path and the fix; exit code 1', async () => {
  const bad = join(dir, 'bad.yaml');
  await writeFile(bad, SMALL.replace('gpus: 1, duration: 30s}', 'gpus: 1, duration: soon}'));
  const cases: [string[], string][] = [
    [
      ['simulate', bad],
      `troupe: ${bad}: invalid scenario:\n  - workload[0].duration: has the wrong form (use a Go duration such as 45s, 10m or 1h30m)\n`,
    ],
    [
      ['simulate', join(dir, 'missing.yaml')],
      `troupe: ${join(dir, 'missing.yaml')}: invalid scenario:\n  - cannot read it: ENOENT: no such file or directory, open '${join(dir, 'missing.yaml')}' (check the path)\n`,
    ],
    [['simulate'], 'troupe: give a scenario file (troupe simulate SCENARIO.yaml), or --record FILE\n'],
  ];
  for (const [args, stderr] of cases) {
    const e = await run(process.execPath, [MAIN, ...args], { cwd: ROOT }).then(
      () => assert.fail(`${args.join(' ')} succeeded`),
      (err: { code: number; stderr: string }) => err,
    );
    assert.equal(e.stderr, stderr);
    assert.equal(e.code, 1);
  }
  // Node pools are checked by the embedded cluster's own rules, named under nodes.
  const pools = join(dir, 'pools.yaml');
  await writeFile(pools, SMALL.replace('capacity: {cpu: 8, ', 'capacity: {'));
  const e = await run(process.execPath, [MAIN, 'simulate', pools, '--policy', 'nope'], { cwd: ROOT }).then(
    () => assert.fail('accepted'),
    (err: { code: number; stderr: string }) => err,
  );
  assert.equal(
    e.stderr,
    `troupe: ${pools}: invalid scenario:\n  - nodes: pool "gpu" (pools[0]): capacity.cpu: required (node pools take the fields of --node-config, see docs/embedded-cluster.md)\n`,
  );
});
