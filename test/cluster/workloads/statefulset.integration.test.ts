import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { GVR } from '../../../src/cluster/client.ts';
import { waitFor } from '../../support/wait.ts';
import {
  autoRun,
  CONTAINER,
  clusterForSuite,
  eventReasons,
  get,
  podsOwnedBy,
  setPodStatus,
  status,
} from './harness.ts';

type StsStatus = {
  replicas?: number;
  readyReplicas?: number;
  currentReplicas?: number;
  updatedReplicas?: number;
  availableReplicas?: number;
  currentRevision?: string;
  updateRevision?: string;
  observedGeneration?: number;
};

function sts(ns: string, name: string, replicas: number, extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace: ns },
    spec: {
      replicas,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: CONTAINER } },
      ...extra,
    },
  };
}

describe('StatefulSet controller', () => {
  const c = clusterForSuite('ordered', 'parallel', 'update');
  const setNow = (ns: string, name: string) => get(c.client, GVR.statefulsets, ns, name)!;
  const names = (o: KubeObject) =>
    podsOwnedBy(c.client, o)
      .filter((p) => !p.metadata.deletionTimestamp)
      .map((p) => p.metadata.name)
      .sort();

  test('OrderedReady creates pods one by one, each after the previous is Running and Ready', async () => {
    const s = await c.client.create(GVR.statefulsets, sts('ordered', 'web', 3));
    const web0 = await waitFor('web-0', () => get(c.client, GVR.pods, 'ordered', 'web-0'));
    const l = web0.metadata.labels!;
    assert.equal(l['statefulset.kubernetes.io/pod-name'], 'web-0');
    assert.equal(l['apps.kubernetes.io/pod-index'], '0');
    assert.match(l['controller-revision-hash']!, /^web-[bcdfghjklmnpqrstvwxz2456789]+$/);
    assert.equal((web0.spec as { hostname: string }).hostname, 'web-0');
    assert.equal((web0.spec as { subdomain: string }).subdomain, 'web');
    await waitFor('status replicas=1', () => status<StsStatus>(setNow('ordered', 'web')).replicas === 1);
    assert.deepEqual(names(s), ['web-0'], 'web-1 waits for web-0');

    await setPodStatus(c.client, web0, 'Running', { ready: false });
    await waitFor(
      'a not-ready pod still blocks',
      () => status<StsStatus>(setNow('ordered', 'web')).readyReplicas === undefined,
    );
    assert.deepEqual(names(s), ['web-0']);
    await setPodStatus(c.client, web0, 'Running');
    const web1 = await waitFor('web-1', () => get(c.client, GVR.pods, 'ordered', 'web-1'));
    assert.deepEqual(names(s), ['web-0', 'web-1']);
    await setPodStatus(c.client, web1, 'Running');
    const web2 = await waitFor('web-2', () => get(c.client, GVR.pods, 'ordered', 'web-2'));
    await setPodStatus(c.client, web2, 'Running');
    await waitFor('all ready', () => status<StsStatus>(setNow('ordered', 'web')).readyReplicas === 3);
    const st = status<StsStatus>(setNow('ordered', 'web'));
    assert.equal(st.replicas, 3);
    assert.equal(st.availableReplicas, 3);
    assert.equal(st.currentReplicas, 3);
    assert.equal(st.updatedReplicas, 3);
    assert.equal(st.currentRevision, l['controller-revision-hash']);
    assert.equal(st.updateRevision, st.currentRevision);
    const ev = c.client.list(GVR.events, 'ordered').find((e) => e.reason === 'SuccessfulCreate');
    assert.equal(ev?.message, 'create Pod web-0 in StatefulSet web successful');

    // Scale down: the highest ordinal goes first, one at a time.
    const deleted: string[] = [];
    const stop = c.client.watch(
      GVR.pods,
      (type, p) => {
        if (type === 'DELETED') deleted.push(p.metadata.name!);
      },
      { namespace: 'ordered' },
    );
    await c.client.mutate(GVR.statefulsets, 'ordered', 'web', (o) => {
      (o.spec as { replicas: number }).replicas = 1;
    });
    await waitFor('scaled down', () => names(s).length === 1);
    stop();
    assert.deepEqual(deleted, ['web-2', 'web-1']);
    assert.deepEqual(names(s), ['web-0']);
    await waitFor(
      'delete events',
      () => eventReasons(c.client, 'ordered', 'web').filter((r) => r === 'SuccessfulDelete').length === 2,
    );
  });

  test('a failed pod is deleted and recreated with the same name', async () => {
    const s = setNow('ordered', 'web');
    const web0 = get(c.client, GVR.pods, 'ordered', 'web-0')!;
    await setPodStatus(c.client, web0, 'Failed');
    await waitFor('web-0 recreated', () => {
      const p = get(c.client, GVR.pods, 'ordered', 'web-0');
      return p && p.metadata.uid !== web0.metadata.uid;
    });
    assert.deepEqual(names(s), ['web-0']);
  });

  test('Parallel creates and deletes all pods at once', async () => {
    const s = await c.client.create(
      GVR.statefulsets,
      sts('parallel', 'db', 3, { podManagementPolicy: 'Parallel' }),
    );
    await waitFor('3 pods without readiness', () => names(s).length === 3);
    assert.deepEqual(names(s), ['db-0', 'db-1', 'db-2']);
    await c.client.mutate(GVR.statefulsets, 'parallel', 'db', (o) => {
      (o.spec as { replicas: number }).replicas = 0;
    });
    await waitFor('all deleted', () => names(s).length === 0);
  });

  test('RollingUpdate replaces pods from the highest ordinal and moves the current revision', async () => {
    const stopRun = autoRun(c.client, 'update');
    try {
      const s = await c.client.create(GVR.statefulsets, sts('update', 'app', 3));
      await waitFor('ready', () => status<StsStatus>(setNow('update', 'app')).readyReplicas === 3);
      const before = status<StsStatus>(setNow('update', 'app')).currentRevision!;
      const order: string[] = [];
      const stop = c.client.watch(
        GVR.pods,
        (type, p) => {
          if (type === 'DELETED') order.push(p.metadata.name!);
        },
        { namespace: 'update' },
      );
      await c.client.mutate(GVR.statefulsets, 'update', 'app', (o) => {
        (o.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec
          .containers[0]!.image = 'busybox:2';
      });
      await waitFor('updated', () => {
        const st = status<StsStatus>(setNow('update', 'app'));
        return (
          st.updatedReplicas === 3 &&
          st.readyReplicas === 3 &&
          st.currentRevision === st.updateRevision &&
          st.currentRevision !== before
        );
      });
      stop();
      assert.deepEqual(order, ['app-2', 'app-1', 'app-0']);
      const rev = status<StsStatus>(setNow('update', 'app')).updateRevision;
      for (const p of podsOwnedBy(c.client, s))
        assert.equal(p.metadata.labels?.['controller-revision-hash'], rev);
    } finally {
      stopRun();
    }
  });

  test('a partition keeps lower ordinals at the current revision', async () => {
    const stopRun = autoRun(c.client, 'update');
    try {
      await c.client.create(
        GVR.statefulsets,
        sts('update', 'part', 3, {
          updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } },
        }),
      );
      await waitFor('ready', () => status<StsStatus>(setNow('update', 'part')).readyReplicas === 3);
      const old = status<StsStatus>(setNow('update', 'part')).currentRevision;
      await c.client.mutate(GVR.statefulsets, 'update', 'part', (o) => {
        (o.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec
          .containers[0]!.image = 'busybox:2';
      });
      await waitFor('part-2 updated', () => {
        const st = status<StsStatus>(setNow('update', 'part'));
        return st.updatedReplicas === 1 && st.readyReplicas === 3;
      });
      const st = status<StsStatus>(setNow('update', 'part'));
      assert.equal(st.currentRevision, old);
      assert.equal(st.currentReplicas, 2);
      assert.equal(
        get(c.client, GVR.pods, 'update', 'part-0')!.metadata.labels?.['controller-revision-hash'],
        old,
      );
      assert.equal(
        get(c.client, GVR.pods, 'update', 'part-2')!.metadata.labels?.['controller-revision-hash'],
        st.updateRevision,
      );
    } finally {
      stopRun();
    }
  });
});
