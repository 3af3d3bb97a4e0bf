import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, EventsV1Api, type V1Pod } from '@kubernetes/client-node';
import { statusOf } from '../../support/api-error.ts';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';
import { pod as buildPod } from '../../support/objects.ts';

function pod(name: string, extra: Partial<V1Pod> = {}): V1Pod {
  return {
    ...buildPod<V1Pod>(name, { namespace: null, labels: { app: 'web' }, image: 'nginx:1.27' }),
    ...extra,
  };
}

describe('object semantics through @kubernetes/client-node', () => {
  let t: TestServer;
  let core: CoreV1Api;
  before(async () => {
    t = await startTestServer();
    core = t.kc.makeApiClient(CoreV1Api);
  });
  after(() => t.close());

  test('create sets uid, creationTimestamp, resourceVersion; get returns it', async () => {
    const created = await core.createNamespacedPod({ namespace: 'default', body: pod('p1') });
    assert.match(created.metadata!.uid!, /^[0-9a-f-]{36}$/);
    assert.ok(created.metadata!.creationTimestamp instanceof Date);
    assert.match(created.metadata!.resourceVersion!, /^\d+$/);
    const got = await core.readNamespacedPod({ namespace: 'default', name: 'p1' });
    assert.equal(got.metadata!.uid, created.metadata!.uid);
    assert.equal(got.spec!.containers[0]!.image, 'nginx:1.27');
  });

  test('generateName produces a unique name', async () => {
    const a = await core.createNamespacedPod({
      namespace: 'default',
      body: pod('', { metadata: { generateName: 'gen-' } }),
    });
    assert.match(a.metadata!.name!, /^gen-[a-z0-9]{5}$/);
  });

  test('duplicate create is 409 AlreadyExists, missing is 404 NotFound', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: pod('dup') });
    const dup = await statusOf(core.createNamespacedPod({ namespace: 'default', body: pod('dup') }));
    assert.equal(dup.code, 409);
    assert.equal(dup.body.reason, 'AlreadyExists');
    assert.equal(dup.body.message, 'pods "dup" already exists');
    const missing = await statusOf(core.readNamespacedPod({ namespace: 'default', name: 'nope' }));
    assert.equal(missing.code, 404);
    assert.equal(missing.body.message, 'pods "nope" not found');
  });

  test('objects need an existing namespace', async () => {
    const r = await statusOf(core.createNamespacedPod({ namespace: 'ghost', body: pod('x') }));
    assert.equal(r.code, 404);
    assert.equal(r.body.message, 'namespaces "ghost" not found');
  });

  test('stale resourceVersion on update is 409 Conflict with the real message', async () => {
    const created = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'cm1' }, data: { a: '1' } },
    });
    await core.replaceNamespacedConfigMap({
      namespace: 'default',
      name: 'cm1',
      body: { ...created, data: { a: '2' } },
    });
    const stale = await statusOf(
      core.replaceNamespacedConfigMap({
        namespace: 'default',
        name: 'cm1',
        body: { ...created, data: { a: '3' } },
      }),
    );
    assert.equal(stale.code, 409);
    assert.equal(stale.body.reason, 'Conflict');
    assert.equal(
      stale.body.message,
      'Operation cannot be fulfilled on configmaps "cm1": the object has been modified; please apply your changes to the latest version and try again',
    );
  });

  test('a no-op update keeps the resourceVersion', async () => {
    const created = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'noop' }, data: { a: '1' } },
    });
    const same = await core.replaceNamespacedConfigMap({ namespace: 'default', name: 'noop', body: created });
    assert.equal(same.metadata!.resourceVersion, created.metadata!.resourceVersion);
  });

  test('finalizers hold deletion until removed; none can be added while deleting', async () => {
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'fin', finalizers: ['example.com/hold'] } },
    });
    await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'fin' });
    const held = await core.readNamespacedConfigMap({ namespace: 'default', name: 'fin' });
    assert.ok(held.metadata!.deletionTimestamp);
    const add = await statusOf(
      core.replaceNamespacedConfigMap({
        namespace: 'default',
        name: 'fin',
        body: {
          ...held,
          metadata: { ...held.metadata, finalizers: ['example.com/hold', 'example.com/other'] },
        },
      }),
    );
    assert.equal(add.code, 422);
    assert.match(String(add.body.message), /no new finalizers can be added if the object is being deleted/);
    await core.replaceNamespacedConfigMap({
      namespace: 'default',
      name: 'fin',
      body: { ...held, metadata: { ...held.metadata, finalizers: [] } },
    });
    const gone = await statusOf(core.readNamespacedConfigMap({ namespace: 'default', name: 'fin' }));
    assert.equal(gone.code, 404);
  });

  test('an unbound pod is deleted at once; a bound pod waits for its kubelet', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: pod('unbound') });
    await core.deleteNamespacedPod({ namespace: 'default', name: 'unbound' });
    assert.equal(
      (await statusOf(core.readNamespacedPod({ namespace: 'default', name: 'unbound' }))).code,
      404,
    );

    await core.createNamespacedPod({ namespace: 'default', body: pod('bound') });
    await core.createNamespacedBinding({
      namespace: 'default',
      body: {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name: 'bound' },
        target: { kind: 'Node', name: 'node-1' },
      },
    });
    await core.deleteNamespacedPod({ namespace: 'default', name: 'bound' });
    const terminating = await core.readNamespacedPod({ namespace: 'default', name: 'bound' });
    assert.ok(terminating.metadata!.deletionTimestamp);
    assert.equal(terminating.metadata!.deletionGracePeriodSeconds, 30);
    await core.deleteNamespacedPod({ namespace: 'default', name: 'bound', gracePeriodSeconds: 0 });
    assert.equal((await statusOf(core.readNamespacedPod({ namespace: 'default', name: 'bound' }))).code, 404);
  });

  test('binding sets nodeName once; a second binding is 409', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: pod('bind-once') });
    const binding = {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name: 'bind-once' },
      target: { kind: 'Node', name: 'n1' },
    };
    await core.createNamespacedBinding({ namespace: 'default', body: binding });
    const p = await core.readNamespacedPod({ namespace: 'default', name: 'bind-once' });
    assert.equal(p.spec!.nodeName, 'n1');
    assert.equal(p.status!.conditions!.find((c) => c.type === 'PodScheduled')!.status, 'True');
    const again = await statusOf(
      core.createNamespacedBinding({
        namespace: 'default',
        body: { ...binding, target: { kind: 'Node', name: 'n2' } },
      }),
    );
    assert.equal(again.code, 409);
  });

  test('label and field selectors filter lists; unknown field selectors are 400', async () => {
    await core.createNamespace({ body: { metadata: { name: 'sel' } } });
    for (const [name, tier] of [
      ['a', 'db'],
      ['b', 'db'],
      ['c', 'web'],
    ] as const) {
      await core.createNamespacedPod({
        namespace: 'sel',
        body: pod(name, { metadata: { name, labels: { tier } } }),
      });
    }
    const names = async (labelSelector?: string, fieldSelector?: string) =>
      (await core.listNamespacedPod({ namespace: 'sel', labelSelector, fieldSelector })).items
        .map((p) => p.metadata!.name)
        .sort();
    assert.deepEqual(await names('tier=db'), ['a', 'b']);
    assert.deepEqual(await names('tier!=db'), ['c']);
    assert.deepEqual(await names('tier in (web,cache)'), ['c']);
    assert.deepEqual(await names('tier notin (web)'), ['a', 'b']);
    assert.deepEqual(await names('tier'), ['a', 'b', 'c']);
    assert.deepEqual(await names('!tier'), []);
    assert.deepEqual(await names(undefined, 'metadata.name=b'), ['b']);
    assert.deepEqual(await names(undefined, 'status.phase=Pending'), ['a', 'b', 'c']);
    const bad = await statusOf(core.listNamespacedPod({ namespace: 'sel', fieldSelector: 'spec.nope=x' }));
    assert.equal(bad.code, 400);
    assert.match(String(bad.body.message), /"spec.nope" is not a known field selector/);
    const badLabel = await statusOf(core.listNamespacedPod({ namespace: 'sel', labelSelector: 'tier in (' }));
    assert.equal(badLabel.code, 400);
  });

  test('limit and continue page through a list', async () => {
    await core.createNamespace({ body: { metadata: { name: 'paging' } } });
    for (let i = 0; i < 7; i++) {
      await core.createNamespacedConfigMap({ namespace: 'paging', body: { metadata: { name: `cm-${i}` } } });
    }
    const seen: string[] = [];
    let cont: string | undefined;
    let pages = 0;
    do {
      const page = await core.listNamespacedConfigMap({ namespace: 'paging', limit: 3, _continue: cont });
      seen.push(...page.items.map((c) => c.metadata!.name!));
      cont = page.metadata!._continue;
      pages++;
    } while (cont);
    assert.equal(pages, 3);
    assert.deepEqual(
      seen.filter((n) => n.startsWith('cm-')),
      ['cm-0', 'cm-1', 'cm-2', 'cm-3', 'cm-4', 'cm-5', 'cm-6'],
    );
  });

  test('dryRun=All validates without storing', async () => {
    const r = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'dry' } },
      dryRun: 'All',
    });
    assert.equal(r.metadata!.name, 'dry');
    assert.equal(
      (await statusOf(core.readNamespacedConfigMap({ namespace: 'default', name: 'dry' }))).code,
      404,
    );
  });

  test('deleting a namespace removes its contents, then the namespace', async () => {
    await core.createNamespace({ body: { metadata: { name: 'doomed' } } });
    await core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'x' } } });
    await core.deleteNamespace({ name: 'doomed' });
    const { waitFor } = await import('../../support/wait.ts');
    await waitFor(
      'namespace doomed to disappear',
      async () => (await statusOf(core.readNamespace({ name: 'doomed' }))).code === 404,
    );
    const created = await statusOf(
      core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'y' } } }),
    );
    assert.equal(created.code, 404);
  });

  test('events.k8s.io/v1 and core/v1 Events are one storage in two shapes', async () => {
    const events = t.kc.makeApiClient(EventsV1Api);
    await events.createNamespacedEvent({
      namespace: 'default',
      body: {
        metadata: { name: 'shared-1' },
        eventTime: new Date(),
        reportingController: 'troupe.dev/test',
        reportingInstance: 'test-1',
        action: 'Released',
        reason: 'Released',
        type: 'Normal',
        note: 'released pod-1',
        regarding: { kind: 'Pod', name: 'pod-1', namespace: 'default' },
      },
    });
    const core = await t.kc
      .makeApiClient(CoreV1Api)
      .listNamespacedEvent({ namespace: 'default', fieldSelector: 'involvedObject.name=pod-1' });
    assert.equal(core.items.length, 1);
    assert.equal(core.items[0]!.message, 'released pod-1');
    assert.equal(core.items[0]!.involvedObject.kind, 'Pod');
  });

  test('requests without the token get 401 as a Status', async () => {
    const res = await t.request('GET', '/api/v1/pods', { token: null });
    assert.equal(res.status, 401);
    const body = res.json() as { kind: string; reason: string };
    assert.equal(body.kind, 'Status');
    assert.equal(body.reason, 'Unauthorized');
  });
});
