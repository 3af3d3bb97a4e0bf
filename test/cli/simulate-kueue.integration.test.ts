/**
 * `troupe simulate` policies with Kueue's waitForPodsReady: a gang admitted within quota but
 * impossible to place holds the queue's quota until Kueue's PodsReady timeout evicts it.
 * In process, on the virtual clock, as `troupe simulate` runs each policy.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { loadScenario, runOnEmbeddedCluster } from '../../src/cli/simulate.ts';

/**
 * Two one-GPU nodes (a queue of two GPUs): 'blocker' wants both GPUs on one node, so Kueue
 * admits it and no node takes its pod; 'second' (two one-GPU members) waits for the quota.
 */
const SCENARIO = `
name: pods-ready
seed: 5
end: 10m
nodes:
  pools:
    - {name: gpu, count: 2, capacity: {cpu: 8, memory: 32Gi, nvidia.com/gpu: 1}}
workload:
  - {name: blocker, at: 0s, kind: Job, size: 1, gpus: 2, duration: 1m}
  - {name: second, at: 5s, kind: Job, size: 2, gpus: 1, duration: 30s}
policies:
  - {name: queues, queues: true}
  - name: pods-ready
    queues: true
    waitForPodsReady: {timeout: 1m, requeuingStrategy: {backoffBaseSeconds: 600}}
`;

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'troupe-simulate-kueue-'));
});
after(() => rm(dir, { recursive: true, force: true }));

test("a policy's waitForPodsReady evicts a gang that cannot be placed and frees its quota", async () => {
  const file = join(dir, 'pods-ready.yaml');
  await writeFile(file, SCENARIO);
  const scenario = await loadScenario(file);
  const [queues, podsReady] = scenario.policies;
  const held = await runOnEmbeddedCluster(scenario, queues!);
  const freed = await runOnEmbeddedCluster(scenario, podsReady!);
  const second = (r: typeof held) => r.perGang.find((g) => g.name === 'second')!;
  // Without it the blocker holds the quota to the end; with it, 'second' runs after a minute.
  assert.equal(second(held).finishedSeconds, null);
  assert.deepEqual(held.gangs, { total: 2, started: 0, finished: 0, failed: 0 });
  assert.ok(second(freed).finishedSeconds !== null, JSON.stringify(freed.perGang));
  assert.equal(freed.gangs.finished, 1);
});

test("a bad waitForPodsReady section names the scenario, the policy and Kueue's field", async () => {
  const file = join(dir, 'bad.yaml');
  await writeFile(file, SCENARIO.replace('{timeout: 1m,', '{enable: true, timeout: 1m,'));
  await assert.rejects(loadScenario(file), {
    message: `${file}: invalid scenario:\n  - policies[1] (pods-ready): unknown field "waitForPodsReady.enable" (v1beta2 has no enable: the section turns waitForPodsReady on; featureGates: {DisableWaitForPodsReady: true} turns it off)`,
  });
  // Without queues: true no Job goes through Kueue, so the section would do nothing.
  await writeFile(file, SCENARIO.replace('queues: true\n    waitForPodsReady', 'waitForPodsReady'));
  await assert.rejects(loadScenario(file), {
    message: `${file}: invalid scenario:\n  - policies[1] (pods-ready): waitForPodsReady acts on the workloads Kueue admits, and this policy queues none: add queues: true`,
  });
});
