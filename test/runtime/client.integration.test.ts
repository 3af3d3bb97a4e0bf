import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  ApiError,
  type Client,
  FencedError,
  isConflict,
  isNotFound,
  type KubeObject,
  retryOnConflict,
} from '../../src/runtime/index.ts';
import { pod as buildPod } from '../support/objects.ts';
import { createNamespace, startCluster, type TestCluster } from './cluster.ts';

const CM = { apiVersion: 'v1', kind: 'ConfigMap' };

function configMap(namespace: string, name: string, data: Record<string, string> = {}): KubeObject {
  return { ...CM, metadata: { name, namespace }, data };
}

function pod(namespace: string, name: string): KubeObject {
  return buildPod<KubeObject>(name, { namespace, labels: { app: 'demo' }, image: 'busybox' });
}

describe('Client against the embedded API server', () => {
  let cluster: TestCluster;
  let client: Client;
  let ns: string;

  before(async () => {
    cluster = await startCluster();
    client = cluster.client;
    ns = await createNamespace(client);
  });
  after(() => cluster.close());

  test('create, get, list, update and delete', async () => {
    const created = await client.create(configMap(ns, 'crud', { a: '1' }));
    assert.ok(created.metadata.uid);
    const got = await client.get(CM, 'crud', ns);
    assert.deepEqual(got.data, { a: '1' });
    got.data = { a: '2' };
    const updated = await client.update(got);
    assert.notEqual(updated.metadata.resourceVersion, created.metadata.resourceVersion);
    const list = await client.list(CM, { namespace: ns });
    assert.ok(list.items.some((i) => i.metadata.name === 'crud' && i.kind === 'ConfigMap'));
    assert.ok(list.resourceVersion);
    assert.equal(await client.delete(updated), true);
    assert.equal(await client.delete(updated), false, 'deleting a missing object reports false');
    assert.equal(await client.tryGet(CM, 'crud', ns), undefined);
    await assert.rejects(client.get(CM, 'crud', ns), (err) => isNotFound(err) && err instanceof ApiError);
  });

  test('an update from a stale resourceVersion is a conflict', async () => {
    const created = await client.create(configMap(ns, 'stale', { a: '1' }));
    await client.update({ ...created, data: { a: '2' } });
    await assert.rejects(client.update({ ...created, data: { a: '3' } }), (err) => isConflict(err));
  });

  test('listAll follows continue tokens', async () => {
    for (let i = 0; i < 7; i++) await client.create(configMap(ns, `page-${i}`));
    const all = await client.listAll(CM, { namespace: ns, limit: 3, labelSelector: '' });
    const names = all.items.map((i) => i.metadata.name).filter((n) => n?.startsWith('page-'));
    assert.equal(names.length, 7);
  });

  test('merge, JSON and strategic merge patches', async () => {
    const created = await client.create(pod(ns, 'patched'));
    let p = await client.mergePatch(created, { metadata: { labels: { tier: 'web' } } });
    assert.deepEqual(p.metadata.labels, { app: 'demo', tier: 'web' });
    p = await client.jsonPatch(created, [
      { op: 'test', path: '/metadata/labels/tier', value: 'web' },
      { op: 'replace', path: '/metadata/labels/tier', value: 'db' },
    ]);
    assert.equal(p.metadata.labels?.tier, 'db');
    await assert.rejects(
      client.jsonPatch(created, [{ op: 'test', path: '/metadata/labels/tier', value: 'web' }]),
      (err) => err instanceof ApiError && err.statusCode >= 400,
    );
    p = await client.strategicMergePatch(created, {
      spec: { containers: [{ name: 'c', image: 'busybox:2' }] },
    });
    const containers = (p.spec as { containers: { name: string; image: string }[] }).containers;
    assert.deepEqual(
      containers.map((c) => [c.name, c.image]),
      [['c', 'busybox:2']],
    );
  });

  test('an unread merge patch applies, resolves without the object, and still rejects with the Status', async () => {
    const created = await client.create(configMap(ns, 'unread', { a: '1' }));
    assert.equal(await client.mergePatchUnread(created, { data: { b: '2' } }), undefined);
    assert.deepEqual((await client.get(CM, 'unread', ns)).data, { a: '1', b: '2' });
    await assert.rejects(
      client.mergePatchUnread(created, { metadata: { uid: 'not-its-uid' }, data: { c: '3' } }),
      (err) => isConflict(err) && err instanceof ApiError && err.status?.reason === 'Conflict',
    );
  });

  test('server-side apply uses field manager troupe and force takes conflicting fields', async () => {
    const applied = await client.apply(configMap(ns, 'ssa', { owned: 'x' }));
    assert.deepEqual(applied.data, { owned: 'x' });
    const managers = (applied.metadata.managedFields as { manager: string; operation: string }[]).map(
      (m) => `${m.manager}/${m.operation}`,
    );
    assert.ok(managers.includes('troupe/Apply'), managers.join(','));
    // Another manager takes the field; our non-forced apply then conflicts.
    await client.apply(configMap(ns, 'ssa', { owned: 'theirs' }), { fieldManager: 'other', force: true });
    await assert.rejects(client.apply(configMap(ns, 'ssa', { owned: 'x' })), (err) => isConflict(err));
    const forced = await client.apply(configMap(ns, 'ssa', { owned: 'x' }), { force: true });
    assert.equal((forced.data as Record<string, string>).owned, 'x');
  });

  test('status subresource: update, patch and update with conflict retry', async () => {
    const created = await client.create(pod(ns, 'status'));
    const withStatus = await client.updateStatus({
      ...created,
      status: { phase: 'Pending', message: 'one' },
    });
    assert.equal((withStatus.status as { message: string }).message, 'one');
    const patched = await client.patchStatus(created, { status: { message: 'two' } });
    assert.equal((patched.status as { message: string }).message, 'two');
    // A concurrent writer bumps the object between our read and write once.
    let interfered = false;
    const final = await client.updateStatusWithRetry<KubeObject>(created, (obj) => {
      if (!interfered) {
        interfered = true;
        return client.mergePatch(created, { metadata: { labels: { bumped: 'yes' } } }).then(() => {
          (obj.status as { message: string }).message = 'three';
        });
      }
      (obj.status as { message: string }).message = 'three';
      return undefined;
    });
    assert.equal((final?.status as { message?: string } | undefined)?.message, 'three');
    assert.equal(final?.metadata.labels?.bumped, 'yes');
  });

  test('retryOnConflict gives up after its attempts', async () => {
    let calls = 0;
    const conflict = new ApiError({
      statusCode: 409,
      method: 'PUT',
      path: '/x',
      status: { reason: 'Conflict' },
    });
    await assert.rejects(
      retryOnConflict(
        async () => {
          calls++;
          throw conflict;
        },
        { attempts: 3, initialMs: 1 },
      ),
      conflict,
    );
    assert.equal(calls, 3);
  });

  test('finalizers are added and removed, tolerating concurrent changes', async () => {
    const created = await client.create(configMap(ns, 'fin'));
    // Someone else changes the object after we read it: the stale add is retried on fresh data.
    await client.mergePatch(created, { metadata: { finalizers: ['other/keep'] } });
    const added = await client.addFinalizer(created, 'troupe.dev/cleanup');
    assert.deepEqual(added.metadata.finalizers, ['other/keep', 'troupe.dev/cleanup']);
    assert.equal(
      (await client.addFinalizer(added, 'troupe.dev/cleanup')).metadata.resourceVersion,
      added.metadata.resourceVersion,
    );
    await client.delete(added);
    const terminating = await client.get(CM, 'fin', ns);
    assert.ok(terminating.metadata.deletionTimestamp);
    await client.removeFinalizer(terminating, 'troupe.dev/cleanup');
    const last = await client.get(CM, 'fin', ns);
    assert.deepEqual(last.metadata.finalizers, ['other/keep']);
    await client.removeFinalizer(last, 'other/keep');
    assert.equal(await client.tryGet(CM, 'fin', ns), undefined);
  });

  test('custom resources are found through discovery', async () => {
    await assert.rejects(client.list({ apiVersion: 'nope.example.com/v1', kind: 'Nope' }));
  });

  test('a fenced client refuses writes but still reads', async () => {
    const fenced = client.withFence(() => {
      throw new FencedError();
    });
    await assert.rejects(fenced.create(configMap(ns, 'fenced')), FencedError);
    await assert.rejects(fenced.mergePatch(configMap(ns, 'x'), {}), FencedError);
    await assert.rejects(fenced.delete(configMap(ns, 'x')), FencedError);
    assert.ok((await fenced.list(CM, { namespace: ns })).items.length > 0);
  });

  test('429 with Retry-After is retried after the advertised delay', async () => {
    const codes: number[] = [];
    const retrying = cluster.newClient({
      metrics: {
        request: (_m, code) => {
          codes.push(code);
          // Lift the fault once the client has seen it, so its retry succeeds.
          if (code === 429) cluster.server.faults.configure({});
        },
      },
    });
    cluster.server.faults.configure({ errorRate: 1, errorCodes: [429] });
    try {
      const created = await retrying.create(configMap(ns, 'throttled'));
      assert.equal(created.metadata.name, 'throttled');
      assert.deepEqual(codes.slice(-2), [429, 201]);
    } finally {
      cluster.server.faults.configure({});
    }
  });

  test('a 500 without Retry-After is returned to the caller', async () => {
    const plain = cluster.newClient();
    cluster.server.faults.configure({ errorRate: 1, errorCodes: [500], verbs: ['create'] });
    try {
      await assert.rejects(
        plain.create(configMap(ns, 'boom')),
        (err) => err instanceof ApiError && err.statusCode === 500,
      );
    } finally {
      cluster.server.faults.configure({});
    }
  });
});
