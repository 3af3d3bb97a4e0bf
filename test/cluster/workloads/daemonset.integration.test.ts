import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { GVR } from '../../../src/cluster/client.ts';
import { waitFor } from '../../support/wait.ts';
import {
  autoRun,
  CONTAINER,
  createNamespace,
  createNode,
  get,
  podsOwnedBy,
  startCluster,
  status,
  type TestCluster,
} from './harness.ts';

const NS = 'ds';

type DsStatus = {
  desiredNumberScheduled?: number;
  currentNumberScheduled?: number;
  numberMisscheduled?: number;
  numberReady?: number;
  numberAvailable?: number;
  numberUnavailable?: number;
  updatedNumberScheduled?: number;
  observedGeneration?: number;
};

function ds(
  name: string,
  podSpec: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: NS },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: CONTAINER, ...podSpec } },
      ...extra,
    },
  };
}

const DEFAULT_TOLERATIONS = [
  { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
  { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
];

describe('DaemonSet controller', () => {
  let c: TestCluster;
  let stopRun: () => void;
  before(async () => {
    c = await startCluster();
    await createNamespace(c.client, NS);
    await createNode(c.client, 'node-a', { labels: { disk: 'ssd' } });
    await createNode(c.client, 'node-b');
    await createNode(c.client, 'node-c', {
      taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }],
    });
    await createNode(c.client, 'node-d', {
      unschedulable: true,
      taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }],
    });
    stopRun = autoRun(c.client, NS);
  });
  after(async () => {
    stopRun();
    await c.close();
  });
  const dsNow = (name: string) => get(c.client, GVR.daemonsets, NS, name)!;
  const livePods = (o: KubeObject) => podsOwnedBy(c.client, o).filter((p) => !p.metadata.deletionTimestamp);
  const target = (p: KubeObject) =>
    (
      p.spec as {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: { matchFields: { values: string[] }[] }[];
            };
          };
        };
      }
    ).affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]!
      .matchFields[0]!.values[0];
  const nodesOf = (o: KubeObject) => livePods(o).map(target).sort();

  test('one pod per eligible node, pinned by node affinity, with the default tolerations', async () => {
    const d = await c.client.create(GVR.daemonsets, ds('agent'));
    await waitFor('pods on a, b and cordoned d', () => nodesOf(d).join() === 'node-a,node-b,node-d');
    const p = livePods(d)[0]!;
    assert.match(p.metadata.name!, /^agent-[a-z0-9]{5}$/);
    assert.ok(p.metadata.labels?.['controller-revision-hash']);
    assert.equal(p.metadata.labels?.['pod-template-generation'], '1');
    const spec = p.spec as { tolerations: unknown[]; affinity: unknown };
    assert.deepEqual(spec.tolerations, DEFAULT_TOLERATIONS);
    assert.deepEqual(spec.affinity, {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchFields: [{ key: 'metadata.name', operator: 'In', values: [target(p)] }] },
          ],
        },
      },
    });
    await waitFor('status', () => status<DsStatus>(dsNow('agent')).numberReady === 3);
    assert.deepEqual(status(dsNow('agent')), {
      currentNumberScheduled: 3,
      numberMisscheduled: 0,
      desiredNumberScheduled: 3,
      numberReady: 3,
      observedGeneration: 1,
      updatedNumberScheduled: 3,
      numberAvailable: 3,
    });
  });

  test('a new node gets a pod and a removed node loses it', async () => {
    const d = dsNow('agent');
    await createNode(c.client, 'node-e');
    await waitFor('pod on node-e', () => nodesOf(d).includes('node-e'));
    await c.client.delete(GVR.nodes, '', 'node-e');
    await waitFor('pod on node-e removed', () => !nodesOf(d).includes('node-e'));
    await waitFor('desired back to 3', () => status<DsStatus>(dsNow('agent')).desiredNumberScheduled === 3);
  });

  test('nodeSelector and taints decide eligibility, and relabelling moves pods', async () => {
    const d = await c.client.create(GVR.daemonsets, ds('ssd', { nodeSelector: { disk: 'ssd' } }));
    await waitFor('pod only on node-a', () => nodesOf(d).join() === 'node-a');
    await c.client.mutate(GVR.nodes, '', 'node-b', (n) => {
      n.metadata.labels = { ...n.metadata.labels, disk: 'ssd' };
    });
    await waitFor('pod on node-b too', () => nodesOf(d).join() === 'node-a,node-b');
    await c.client.mutate(GVR.nodes, '', 'node-a', (n) => {
      const { disk: _, ...rest } = n.metadata.labels!;
      n.metadata.labels = rest;
    });
    await waitFor('pod leaves node-a', () => nodesOf(d).join() === 'node-b');

    const gpu = await c.client.create(
      GVR.daemonsets,
      ds('gpu', {
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }],
      }),
    );
    await waitFor('tolerating pod reaches the tainted node', () => nodesOf(gpu).includes('node-c'));
  });

  test('hostNetwork pods also tolerate network-unavailable', async () => {
    const d = await c.client.create(GVR.daemonsets, ds('net', { hostNetwork: true }));
    const p = await waitFor('pod', () => livePods(d)[0]);
    assert.deepEqual((p.spec as { tolerations: unknown[] }).tolerations.at(-1), {
      key: 'node.kubernetes.io/network-unavailable',
      operator: 'Exists',
      effect: 'NoSchedule',
    });
  });

  test('a NoExecute taint evicts, a NoSchedule taint only stops new pods', async () => {
    const d = dsNow('agent');
    await c.client.mutate(GVR.nodes, '', 'node-b', (n) => {
      (n.spec as { taints?: unknown[] }).taints = [{ key: 'maintenance', effect: 'NoSchedule' }];
    });
    await waitFor('misscheduled counted', () => status<DsStatus>(dsNow('agent')).numberMisscheduled === 1);
    assert.ok(nodesOf(d).includes('node-b'), 'the running pod stays');
    await c.client.mutate(GVR.nodes, '', 'node-b', (n) => {
      (n.spec as { taints?: unknown[] }).taints = [{ key: 'maintenance', effect: 'NoExecute' }];
    });
    await waitFor('pod removed from node-b', () => !nodesOf(d).includes('node-b'));
    await c.client.mutate(GVR.nodes, '', 'node-b', (n) => {
      delete (n.spec as { taints?: unknown[] }).taints;
    });
    await waitFor('pod back on node-b', () => nodesOf(d).includes('node-b'));
  });

  test('RollingUpdate replaces every pod with the new template', async () => {
    const d = dsNow('agent');
    await c.client.mutate(GVR.daemonsets, NS, 'agent', (o) => {
      (o.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec
        .containers[0]!.image = 'busybox:2';
    });
    await waitFor('all updated', () => {
      const s = status<DsStatus>(dsNow('agent'));
      return s.observedGeneration === 2 && s.updatedNumberScheduled === 3 && s.numberAvailable === 3;
    });
    for (const p of livePods(d)) {
      assert.equal((p.spec as { containers: { image: string }[] }).containers[0]!.image, 'busybox:2');
      assert.equal(p.metadata.labels?.['pod-template-generation'], '2');
    }
  });
});
