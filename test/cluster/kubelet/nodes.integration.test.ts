import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { GVR } from '../../../src/cluster/client.ts';
import { waitFor } from '../../support/wait.ts';
import { createNode, eventsFor, type KubeletEnv, reasons, startKubeletEnv } from './helpers.ts';

type NodeCondition = {
  type: string;
  status: string;
  reason: string;
  lastHeartbeatTime: string;
  lastTransitionTime: string;
};
type NodeStatus = {
  phase?: string;
  conditions?: NodeCondition[];
  addresses?: { type: string; address: string }[];
  allocatable?: Record<string, string>;
  nodeInfo?: Record<string, string>;
};

function status(env: KubeletEnv, name: string): NodeStatus {
  return (env.admin.get(GVR.nodes, '', name)?.status ?? {}) as NodeStatus;
}

function ready(s: NodeStatus): NodeCondition | undefined {
  return s.conditions?.find((c) => c.type === 'Ready');
}

describe('kubelet: nodes', () => {
  let env: KubeletEnv;
  before(async () => {
    // 10-20 minutes between status heartbeats become 0.3-0.6 s.
    env = await startKubeletEnv({ timeScale: 2000 });
  });
  after(() => env.close());

  test('a managed node reports Ready with the kubelet conditions, addresses and capacity', async () => {
    await createNode(env.admin, 'node-a');
    const s = await waitFor('node Ready', () => {
      const st = status(env, 'node-a');
      return ready(st)?.status === 'True' ? st : undefined;
    });
    assert.equal(s.phase, 'Running');
    assert.deepEqual(
      s.conditions?.map((c) => `${c.type}=${c.status}`),
      [
        'Ready=True',
        'MemoryPressure=False',
        'DiskPressure=False',
        'PIDPressure=False',
        'NetworkUnavailable=False',
      ],
    );
    assert.equal(ready(s)?.reason, 'KubeletReady');
    assert.equal(s.addresses?.find((a) => a.type === 'InternalIP')?.address.startsWith('10.200.'), true);
    assert.equal(s.addresses?.find((a) => a.type === 'Hostname')?.address, 'node-a');
    assert.ok(s.allocatable?.pods);
    assert.match(s.nodeInfo?.kubeletVersion ?? '', /^kwok-/);
    const evs = await waitFor('NodeReady event', () => {
      const e = eventsFor(env.admin, 'Node', 'node-a');
      return reasons(e).includes('NodeReady') ? e : undefined;
    });
    assert.deepEqual(reasons(evs).sort(), [
      'NodeHasNoDiskPressure',
      'NodeHasSufficientMemory',
      'NodeHasSufficientPID',
      'NodeReady',
      'Starting',
    ]);
    assert.deepEqual(evs[0]?.source, { component: 'kubelet', host: 'node-a' });
  });

  test('heartbeats refresh lastHeartbeatTime and keep lastTransitionTime', async () => {
    await createNode(env.admin, 'node-b');
    const first = await waitFor('node Ready', () => ready(status(env, 'node-b')));
    // Heartbeat times have whole seconds: wait for one in a later second.
    const later = await waitFor(
      'a later heartbeat',
      () => {
        const c = ready(status(env, 'node-b'));
        return c && c.lastHeartbeatTime !== first.lastHeartbeatTime ? c : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.ok(Date.parse(later.lastHeartbeatTime) > Date.parse(first.lastHeartbeatTime));
    assert.equal(later.lastTransitionTime, first.lastTransitionTime);
    assert.equal(later.status, 'True');
  });

  test('the node Lease in kube-node-lease is held by the node and renewed', async () => {
    await createNode(env.admin, 'node-c');
    const lease = await waitFor('lease', () => env.admin.get(GVR.leases, 'kube-node-lease', 'node-c'));
    const spec = lease.spec as { holderIdentity: string; leaseDurationSeconds: number; renewTime: string };
    assert.equal(spec.holderIdentity, 'node-c');
    assert.equal(spec.leaseDurationSeconds, 40);
    assert.match(spec.renewTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const node = env.admin.get(GVR.nodes, '', 'node-c')!;
    assert.deepEqual(lease.metadata.ownerReferences?.[0], {
      apiVersion: 'v1',
      kind: 'Node',
      name: 'node-c',
      uid: node.metadata.uid,
    });
    await waitFor('lease renewed', () => {
      const l = env.admin.get(GVR.leases, 'kube-node-lease', 'node-c') as KubeObject | undefined;
      return (l?.spec as { renewTime?: string } | undefined)?.renewTime !== spec.renewTime;
    });
  });

  test('a node without the annotation is not simulated; dropping the annotation stops the kubelet', async () => {
    await createNode(env.admin, 'node-real', false);
    await createNode(env.admin, 'node-d');
    await waitFor('node-d Ready', () => ready(status(env, 'node-d'))?.status === 'True');
    await env.kubelet.idle();
    assert.equal(status(env, 'node-real').conditions, undefined);
    assert.equal(env.admin.get(GVR.leases, 'kube-node-lease', 'node-real'), undefined);

    const managed = env.kubelet.stats().nodes;
    await env.admin.patch(GVR.nodes, '', 'node-d', 'json', [
      { op: 'remove', path: '/metadata/annotations/kwok.x-k8s.io~1node' },
    ]);
    await env.kubelet.idle();
    // Like a dead kubelet: no heartbeat stage waits for the node and its Lease is no longer renewed.
    assert.equal(env.kubelet.stats().nodes, managed - 1);
    assert.equal(env.kubelet.pending('Node', '', 'node-d'), undefined);
  });
});
