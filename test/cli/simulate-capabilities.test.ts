import assert from 'node:assert/strict';
import { test } from 'node:test';
import { neededCapabilities } from '../../src/cli/simulate.ts';
import { capabilities } from '../../src/controllers/capabilities.ts';
import { parseScenario } from '../../src/simulate/scenario.ts';

const BASE = `
name: small
end: 1h
nodes: {pools: [{name: gpu, count: 2, capacity: {cpu: 16, memory: 64Gi, nvidia.com/gpu: 4}}]}
policies: [{name: default}, {name: burst, offload: {maxPendingTime: 30}}]
`;

test('a simulation starts the PodGroup controller, and the others only for a trace or policy that uses them', () => {
  const all = capabilities();
  const jobs = parseScenario(`${BASE}workload: [{name: a, at: 0s, size: 2, gpus: 1}]\n`, 'jobs.yaml');
  const [plain, burst] = jobs.policies;
  assert.deepEqual(neededCapabilities(jobs, plain!, all), ['podgroup']);
  assert.deepEqual(neededCapabilities(jobs, burst!, all), ['podgroup', 'offload']);
  const mixed = parseScenario(
    `${BASE}workload:
  - {name: a, at: 0s, kind: AppWrapper, size: 2, gpus: 1}
  - {name: mesh, at: 0s, kind: PodSequence, tiers: [{name: db, size: 1}, {name: web, size: 2}]}
`,
    'mixed.yaml',
  );
  assert.deepEqual(neededCapabilities(mixed, mixed.policies[0]!, all), [
    'podgroup',
    'podsequence',
    'appwrapper',
  ]);
});
