import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, Watch } from '@kubernetes/client-node';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';
import { waitFor } from '../../support/wait.ts';

interface Event {
  type: string;
  object: {
    metadata: { name?: string; resourceVersion?: string; annotations?: Record<string, string> };
    code?: number;
    reason?: string;
  };
}

/** Opens a raw watch stream and collects its events. */
async function rawWatch(t: TestServer, path: string) {
  const events: Event[] = [];
  let ended = false;
  const req = httpsRequest(new URL(path, t.server.url), {
    headers: { Authorization: `Bearer ${t.server.token}` },
    ca: t.server.ca,
  });
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    req.on('response', resolve);
    req.on('error', reject);
    req.end();
  });
  assert.equal(res.statusCode, 200);
  let buf = '';
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => {
    buf += chunk;
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      events.push(JSON.parse(buf.slice(0, i)) as Event);
      buf = buf.slice(i + 1);
    }
  });
  res.on('end', () => {
    ended = true;
  });
  res.on('close', () => {
    ended = true;
  });
  res.on('error', () => {});
  return { events, stop: () => req.destroy(), ended: () => ended };
}

describe('watch', () => {
  let t: TestServer;
  let core: CoreV1Api;
  before(async () => {
    t = await startTestServer({ historySize: 50 });
    core = t.kc.makeApiClient(CoreV1Api);
  });
  after(() => t.close());

  test('client-node Watch sees ADDED, MODIFIED, DELETED in order', async () => {
    const seen: string[] = [];
    const w = new Watch(t.kc);
    const req = await w.watch(
      '/api/v1/namespaces/default/configmaps',
      {},
      (type, obj) => seen.push(`${type} ${obj.metadata.name}`),
      () => {},
    );
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'w1' } } });
    await core.patchNamespacedConfigMap({
      namespace: 'default',
      name: 'w1',
      body: [{ op: 'add', path: '/data', value: { a: 'b' } }],
    });
    await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'w1' });
    await waitFor('three events', () => seen.length >= 3);
    req.abort();
    assert.deepEqual(seen, ['ADDED w1', 'MODIFIED w1', 'DELETED w1']);
  });

  test('resuming from a resourceVersion replays exactly the later events', async () => {
    const a = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'r1' } },
    });
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'r2' } } });
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'r3' } } });
    const w = await rawWatch(
      t,
      `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${a.metadata!.resourceVersion}`,
    );
    await waitFor('replayed events', () => w.events.length >= 2);
    w.stop();
    assert.deepEqual(
      w.events.map((e) => `${e.type} ${e.object.metadata.name}`),
      ['ADDED r2', 'ADDED r3'],
    );
  });

  test('a resourceVersion older than the history window gets a 410 Expired ERROR event', async () => {
    const first = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'old' } },
    });
    for (let i = 0; i < 60; i++) {
      await core.patchNamespacedConfigMap({
        namespace: 'default',
        name: 'old',
        body: [{ op: 'add', path: '/data', value: { i: String(i) } }],
      });
    }
    const w = await rawWatch(
      t,
      `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${first.metadata!.resourceVersion}`,
    );
    await waitFor('an error event', () => w.events.length >= 1);
    assert.equal(w.events[0]!.type, 'ERROR');
    assert.equal(w.events[0]!.object.code, 410);
    assert.equal(w.events[0]!.object.reason, 'Expired');
    await waitFor('the stream to end', () => w.ended());
  });

  test('a label-selected watch turns a label change into ADDED/DELETED', async () => {
    const w = await rawWatch(
      t,
      '/api/v1/namespaces/default/configmaps?watch=true&labelSelector=team%3Dx&resourceVersion=' +
        (await core.listNamespacedConfigMap({ namespace: 'default' })).metadata!.resourceVersion,
    );
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'lab' } } });
    await core.patchNamespacedConfigMap({
      namespace: 'default',
      name: 'lab',
      body: [{ op: 'add', path: '/metadata/labels', value: { team: 'x' } }],
    });
    await core.patchNamespacedConfigMap({
      namespace: 'default',
      name: 'lab',
      body: [{ op: 'replace', path: '/metadata/labels/team', value: 'y' }],
    });
    await waitFor('two events', () => w.events.length >= 2);
    w.stop();
    assert.deepEqual(
      w.events.map((e) => `${e.type} ${e.object.metadata.name}`),
      ['ADDED lab', 'DELETED lab'],
    );
  });

  test('bookmarks carry the current resourceVersion; sendInitialEvents ends with the initial-events-end bookmark', async () => {
    const w = await rawWatch(
      t,
      '/api/v1/namespaces/default/configmaps?watch=true&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=',
    );
    await waitFor('the initial-events-end bookmark', () => w.events.find((e) => e.type === 'BOOKMARK'));
    w.stop();
    const bm = w.events.find((e) => e.type === 'BOOKMARK')!;
    assert.equal(bm.object.metadata.annotations?.['k8s.io/initial-events-end'], 'true');
    assert.ok(w.events.slice(0, w.events.indexOf(bm)).every((e) => e.type === 'ADDED'));
  });

  test('timeoutSeconds ends the stream', async () => {
    const w = await rawWatch(
      t,
      '/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1&resourceVersion=' +
        t.server.api.store.currentRv,
    );
    await waitFor('the stream to end', () => w.ended());
    assert.equal(w.events.length, 0);
  });

  test('a write answers with the object as stored and watched; each shape of it reaches every watcher', async () => {
    const from = t.server.api.store.currentRv;
    const core = [1, 2].map(() =>
      rawWatch(t, `/api/v1/namespaces/default/events?watch=true&resourceVersion=${from}`),
    );
    const events = [1, 2].map(() =>
      rawWatch(t, `/apis/events.k8s.io/v1/namespaces/default/events?watch=true&resourceVersion=${from}`),
    );
    const watchers = await Promise.all([...core, ...events]);
    const created = await t.request('POST', '/api/v1/namespaces/default/events', {
      body: JSON.stringify({
        metadata: { name: 'shaped' },
        involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
        reason: 'Tested',
        message: 'in two shapes',
      }),
    });
    assert.equal(created.status, 201);
    await waitFor('every watcher to see the event', () => watchers.every((w) => w.events.length === 1));
    for (const w of watchers) w.stop();
    const [coreA, coreB, eventsA, eventsB] = watchers.map((w) => w.events[0]!.object) as [
      Event['object'],
      Event['object'],
      Event['object'],
      Event['object'],
    ];
    assert.deepEqual(coreA, JSON.parse(created.text));
    assert.deepEqual(coreB, coreA);
    assert.deepEqual(eventsB, eventsA);
    assert.equal((eventsA as unknown as { apiVersion: string }).apiVersion, 'events.k8s.io/v1');
    assert.equal((eventsA as unknown as { note: string }).note, 'in two shapes');
    assert.equal(eventsA.metadata.resourceVersion, coreA.metadata.resourceVersion);
  });

  test('fault injection cuts watch streams', async () => {
    const w = await rawWatch(
      t,
      '/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=' + t.server.api.store.currentRv,
    );
    t.server.faults.cutWatches();
    await waitFor('the stream to end', () => w.ended());
    assert.ok(w.ended());
  });
});
