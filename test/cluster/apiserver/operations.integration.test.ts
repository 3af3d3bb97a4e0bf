import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiException, CoreV1Api } from '@kubernetes/client-node';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';

describe('operations, status split and fault injection', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(() => t.close());

  test('health endpoints answer without a token; /metrics counts requests', async () => {
    for (const p of ['/healthz', '/livez', '/readyz', '/version']) {
      assert.equal((await t.request('GET', p, { token: null })).status, 200, p);
    }
    assert.equal((await t.request('GET', '/metrics', { token: null })).status, 401);
    await t.request('GET', '/api/v1/namespaces');
    const m = await t.request('GET', '/metrics');
    assert.match(
      m.text,
      /apiserver_request_total\{verb="LIST",group="",version="v1",resource="namespaces",subresource="",code="200"\} \d+/,
    );
    assert.match(m.text, /apiserver_request_duration_seconds_bucket/);
  });

  test('pod status is ignored on the main endpoint and spec on /status', async () => {
    const core = t.kc.makeApiClient(CoreV1Api);
    await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'split' },
        spec: { containers: [{ name: 'c', image: 'i' }] },
        status: { phase: 'Running' },
      },
    });
    const created = await core.readNamespacedPod({ namespace: 'default', name: 'split' });
    assert.equal(created.status!.phase, 'Pending');
    await core.patchNamespacedPodStatus({
      namespace: 'default',
      name: 'split',
      body: [{ op: 'replace', path: '/status/phase', value: 'Running' }],
    });
    await core.patchNamespacedPod({
      namespace: 'default',
      name: 'split',
      body: [{ op: 'replace', path: '/status/phase', value: 'Failed' }],
    });
    const got = await core.readNamespacedPod({ namespace: 'default', name: 'split' });
    assert.equal(got.status!.phase, 'Running');
  });

  test('pod spec is immutable except what Kubernetes allows', async () => {
    const core = t.kc.makeApiClient(CoreV1Api);
    await core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'imm' }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    });
    await core.patchNamespacedPod({
      namespace: 'default',
      name: 'imm',
      body: [{ op: 'replace', path: '/spec/containers/0/image', value: 'j' }],
    });
    try {
      await core.patchNamespacedPod({
        namespace: 'default',
        name: 'imm',
        body: [{ op: 'replace', path: '/spec/restartPolicy', value: 'Never' }],
      });
      assert.fail('expected 422');
    } catch (err) {
      assert.ok(err instanceof ApiException);
      assert.equal(err.code, 422);
      assert.match(String(err.body), /pod updates may not change fields other than/);
    }
  });

  test('while gated, nodeSelector may gain entries (KEP-3838); once ungated it may not', async () => {
    const core = t.kc.makeApiClient(CoreV1Api);
    await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'narrow' },
        spec: { schedulingGates: [{ name: 'g' }], containers: [{ name: 'c', image: 'i' }] },
      },
    });
    await core.patchNamespacedPod({
      namespace: 'default',
      name: 'narrow',
      body: [{ op: 'add', path: '/spec/nodeSelector', value: { zone: 'a' } }],
    });
    await core.patchNamespacedPod({
      namespace: 'default',
      name: 'narrow',
      body: [{ op: 'remove', path: '/spec/schedulingGates' }],
    });
    try {
      await core.patchNamespacedPod({
        namespace: 'default',
        name: 'narrow',
        body: [{ op: 'add', path: '/spec/nodeSelector/rack', value: '1' }],
      });
      assert.fail('expected 422');
    } catch (err) {
      assert.ok(err instanceof ApiException);
      assert.equal(err.code, 422);
    }
  });

  test('fault injection fails a share of requests with 500, 429 (Retry-After) and 409', async () => {
    t.server.faults.configure({ errorRate: 1, errorCodes: [429] });
    const r = await t.request('GET', '/api/v1/namespaces/default/configmaps');
    assert.equal(r.status, 429);
    assert.equal(r.headers['retry-after'], '1');
    t.server.faults.configure({ errorRate: 1, errorCodes: [500] });
    assert.equal((await t.request('GET', '/api/v1/namespaces/default/configmaps')).status, 500);
    t.server.faults.configure({ errorRate: 1, errorCodes: [409] });
    assert.equal((await t.request('GET', '/api/v1/namespaces/default/configmaps')).status, 409);
    t.server.faults.stop();
    assert.equal((await t.request('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
  });

  test('expiring history makes a resume 410', async () => {
    const rv = t.server.api.store.currentRv;
    await t.request('POST', '/api/v1/namespaces/default/configmaps', {
      body: JSON.stringify({ metadata: { name: 'exp' } }),
    });
    t.server.api.store.expireHistory();
    const r = await t.request(
      'GET',
      `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${rv}&timeoutSeconds=1`,
    );
    assert.equal(r.status, 200);
    const first = JSON.parse(r.text.split('\n')[0]!) as { type: string; object: { code: number } };
    assert.equal(first.type, 'ERROR');
    assert.equal(first.object.code, 410);
  });
});
