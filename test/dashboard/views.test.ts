/** The view model, from objects in and view out (no server, no browser). */

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodesView } from '../../src/dashboard/views/nodes.ts';
import { offloadsView } from '../../src/dashboard/views/offloads.ts';
import { podGroupsView } from '../../src/dashboard/views/podgroups.ts';
import { type Pod, podState } from '../../src/dashboard/views/pods.ts';
import { appWrappersView, queuesView } from '../../src/dashboard/views/queues.ts';
import { sequenceView } from '../../src/dashboard/views/sequences.ts';
import type { KubeObject } from '../../src/runtime/index.ts';
import { pod as buildPod } from '../support/objects.ts';

function pod(
  name: string,
  o: {
    gated?: boolean;
    node?: string;
    phase?: string;
    ready?: boolean;
    labels?: Record<string, string>;
    cpu?: string;
    gpu?: string;
    pinTo?: string;
  } = {},
): Pod {
  const requests: Record<string, string> = {};
  if (o.cpu) requests.cpu = o.cpu;
  if (o.gpu) requests['nvidia.com/gpu'] = o.gpu;
  return buildPod<Pod>(name, {
    labels: o.labels ?? {},
    ...(o.node ? { node: o.node } : {}),
    ...(o.gated ? { gates: ['podsequence.example.com/sequence-gate'] } : {}),
    ...(o.pinTo ? { pinnedTo: o.pinTo } : {}),
    requests,
    phase: o.phase ?? (o.node ? 'Running' : 'Pending'),
    conditions: [{ type: 'Ready', status: o.ready ? 'True' : 'False' }],
  });
}

describe('pod states', () => {
  test('follow a pod from gated to ready', () => {
    assert.equal(podState(pod('a', { gated: true })), 'gated');
    assert.equal(podState(pod('a')), 'pending');
    assert.equal(podState(pod('a', { node: 'n1', phase: 'Pending' })), 'pending');
    assert.equal(podState(pod('a', { node: 'n1' })), 'running');
    assert.equal(podState(pod('a', { node: 'n1', ready: true })), 'ready');
    assert.equal(podState(pod('a', { node: 'n1', phase: 'Succeeded' })), 'succeeded');
    assert.equal(podState(pod('a', { node: 'n1', phase: 'Failed' })), 'failed');
  });
});

describe('sequences', () => {
  const seq = (scope: 'Cluster' | 'Node', status: Record<string, unknown>) =>
    ({
      apiVersion: 'scheduling.example.com/v1alpha1',
      kind: 'PodSequence',
      metadata: { name: 's', namespace: 'default', uid: 'u1' },
      spec: {
        scope,
        podGroups: [
          { name: 'db', pods: ['db-0', 'db-1'] },
          { name: 'app', podSelector: { matchLabels: { app: 'web' } } },
        ],
      },
      status,
    }) as KubeObject;

  test('cluster scope: tiers from names and selectors, the current tier and what it waits for', () => {
    const pods = [
      pod('db-0', { node: 'n1', ready: true }),
      pod('web-b', { gated: true, labels: { app: 'web' } }),
      pod('web-a', { gated: true, labels: { app: 'web' } }),
    ];
    const v = sequenceView(
      seq('Cluster', { phase: 'InProgress', currentIndex: 0 }),
      new Map([['default', pods]]),
      [],
    );
    assert.deepEqual(
      v.tiers.map((t) => [t.name, t.state, t.pods.map((p) => `${p.name}:${p.state}`)]),
      [
        ['db', 'current', ['db-0:ready', 'db-1:missing']],
        ['app', 'waiting', ['web-a:gated', 'web-b:gated']],
      ],
    );
    assert.deepEqual(v.waitingFor, ['db-1: missing (not found in the cluster)']);
  });

  test("cluster scope: a tier held by the previous tier's waitDuration says so, with the time", () => {
    const pods = [
      pod('db-0', { node: 'n1', ready: true }),
      pod('db-1', { node: 'n1', ready: true }),
      pod('web-a', { gated: true, labels: { app: 'web' } }),
    ];
    const v = sequenceView(
      seq('Cluster', { phase: 'InProgress', currentIndex: 1, waitingUntil: '2026-06-01T12:00:10Z' }),
      new Map([['default', pods]]),
      [],
    );
    assert.equal(v.waitingUntil, '2026-06-01T12:00:10Z');
    assert.deepEqual(v.waitingFor, ["db's waitDuration: released at 2026-06-01T12:00:10Z"]);
  });

  test("node scope: a node held by its tier's waitDuration says so, with the node's time", () => {
    const pods = [
      pod('db-0', { node: 'n1', ready: true }),
      pod('db-1', { node: 'n1', ready: true }),
      pod('web-a', { gated: true, labels: { app: 'web' }, pinTo: 'n1' }),
    ];
    const message =
      "Waiting for group 'app' (2/2): released on this node at 2026-06-01T12:00:10Z, 10s (waitDuration of 'db' (1/2)) after db became Ready here";
    const v = sequenceView(
      seq('Node', {
        phase: 'InProgress',
        currentIndex: 0,
        waitingUntil: '2026-06-01T12:00:10Z',
        nodeStatus: [
          {
            nodeName: 'n1',
            currentIndex: 0,
            readyPodsInCurrentGroup: 2,
            phase: 'InProgress',
            conditions: [{ type: 'Completed', status: 'False', reason: 'Waiting', message }],
          },
        ],
      }),
      new Map([['default', pods]]),
      [],
    );
    assert.equal(v.waitingUntil, '2026-06-01T12:00:10Z');
    assert.deepEqual(v.waitingFor, [`node n1: ${message.replace(/^Waiting for /, '')}`]);
  });

  test('node scope: rows per node, pods placed where they run or are pinned', () => {
    const pods = [
      pod('db-0', { node: 'n1', ready: true }),
      pod('db-1', { node: 'n2' }),
      pod('web-a', { labels: { app: 'web' }, pinTo: 'n1', node: 'n1' }),
      pod('web-b', { gated: true, labels: { app: 'web' }, pinTo: 'n2' }),
    ];
    const v = sequenceView(
      seq('Node', {
        phase: 'InProgress',
        currentIndex: 0,
        nodeStatus: [
          { nodeName: 'n1', currentIndex: 1, readyPodsInCurrentGroup: 0, phase: 'InProgress' },
          { nodeName: 'n2', currentIndex: 0, readyPodsInCurrentGroup: 0, phase: 'InProgress' },
        ],
      }),
      new Map([['default', pods]]),
      [],
    );
    assert.deepEqual(
      v.nodes?.map((n) => [n.node, n.currentIndex, n.tiers.map((cells) => cells.map((c) => c.name))]),
      [
        ['n1', 1, [['db-0'], ['web-a']]],
        ['n2', 0, [['db-1'], ['web-b']]],
      ],
    );
    // n2 still works on the first tier, n1 on the second: both tiers are current somewhere.
    assert.deepEqual(
      v.tiers.map((t) => t.state),
      ['current', 'current'],
    );
    assert.deepEqual(v.waitingFor, ['web-a on n1: running', 'db-1 on n2: running']);
  });

  test('the timeline is the sequence own events, oldest first', () => {
    const ev = (name: string, time: string, reason: string, uid = 'u1') =>
      ({
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name, namespace: 'default' },
        regarding: { kind: 'PodSequence', name: 's', namespace: 'default', uid },
        eventTime: time,
        reason,
        note: `${reason} note`,
        type: 'Normal',
      }) as KubeObject;
    const v = sequenceView(seq('Cluster', {}), new Map(), [
      ev('b', '2026-01-01T00:00:02Z', 'GroupReady') as never,
      ev('a', '2026-01-01T00:00:01Z', 'Released') as never,
      ev('old', '2025-01-01T00:00:00Z', 'Released', 'an-older-sequence') as never,
    ]);
    assert.deepEqual(
      v.timeline.map((e) => [e.reason, e.message]),
      [
        ['Released', 'Released note'],
        ['GroupReady', 'GroupReady note'],
      ],
    );
  });

  test('a GroupReady comes before the Released it caused, recorded milliseconds later in the same second', () => {
    const ev = (name: string, time: string, reason: string) =>
      ({
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name, namespace: 'default' },
        regarding: { kind: 'PodSequence', name: 's', namespace: 'default', uid: 'u1' },
        eventTime: time,
        reason,
        note: reason,
        type: 'Normal',
      }) as never;
    const v = sequenceView(seq('Cluster', {}), new Map(), [
      ev('r0', '2026-01-01T00:00:01.100000Z', 'Released'),
      // The release of group 2 is sent first; the status write saying group 1 is Ready follows.
      ev('r1', '2026-01-01T00:00:05.200000Z', 'Released'),
      ev('g0', '2026-01-01T00:00:05.230000Z', 'GroupReady'),
      ev('c', '2026-01-01T00:00:09.000000Z', 'Completed'),
    ]);
    assert.deepEqual(
      v.timeline.map((e) => e.reason),
      ['Released', 'GroupReady', 'Released', 'Completed'],
    );
  });

  test('a GroupReady written seconds after the release it caused still comes first', () => {
    const ev = (name: string, time: string, reason: string, note: string) =>
      ({
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name, namespace: 'default' },
        regarding: { kind: 'PodSequence', name: 's', namespace: 'default', uid: 'u1' },
        eventTime: time,
        reason,
        note,
        type: 'Normal',
      }) as never;
    const v = sequenceView(seq('Cluster', {}), new Map(), [
      ev(
        'r0',
        '2026-01-01T00:00:01.100000Z',
        'Released',
        "Released 1 pod of group 'db' (1/2) because it is first: db-1",
      ),
      // Under load the status write carrying the GroupReady trails the release by 2 s.
      ev(
        'r1',
        '2026-01-01T00:00:05.200000Z',
        'Released',
        "Released 1 pod of group 'web' (2/2) because …: web-1",
      ),
      ev('o', '2026-01-01T00:00:06.000000Z', 'Waiting', 'unrelated'),
      ev(
        'g0',
        '2026-01-01T00:00:07.300000Z',
        'GroupReady',
        "Group 'db' (1/2) is Ready; releasing group 'web' (2/2)",
      ),
      ev('g1', '2026-01-01T00:00:09.000000Z', 'GroupReady', "Group 'web' (2/2) is Ready"),
    ]);
    assert.deepEqual(
      v.timeline.map((e) => e.reason),
      ['Released', 'GroupReady', 'Released', 'Waiting', 'GroupReady'],
    );
  });

  test('each tier has its start (first pod scheduled) and, once all are Ready, its ready time', () => {
    const at = (name: string, scheduled: string, ready?: string, labels: Record<string, string> = {}) => {
      const p = pod(name, { node: 'n1', ready: !!ready, labels });
      p.status!.conditions = [
        { type: 'PodScheduled', status: 'True', lastTransitionTime: scheduled },
        { type: 'Ready', status: ready ? 'True' : 'False', ...(ready ? { lastTransitionTime: ready } : {}) },
      ] as never;
      return p;
    };
    const pods = [
      at('db-0', '2026-01-01T00:00:01Z', '2026-01-01T00:00:04Z'),
      at('db-1', '2026-01-01T00:00:02Z', '2026-01-01T00:00:03Z'),
      at('web-a', '2026-01-01T00:00:05Z', undefined, { app: 'web' }),
    ];
    const v = sequenceView(
      seq('Cluster', { phase: 'InProgress', currentIndex: 1 }),
      new Map([['default', pods]]) as never,
      [],
    );
    assert.equal(v.tiers[0]?.startedAt, '2026-01-01T00:00:01Z');
    assert.equal(v.tiers[0]?.readyAt, '2026-01-01T00:00:04Z');
    assert.equal(v.tiers[1]?.startedAt, '2026-01-01T00:00:05Z');
    assert.equal(v.tiers[1]?.readyAt, undefined);
  });
});

test('pod groups: PodGroup objects and label-only gangs', () => {
  const g = {
    apiVersion: 'scheduling.incubator.k8s.io/v1alpha1',
    kind: 'PodGroup',
    metadata: { name: 'g1', namespace: 'default' },
    spec: { minMember: 2 },
    status: {
      state: { phase: 'Unschedulable', reason: 'NotEnoughResources', message: '1 of 2 pods unschedulable' },
    },
  };
  const label = 'podgroup.jhwagner.github.io/name';
  const v = podGroupsView(
    [g],
    [
      pod('a', { node: 'n1', labels: { [label]: 'g1' } }),
      pod('b', { labels: { [label]: 'g1' } }),
      pod('c', { labels: { [label]: 'g2' } }),
    ],
  );
  assert.deepEqual(
    v.items.map((i) => [i.name, i.source, i.phase, i.reason, i.minMember, i.counts]),
    [
      ['g1', 'PodGroup', 'Unschedulable', 'NotEnoughResources', 2, { running: 1, pending: 1 }],
      ['g2', 'label', 'Pending', undefined, undefined, { pending: 1 }],
    ],
  );
});

test('nodes: requests of the pods bound to a node against what it can allocate', () => {
  const node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'gpu-1' },
    status: {
      allocatable: { cpu: '8', memory: '32Gi', pods: '110', 'nvidia.com/gpu': '4' },
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  };
  const v = nodesView(
    [node],
    [
      pod('a', { node: 'gpu-1', cpu: '1500m', gpu: '2' }),
      pod('b', { node: 'gpu-1', cpu: '500m' }),
      pod('done', { node: 'gpu-1', cpu: '4', phase: 'Succeeded' }),
    ],
  );
  const n = v.items[0]!;
  assert.equal(n.ready, true);
  assert.deepEqual(
    n.resources.map((r) => [r.resource, r.text]),
    [
      ['cpu', '2 / 8'],
      ['memory', '0Gi / 32Gi'],
      ['nvidia.com/gpu', '2 / 4'],
      ['pods', '2 / 110'],
    ],
  );
  assert.equal(n.gpus?.text, '2 / 4');
});

test('queues: quota used, and positions by priority then age', () => {
  const cq = {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'ClusterQueue',
    metadata: { name: 'cq' },
    spec: {
      resourceGroups: [{ flavors: [{ name: 'default', resources: [{ name: 'cpu', nominalQuota: '10' }] }] }],
    },
  };
  const lq = {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'LocalQueue',
    metadata: { name: 'lq', namespace: 'team' },
    spec: { clusterQueue: 'cq' },
  };
  const wl = (name: string, created: string, priority: number, admitted = false) => ({
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'Workload',
    metadata: {
      name,
      namespace: 'team',
      creationTimestamp: created,
      ownerReferences: [
        {
          apiVersion: 'workload.codeflare.dev/v1beta2',
          kind: 'AppWrapper',
          name: `aw-${name}`,
          uid: name,
          controller: true,
        },
      ],
    },
    spec: { queueName: 'lq', priority },
    status: admitted
      ? {
          conditions: [
            { type: 'QuotaReserved', status: 'True' },
            { type: 'Admitted', status: 'True' },
          ],
          admission: {
            clusterQueue: 'cq',
            podSetAssignments: [{ flavors: { cpu: 'default' }, resourceUsage: { cpu: '4' } }],
          },
        }
      : { conditions: [{ type: 'QuotaReserved', status: 'False', message: "couldn't assign flavors" }] },
  });
  const q = queuesView(
    [cq],
    [lq],
    [
      wl('running', '2026-01-01T00:00:00Z', 0, true),
      wl('old', '2026-01-01T00:00:01Z', 0),
      wl('young-urgent', '2026-01-01T00:00:05Z', 100),
    ],
  );
  assert.deepEqual(
    q.clusterQueues[0]!.quotas.map((x) => x.text),
    ['4 / 10'],
  );
  assert.deepEqual(
    q.workloads.map((w) => [w.name, w.state, w.position]),
    [
      ['old', 'pending', 2],
      ['running', 'admitted', undefined],
      ['young-urgent', 'pending', 1],
    ],
  );
  assert.deepEqual(q.localQueues[0], {
    namespace: 'team',
    name: 'lq',
    clusterQueue: 'cq',
    pending: 2,
    admitted: 1,
  });
  const aws = appWrappersView(
    [
      {
        apiVersion: 'workload.codeflare.dev/v1beta2',
        kind: 'AppWrapper',
        metadata: { name: 'aw-old', namespace: 'team' },
        spec: { suspend: true, components: [{}] },
        status: { phase: 'Suspended' },
      },
    ],
    q.workloads,
  );
  assert.deepEqual(aws.items[0]!.workload, {
    name: 'old',
    state: 'pending',
    position: 2,
    clusterQueue: 'cq',
  });
});

test('offloads: price times the hours the remote pod has run', () => {
  const job = (name: string, ann: Record<string, string>, completionTime?: string) => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: 'ml', annotations: { 'runpod.io/managed': 'true', ...ann } },
    status: completionTime ? { completionTime } : {},
  });
  const vpod = (jobName: string, created: string): Pod => ({
    ...pod(`${jobName}-runpod`, { node: 'runpod-virtual-node', ready: true }),
    metadata: {
      name: `${jobName}-runpod`,
      namespace: 'ml',
      creationTimestamp: created,
      labels: { 'runpod.io/job-name': jobName },
    },
  });
  const now = new Date('2026-01-01T03:00:00Z');
  const v = offloadsView(
    [
      job('done', { 'runpod.io/pod-id': 'p1', 'runpod.io/cost-per-hr': '0.40' }, '2026-01-01T02:00:00Z'),
      job('live', {
        'runpod.io/pod-id': 'p2',
        'runpod.io/cost-per-hr': '0.20',
        'runpod.io/offload-state': 'Offloaded',
      }),
      job('local', {}),
      { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'unmanaged', namespace: 'ml' } },
    ],
    [vpod('done', '2026-01-01T00:00:00Z'), vpod('live', '2026-01-01T01:30:00Z')],
    now,
  );
  assert.deepEqual(
    v.items.map((o) => [
      o.job,
      o.state,
      o.remotePodId,
      o.spend && Math.round(o.spend * 1000) / 1000,
      o.virtualPod?.state,
    ]),
    [
      ['done', 'Offloaded', 'p1', 0.8, 'ready'],
      ['live', 'Offloaded', 'p2', 0.3, 'ready'],
      ['local', 'Watching', undefined, undefined, undefined],
    ],
  );
  assert.equal(Math.round(v.totalSpend * 100) / 100, 1.1);
  assert.equal(v.hourlyCost, 0.2);
});
