import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { GVR } from '../../../src/cluster/client.ts';
import { waitFor } from '../../support/wait.ts';
import {
  CONTAINER,
  clusterForSuite,
  eventReasons,
  get,
  podsOwnedBy,
  setPodStatus,
  status,
} from './harness.ts';

const NS = 'rs';

type RsStatus = {
  replicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  fullyLabeledReplicas?: number;
  observedGeneration?: number;
};

function rs(name: string, replicas: number, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, namespace: NS },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name, tier: 'web' } }, spec: { containers: CONTAINER } },
      ...extra,
    },
  };
}

describe('ReplicaSet controller', () => {
  const c = clusterForSuite(NS);
  const rsNow = (name: string) => get(c.client, GVR.replicasets, NS, name)!;
  const live = (o: KubeObject) => podsOwnedBy(c.client, o).filter((p) => !p.metadata.deletionTimestamp);

  test('creates the replicas from the template and reports status', async () => {
    const r = await c.client.create(GVR.replicasets, rs('web', 3));
    const pods = await waitFor('3 pods', () => (live(r).length === 3 ? live(r) : undefined));
    for (const p of pods) {
      assert.match(p.metadata.name!, /^web-[a-z0-9]{5}$/);
      assert.deepEqual(p.metadata.labels, { app: 'web', tier: 'web' });
      assert.deepEqual(p.metadata.ownerReferences, [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'web',
          uid: r.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
    }
    await waitFor('replicas=3', () => status<RsStatus>(rsNow('web')).replicas === 3);
    await setPodStatus(c.client, pods[0]!, 'Running');
    await setPodStatus(c.client, pods[1]!, 'Running');
    await waitFor('2 ready', () => status<RsStatus>(rsNow('web')).readyReplicas === 2);
    assert.deepEqual(status(rsNow('web')), {
      replicas: 3,
      fullyLabeledReplicas: 3,
      readyReplicas: 2,
      availableReplicas: 2,
      observedGeneration: 1,
    });
    await waitFor(
      'events',
      () => eventReasons(c.client, NS, 'web').filter((x) => x === 'SuccessfulCreate').length === 3,
    );
    const ev = c.client.list(GVR.events, NS).find((e) => e.reason === 'SuccessfulCreate')!;
    assert.equal((ev.source as { component: string }).component, 'replicaset-controller');
  });

  test('scales down unscheduled pods first, then not-ready ones, keeping ready ones', async () => {
    const r = await c.client.create(GVR.replicasets, rs('down', 3));
    const pods = await waitFor('3 pods', () => (live(r).length === 3 ? live(r) : undefined));
    const [ready, notReady, pending] = pods as [KubeObject, KubeObject, KubeObject];
    await setPodStatus(c.client, ready, 'Running', { node: 'n1' });
    await setPodStatus(c.client, notReady, 'Running', { node: 'n2', ready: false });
    await waitFor('ready=1', () => status<RsStatus>(rsNow('down')).readyReplicas === 1);
    await c.client.mutate(GVR.replicasets, NS, 'down', (o) => {
      (o.spec as { replicas: number }).replicas = 2;
    });
    await waitFor(
      'unscheduled pod deleted',
      () => get(c.client, GVR.pods, NS, pending.metadata.name!) === undefined,
    );
    assert.equal(live(r).length, 2);
    await c.client.mutate(GVR.replicasets, NS, 'down', (o) => {
      (o.spec as { replicas: number }).replicas = 1;
    });
    await waitFor('not-ready pod deleted', () => live(r).length === 1);
    assert.equal(live(r)[0]!.metadata.name, ready.metadata.name);
    await waitFor(
      'status',
      () =>
        status<RsStatus>(rsNow('down')).replicas === 1 &&
        status<RsStatus>(rsNow('down')).observedGeneration === 3,
    );
    await waitFor(
      'delete events',
      () => eventReasons(c.client, NS, 'down').filter((x) => x === 'SuccessfulDelete').length === 2,
    );
  });

  test('adopts matching orphans and releases pods that stop matching', async () => {
    await c.client.create(GVR.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'orphan', namespace: NS, labels: { app: 'adopt' } },
      spec: { containers: CONTAINER },
    });
    const r = await c.client.create(GVR.replicasets, rs('adopt', 1));
    await waitFor(
      'adopted',
      () => get(c.client, GVR.pods, NS, 'orphan')?.metadata.ownerReferences?.[0]?.uid === r.metadata.uid,
    );
    await waitFor('replicas=1', () => status<RsStatus>(rsNow('adopt')).replicas === 1);
    assert.deepEqual(
      live(r).map((p) => p.metadata.name),
      ['orphan'],
    );
    // Only the template's labels count as "fully labeled".
    assert.equal(status<RsStatus>(rsNow('adopt')).fullyLabeledReplicas, undefined);

    await c.client.mutate(GVR.pods, NS, 'orphan', (p) => {
      p.metadata.labels = { app: 'other' };
    });
    await waitFor(
      'released',
      () => get(c.client, GVR.pods, NS, 'orphan')?.metadata.ownerReferences === undefined,
    );
    const replacement = await waitFor('replacement', () => live(r)[0]);
    assert.notEqual(replacement.metadata.name, 'orphan');
  });

  test('availableReplicas waits for minReadySeconds', async () => {
    // Long enough that "ready but not yet available" is still true when checked on a loaded machine.
    const r = await c.client.create(GVR.replicasets, rs('slowready', 1, { minReadySeconds: 4 }));
    const p = await waitFor('pod', () => live(r)[0]);
    await setPodStatus(c.client, p, 'Running');
    await waitFor('ready', () => status<RsStatus>(rsNow('slowready')).readyReplicas === 1);
    assert.equal(status<RsStatus>(rsNow('slowready')).availableReplicas, undefined);
    await waitFor(
      'available after minReadySeconds',
      () => status<RsStatus>(rsNow('slowready')).availableReplicas === 1,
      { timeoutMs: 15_000 },
    );
  });

  test('replaces pods that finish', async () => {
    const r = await c.client.create(GVR.replicasets, rs('restart', 1));
    const p = await waitFor('pod', () => live(r)[0]);
    await setPodStatus(c.client, p, 'Failed');
    await waitFor('replacement', () =>
      live(r).some(
        (x) => x.metadata.uid !== p.metadata.uid && status<{ phase: string }>(x).phase === 'Pending',
      ),
    );
  });
});
