import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decide } from '../../../src/controllers/podsequence/core.ts';
import { resolveOptions } from '../../../src/controllers/podsequence/options.ts';
import { taintKey, tolerationsFor } from '../../../src/controllers/podsequence/taints.ts';
import { input, names, node, pod, sequence } from './fixtures.ts';

const csi = () =>
  sequence({
    scope: 'Node',
    podGroups: [
      { name: 'CSI Driver', podSelector: { matchLabels: { app: 'csi-driver', component: 'node' } } },
      { name: 'Application Pods', podSelector: { matchLabels: { app: 'my-app' } } },
    ],
  });
const driver = { app: 'csi-driver', component: 'node' };
const app = { app: 'my-app' };

describe('node scope with pinned pods (DaemonSets, explicit names)', () => {
  test('releases the first group everywhere and each next group per node', () => {
    const pods = [
      pod('csi-a', { labels: driver, state: 'ready', pinned: 'node-a' }),
      pod('csi-b', { labels: driver, state: 'scheduled', pinned: 'node-b' }),
      pod('app-a', { labels: app, pinned: 'node-a' }),
      pod('app-b', { labels: app, pinned: 'node-b' }),
    ];
    const plan = decide(input(csi(), pods));
    assert.deepEqual(names(plan.releases), ['app-a']);
    assert.equal(plan.releases[0]!.node, 'node-a');
    assert.equal(plan.releases[0]!.narrowTo, undefined, 'a pinned pod needs no narrowing');
    const a = plan.status.nodeStatus!.find((s) => s.nodeName === 'node-a')!;
    const b = plan.status.nodeStatus!.find((s) => s.nodeName === 'node-b')!;
    assert.equal(a.currentIndex, 1);
    assert.equal(a.phase, 'InProgress');
    assert.equal(b.currentIndex, 0);
    assert.equal(b.readyPodsInCurrentGroup, 0);
    assert.match(
      b.conditions![0]!.message!,
      /Waiting for group 'CSI Driver' \(1\/2\): 0\/1 Ready \(csi-b Running, not Ready\)/,
    );
    assert.equal(plan.status.currentIndex, 0, 'the least index across nodes');
    assert.equal(plan.status.currentGroupPods, undefined, 'cluster-scoped only');
    assert.match(
      plan.status.message!,
      /0\/2 nodes completed; node node-a waits for group 'Application Pods' \(2\/2\).*node node-b waits for group 'CSI Driver'/,
    );
  });

  test('GroupReady names the nodes where the group has pods, not nodes it skipped', () => {
    const progress = [
      pod('csi-a', { labels: driver, state: 'ready', pinned: 'node-a' }),
      pod('csi-b', { labels: driver, state: 'scheduled', pinned: 'node-b' }),
      pod('app-a', { labels: app, state: 'released', pinned: 'node-a' }),
    ];
    const seq = csi();
    const before = decide(input(seq, progress));
    const done = [
      pod('csi-a', { labels: driver, state: 'ready', pinned: 'node-a' }),
      pod('csi-b', { labels: driver, state: 'ready', pinned: 'node-b' }),
      pod('app-a', { labels: app, state: 'ready', pinned: 'node-a' }),
    ];
    const after = decide(input({ ...seq, status: before.status }, done));
    const notes = after.events.filter((e) => e.reason === 'GroupReady').map((e) => e.note);
    assert.deepEqual(notes, [
      "Group 'CSI Driver' (1/2) is Ready on node node-b",
      "Group 'Application Pods' (2/2) is Ready on node node-a",
    ]);
  });

  test('the README example with explicit names per node', () => {
    const seq = sequence({
      scope: 'Node',
      podGroups: [
        { name: 'CSI Driver', pods: ['csi-node-worker1', 'csi-node-worker2'] },
        { name: 'Apps', pods: ['app-on-worker1', 'app-on-worker2'] },
      ],
    });
    const pods = [
      pod('csi-node-worker1', { state: 'ready', node: 'worker1' }),
      pod('csi-node-worker2', { state: 'scheduled', node: 'worker2' }),
      pod('app-on-worker1', { pinned: 'worker1' }),
      pod('app-on-worker2', { pinned: 'worker2' }),
    ];
    assert.deepEqual(names(decide(input(seq, pods)).releases), ['app-on-worker1']);
  });

  test('a node without the first group pod holds its later pods', () => {
    const pods = [
      pod('csi-a', { labels: driver, state: 'ready', pinned: 'node-a' }),
      pod('app-c', { labels: app, pinned: 'node-c' }),
    ];
    const plan = decide(input(csi(), pods));
    assert.deepEqual(plan.releases, []);
    const c = plan.status.nodeStatus!.find((s) => s.nodeName === 'node-c')!;
    assert.match(c.conditions![0]!.message!, /no pod of it on this node/);
  });

  test('a new node joins and progresses on its own', () => {
    const seq = csi();
    const done = [
      pod('csi-a', { labels: driver, state: 'ready', pinned: 'node-a' }),
      pod('app-a', { labels: app, state: 'ready', pinned: 'node-a' }),
    ];
    const before = decide(input(seq, done));
    assert.equal(before.status.phase, 'Completed');
    seq.status = before.status;
    const joined = decide(
      input(seq, [
        ...done,
        pod('csi-new', { labels: driver, pinned: 'node-new' }),
        pod('app-new', { labels: app, pinned: 'node-new' }),
      ]),
    );
    assert.deepEqual(names(joined.releases), ['csi-new']);
    assert.equal(joined.status.phase, 'InProgress');
    assert.equal(joined.status.nodeStatus!.find((s) => s.nodeName === 'node-a')!.phase, 'Completed');
    assert.equal(joined.status.currentGroupReady, '1/2 nodes');
  });

  test('completes when every node is done; a node with only the first group is done', () => {
    const pods = [
      pod('csi-a', { labels: driver, state: 'ready', pinned: 'node-a' }),
      pod('csi-b', { labels: driver, state: 'ready', pinned: 'node-b' }),
      pod('app-a', { labels: app, state: 'ready', pinned: 'node-a' }),
    ];
    const plan = decide(input(csi(), pods));
    assert.equal(plan.status.phase, 'Completed');
    assert.equal(plan.status.currentIndex, 2);
    assert.deepEqual(
      plan.status.nodeStatus!.map((s) => [s.nodeName, s.currentIndex, s.phase]),
      [
        ['node-a', 2, 'Completed'],
        ['node-b', 2, 'Completed'],
      ],
    );
    assert.equal(plan.status.currentGroupReady, '2/2 nodes');
  });

  test('a failed pod fails its node only', () => {
    const pods = [
      pod('csi-a', { labels: driver, state: 'ready', pinned: 'node-a' }),
      pod('csi-b', { labels: driver, state: 'failed', pinned: 'node-b' }),
      pod('csi-b2', { labels: driver, state: 'failed', pinned: 'node-b' }),
      pod('app-a', { labels: app, pinned: 'node-a' }),
      pod('app-b', { labels: app, pinned: 'node-b' }),
    ];
    // Some driver pods are healthy, so the failed ones are left out (replaced by their DaemonSet).
    const plan = decide(input(csi(), pods));
    assert.deepEqual(names(plan.releases), ['app-a']);
    assert.equal(plan.status.nodeStatus!.find((s) => s.nodeName === 'node-b')!.currentIndex, 0);
  });
});

describe('node scope for pods whose node is not known before release (KEP-3838)', () => {
  test('narrows the required node affinity to nodes where the earlier groups are Ready', () => {
    const pods = [
      pod('csi-a', { labels: driver, state: 'ready', pinned: 'node-a' }),
      pod('csi-b', { labels: driver, state: 'scheduled', pinned: 'node-b' }),
      pod('csi-c', { labels: driver, state: 'ready', pinned: 'node-c' }),
      pod('my-app-1', { labels: app }),
    ];
    const plan = decide(input(csi(), pods));
    assert.deepEqual(names(plan.releases), ['my-app-1']);
    const r = plan.releases[0]!;
    assert.deepEqual(r.narrowTo, ['node-a', 'node-c']);
    const spec = r.patch.spec as Record<string, unknown>;
    assert.deepEqual(spec.affinity, {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-a'] }] },
            { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-c'] }] },
          ],
        },
      },
    });
    assert.equal(spec.schedulingGates, null, 'released in the same patch');
  });

  test('only adds to existing required terms', () => {
    const term = { matchExpressions: [{ key: 'zone', operator: 'In', values: ['z1'] }] };
    const pods = [
      pod('csi-a', { labels: driver, state: 'ready', pinned: 'node-a' }),
      pod('my-app-1', { labels: app, affinityTerms: [term, {}] }),
    ];
    const plan = decide(input(csi(), pods));
    const spec = plan.releases[0]!.patch.spec as {
      affinity: {
        nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: unknown[] } };
      };
    };
    const terms = spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms;
    assert.deepEqual(terms, [
      {
        matchExpressions: [
          { key: 'zone', operator: 'In', values: ['z1'] },
          { key: 'kubernetes.io/hostname', operator: 'In', values: ['node-a'] },
        ],
      },
      {},
    ]);
  });

  test('waits while no node has every earlier group Ready', () => {
    const pods = [
      pod('csi-a', { labels: driver, state: 'scheduled', pinned: 'node-a' }),
      pod('my-app-1', { labels: app }),
    ];
    const plan = decide(input(csi(), pods));
    assert.deepEqual(plan.releases, []);
    assert.equal(plan.status.currentIndex, 0);
    assert.match(
      plan.status.message!,
      /my-app-1 of group 'Application Pods' \(2\/2\) wait for a node where every earlier group is Ready/,
    );
  });

  test('a released pod not yet scheduled holds the next group on the nodes it may land on', () => {
    const seq = sequence({
      scope: 'Node',
      podGroups: [
        { name: 'agent', podSelector: { matchLabels: { app: 'agent' } } },
        { name: 'cache', podSelector: { matchLabels: { app: 'cache' } } },
        { name: 'web', podSelector: { matchLabels: { app: 'web' } } },
      ],
    });
    const inFlight = pod('cache-1', {
      labels: { app: 'cache' },
      state: 'released',
      affinityTerms: [
        { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-a'] }] },
        { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-c'] }] },
      ],
    });
    const pods = [
      pod('agent-a', { labels: { app: 'agent' }, state: 'ready', pinned: 'node-a' }),
      pod('agent-b', { labels: { app: 'agent' }, state: 'ready', pinned: 'node-b' }),
      pod('cache-b', { labels: { app: 'cache' }, state: 'ready', node: 'node-b' }),
      pod('cache-a', { labels: { app: 'cache' }, state: 'ready', node: 'node-a' }),
      inFlight,
      pod('web-a', { labels: { app: 'web' }, pinned: 'node-a' }),
      pod('web-b', { labels: { app: 'web' }, pinned: 'node-b' }),
    ];
    const plan = decide(input(seq, pods));
    assert.deepEqual(names(plan.releases), ['web-b']);
    assert.match(
      plan.status.message!,
      /node node-a waits for group 'cache' \(2\/3\): 1\/1 Ready; cache-1 not scheduled yet/,
    );
  });

  test('pods released in this pass hold the next group on the nodes they may land on', () => {
    const seq = sequence({
      scope: 'Node',
      podGroups: [
        { name: 'agent', podSelector: { matchLabels: { app: 'agent' } } },
        { name: 'cache', podSelector: { matchLabels: { app: 'cache' } } },
        { name: 'web', podSelector: { matchLabels: { app: 'web' } } },
      ],
    });
    const pods = [
      pod('agent-a', { labels: { app: 'agent' }, state: 'ready', pinned: 'node-a' }),
      pod('cache-a', { labels: { app: 'cache' }, state: 'ready', node: 'node-a' }),
      pod('cache-new', { labels: { app: 'cache' } }),
      pod('web-a', { labels: { app: 'web' }, pinned: 'node-a' }),
    ];
    const plan = decide(input(seq, pods));
    assert.deepEqual(names(plan.releases), ['cache-new'], 'web-a waits: cache-new may land on node-a');
    assert.deepEqual(plan.releases[0]!.narrowTo, ['node-a']);
  });

  test('a group meant per node is not funnelled onto the first node to become ready', () => {
    const csiPods = (ready: string[]) =>
      ['a', 'b', 'c'].map((x) =>
        pod(`csi-${x}`, {
          labels: driver,
          state: ready.includes(x) ? 'ready' : 'scheduled',
          pinned: `node-${x}`,
        }),
      );
    const apps = ['my-app-1', 'my-app-2', 'my-app-3'].map((n) => pod(n, { labels: app }));
    // node-a is ready first: it gets its share (3 pods over 3 nodes), the others wait.
    const first = decide(input(csi(), [...csiPods(['a']), ...apps]));
    assert.deepEqual(names(first.releases), ['my-app-1']);
    assert.deepEqual(first.releases[0]!.narrowTo, ['node-a']);
    assert.match(
      first.status.message!,
      /my-app-2, my-app-3 of group 'Application Pods' \(2\/2\) wait for a node where every earlier group is Ready and the group's per-node share has room/,
    );
    // node-b is ready a moment later, while my-app-1 is still on its way to node-a.
    const toA = pod('my-app-1', {
      labels: app,
      state: 'released',
      affinityTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-a'] }] }],
    });
    const second = decide(input(csi(), [...csiPods(['a', 'b']), toA, apps[1]!, apps[2]!]));
    assert.deepEqual(names(second.releases), ['my-app-2']);
    assert.deepEqual(second.releases[0]!.narrowTo, ['node-b']);
    // Every node ready at the moment of release: each pod may go to every one of them.
    const all = decide(input(csi(), [...csiPods(['a', 'b', 'c']), ...apps]));
    assert.deepEqual(names(all.releases), ['my-app-1', 'my-app-2', 'my-app-3']);
    for (const r of all.releases) assert.deepEqual(r.narrowTo, ['node-a', 'node-b', 'node-c']);
  });

  test('first-group pods without a node are released at once, without narrowing', () => {
    const plan = decide(input(csi(), [pod('csi-x', { labels: driver })]));
    assert.deepEqual(names(plan.releases), ['csi-x']);
    assert.equal(plan.releases[0]!.narrowTo, undefined);
  });
});

describe('full mode taints', () => {
  test('taints every node for later groups until the earlier ones are Ready there', () => {
    const seq = csi();
    const nodes = [
      node('node-a'),
      node('node-b'),
      node('node-c', [{ key: taintKey('default', 'seq', 1), effect: 'NoSchedule' }]),
    ];
    const pods = [
      pod('csi-a', { labels: driver, state: 'ready', pinned: 'node-a' }),
      pod('csi-b', { labels: driver, pinned: 'node-b' }),
    ];
    const plan = decide(input(seq, pods, { nodes, options: resolveOptions({ mode: 'full' }) }));
    const key = taintKey('default', 'seq', 1);
    assert.deepEqual(
      plan.taints.map((t) => [t.node, t.desired.map((d) => d.key)]),
      [['node-b', [key]]],
      'node-a may take group 2 (untainted already), node-b not yet, node-c already tainted',
    );
  });

  test("lifts the sequence's taints from every node once it is complete, as upstream's cleanupTaints does", () => {
    const key = taintKey('default', 'seq', 1);
    const nodes = [node('node-a'), node('virtual-node', [{ key, effect: 'NoSchedule' }])];
    const full = { nodes, options: resolveOptions({ mode: 'full' }) };
    const running = [
      pod('csi-a', { labels: driver, state: 'ready', pinned: 'node-a' }),
      pod('app-a', { labels: app, state: 'released', pinned: 'node-a' }),
    ];
    const before = decide(input(csi(), running, full));
    assert.deepEqual(before.taints, [], 'while it runs, a node without its pods keeps the taint');
    const done = [
      pod('csi-a', { labels: driver, state: 'ready', pinned: 'node-a' }),
      pod('app-a', { labels: app, state: 'ready', pinned: 'node-a' }),
    ];
    const plan = decide(input(csi(), done, full));
    assert.equal(plan.status.phase, 'Completed');
    assert.deepEqual(plan.taints, [{ node: 'virtual-node', desired: [] }]);
  });

  test('release patches add the tolerations a pod lacks', () => {
    const seq = csi();
    const pods = [pod('csi-a', { labels: driver, pinned: 'node-a' })];
    const plan = decide(
      input(seq, pods, { nodes: [node('node-a')], options: resolveOptions({ mode: 'full' }) }),
    );
    assert.deepEqual((plan.releases[0]!.patch.spec as { tolerations: unknown }).tolerations, [
      { key: taintKey('default', 'seq', 1), operator: 'Exists', effect: 'NoSchedule' },
    ]);
    const lite = decide(input(seq, pods));
    assert.equal((lite.releases[0]!.patch.spec as { tolerations?: unknown }).tolerations, undefined);
  });

  test('lifts taints once the sequence is not node-scoped', () => {
    const seq = sequence({ podGroups: [{ pods: ['a'] }, { pods: ['b'] }] });
    const key = taintKey('default', 'seq', 1);
    const plan = decide(
      input(seq, [], {
        nodes: [
          node('node-a', [
            { key, effect: 'NoSchedule' },
            { key: 'other', effect: 'NoSchedule' },
          ]),
        ],
      }),
    );
    assert.deepEqual(plan.taints, [{ node: 'node-a', desired: [] }]);
  });

  test('taint keys are qualified names unique per namespace/name; tolerations cover later groups', () => {
    const long = 'x'.repeat(200);
    const k = taintKey('ns', long, 12);
    assert.ok(k.split('/')[1]!.length <= 63, k);
    assert.notEqual(taintKey('a', 'seq', 1), taintKey('b', 'seq', 1));
    assert.deepEqual(
      tolerationsFor('default', 'seq', 0, 3).map((t) => t.key),
      [taintKey('default', 'seq', 1), taintKey('default', 'seq', 2)],
    );
    assert.deepEqual(tolerationsFor('default', 'seq', 2, 3), []);
  });
});
