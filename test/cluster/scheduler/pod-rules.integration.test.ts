import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { GVR } from '../../../src/cluster/client.ts';
import {
  type SchedulerHandle,
  type SchedulerOptions,
  startScheduler,
} from '../../../src/cluster/scheduler/index.ts';
import { waitFor } from '../../support/wait.ts';
import {
  clearCluster,
  type Harness,
  nodeNameOf,
  nodeObj,
  podObj,
  startHarness,
  waitBound,
  waitUnschedulable,
} from './harness.ts';

const ZONE = 'topology.kubernetes.io/zone';
const HOST = 'kubernetes.io/hostname';

/** No leftover flush: a parked pod moves only for a cluster event that may help it. */
const EVENTS_ONLY: SchedulerOptions = {
  podInitialBackoffMs: 50,
  podMaxBackoffMs: 50,
  podMaxInUnschedulableMs: 600_000,
};

function labelledPod(
  name: string,
  labels: Record<string, string>,
  spec: Record<string, unknown> = {},
  requests: Record<string, string> = {},
): KubeObject {
  const p = podObj(name, requests, spec);
  p.metadata.labels = labels;
  return p;
}

function term(labels: Record<string, string>, topologyKey: string): Record<string, unknown> {
  return { labelSelector: { matchLabels: labels }, topologyKey };
}

function zoneOf(h: Harness, nodeName: string): string | undefined {
  return h.client.get(GVR.nodes, '', nodeName)?.metadata.labels?.[ZONE];
}

describe('default-scheduler: topology spread and inter-pod affinity through the API', () => {
  let h: Harness;
  let sched: SchedulerHandle | undefined;

  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await sched?.stop();
    await h.close();
  });
  beforeEach(async () => {
    await sched?.stop();
    sched = undefined;
    await clearCluster(h.client);
  });

  const start = (opts: SchedulerOptions = {}) => {
    sched = startScheduler(h.client.as('system:kube-scheduler'), { ...EVENTS_ONLY, ...opts });
    return sched;
  };

  test('a gang with one worker per node: the extra worker gets kube-scheduler’s message and the freed node', async () => {
    for (const n of ['n1', 'n2', 'n3'])
      await h.client.create(GVR.nodes, nodeObj(n, { cpu: '8', memory: '8Gi' }));
    start();
    const affinity = {
      podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ gang: 'g' }, HOST)] },
    };
    for (let i = 0; i < 4; i++)
      await h.client.create(GVR.pods, labelledPod(`w${i}`, { gang: 'g' }, { affinity }));
    const nodes = [
      await waitBound(h.client, 'w0'),
      await waitBound(h.client, 'w1'),
      await waitBound(h.client, 'w2'),
    ];
    assert.deepEqual([...nodes].sort(), ['n1', 'n2', 'n3']);
    assert.equal(
      await waitUnschedulable(h.client, 'w3'),
      "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. " +
        'preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.',
    );
    await h.client.delete(GVR.pods, 'default', 'w1', { gracePeriodSeconds: 0 });
    assert.equal(await waitBound(h.client, 'w3'), nodes[1]);
  });

  test('required pod affinity waits for a matching pod, placed or relabelled, and joins its zone', async () => {
    await h.client.create(GVR.nodes, nodeObj('a1', { cpu: '8' }, { labels: { [ZONE]: 'a' } }));
    await h.client.create(GVR.nodes, nodeObj('a2', { cpu: '8' }, { labels: { [ZONE]: 'a' } }));
    await h.client.create(GVR.nodes, nodeObj('b1', { cpu: '8' }, { labels: { [ZONE]: 'b' } }));
    start();
    await h.client.create(
      GVR.pods,
      labelledPod('cache', { app: 'cache' }, { nodeSelector: { [HOST]: 'b1' } }),
    );
    await waitBound(h.client, 'cache');
    const wants = (app: string) => ({
      podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term({ app }, ZONE)] },
    });
    await h.client.create(GVR.pods, labelledPod('web', { app: 'web' }, { affinity: wants('db') }));
    assert.equal(
      await waitUnschedulable(h.client, 'web'),
      "0/3 nodes are available: 3 node(s) didn't match pod affinity rules. " +
        'preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.',
    );
    await h.client.mutate(GVR.pods, 'default', 'cache', (p) => {
      p.metadata.labels = { app: 'db' };
    });
    assert.equal(await waitBound(h.client, 'web'), 'b1');

    await h.client.create(GVR.pods, labelledPod('client', { app: 'client' }, { affinity: wants('api') }));
    await waitUnschedulable(h.client, 'client');
    await h.client.create(GVR.pods, labelledPod('api', { app: 'api' }, { nodeSelector: { [HOST]: 'a2' } }));
    assert.equal(zoneOf(h, await waitBound(h.client, 'client')), 'a');
  });

  test('a term with a namespaceSelector matches once the other namespace gets the label', async () => {
    await h.client.create(GVR.nodes, nodeObj('n1', { cpu: '8' }));
    start();
    if (!h.client.get(GVR.namespaces, '', 'team-x'))
      await h.client.create(GVR.namespaces, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'team-x' },
      });
    const db = labelledPod('db', { app: 'db' });
    db.metadata.namespace = 'team-x';
    await h.client.create(GVR.pods, db);
    await waitFor('db bound', () => nodeNameOf(h.client.get(GVR.pods, 'team-x', 'db')));
    const affinity = {
      podAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          { ...term({ app: 'db' }, HOST), namespaceSelector: { matchLabels: { team: 'x' } } },
        ],
      },
    };
    await h.client.create(GVR.pods, labelledPod('web', { app: 'web' }, { affinity }));
    await waitUnschedulable(h.client, 'web');
    await h.client.mutate(GVR.namespaces, '', 'team-x', (ns) => {
      ns.metadata.labels = { ...ns.metadata.labels, team: 'x' };
    });
    assert.equal(await waitBound(h.client, 'web'), 'n1');
    await h.client.delete(GVR.pods, 'team-x', 'db', { gracePeriodSeconds: 0 });
  });

  test('matchLabelKeys and mismatchLabelKeys, merged by the API server, narrow a term to the pod’s own job', async () => {
    for (const [n, zone] of [
      ['n1', 'a'],
      ['n2', 'a'],
      ['n3', 'b'],
      ['n4', 'b'],
    ] as const)
      await h.client.create(GVR.nodes, nodeObj(n, { cpu: '8' }, { labels: { [ZONE]: zone } }));
    start();
    await h.client.create(
      GVR.pods,
      labelledPod('one', { app: 'worker', job: 'one' }, { nodeSelector: { [HOST]: 'n1' } }),
    );
    await h.client.create(
      GVR.pods,
      labelledPod('two', { app: 'worker', job: 'two' }, { nodeSelector: { [HOST]: 'n3' } }),
    );
    await waitBound(h.client, 'one');
    await waitBound(h.client, 'two');
    const near = (keys: Record<string, string[]>) => ({
      podAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [{ ...term({ app: 'worker' }, ZONE), ...keys }],
      },
    });
    await h.client.create(
      GVR.pods,
      labelledPod('same-job', { app: 'worker', job: 'two' }, { affinity: near({ matchLabelKeys: ['job'] }) }),
    );
    await h.client.create(
      GVR.pods,
      labelledPod(
        'other-job',
        { app: 'worker', job: 'two' },
        { affinity: near({ mismatchLabelKeys: ['job'] }) },
      ),
    );
    assert.equal(zoneOf(h, await waitBound(h.client, 'same-job')), 'b');
    assert.equal(zoneOf(h, await waitBound(h.client, 'other-job')), 'a');
  });

  test('DoNotSchedule spread over zones; a pod waiting for its topology key binds once a node gets it', async () => {
    await h.client.create(GVR.nodes, nodeObj('a1', { cpu: '8' }, { labels: { [ZONE]: 'a' } }));
    await h.client.create(GVR.nodes, nodeObj('a2', { cpu: '8' }, { labels: { [ZONE]: 'a' } }));
    await h.client.create(GVR.nodes, nodeObj('b1', { cpu: '8' }, { labels: { [ZONE]: 'b' } }));
    await h.client.create(GVR.nodes, nodeObj('bare', { cpu: '8' }));
    start();
    const topologySpreadConstraints = [
      {
        maxSkew: 1,
        topologyKey: ZONE,
        whenUnsatisfiable: 'DoNotSchedule',
        labelSelector: { matchLabels: { app: 'web' } },
      },
    ];
    for (let i = 0; i < 4; i++)
      await h.client.create(GVR.pods, labelledPod(`web-${i}`, { app: 'web' }, { topologySpreadConstraints }));
    const perZone = new Map<string | undefined, number>();
    for (let i = 0; i < 4; i++) {
      const z = zoneOf(h, await waitBound(h.client, `web-${i}`));
      perZone.set(z, (perZone.get(z) ?? 0) + 1);
    }
    assert.deepEqual(Object.fromEntries(perZone), { a: 2, b: 2 });

    // Only a node with the topology key can take the pod: none has `rack` until one is labelled.
    const byRack = [{ ...topologySpreadConstraints[0]!, topologyKey: 'rack' }];
    await h.client.create(
      GVR.pods,
      labelledPod('racked', { app: 'web' }, { topologySpreadConstraints: byRack }),
    );
    assert.equal(
      await waitUnschedulable(h.client, 'racked'),
      "0/4 nodes are available: 4 node(s) didn't match pod topology spread constraints (missing required label). " +
        'preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.',
    );
    await h.client.mutate(GVR.nodes, '', 'bare', (n) => {
      n.metadata.labels = { ...n.metadata.labels, rack: 'r1' };
    });
    assert.equal(await waitBound(h.client, 'racked'), 'bare');
  });

  test('pods of a ReplicaSet get the default spreading, even when scoring bin-packs', async () => {
    for (const n of ['s1', 's2', 's3'])
      await h.client.create(GVR.nodes, nodeObj(n, { cpu: '8', memory: '8Gi' }));
    const rs = await h.client.create(GVR.replicasets, {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'main', image: 'busybox' }] },
        },
      },
    });
    start({ scoringStrategy: 'MostAllocated' });
    const owner = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      name: 'web',
      uid: rs.metadata.uid!,
      controller: true,
    };
    for (let i = 0; i < 3; i++) {
      const p = labelledPod(`web-${i}`, { app: 'web' }, {}, { cpu: '1' });
      p.metadata.ownerReferences = [owner];
      await h.client.create(GVR.pods, p);
    }
    const nodes = new Set<string>();
    for (let i = 0; i < 3; i++) nodes.add(await waitBound(h.client, `web-${i}`));
    assert.equal(nodes.size, 3, 'hostname spreading outweighs MostAllocated');
  });
});
