import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeFilterKey } from '../../../src/cluster/scheduler/core/filters.ts';
import {
  balancedAllocationScore,
  ClusterState,
  MESSAGES_1_33,
  MESSAGES_1_35,
  numFeasibleNodesToFind,
  preparePod,
  resourceFitScore,
  type ScheduleResult,
  schedulePod,
} from '../../../src/cluster/scheduler/core/index.ts';
import { node, pod } from './fixtures.ts';

function message(r: ScheduleResult): string {
  assert.equal(r.status, 'Unschedulable');
  return r.status === 'Unschedulable' ? r.error.message : '';
}

const controlPlane = () =>
  node(
    'cp',
    { cpu: '4', memory: '8Gi' },
    { taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }] },
  );

describe('FitError messages', () => {
  test('GPU pod on a cluster without GPUs, current wording', () => {
    const s = new ClusterState();
    s.upsertNode(controlPlane());
    s.upsertNode(node('w1', { cpu: '4', memory: '8Gi' }));
    s.upsertNode(node('w2', { cpu: '4', memory: '8Gi' }));
    const r = schedulePod(s, pod('train', { 'nvidia.com/gpu': '1' }));
    assert.equal(
      message(r),
      '0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient nvidia.com/gpu. ' +
        'no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.',
    );
  });

  test('the same with 1.33 wording: taint key shown, no DRA note; reasons sorted as strings', () => {
    const s = new ClusterState();
    s.upsertNode(controlPlane());
    s.upsertNode(node('w1', { cpu: '4', memory: '8Gi' }));
    s.upsertNode(node('w2', { cpu: '4', memory: '8Gi' }));
    const r = schedulePod(s, pod('train', { 'nvidia.com/gpu': '1' }), { messages: MESSAGES_1_33 });
    assert.equal(
      message(r),
      '0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, ' +
        '2 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.',
    );
  });

  test('a full node without lower-priority pods: no preemption victims', () => {
    const s = new ClusterState();
    s.upsertNode(node('n1', { cpu: '4', memory: '8Gi' }));
    s.addPod(pod('busy', { cpu: '3' }), 'n1');
    const r = schedulePod(s, pod('p', { cpu: '2' }), { messages: MESSAGES_1_33 });
    assert.equal(
      message(r),
      '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.',
    );
  });

  test('a DaemonSet pod pinned by matchFields to a full node', () => {
    const s = new ClusterState();
    for (const n of ['n1', 'n2', 'n3', 'n4']) s.upsertNode(node(n, { cpu: '1' }));
    s.addPod(pod('busy', { cpu: '1' }), 'n1');
    const ds = pod(
      'ds-abc',
      { cpu: '100m' },
      {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] },
              ],
            },
          },
        },
      },
    );
    assert.equal(
      message(schedulePod(s, ds, { messages: MESSAGES_1_33 })),
      "0/4 nodes are available: 1 Insufficient cpu, 3 node(s) didn't satisfy plugin(s) [NodeAffinity]. " +
        'preemption: 0/4 nodes are available: 1 No preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling.',
    );
  });

  test('preemptionPolicy Never', () => {
    const s = new ClusterState();
    s.upsertNode(node('n1', { cpu: '1' }));
    s.addPod(pod('low', { cpu: '1' }, { priority: 0 }), 'n1');
    const r = schedulePod(s, pod('p', { cpu: '1' }, { priority: 100, preemptionPolicy: 'Never' }));
    assert.equal(
      message(r),
      '0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never.',
    );
  });

  test('removing every lower-priority pod would still not be enough', () => {
    const s = new ClusterState();
    s.upsertNode(node('n1', { cpu: '4' }));
    s.addPod(pod('important', { cpu: '3' }, { priority: 100 }), 'n1');
    s.addPod(pod('low', { cpu: '500m' }, { priority: 0 }), 'n1');
    const r = schedulePod(s, pod('p', { cpu: '2' }, { priority: 50 }), { messages: MESSAGES_1_33 });
    assert.equal(
      message(r),
      '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Insufficient cpu.',
    );
  });

  test('preemption that helps nominates the node and reprieves the most important victims', () => {
    const s = new ClusterState();
    s.upsertNode(node('n1', { cpu: '4' }));
    s.upsertNode(node('cp', { cpu: '4' }, { taints: [{ key: 'x', effect: 'NoSchedule' }] }));
    const older = {
      ...pod('a', { cpu: '1' }, { priority: 0 }),
      status: { startTime: '2025-01-01T00:00:00Z' },
    };
    const newer = {
      ...pod('b', { cpu: '1' }, { priority: 0 }),
      status: { startTime: '2025-01-02T00:00:00Z' },
    };
    s.addPod(older, 'n1');
    s.addPod(newer, 'n1');
    s.addPod(pod('c', { cpu: '2' }, { priority: 10 }), 'n1');
    const r = schedulePod(s, pod('p', { cpu: '2' }, { priority: 100 }));
    assert.equal(r.status, 'Unschedulable');
    if (r.status !== 'Unschedulable') return;
    assert.equal(r.nominatedNodeName, 'n1');
    assert.deepEqual(
      r.victims?.map((v) => v.key),
      ['default/a', 'default/b'],
    );
    // A successful PostFilter adds nothing to the message.
    assert.equal(
      r.error.message,
      '0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s).',
    );
  });

  test('a lower-priority pod anywhere is found: the cluster keeps its lowest priority', () => {
    const s = new ClusterState();
    s.upsertNode(node('n1', { cpu: '1' }));
    s.upsertNode(node('n2', { cpu: '1' }));
    assert.equal(s.lowestPodPriority(), Number.POSITIVE_INFINITY);
    const low = pod('low', { cpu: '1' }, { priority: 5 });
    s.addPod(pod('high', { cpu: '1' }, { priority: 100 }), 'n1');
    s.addPod(low, 'n2');
    assert.equal(s.lowestPodPriority(), 5);
    const r = schedulePod(s, pod('p', { cpu: '1' }, { priority: 50 }));
    assert.equal(r.status === 'Unschedulable' && r.nominatedNodeName, 'n2');
    s.removePod(low.metadata!.uid!);
    s.addPod(pod('high2', { cpu: '1' }, { priority: 200 }), 'n2');
    assert.equal(s.lowestPodPriority(), 100);
    assert.match(
      message(schedulePod(s, pod('p', { cpu: '1' }, { priority: 50 }))),
      /preemption: 0\/2 nodes are available: 2 No preemption victims found for incoming pod\.$/,
    );
  });

  test('preemptable leaves pods out of the dry run', () => {
    const s = new ClusterState();
    s.upsertNode(node('n1', { cpu: '1' }));
    s.upsertNode(node('n2', { cpu: '1' }));
    s.addPod(pod('kept', { cpu: '1' }, { priority: 0 }), 'n1');
    s.addPod(pod('taken', { cpu: '1' }, { priority: 5 }), 'n2');
    const r = schedulePod(s, pod('p', { cpu: '1' }, { priority: 100 }), {
      preemptable: (pods) => pods.filter((e) => e.key !== 'default/kept'),
    });
    assert.equal(r.status === 'Unschedulable' && r.nominatedNodeName, 'n2');
    const none = schedulePod(s, pod('p', { cpu: '1' }, { priority: 100 }), { preemptable: () => [] });
    assert.match(
      message(none),
      /preemption: 0\/2 nodes are available: 2 No preemption victims found for incoming pod\.$/,
    );
  });

  test('no nodes at all', () => {
    assert.equal(message(schedulePod(new ClusterState(), pod('p'))), 'no nodes available to schedule pods');
  });

  test('conflicting matchFields terms fail in PreFilter', () => {
    const s = new ClusterState();
    s.upsertNode(node('n1', {}));
    s.upsertNode(node('n2', {}));
    const p = pod(
      'p',
      {},
      {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                {
                  matchFields: [
                    { key: 'metadata.name', operator: 'In', values: ['n1'] },
                    { key: 'metadata.name', operator: 'In', values: ['n2'] },
                  ],
                },
              ],
            },
          },
        },
      },
    );
    assert.equal(
      message(schedulePod(s, p, { messages: MESSAGES_1_33 })),
      '0/2 nodes are available: pod affinity terms conflict. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.',
    );
  });

  test('counts sort as strings, so 10 comes before 2', () => {
    const s = new ClusterState();
    for (let i = 0; i < 10; i++)
      s.upsertNode(node(`t${i}`, { cpu: '8' }, { taints: [{ key: 'k', effect: 'NoExecute' }] }));
    s.upsertNode(node('a', { cpu: '1' }));
    s.upsertNode(node('b', { cpu: '1' }));
    const r = schedulePod(s, pod('p', { cpu: '2' }), { messages: MESSAGES_1_35 });
    assert.match(
      message(r),
      /^0\/12 nodes are available: 10 node\(s\) had untolerated taint\(s\), 2 Insufficient cpu\. /,
    );
  });
});

describe('scoring', () => {
  function twoNodes() {
    const s = new ClusterState();
    s.upsertNode(node('busy', { cpu: '4', memory: '8Gi' }));
    s.upsertNode(node('idle', { cpu: '4', memory: '8Gi' }));
    s.addPod(pod('x', { cpu: '1', memory: '2Gi' }), 'busy');
    return s;
  }

  test('LeastAllocated and MostAllocated follow upstream integer arithmetic', () => {
    const s = twoNodes();
    const p = preparePod(pod('p', { cpu: '1', memory: '1Gi' }));
    const busy = s.getNode('busy')!;
    // cpu (4000-2000)*100/4000 = 50, memory (8-3)*100/8 = 62 → 56
    assert.equal(resourceFitScore(p, busy, 'LeastAllocated'), 56);
    // cpu 2000*100/4000 = 50, memory 3*100/8 = 37 → 43
    assert.equal(resourceFitScore(p, busy, 'MostAllocated'), 43);
    // fractions 0.5 and 0.375 → std 0.0625 → 93
    assert.equal(balancedAllocationScore(p, busy), 93);
  });

  test('extended resources can be scored with weights', () => {
    const s = new ClusterState();
    s.upsertNode(node('g', { cpu: '8', memory: '8Gi', 'nvidia.com/gpu': '8' }));
    s.addPod(pod('x', { 'nvidia.com/gpu': '6' }), 'g');
    const p = preparePod(pod('p', { 'nvidia.com/gpu': '1', cpu: '1' }));
    const res = [
      { name: 'nvidia.com/gpu', weight: 3 },
      { name: 'cpu', weight: 1 },
    ];
    // gpu 7*100/8 = 87 (×3), cpu (100m + 1000m)*100/8000 = 13 → (261+13)/4 = 68
    assert.equal(resourceFitScore(p, s.getNode('g')!, 'MostAllocated', res), 68);
    // A pod that asks for no GPU leaves the GPU out of the score.
    const cpuOnly = preparePod(pod('c', { cpu: '1' }));
    assert.equal(resourceFitScore(cpuOnly, s.getNode('g')!, 'MostAllocated', res), 13);
  });

  test('spreading by default, bin packing with MostAllocated', () => {
    const spread = schedulePod(twoNodes(), pod('p', { cpu: '1', memory: '1Gi' }));
    assert.equal(spread.status === 'Scheduled' && spread.nodeName, 'idle');
    const packed = schedulePod(twoNodes(), pod('p', { cpu: '1', memory: '1Gi' }), {
      scoring: { strategy: 'MostAllocated' },
    });
    assert.equal(packed.status === 'Scheduled' && packed.nodeName, 'busy');
  });

  test('PreferNoSchedule taints and preferred affinity steer the choice', () => {
    const s = new ClusterState();
    s.upsertNode(node('soft', { cpu: '4' }, { taints: [{ key: 'spot', effect: 'PreferNoSchedule' }] }));
    s.upsertNode(node('plain', { cpu: '4' }));
    const r = schedulePod(s, pod('p', { cpu: '1' }));
    assert.equal(r.status === 'Scheduled' && r.nodeName, 'plain');
    const likesSoft = pod(
      'q',
      { cpu: '1' },
      {
        tolerations: [{ key: 'spot', operator: 'Exists' }],
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: 10,
                preference: { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['soft'] }] },
              },
            ],
          },
        },
      },
    );
    const r2 = schedulePod(s, likesSoft);
    assert.equal(r2.status === 'Scheduled' && r2.nodeName, 'soft');
  });

  test('ties go to the first node scanned, or to the injected random choice', () => {
    const make = () => {
      const s = new ClusterState();
      s.upsertNode(node('a', { cpu: '4' }));
      s.upsertNode(node('b', { cpu: '4' }));
      return s;
    };
    const first = schedulePod(make(), pod('p', { cpu: '1' }));
    assert.equal(first.status === 'Scheduled' && first.nodeName, 'a');
    const r0 = schedulePod(make(), pod('p', { cpu: '1' }), { tieBreak: 'random', random: () => 0 });
    assert.equal(r0.status === 'Scheduled' && r0.nodeName, 'b');
    const r1 = schedulePod(make(), pod('p', { cpu: '1' }), { tieBreak: 'random', random: () => 0.99 });
    assert.equal(r1.status === 'Scheduled' && r1.nodeName, 'a');
  });
});

describe('node sampling', () => {
  test('numFeasibleNodesToFind matches kube-scheduler', () => {
    assert.equal(numFeasibleNodesToFind(50), 50);
    assert.equal(numFeasibleNodesToFind(100), 100);
    assert.equal(numFeasibleNodesToFind(1000), 420);
    assert.equal(numFeasibleNodesToFind(5000), 500);
    assert.equal(numFeasibleNodesToFind(20000), 1000);
    assert.equal(numFeasibleNodesToFind(1000, 100), 1000);
    assert.equal(numFeasibleNodesToFind(1000, 30), 300);
  });

  test('a cycle stops after enough feasible nodes and the next one starts where it stopped', () => {
    const s = new ClusterState();
    for (let i = 0; i < 1000; i++) s.upsertNode(node(`n${i}`, { cpu: '4' }));
    const r = schedulePod(s, pod('p', { cpu: '1' }));
    assert.equal(r.status === 'Scheduled' && r.evaluatedNodes, 420);
    assert.equal(s.nextStartNodeIndex, 420);
    const all = schedulePod(s, pod('q', { cpu: '1' }), { percentageOfNodesToScore: 100 });
    assert.equal(all.status === 'Scheduled' && all.evaluatedNodes, 1000);
  });
});

describe('remembered node verdicts', () => {
  test('a node changed, or a pod of another shape, is filtered again', () => {
    const s = new ClusterState();
    s.upsertNode(node('a', { cpu: '8', 'nvidia.com/gpu': '8' }));
    s.upsertNode(node('b', { cpu: '8', 'nvidia.com/gpu': '8' }));
    s.addPod(pod('fill-a', { 'nvidia.com/gpu': '6' }), 'a');
    s.addPod(pod('fill-b', { 'nvidia.com/gpu': '8' }), 'b');
    const first = schedulePod(s, pod('two', { 'nvidia.com/gpu': '2' }));
    assert.equal(first.status === 'Scheduled' && first.nodeName, 'a');
    s.addPod(pod('two', { 'nvidia.com/gpu': '2' }), 'a');
    // Same shape, node a changed since: both full now.
    assert.match(
      message(schedulePod(s, pod('two-b', { 'nvidia.com/gpu': '2' }))),
      /2 Insufficient nvidia.com\/gpu/,
    );
    // Another shape on unchanged nodes is not given the first shape's verdict.
    assert.match(message(schedulePod(s, pod('cpu', { cpu: '9' }))), /2 Insufficient cpu/);
    // A node that changes (its pod gone) is filtered again for the shape it rejected.
    s.removePod(s.getNode('b')!.pods.keys().next().value!);
    const again = schedulePod(s, pod('two-c', { 'nvidia.com/gpu': '2' }));
    assert.equal(again.status === 'Scheduled' && again.nodeName, 'b');
    // A node's labels are part of it: a selector it stops matching rejects it.
    const sel = pod('sel', { 'nvidia.com/gpu': '1' }, { nodeSelector: { pool: 'x' } });
    assert.match(message(schedulePod(s, sel)), /node\(s\) didn't match Pod's node affinity\/selector/);
    s.upsertNode(node('b', { cpu: '8', 'nvidia.com/gpu': '8' }, { labels: { pool: 'x' } }));
    const placed = schedulePod(s, pod('sel-2', { 'nvidia.com/gpu': '1' }, { nodeSelector: { pool: 'x' } }));
    assert.equal(placed.status === 'Scheduled' && placed.nodeName, 'b');
  });

  test('shapes taking turns keep their verdicts on the nodes that did not change', () => {
    const s = new ClusterState();
    for (const n of ['a', 'b', 'c']) s.upsertNode(node(n, { cpu: '8', 'nvidia.com/gpu': '8' }));
    const gpu = pod('gpu', { 'nvidia.com/gpu': '4' });
    const cpu = pod('cpu', { cpu: '4' });
    assert.equal(schedulePod(s, gpu).status, 'Scheduled');
    assert.equal(schedulePod(s, cpu).status, 'Scheduled');
    s.addPod(pod('on-b', { 'nvidia.com/gpu': '1' }), 'b');
    const held = s.verdicts.of(s.shapeId(nodeFilterKey(preparePod(gpu), {})));
    const heldNow = [0, 1, 2].map((i) => held.stamp[i] === s.verdicts.stamp[i]);
    assert.deepEqual(heldNow, [true, false, true]);
  });

  test('a node removed takes its verdicts along, the nodes after it keep their own', () => {
    const s = new ClusterState();
    s.upsertNode(node('a', { cpu: '8' }));
    s.upsertNode(node('b', { cpu: '8' }));
    s.upsertNode(node('c', { cpu: '8' }));
    s.addPod(pod('fill-a', { cpu: '8' }), 'a');
    s.addPod(pod('fill-c', { cpu: '8' }), 'c');
    const first = schedulePod(s, pod('p', { cpu: '2' }));
    assert.equal(first.status === 'Scheduled' && first.nodeName, 'b');
    s.removeNode('b');
    assert.deepEqual(
      s.nodes.map((ni) => [ni.name, ni.index]),
      [
        ['a', 0],
        ['c', 1],
      ],
    );
    assert.match(
      message(schedulePod(s, pod('q', { cpu: '2' }))),
      /^0\/2 nodes are available: 2 Insufficient cpu/,
    );
    // Nodes added past the verdicts' room are judged afresh.
    for (let i = 0; i < 100; i++) s.upsertNode(node(`m${i}`, { cpu: '1' }));
    s.upsertNode(node('d', { cpu: '8' }));
    const later = schedulePod(s, pod('r', { cpu: '2' }));
    assert.equal(later.status === 'Scheduled' && later.nodeName, 'd');
  });

  test('cycles on remembered verdicts place and reject as cycles that filter every node afresh', () => {
    let seed = 11;
    const rnd = (k: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor((seed / 2147483648) * k);
    };
    const live = new ClusterState();
    const nodes = new Map<string, ReturnType<typeof node>>();
    const pods = new Map<string, { p: ReturnType<typeof pod>; node: string }>();
    const addNode = (name: string, gpus: number, cordoned = false) => {
      const n = node(name, { cpu: '64', 'nvidia.com/gpu': String(gpus) }, { unschedulable: cordoned });
      nodes.set(name, n);
      live.upsertNode(n);
    };
    for (let i = 0; i < 300; i++) addNode(`n${i}`, 8);
    const shapes = ['1', '2', '4', '8', '9'];
    for (let step = 0; step < 600; step++) {
      const op = rnd(10);
      if (op < 4) {
        const on = `n${rnd(300)}`;
        if (!nodes.has(on)) continue;
        const p = pod(`p${step}`, { 'nvidia.com/gpu': shapes[rnd(4)]! });
        live.addPod(p, on);
        pods.set(p.metadata!.uid!, { p, node: on });
      } else if (op < 6 && pods.size > 0) {
        const uid = [...pods.keys()][rnd(pods.size)]!;
        live.removePod(uid);
        pods.delete(uid);
      } else if (op === 6) {
        const name = `n${rnd(300)}`;
        if (nodes.has(name)) addNode(name, 8, rnd(2) === 0);
      } else if (op === 7 && step % 50 === 0) {
        const name = `n${rnd(300)}`;
        if (nodes.has(name) && ![...pods.values()].some((x) => x.node === name)) {
          live.removeNode(name);
          nodes.delete(name);
        }
      } else {
        // The same cycle on a state rebuilt from scratch, which remembers nothing.
        const fresh = new ClusterState();
        for (const ni of live.nodes) fresh.upsertNode(nodes.get(ni.name)!);
        for (const { p, node: on } of pods.values()) fresh.addPod(p, on);
        fresh.nextStartNodeIndex = live.nextStartNodeIndex;
        const q = pod(`q${step}`, { 'nvidia.com/gpu': shapes[rnd(shapes.length)]! });
        const got = schedulePod(live, q);
        const want = schedulePod(fresh, q);
        assert.deepEqual(
          got.status === 'Scheduled' ? got : got.error.message,
          want.status === 'Scheduled' ? want : want.error.message,
        );
        assert.equal(live.nextStartNodeIndex, fresh.nextStartNodeIndex);
      }
    }
  });

  test('shape ids are never reused once the shapes seen are forgotten', () => {
    const s = new ClusterState();
    s.upsertNode(node('a', { cpu: '8' }));
    assert.match(message(schedulePod(s, pod('big', { cpu: '9' }))), /1 Insufficient cpu/);
    // Enough other shapes that the ones seen are forgotten and ids start anew.
    for (let i = 0; i < 5000; i++) s.shapeId(`synthetic-${i}`);
    const small = schedulePod(s, pod('small', { cpu: '1' }));
    assert.equal(small.status === 'Scheduled' && small.nodeName, 'a');
  });
});

describe('incremental accounting', () => {
  test('add/remove keeps the same totals as a recount from scratch', () => {
    const s = new ClusterState();
    for (let i = 0; i < 5; i++)
      s.upsertNode(node(`n${i}`, { cpu: '64', memory: '256Gi', 'nvidia.com/gpu': '8' }));
    const live = new Map<string, { p: ReturnType<typeof pod>; n: string }>();
    let seed = 7;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    for (let i = 0; i < 500; i++) {
      if (live.size > 0 && rnd() < 0.4) {
        const uid = [...live.keys()][Math.floor(rnd() * live.size)]!;
        assert.equal(s.removePod(uid), true);
        live.delete(uid);
      } else {
        const p = pod(`p${i}`, {
          cpu: `${1 + Math.floor(rnd() * 900)}m`,
          memory: `${Math.floor(rnd() * 512)}Mi`,
          'nvidia.com/gpu': `${Math.floor(rnd() * 2)}`,
        });
        const n = `n${Math.floor(rnd() * 5)}`;
        s.addPod(p, n);
        live.set(p.metadata!.uid!, { p, n });
      }
    }
    const fresh = new ClusterState();
    for (let i = 0; i < 5; i++)
      fresh.upsertNode(node(`n${i}`, { cpu: '64', memory: '256Gi', 'nvidia.com/gpu': '8' }));
    for (const { p, n } of live.values()) fresh.addPod(p, n);
    for (let i = 0; i < 5; i++) {
      const a = s.getNode(`n${i}`)!;
      const b = fresh.getNode(`n${i}`)!;
      assert.equal(a.reqMilliCPU, b.reqMilliCPU);
      assert.equal(a.reqMemory, b.reqMemory);
      assert.equal(a.nonZeroMilliCPU, b.nonZeroMilliCPU);
      assert.equal(a.nonZeroMemory, b.nonZeroMemory);
      assert.equal(a.scalarRequested('nvidia.com/gpu'), b.scalarRequested('nvidia.com/gpu'));
      assert.equal(a.podCount, b.podCount);
    }
    assert.equal(s.podCount, live.size);
  });

  test('an assumed pod blocks the next one; forgetting it frees the room', () => {
    const s = new ClusterState();
    s.upsertNode(node('n1', { cpu: '1' }));
    const first = pod('first', { cpu: '1' });
    const r = schedulePod(s, first);
    assert.equal(r.status, 'Scheduled');
    s.addPod(first, r.status === 'Scheduled' ? r.nodeName : '');
    assert.equal(schedulePod(s, pod('second', { cpu: '1' })).status, 'Unschedulable');
    s.removePod(first.metadata!.uid!);
    assert.equal(schedulePod(s, pod('third', { cpu: '1' })).status, 'Scheduled');
  });

  test('re-adding a pod replaces it; pods outlive their node until removed', () => {
    const s = new ClusterState();
    s.upsertNode(node('n1', { cpu: '4' }));
    const p = pod('p', { cpu: '1' });
    s.addPod(p, 'n1');
    s.addPod(p, 'n1');
    assert.equal(s.getNode('n1')!.reqMilliCPU, 1000);
    s.removeNode('n1');
    assert.equal(s.nodes.length, 0);
    s.upsertNode(node('n1', { cpu: '4' }));
    assert.equal(s.getNode('n1')!.reqMilliCPU, 1000);
    s.removePod(p.metadata!.uid!);
    assert.equal(s.getNode('n1')!.reqMilliCPU, 0);
  });
});
