import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject, OwnerReference } from '../../../src/cluster/apiserver/types.ts';
import { GVR, type Gvr } from '../../../src/cluster/client.ts';
import { waitFor } from '../../support/wait.ts';
import { autoRun, CONTAINER, clusterForSuite, createNode, get } from './harness.ts';

const NS = 'gc';
const CM: Gvr = { group: '', version: 'v1', resource: 'configmaps' };

function ref(owner: KubeObject, block = true): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name!,
    uid: owner.metadata.uid!,
    ...(block ? { blockOwnerDeletion: true } : {}),
  };
}

function cm(name: string, owners: OwnerReference[] = [], finalizers?: string[]): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: NS, ownerReferences: owners, ...(finalizers ? { finalizers } : {}) },
    data: {},
  };
}

describe('garbage collector', () => {
  const c = clusterForSuite(NS);
  const exists = (name: string) => get(c.client, CM, NS, name) !== undefined;

  test('background: dependents of a deleted owner are deleted', async () => {
    const owner = await c.client.create(CM, cm('bg-owner'));
    await c.client.create(CM, cm('bg-dep1', [ref(owner)]));
    await c.client.create(CM, cm('bg-dep2', [ref(owner, false)]));
    const grandchild = await c.client.create(
      CM,
      cm('bg-grandchild', [ref(get(c.client, CM, NS, 'bg-dep1')!)]),
    );
    await c.client.delete(CM, NS, 'bg-owner');
    await waitFor('dependents deleted', () => !exists('bg-dep1') && !exists('bg-dep2'));
    await waitFor('grandchild deleted', () => get(c.client, CM, NS, grandchild.metadata.name!) === undefined);
  });

  test('an object created with an owner that does not exist is collected', async () => {
    await c.client.create(
      CM,
      cm('dangling', [
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'never', uid: '00000000-0000-0000-0000-000000000000' },
      ]),
    );
    await waitFor('collected', () => !exists('dangling'));
  });

  test('an object with another live owner only loses the reference', async () => {
    const a = await c.client.create(CM, cm('owner-a'));
    const b = await c.client.create(CM, cm('owner-b'));
    await c.client.create(CM, cm('shared', [ref(a), ref(b)]));
    await c.client.delete(CM, NS, 'owner-a');
    await waitFor(
      'reference removed',
      () => get(c.client, CM, NS, 'shared')?.metadata.ownerReferences?.length === 1,
    );
    assert.equal(get(c.client, CM, NS, 'shared')!.metadata.ownerReferences![0]!.uid, b.metadata.uid);
  });

  test('foreground: the owner waits for blocking dependents, then its finalizer is removed', async () => {
    const owner = await c.client.create(CM, cm('fg-owner'));
    await c.client.create(CM, cm('fg-held', [ref(owner)], ['example.com/hold']));
    await c.client.create(CM, cm('fg-free', [ref(owner, false)]));
    await c.client.delete(CM, NS, 'fg-owner', { propagationPolicy: 'Foreground' });
    const deleting = get(c.client, CM, NS, 'fg-owner')!;
    assert.ok(deleting.metadata.deletionTimestamp);
    assert.deepEqual(deleting.metadata.finalizers, ['foregroundDeletion']);
    await waitFor(
      'dependents being deleted',
      () => !exists('fg-free') && get(c.client, CM, NS, 'fg-held')?.metadata.deletionTimestamp !== undefined,
    );
    assert.ok(exists('fg-owner'), 'the owner waits for the held dependent');
    await c.client.mutate(CM, NS, 'fg-held', (o) => {
      delete o.metadata.finalizers;
    });
    await waitFor('owner gone', () => !exists('fg-owner'));
  });

  test('orphan: dependents stay and forget the owner', async () => {
    const owner = await c.client.create(CM, cm('or-owner'));
    const other = await c.client.create(CM, cm('or-other'));
    await c.client.create(CM, cm('or-dep', [ref(owner), ref(other)]));
    await c.client.create(CM, cm('or-dep2', [ref(owner)]));
    await c.client.delete(CM, NS, 'or-owner', { propagationPolicy: 'Orphan' });
    await waitFor('owner gone', () => !exists('or-owner'));
    assert.deepEqual(
      get(c.client, CM, NS, 'or-dep')!.metadata.ownerReferences!.map((r) => r.name),
      ['or-other'],
    );
    assert.equal(get(c.client, CM, NS, 'or-dep2')!.metadata.ownerReferences, undefined);
  });

  test('a cluster-scoped owner (Node) collects namespaced dependents', async () => {
    await createNode(c.client, 'gc-node');
    const node = get(c.client, GVR.nodes, '', 'gc-node')!;
    await c.client.create(CM, cm('node-dep', [ref(node)]));
    await c.client.delete(GVR.nodes, '', 'gc-node');
    await waitFor('collected', () => !exists('node-dep'));
  });

  test('foreground deletion of a Deployment removes pods, then the ReplicaSet, then the Deployment', async () => {
    const stopRun = autoRun(c.client, NS);
    try {
      await c.client.create(GVR.deployments, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'fg', namespace: NS },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'fg' } },
          template: { metadata: { labels: { app: 'fg' } }, spec: { containers: CONTAINER } },
        },
      });
      await waitFor(
        'pods running',
        () =>
          c.client
            .list(GVR.pods, NS, { labelSelector: 'app=fg' })
            .filter((p) => (p.status as { phase?: string }).phase === 'Running').length === 2,
      );
      const order: string[] = [];
      const stops = [GVR.pods, GVR.replicasets, GVR.deployments].map((g) =>
        c.client.watch(
          g,
          (type, o) => {
            if (type === 'DELETED') order.push(o.kind);
          },
          { namespace: NS },
        ),
      );
      await c.client.delete(GVR.deployments, NS, 'fg', { propagationPolicy: 'Foreground' });
      await waitFor('deployment gone', () => get(c.client, GVR.deployments, NS, 'fg') === undefined);
      for (const s of stops) s();
      assert.deepEqual(order, ['Pod', 'Pod', 'ReplicaSet', 'Deployment']);
    } finally {
      stopRun();
    }
  });

  test('objects of a CustomResourceDefinition added at run time are collected too', async () => {
    await c.client.create(
      { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' },
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'widgets.example.com' },
        spec: {
          group: 'example.com',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
          scope: 'Namespaced',
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
            },
          ],
        },
      },
    );
    const WIDGETS: Gvr = { group: 'example.com', version: 'v1', resource: 'widgets' };
    await waitFor('served', () => c.client.served(WIDGETS));
    const owner = await c.client.create(WIDGETS, {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w', namespace: NS },
    });
    const dep = await c.client.create(WIDGETS, {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w-child', namespace: NS, ownerReferences: [ref(owner)] },
    });
    await c.client.create(CM, cm('widget-cm', [ref(owner)]));
    await c.client.delete(WIDGETS, NS, 'w');
    await waitFor(
      'dependents collected',
      () => !exists('widget-cm') && get(c.client, WIDGETS, NS, dep.metadata.name!) === undefined,
    );
  });
});
