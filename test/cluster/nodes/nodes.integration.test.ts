import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { GVR } from '../../../src/cluster/client.ts';
import {
  type NodesHandle,
  type NodesOptions,
  parseNodeConfig,
  startNodes,
} from '../../../src/cluster/nodes/index.ts';
import { startScheduler } from '../../../src/cluster/scheduler/index.ts';
import { waitFor } from '../../support/wait.ts';
import { condition, getPod, type Harness, podObj, startHarness, waitBound } from '../scheduler/harness.ts';

const CONFIG = parseNodeConfig(`
pools:
  - name: cpu
    namePrefix: node
    count: 2
    capacity: {cpu: 16, memory: 64Gi}
    labels: {tier: general}
  - name: gpu
    count: 1
    capacity: {cpu: 32, memory: 256Gi, nvidia.com/gpu: 8}
    allocatable: {cpu: 31, memory: 250Gi, nvidia.com/gpu: 8}
    taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]
    annotations: {example.com/rack: r1}
`);

type Taint = { key: string; value?: string; effect: string; timeAdded?: string };
const taintsOf = (n: KubeObject | undefined): Taint[] =>
  (n?.spec as { taints?: Taint[] } | undefined)?.taints ?? [];
const taintIds = (n: KubeObject | undefined) =>
  taintsOf(n)
    .map((t) => `${t.key}:${t.effect}`)
    .sort();

describe('simulated nodes through the API', () => {
  let h: Harness;
  let nodes: NodesHandle | undefined;

  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(async () => {
    await nodes?.stop();
    nodes = undefined;
    await h.close();
  });

  const start = async (opts: NodesOptions = {}) => {
    nodes = await startNodes(h.client.as('system:node-simulator'), CONFIG, opts);
    return nodes;
  };
  const node = (name: string) => h.client.get(GVR.nodes, '', name);

  test('registers the pools’ nodes as a kubelet would, with leases', async () => {
    await start();
    assert.deepEqual(
      h.client
        .list(GVR.nodes)
        .map((n) => n.metadata.name)
        .sort(),
      ['gpu-0', 'node-0', 'node-1'],
    );
    const gpu = node('gpu-0')!;
    const labels = gpu.metadata.labels!;
    assert.equal(labels['kubernetes.io/hostname'], 'gpu-0');
    assert.equal(labels['kubernetes.io/os'], 'linux');
    assert.equal(labels['kubernetes.io/arch'], 'amd64');
    assert.equal(labels['node.kubernetes.io/instance-type'], 'gpu');
    assert.equal(labels.type, 'kwok');
    assert.equal(gpu.metadata.annotations!['kwok.x-k8s.io/node'], 'fake');
    assert.equal(gpu.metadata.annotations!['example.com/rack'], 'r1');
    assert.deepEqual(taintIds(gpu), ['nvidia.com/gpu:NoSchedule']);
    const st = gpu.status as {
      capacity: Record<string, string>;
      allocatable: Record<string, string>;
      nodeInfo: Record<string, string>;
      addresses: { type: string; address: string }[];
    };
    assert.equal(st.capacity['nvidia.com/gpu'], '8');
    assert.equal(st.allocatable.cpu, '31');
    assert.equal(st.nodeInfo.kubeletVersion, 'v1.32.0');
    assert.equal(condition(gpu, 'Ready')?.status, 'True');
    assert.equal(st.addresses[0]!.type, 'InternalIP');
    assert.match(st.addresses[0]!.address, /^10\.240\.0\.\d+$/);
    assert.equal(node('node-0')!.metadata.labels!.tier, 'general');
    const lease = h.client.get(GVR.leases, 'kube-node-lease', 'node-0')!;
    assert.equal((lease.spec as Record<string, unknown>).holderIdentity, 'node-0');
    assert.equal((lease.spec as Record<string, unknown>).leaseDurationSeconds, 40);
    assert.equal(lease.metadata.ownerReferences?.[0]?.kind, 'Node');
  });

  test('renews each node’s lease (10 s, divided by the time scale)', async () => {
    await start({ timeScale: 100 });
    const renewTime = () =>
      (h.client.get(GVR.leases, 'kube-node-lease', 'node-1')!.spec as { renewTime: string }).renewTime;
    const first = renewTime();
    await waitFor('lease renewed', () => renewTime() !== first);
    await waitFor('renewed again', () => {
      const t = renewTime();
      return t !== first && Date.parse(t) > Date.parse(first);
    });
  });

  test('NotReady: Ready=False, lifecycle taints, eviction after tolerationSeconds, and recovery', async () => {
    // The grace period scales too: 50 s is 50 ms of wall time here, and an event-loop stall
    // that long (a loaded machine) let the monitor find the leases stale and taint the node
    // unreachable instead. Ten hours (36 s here) keeps this test about the kubelet's NotReady.
    await start({ timeScale: 1000, nodeMonitorGracePeriodMs: 10 * 3_600_000 });
    // DefaultTolerationSeconds gives this pod 300 s (0.3 s here) on a not-ready node.
    await h.client.create(GVR.pods, podObj('ordinary', {}, { nodeName: 'node-0' }));
    const forever = [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' }];
    await h.client.create(GVR.pods, podObj('steadfast', {}, { nodeName: 'node-0', tolerations: forever }));
    // Far beyond anything this test waits for even on a loaded machine (1000 s here), so
    // that 'patient' stays only because its window is open, not because the test was quick.
    const brief = [
      {
        key: 'node.kubernetes.io/not-ready',
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 1_000_000,
      },
    ];
    await h.client.create(GVR.pods, podObj('patient', {}, { nodeName: 'node-0', tolerations: brief }));

    await nodes!.setReady('node-0', false);
    const n = await waitFor('not-ready taints', () => {
      const cur = node('node-0');
      return taintIds(cur).join() ===
        'node.kubernetes.io/not-ready:NoExecute,node.kubernetes.io/not-ready:NoSchedule'
        ? cur
        : undefined;
    });
    assert.equal(condition(n, 'Ready')?.status, 'False');
    assert.equal(condition(n, 'Ready')?.reason, 'KubeletNotReady');
    assert.ok(
      taintsOf(n).find((t) => t.effect === 'NoExecute')?.timeAdded,
      'NoExecute taints carry timeAdded',
    );
    assert.equal(n.metadata.annotations!['kwok.x-k8s.io/node'], 'stopped');

    const evicted = await waitFor('ordinary evicted', () => {
      const p = getPod(h.client, 'ordinary');
      return p?.metadata.deletionTimestamp ? p : undefined;
    });
    assert.equal(condition(evicted, 'DisruptionTarget')?.reason, 'DeletionByTaintManager');
    const ev = await waitFor('eviction event', () =>
      h.client.list(GVR.events, 'default').find((e) => e.reason === 'TaintManagerEviction'),
    );
    assert.equal(ev.message, 'Marking for deletion Pod default/ordinary');
    assert.equal(getPod(h.client, 'steadfast')!.metadata.deletionTimestamp, undefined);
    assert.equal(getPod(h.client, 'patient')!.metadata.deletionTimestamp, undefined);

    await nodes!.setReady('node-0', true);
    const healed = await waitFor('taints removed', () => {
      const cur = node('node-0');
      return taintIds(cur).length === 0 ? cur : undefined;
    });
    assert.equal(condition(healed, 'Ready')?.status, 'True');
    assert.equal(healed.metadata.annotations!['kwok.x-k8s.io/node'], 'fake');
  });

  test('Unreachable: conditions Unknown, unreachable taints, pods marked not ready', async () => {
    await start({ timeScale: 1000 });
    await h.client.create(GVR.pods, podObj('running', {}, { nodeName: 'node-1' }));
    await h.client.mutate(
      GVR.pods,
      'default',
      'running',
      (p) => {
        (p.status as Record<string, unknown>).phase = 'Running';
        (p.status as Record<string, unknown>).conditions = [{ type: 'Ready', status: 'True' }];
      },
      'status',
    );
    await nodes!.setReady('node-1', false, 'Unreachable');
    const n = await waitFor('unreachable taints', () => {
      const cur = node('node-1');
      return taintIds(cur).join() ===
        'node.kubernetes.io/unreachable:NoExecute,node.kubernetes.io/unreachable:NoSchedule'
        ? cur
        : undefined;
    });
    assert.equal(condition(n, 'Ready')?.status, 'Unknown');
    assert.equal(condition(n, 'Ready')?.message, 'Kubelet stopped posting node status.');
    await waitFor(
      'pod Ready=False',
      () => condition(getPod(h.client, 'running'), 'Ready')?.status === 'False',
    );
  });

  test('cordon, addNode and removeNode (with pod GC) as the scheduler sees them', async () => {
    await start({ timeScale: 1000 });
    const sched = startScheduler(h.client, { podInitialBackoffMs: 10, podMaxBackoffMs: 50 });
    try {
      await nodes!.cordon('node-0');
      await waitFor('unschedulable taint', () =>
        taintIds(node('node-0')).includes('node.kubernetes.io/unschedulable:NoSchedule'),
      );
      await nodes!.cordon('node-1');
      await h.client.create(GVR.pods, podObj('web', { cpu: '1' }));
      await waitFor(
        'web unschedulable',
        () => condition(getPod(h.client, 'web'), 'PodScheduled')?.reason === 'Unschedulable',
      );
      assert.match(
        condition(getPod(h.client, 'web'), 'PodScheduled')!.message as string,
        /^0\/3 nodes are available: 1 node\(s\) had untolerated taint \{nvidia.com\/gpu: present\}, 2 node\(s\) were unschedulable\./,
      );
      const added = await nodes!.addNode({ name: 'extra-0', pool: 'cpu' });
      assert.equal(added.metadata.labels!.tier, 'general');
      assert.equal(await waitBound(h.client, 'web'), 'extra-0');
      await nodes!.removeNode('extra-0');
      assert.equal(node('extra-0'), undefined);
      assert.equal(h.client.get(GVR.leases, 'kube-node-lease', 'extra-0'), undefined);
      await waitFor('pod of the removed node collected', () => getPod(h.client, 'web') === undefined);
      await assert.rejects(
        nodes!.addNode({ name: 'bad', capacity: { cpu: '-1', memory: '1Gi' } }),
        /capacity.cpu: -1 is negative/,
      );
    } finally {
      await sched.stop();
    }
  });
});
