import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { defaultNodeConfig, NodeConfigError, parseNodeConfig } from '../../../src/cluster/nodes/index.ts';

function problems(yaml: string): string[] {
  try {
    parseNodeConfig(yaml);
  } catch (err) {
    assert.ok(err instanceof NodeConfigError, String(err));
    return err.problems;
  }
  assert.fail('config was accepted');
}

describe('node pool config', () => {
  test('parses pools with defaults: allocatable = capacity, pods 110, prefix = pool name', () => {
    const cfg = parseNodeConfig(`
pools:
  - name: cpu
    count: 2
    capacity: {cpu: 16, memory: 64Gi}
    labels: {tier: general}
  - name: gpu
    count: 1
    capacity: {cpu: "32", memory: 256Gi, pods: "50", nvidia.com/gpu: 8}
    allocatable: {cpu: 31500m, memory: 250Gi, nvidia.com/gpu: 8}
    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
`);
    assert.equal(cfg.nodeCIDR, '10.240.0.0/16');
    const [cpu, gpu] = cfg.pools;
    assert.deepEqual(cpu!.capacity, { cpu: '16', memory: '64Gi', pods: '110' });
    assert.deepEqual(cpu!.allocatable, cpu!.capacity);
    assert.equal(cpu!.namePrefix, 'cpu');
    assert.deepEqual(gpu!.allocatable, { cpu: '31500m', memory: '250Gi', 'nvidia.com/gpu': '8', pods: '50' });
    assert.deepEqual(gpu!.taints, [{ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' }]);
  });

  test('--nodes N is N nodes of 32 cpu, 256Gi, 110 pods', () => {
    const cfg = defaultNodeConfig(3);
    assert.equal(cfg.pools.length, 1);
    assert.equal(cfg.pools[0]!.count, 3);
    assert.equal(cfg.pools[0]!.namePrefix, 'node');
    assert.deepEqual(cfg.pools[0]!.capacity, { cpu: '32', memory: '256Gi', pods: '110' });
    assert.throws(() => defaultNodeConfig(-1), /--nodes: must be a whole number/);
  });

  test('refuses impossible values, naming the pool and the field', () => {
    assert.deepEqual(
      problems(`
pools:
  - name: gpu
    count: -2
    capacity: {cpu: 8, memory: 64Gi}
    taints: [{key: a, effect: NoScheduel}]
    colour: blue
`),
      [
        'pool "gpu" (pools[0]): unknown field "colour"',
        'pool "gpu" (pools[0]): count: must be >= 0',
        'pool "gpu" (pools[0]): taints[0].effect: must be one of "NoSchedule", "PreferNoSchedule", "NoExecute"',
      ],
    );
    assert.deepEqual(
      problems(`
pools:
  - name: big
    count: 1
    capacity: {cpu: 8, memory: 12Gx}
    allocatable: {cpu: 9, example.com/foo: 1}
  - name: big
    count: 1
    capacity: {cpu: -1, memory: 1Gi}
`),
      [
        'pool "big" (pools[0]): capacity.memory: "12Gx" is not a quantity (e.g. 4, 500m, 16Gi)',
        'pool "big" (pools[0]): allocatable.cpu: 9 exceeds capacity 8',
        'pool "big" (pools[0]): allocatable.example.com/foo: has no capacity entry (allocatable is what is left of capacity)',
        'pool "big" (pools[1]): name: duplicate pool name (also pools[0])',
        'pool "big" (pools[1]): capacity.cpu: -1 is negative',
      ],
    );
  });

  test('refuses clashing node names, missing resources, bad labels and full address ranges', () => {
    assert.deepEqual(
      problems(`
pools:
  - {name: a, namePrefix: worker, count: 2, capacity: {cpu: 1, memory: 1Gi}}
  - {name: b, namePrefix: worker, count: 1, capacity: {cpu: 1, memory: 1Gi}}
`),
      ['pool "b" (pools[1]): namePrefix: node name "worker-0" is also produced by pool "a" (pools[0])'],
    );
    const p = problems(`
pools:
  - name: Bad_Name
    count: 1
    capacity: {cpu: 1}
    labels: {ok: "yes", "bad key!": x}
`);
    assert.equal(p.length, 3);
    assert.match(p[0]!, /^pool "Bad_Name" \(pools\[0\]\): name: "Bad_Name" must be lower case/);
    assert.equal(p[1], 'pool "Bad_Name" (pools[0]): capacity.memory: required');
    assert.match(p[2]!, /^pool "Bad_Name" \(pools\[0\]\): labels: invalid label key "bad key!"/);
    assert.deepEqual(
      problems(`
pools:
  - {name: a, count: 3, capacity: {cpu: 1, memory: 1Gi}, cidr: 10.9.0.0/30}
`),
      ['cidr 10.9.0.0/30: 3 nodes (pools[0]) do not fit in 2 addresses'],
    );
    assert.deepEqual(problems(`pools: [`).length, 1);
    assert.match(problems(`pools: [`)[0]!, /^not valid YAML: /);
    assert.deepEqual(problems(``), ['pools: required']);
    assert.deepEqual(
      problems(`pools:\n  - {name: a, count: 1, capacity: {cpu: 1, memory: 1Gi}, labels: {gpu: true}}`),
      ['pool "a" (pools[0]): labels.gpu: must be string'],
    );
  });
});
