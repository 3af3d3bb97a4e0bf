import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parseScenario, ScenarioError } from '../../src/simulate/scenario.ts';

const BASE = `
name: small
end: 1h
nodes: {pools: [{name: gpu, count: 2, capacity: {cpu: 16, memory: 64Gi, nvidia.com/gpu: 4}}]}
policies: [{name: default}, {name: gang, gangScheduling: true}]
`;

function problems(text: string): string[] {
  try {
    parseScenario(text, 'bad.yaml');
  } catch (err) {
    assert.ok(err instanceof ScenarioError, String(err));
    assert.match(err.message, /^bad\.yaml: /);
    return err.problems;
  }
  assert.fail('the scenario was accepted');
}

test('a listed workload is normalised: defaults filled, times in ms, sorted by arrival', () => {
  const s = parseScenario(
    `${BASE}workload:
  - {name: b, at: 2m, size: 4, gpus: 1, duration: 10m}
  - {name: a, at: 30s, kind: StatefulSet, size: 2, duration: 1h30m, fail: {after: 5m}}
  - {name: mesh, at: 0s, kind: PodSequence, tiers: [{name: db, size: 1, readySeconds: 5}, {name: web, size: 3}]}
`,
    'ok.yaml',
  );
  assert.deepEqual(
    s.gangs.map((g) => [g.name, g.atMs, g.kind, g.size, g.podGroup, g.durationMs]),
    [
      ['mesh', 0, 'PodSequence', 4, 'none', undefined],
      ['a', 30_000, 'StatefulSet', 2, 'troupe', 5_400_000],
      ['b', 120_000, 'Job', 4, 'troupe', 600_000],
    ],
  );
  assert.deepEqual(s.gangs[1]!.fail, { afterMs: 300_000, exitCode: 1 });
  assert.equal(s.seed, 1);
  assert.equal(s.endMs, 3_600_000);
  assert.deepEqual(
    s.policies.map((p) => [p.name, p.gangScheduling]),
    [
      ['default', false],
      ['gang', true],
    ],
  );
});

test('generated gangs depend on the seed only, and stay in their window', () => {
  const gen = (seed: number) =>
    parseScenario(
      `${BASE}seed: ${seed}
generate:
  - {count: 50, namePrefix: train, from: 10m, to: 50m, sizes: {1: 5, 8: 3}, gpusPerMember: {1: 1, 4: 1}, duration: {min: 1m, max: 20m}, failureRate: 0.2}
`,
      'gen.yaml',
    ).gangs;
  const a = gen(7);
  assert.deepEqual(gen(7), a);
  assert.notDeepEqual(gen(8), a);
  assert.equal(a.length, 50);
  for (const g of a) {
    assert.ok(g.atMs >= 600_000 && g.atMs <= 3_000_000, `${g.name} at ${g.atMs}`);
    assert.ok([1, 8].includes(g.size) && [1, 4].includes(g.gpus));
    assert.ok(g.durationMs! >= 60_000 && g.durationMs! <= 1_200_000);
  }
  assert.ok(a.some((g) => g.fail) && a.some((g) => !g.fail));
  assert.equal(a[0]!.name, 'train-00');
});

test('bad scenarios: every problem names its path and says how to fix it', () => {
  assert.deepEqual(problems('name: x\nend: [1'), [
    'not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ] at line 2, column 8 (fix the syntax there)',
  ]);
  assert.deepEqual(problems('- a list'), [
    'a scenario is a mapping with name, end, nodes, workload or generate, and policies (see docs/simulate.md)',
  ]);
  const p = problems(`
name: Bad_Name
end: soon
nodes: {pools: []}
policies: [{name: only}]
workload:
  - {name: a, at: 10s, size: 0, gpu: 1}
  - {name: b, size: 2, kind: CronJob}
`);
  assert.deepEqual(p, [
    'name: has the wrong form (use lower-case letters, digits and dashes (a DNS label), starting and ending with a letter or digit)',
    'end: has the wrong form (give the simulated time the run stops at as a duration, e.g. end: 2h)',
    'nodes.pools: must NOT have fewer than 1 items',
    'workload[0].gpu: unknown field: remove it or check its spelling (docs/simulate.md lists the fields)',
    'workload[0].size: must be >= 1',
    'workload[1].at: required (give the arrival time since the start as a duration, e.g. at: 90s)',
    'workload[1].kind: must be one of "Job", "StatefulSet", "Pods", "AppWrapper", "PodSequence"',
    'policies: must NOT have fewer than 2 items (list two or more policies to compare, e.g. - {name: default} and - {name: gang, gangScheduling: true})',
  ]);
});

test('bad scenarios: checks beyond the schema', () => {
  assert.deepEqual(
    problems(`${BASE}workload:
  - {name: a, at: 0s, size: 2}
  - {name: a, at: 2h, size: 2}
  - {name: seq, at: 0s, kind: PodSequence, size: 3}
  - {name: job, at: 0s, tiers: [{name: t, size: 1}]}
`),
    [
      'workload[1].name: "a" is also the name of workload[0] (give each gang its own name)',
      'workload[1].at: arrives at 7200s, not before end (1h): move it earlier or end later',
      'workload[2].tiers: required for kind PodSequence (list the tiers that start in order)',
      "workload[2].size: a PodSequence's size is the sum of its tiers' sizes: remove size",
      'workload[3].tiers: only kind PodSequence has tiers: remove them or set kind: PodSequence',
    ],
  );
  assert.deepEqual(problems(BASE), [
    'workload: empty: list gangs under workload, or generate some under generate',
  ]);
});

test('the shipped scenarios are valid', () => {
  for (const f of ['deadlock', 'training-day', 'service-mesh']) {
    const path = new URL(`../../scenarios/${f}.yaml`, import.meta.url);
    const s = parseScenario(readFileSync(path, 'utf8'), `scenarios/${f}.yaml`);
    assert.ok(s.gangs.length > 0 && s.policies.length >= 2, f);
  }
});
