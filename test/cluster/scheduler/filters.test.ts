import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ClusterState,
  filterNodeAffinity,
  filterNodeName,
  filterNodeResourcesFit,
  filterNodeUnschedulable,
  filterTaintToleration,
  preparePod,
  runFilters,
} from '../../../src/cluster/scheduler/core/index.ts';
import type { NodeSelectorTerm } from '../../../src/kube/builtin.ts';
import { node, pod } from './fixtures.ts';

function nodeInfo(n: ReturnType<typeof node>) {
  const s = new ClusterState();
  return s.upsertNode(n);
}

describe('NodeUnschedulable', () => {
  const cordoned = nodeInfo(node('n1', { cpu: '4' }, { unschedulable: true }));

  test('rejects cordoned nodes as unresolvable', () => {
    assert.deepEqual(filterNodeUnschedulable(preparePod(pod('p')), cordoned), {
      code: 'UnschedulableAndUnresolvable',
      plugin: 'NodeUnschedulable',
      reasons: ['node(s) were unschedulable'],
    });
  });

  test('a toleration for node.kubernetes.io/unschedulable lets the pod through', () => {
    const p = pod(
      'p',
      {},
      { tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists' }] },
    );
    assert.equal(filterNodeUnschedulable(preparePod(p), cordoned), undefined);
    const wildcard = pod('w', {}, { tolerations: [{ operator: 'Exists' }] });
    assert.equal(filterNodeUnschedulable(preparePod(wildcard), cordoned), undefined);
    const wrongEffect = pod(
      'e',
      {},
      {
        tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoExecute' }],
      },
    );
    assert.ok(filterNodeUnschedulable(preparePod(wrongEffect), cordoned));
  });
});

describe('NodeName', () => {
  test('only the named node passes', () => {
    const p = preparePod(pod('p', {}, { nodeName: 'n2' }));
    assert.deepEqual(filterNodeName(p, nodeInfo(node('n1', {})))?.reasons, [
      "node(s) didn't match the requested node name",
    ]);
    assert.equal(filterNodeName(p, nodeInfo(node('n2', {}))), undefined);
  });
});

describe('TaintToleration', () => {
  const cp = nodeInfo(
    node(
      'cp',
      { cpu: '4' },
      { taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }] },
    ),
  );

  test('an untolerated NoSchedule taint rejects, in both wordings', () => {
    const p = preparePod(pod('p'));
    assert.deepEqual(filterTaintToleration(p, cp), {
      code: 'UnschedulableAndUnresolvable',
      plugin: 'TaintToleration',
      reasons: ['node(s) had untolerated taint(s)'],
    });
    assert.deepEqual(filterTaintToleration(p, cp, true)?.reasons, [
      'node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }',
    ]);
  });

  test('NoExecute rejects too; PreferNoSchedule does not', () => {
    const exec = nodeInfo(
      node('x', {}, { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoExecute' }] }),
    );
    assert.deepEqual(filterTaintToleration(preparePod(pod('p')), exec, true)?.reasons, [
      'node(s) had untolerated taint {dedicated: gpu}',
    ]);
    const soft = nodeInfo(
      node('s', {}, { taints: [{ key: 'dedicated', value: 'gpu', effect: 'PreferNoSchedule' }] }),
    );
    assert.equal(filterTaintToleration(preparePod(pod('p')), soft), undefined);
  });

  test('Equal needs the same value, Exists any value, empty effect any effect', () => {
    const gpu = nodeInfo(
      node('g', {}, { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }),
    );
    const equal = pod(
      'a',
      {},
      { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] },
    );
    const wrongValue = pod('b', {}, { tolerations: [{ key: 'dedicated', value: 'cpu' }] });
    const exists = pod('c', {}, { tolerations: [{ key: 'dedicated', operator: 'Exists' }] });
    assert.equal(filterTaintToleration(preparePod(equal), gpu), undefined);
    assert.ok(filterTaintToleration(preparePod(wrongValue), gpu));
    assert.equal(filterTaintToleration(preparePod(exists), gpu), undefined);
  });

  test('NotReady nodes are kept out by their lifecycle taint', () => {
    const notReady = nodeInfo(
      node('nr', { cpu: '4' }, { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] }),
    );
    assert.deepEqual(filterTaintToleration(preparePod(pod('p')), notReady, true)?.reasons, [
      'node(s) had untolerated taint {node.kubernetes.io/not-ready: }',
    ]);
    const daemon = pod(
      'd',
      {},
      { tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists' }] },
    );
    assert.equal(filterTaintToleration(preparePod(daemon), notReady), undefined);
  });
});

describe('NodeAffinity', () => {
  const n = nodeInfo(node('n1', {}, { labels: { zone: 'a', gen: '5', disk: 'ssd' } }));
  const required = (...terms: NodeSelectorTerm[]) =>
    preparePod(
      pod(
        'p',
        {},
        {
          affinity: {
            nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } },
          },
        },
      ),
    );
  const reject = {
    code: 'UnschedulableAndUnresolvable',
    plugin: 'NodeAffinity',
    reasons: ["node(s) didn't match Pod's node affinity/selector"],
  };

  test('nodeSelector must match every label', () => {
    assert.equal(filterNodeAffinity(preparePod(pod('p', {}, { nodeSelector: { zone: 'a' } })), n), undefined);
    assert.deepEqual(
      filterNodeAffinity(preparePod(pod('p', {}, { nodeSelector: { zone: 'a', disk: 'hdd' } })), n),
      reject,
    );
  });

  test('operators In, NotIn, Exists, DoesNotExist, Gt, Lt', () => {
    const ok = (key: string, operator: string, values?: string[]) =>
      filterNodeAffinity(required({ matchExpressions: [{ key, operator, values }] }), n) === undefined;
    assert.equal(ok('zone', 'In', ['a', 'b']), true);
    assert.equal(ok('zone', 'In', ['b']), false);
    assert.equal(ok('zone', 'NotIn', ['b']), true);
    assert.equal(ok('missing', 'NotIn', ['b']), true);
    assert.equal(ok('zone', 'Exists'), true);
    assert.equal(ok('missing', 'Exists'), false);
    assert.equal(ok('missing', 'DoesNotExist'), true);
    assert.equal(ok('gen', 'Gt', ['4']), true);
    assert.equal(ok('gen', 'Gt', ['5']), false);
    assert.equal(ok('gen', 'Lt', ['6']), true);
    assert.equal(ok('zone', 'Lt', ['6']), false);
    assert.equal(ok('zone', 'Bogus', ['a']), false);
  });

  test('terms are ORed, requirements in a term ANDed, an empty term matches nothing', () => {
    const two = required(
      { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] },
      {
        matchExpressions: [
          { key: 'disk', operator: 'In', values: ['ssd'] },
          { key: 'gen', operator: 'Exists' },
        ],
      },
    );
    assert.equal(filterNodeAffinity(two, n), undefined);
    assert.deepEqual(filterNodeAffinity(required({}), n), reject);
  });

  test('matchFields metadata.name', () => {
    assert.equal(
      filterNodeAffinity(
        required({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }),
        n,
      ),
      undefined,
    );
    assert.deepEqual(
      filterNodeAffinity(
        required({ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n1'] }] }),
        n,
      ),
      reject,
    );
  });
});

describe('NodeResourcesFit', () => {
  test('reports every shortfall; unresolvable only when the empty node is too small', () => {
    const s = new ClusterState();
    s.upsertNode(node('n1', { cpu: '2', memory: '4Gi', 'ephemeral-storage': '10Gi', 'nvidia.com/gpu': '1' }));
    s.addPod(pod('busy', { cpu: '1500m', memory: '3Gi', 'nvidia.com/gpu': '1' }), 'n1');
    const ni = s.getNode('n1')!;
    const p = preparePod(
      pod('p', { cpu: '1', memory: '2Gi', 'ephemeral-storage': '1Gi', 'nvidia.com/gpu': '1' }),
    );
    assert.deepEqual(filterNodeResourcesFit(p, ni), {
      code: 'Unschedulable',
      plugin: 'NodeResourcesFit',
      reasons: ['Insufficient cpu', 'Insufficient memory', 'Insufficient nvidia.com/gpu'],
    });
    const huge = preparePod(pod('h', { cpu: '3' }));
    assert.equal(filterNodeResourcesFit(huge, ni)?.code, 'UnschedulableAndUnresolvable');
  });

  test('a node without the extended resource is unresolvable', () => {
    const ni = nodeInfo(node('cpu-only', { cpu: '8' }));
    assert.deepEqual(filterNodeResourcesFit(preparePod(pod('g', { 'nvidia.com/gpu': '1' })), ni), {
      code: 'UnschedulableAndUnresolvable',
      plugin: 'NodeResourcesFit',
      reasons: ['Insufficient nvidia.com/gpu'],
    });
  });

  test('the pod count limit applies even to pods that request nothing', () => {
    const s = new ClusterState();
    s.upsertNode(node('tiny', { cpu: '8', pods: '1' }));
    s.addPod(pod('first'), 'tiny');
    assert.deepEqual(filterNodeResourcesFit(preparePod(pod('second')), s.getNode('tiny')!)?.reasons, [
      'Too many pods',
    ]);
  });

  test('ephemeral storage', () => {
    const ni = nodeInfo(node('n', { 'ephemeral-storage': '1Gi' }));
    assert.deepEqual(
      filterNodeResourcesFit(preparePod(pod('p', { 'ephemeral-storage': '2Gi' })), ni)?.reasons,
      ['Insufficient ephemeral-storage'],
    );
  });
});

test('runFilters stops at the first failing plugin in profile order', () => {
  const ni = nodeInfo(
    node('n', { cpu: '1' }, { unschedulable: true, taints: [{ key: 'k', effect: 'NoSchedule' }] }),
  );
  assert.equal(runFilters(preparePod(pod('p', { cpu: '8' })), ni)?.plugin, 'NodeUnschedulable');
  const tolerant = pod('t', { cpu: '8' }, { tolerations: [{ operator: 'Exists' }] });
  assert.equal(runFilters(preparePod(tolerant), ni)?.plugin, 'NodeResourcesFit');
});
