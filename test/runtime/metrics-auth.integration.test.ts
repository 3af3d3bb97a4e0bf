/**
 * `metricsSecure` (what `troupe run` turns on, as kubebuilder's scaffold does): /metrics over
 * HTTPS on its own server, for a bearer token a TokenReview authenticates and a
 * SubjectAccessReview allows `get` on `/metrics`; the probe server no longer serves it.
 * Answers as controller-runtime's `filters.WithAuthenticationAndAuthorization`.
 */
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { after, before, describe, test } from 'node:test';
import { Manager } from '../../src/runtime/manager.ts';
import { startCluster, type TestCluster } from './cluster.ts';

function get(url: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const r = request(
      url,
      // The generated certificate is the manager's own; what is checked here is who may read.
      { rejectUnauthorized: false, headers: token ? { Authorization: `Bearer ${token}` } : {} },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    r.on('error', reject);
    r.end();
  });
}

describe('secure metrics (kubebuilder --metrics-secure)', () => {
  let cluster: TestCluster;
  let mgr: Manager;

  before(async () => {
    cluster = await startCluster();
    mgr = new Manager({
      kubeConfig: cluster.newKubeConfig(),
      healthProbeAddress: '127.0.0.1:0',
      metricsAddress: '127.0.0.1:0',
      metricsSecure: true,
    });
    await mgr.start();
  });
  after(async () => {
    await mgr.stop();
    await cluster.close();
  });

  test('serves HTTPS on its own server, bound where it says', () => {
    const m = mgr.metricsServer;
    assert.ok(m);
    assert.match(m.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(m.boundAddress, `127.0.0.1:${m.port}`);
    assert.notEqual(m.port, mgr.healthServer!.port);
  });

  test('no token is 401; a token that is not allowed is 403; the metrics-reader role lets it read', async () => {
    const url = `${mgr.metricsServer!.url}/metrics`;
    assert.deepEqual(await get(url), { status: 401, body: 'Unauthorized\n' });
    assert.deepEqual(await get(url, 'not-a-token'), { status: 401, body: 'Unauthorized\n' });
    const client = cluster.client;
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'monitoring' } });
    await client.create({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'prometheus', namespace: 'monitoring' },
    });
    const token = cluster.server.mintServiceAccountToken('monitoring', 'prometheus');
    assert.deepEqual(await get(url, token), {
      status: 403,
      body: 'Authorization denied for user system:serviceaccount:monitoring:prometheus\n',
    });
    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'metrics-reader' },
      rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
    });
    await client.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'prometheus-metrics' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'metrics-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'prometheus', namespace: 'monitoring' }],
    });
    const ok = await get(url, token);
    assert.equal(ok.status, 200, ok.body);
    assert.match(ok.body, /^# HELP /m);
    assert.match(ok.body, /controller_runtime_/);
  });

  test('the probe server answers probes but not /metrics', async () => {
    const probes = mgr.healthServer!.url;
    assert.equal((await fetch(`${probes}/healthz`)).status, 200);
    assert.equal((await fetch(`${probes}/metrics`)).status, 404);
  });
});
