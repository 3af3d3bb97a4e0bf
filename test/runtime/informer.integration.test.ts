import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/lib/clock.ts';
import {
  Cache,
  type Client,
  Informer,
  type KubeObject,
  LAST_APPLIED_ANNOTATION,
  labelIndexName,
  NODE_NAME_INDEX,
  OWNER_UID_INDEX,
} from '../../src/runtime/index.ts';
import { waitFor } from '../support/wait.ts';
import { createNamespace, startCluster, type TestCluster } from './cluster.ts';

const CM = { apiVersion: 'v1', kind: 'ConfigMap' };
const POD = { apiVersion: 'v1', kind: 'Pod' };

interface Seen {
  adds: string[];
  updates: [string, string, string][];
  deletes: [string, boolean][];
}

function record(inf: Informer): Seen {
  const seen: Seen = { adds: [], updates: [], deletes: [] };
  inf.addHandler({
    add: (o) => seen.adds.push(o.metadata.name ?? ''),
    update: (a, b) =>
      seen.updates.push([
        b.metadata.name ?? '',
        a.metadata.resourceVersion ?? '',
        b.metadata.resourceVersion ?? '',
      ]),
    delete: (o, unknown) => seen.deletes.push([o.metadata.name ?? '', unknown]),
  });
  return seen;
}

function cm(ns: string, name: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject {
  return { ...CM, metadata: { name, namespace: ns, ...extra }, data: { v: '1' } };
}

describe('Informer against the embedded API server', () => {
  let cluster: TestCluster;
  let client: Client;

  before(async () => {
    cluster = await startCluster();
    client = cluster.client;
  });
  after(() => cluster.close());

  test('lists, then delivers adds, updates and deletes with old and new objects', async () => {
    const ns = await createNamespace(client);
    await client.create(cm(ns, 'before'));
    const inf = new Informer(client.rest, client.mapper, { kind: CM, namespace: ns });
    const seen = record(inf);
    inf.start();
    assert.equal(await inf.waitForSync(), true);
    assert.deepEqual(seen.adds, ['before']);
    const a = await client.create(cm(ns, 'a'));
    const a2 = await client.mergePatch(a, { data: { v: '2' } });
    await client.delete(a2);
    await waitFor(() => seen.deletes.length === 1);
    assert.deepEqual(seen.adds, ['before', 'a']);
    assert.deepEqual(seen.updates, [['a', a.metadata.resourceVersion, a2.metadata.resourceVersion]]);
    assert.deepEqual(seen.deletes, [['a', false]]);
    assert.equal(inf.get(`${ns}/a`), undefined);
    assert.ok(inf.get(`${ns}/before`));
    await inf.stop();
  });

  test('strips managedFields and the last-applied annotation from cached objects', async () => {
    const ns = await createNamespace(client);
    await client.create(
      cm(ns, 'fat', { annotations: { [LAST_APPLIED_ANNOTATION]: '{"big":true}', keep: 'x' } }),
    );
    const inf = new Informer(client.rest, client.mapper, { kind: CM, namespace: ns });
    inf.start();
    await inf.waitForSync();
    const cached = inf.get(`${ns}/fat`);
    assert.equal(cached?.metadata.managedFields, undefined);
    assert.deepEqual(cached?.metadata.annotations, { keep: 'x' });
    await inf.stop();
  });

  test('resumes after cut watches without relisting and without losing events', async () => {
    const ns = await createNamespace(client);
    const lists: string[] = [];
    const inf = new Informer(client.rest, client.mapper, {
      kind: CM,
      namespace: ns,
      metrics: { relisted: (k) => lists.push(k) },
      backoff: { initialMs: 10, maxMs: 50 },
    });
    const seen = record(inf);
    inf.start();
    await inf.waitForSync();
    for (let i = 0; i < 5; i++) {
      cluster.server.faults.cutWatches();
      await client.create(cm(ns, `cut-${i}`));
    }
    await waitFor('five adds', () => seen.adds.length === 5);
    assert.deepEqual(seen.adds.sort(), ['cut-0', 'cut-1', 'cut-2', 'cut-3', 'cut-4']);
    assert.equal(lists.length, 1, 'a cut watch resumes from its resourceVersion');
    await inf.stop();
  });

  test('relists on 410 Gone and turns missed changes into events', async () => {
    const ns = await createNamespace(client);
    const keep = await client.create(cm(ns, 'keep'));
    const gone = await client.create(cm(ns, 'gone'));
    const reasons: string[] = [];
    const inf = new Informer(client.rest, client.mapper, {
      kind: CM,
      namespace: ns,
      metrics: { watchRestarted: (_k, reason) => reasons.push(reason) },
      backoff: { initialMs: 10, maxMs: 50 },
    });
    const seen = record(inf);
    inf.start();
    await inf.waitForSync();
    // Keep the informer from re-watching while things change, then forget the history it
    // would resume from: its next watch gets 410 and it must relist.
    let changed: KubeObject;
    cluster.server.faults.configure({ errorRate: 1, errorCodes: [500], verbs: ['watch'] });
    try {
      cluster.server.faults.cutWatches();
      await waitFor('watch not refused', () => reasons.includes('error'));
      changed = await client.mergePatch(keep, { data: { v: 'changed' } });
      await client.delete(gone);
      await client.create(cm(ns, 'new'));
      cluster.server.api.store.expireHistory();
    } finally {
      cluster.server.faults.configure({});
    }
    await waitFor('a restart after 410 Gone', () => reasons.includes('gone'));
    await waitFor(
      () =>
        inf.get(`${ns}/keep`)?.metadata.resourceVersion === changed.metadata.resourceVersion &&
        inf.get(`${ns}/new`) !== undefined &&
        inf.get(`${ns}/gone`) === undefined,
    );
    assert.ok(seen.adds.includes('new'));
    assert.ok(seen.updates.some(([n]) => n === 'keep'));
    assert.deepEqual(seen.deletes, [['gone', true]], 'a deletion missed while disconnected is inferred');
    await inf.stop();
  });

  test('retries with backoff until the API server answers', async () => {
    const ns = await createNamespace(client);
    await client.create(cm(ns, 'x'));
    const restarts: string[] = [];
    cluster.server.faults.configure({ errorRate: 1, errorCodes: [500], verbs: ['list'] });
    const inf = new Informer(client.rest, client.mapper, {
      kind: CM,
      namespace: ns,
      backoff: { initialMs: 5, maxMs: 20 },
      metrics: { watchRestarted: (_k, r) => restarts.push(r) },
    });
    try {
      inf.start();
      await waitFor(() => restarts.filter((r) => r === 'error').length >= 3);
      assert.equal(inf.hasSynced, false);
    } finally {
      cluster.server.faults.configure({});
    }
    assert.equal(await inf.waitForSync(), true);
    assert.ok(inf.get(`${ns}/x`));
    await inf.stop();
  });

  test('resync replays every object as an update with old === new', async () => {
    const ns = await createNamespace(client);
    await client.create(cm(ns, 'r'));
    const inf = new Informer(client.rest, client.mapper, { kind: CM, namespace: ns, resyncMs: 20 });
    let resyncs = 0;
    inf.addHandler({
      update: (a, b) => {
        if (a === b) resyncs++;
      },
    });
    inf.start();
    await inf.waitForSync();
    await waitFor(() => resyncs >= 2);
    await inf.stop();
  });

  test('resync is timed on the injected clock: it fires as the clock passes each period', async () => {
    const ns = await createNamespace(client);
    await client.create(cm(ns, 'r'));
    const clock = new ManualClock();
    const inf = new Informer(client.rest, client.mapper, { kind: CM, namespace: ns, resyncMs: 1000, clock });
    let resyncs = 0;
    inf.addHandler({
      update: (a, b) => {
        if (a === b) resyncs++;
      },
    });
    inf.start();
    const seen: number[] = [];
    try {
      await inf.waitForSync();
      for (const step of [999, 1, 2000]) {
        clock.advance(step);
        seen.push(resyncs);
      }
    } finally {
      await inf.stop();
    }
    assert.deepEqual(seen, [0, 1, 3]);
    clock.advance(1000);
    assert.equal(resyncs, 3, 'no resync after stop');
  });

  test('a handler added late receives the cached objects', async () => {
    const ns = await createNamespace(client);
    await client.create(cm(ns, 'early'));
    const inf = new Informer(client.rest, client.mapper, { kind: CM, namespace: ns });
    inf.start();
    await inf.waitForSync();
    const initial: [string, boolean][] = [];
    inf.addHandler({ add: (o, isInitial) => initial.push([o.metadata.name ?? '', isInitial]) });
    assert.deepEqual(initial, [['early', true]]);
    await inf.stop();
  });
});

describe('Cache against the embedded API server', () => {
  let cluster: TestCluster;
  let client: Client;

  before(async () => {
    cluster = await startCluster();
    client = cluster.client;
  });
  after(() => cluster.close());

  test('shares one informer per kind and serves get/list with selectors and indexes', async () => {
    const ns = await createNamespace(client);
    const other = await createNamespace(client);
    const owner = await client.create(cm(ns, 'owner'));
    const ownerRef = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'owner',
      uid: owner.metadata.uid ?? '',
      controller: true,
    };
    await client.create(cm(ns, 'child-1', { labels: { group: 'g1' }, ownerReferences: [ownerRef] }));
    await client.create(cm(ns, 'child-2', { labels: { group: 'g2' }, ownerReferences: [ownerRef] }));
    await client.create(cm(other, 'elsewhere', { labels: { group: 'g1' } }));
    await client.create({
      ...POD,
      metadata: { name: 'bound', namespace: ns },
      spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'x' }] },
    });

    const cache = new Cache(client.rest, client.mapper);
    cache.start();
    const inf1 = await cache.informerFor(CM);
    const inf2 = await cache.informerFor(CM);
    assert.equal(inf1, inf2, 'one informer per kind');

    assert.equal((await cache.get(CM, 'owner', ns))?.metadata.uid, owner.metadata.uid);
    assert.equal(await cache.get(CM, 'owner', other), undefined);
    const inNs = await cache.list(CM, { namespace: ns });
    assert.deepEqual(inNs.map((o) => o.metadata.name).sort(), ['child-1', 'child-2', 'owner']);
    const g1 = await cache.list(CM, { labelSelector: 'group=g1' });
    assert.deepEqual(g1.map((o) => o.metadata.name).sort(), ['child-1', 'elsewhere']);
    const byLabel = await cache.list(CM, { index: { name: labelIndexName('group'), value: 'g2' } });
    assert.deepEqual(
      byLabel.map((o) => o.metadata.name),
      ['child-2'],
    );
    const byOwner = await cache.list(CM, {
      index: { name: OWNER_UID_INDEX, value: owner.metadata.uid ?? '' },
    });
    assert.deepEqual(byOwner.map((o) => o.metadata.name).sort(), ['child-1', 'child-2']);
    const onNode = await cache.list(POD, { index: { name: NODE_NAME_INDEX, value: 'node-a' } });
    assert.deepEqual(
      onNode.map((o) => o.metadata.name),
      ['bound'],
    );
    assert.equal(cache.hasSynced, true);
    await cache.stop();
  });

  test('a namespaced cache refuses reads outside its namespace', async () => {
    const ns = await createNamespace(client);
    const other = await createNamespace(client);
    await client.create(cm(ns, 'mine'));
    await client.create(cm(other, 'theirs'));
    const cache = new Cache(client.rest, client.mapper, { namespace: ns });
    cache.start();
    assert.deepEqual(
      (await cache.list(CM)).map((o) => o.metadata.name),
      ['mine'],
    );
    await assert.rejects(cache.list(CM, { namespace: other }), /outside the cache's scope/);
    // Cluster-scoped kinds are unaffected by the namespace.
    assert.ok((await cache.list({ apiVersion: 'v1', kind: 'Namespace' })).length >= 2);
    await cache.stop();
  });
});
