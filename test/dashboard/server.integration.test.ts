/**
 * The dashboard server over HTTP, without a browser: the token, the read-only surface, the
 * server-sent events stream, kinds appearing and disappearing with their CRDs, and kinds the
 * manager may not read staying hidden (without holding the manager's readiness down).
 */

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createParser } from 'eventsource-parser';
import { type ApiServerHandle, startApiServer } from '../../src/cluster/apiserver/server.ts';
import { type DashboardHandle, parseAddress, startDashboard } from '../../src/dashboard/index.ts';
import type { Snapshot } from '../../src/dashboard/view-model.ts';
import { type KubeObject, kubeConfigFromString, Manager, silentLogger } from '../../src/runtime/index.ts';
import { waitFor } from '../support/wait.ts';
import { loadYaml } from './stack.ts';

function manager(kubeconfig: string, healthProbeAddress: string | false = false): Manager {
  return new Manager({
    kubeConfig: kubeConfigFromString(kubeconfig),
    healthProbeAddress,
    processMetrics: false,
    gracefulShutdownMs: 2_000,
    logger: silentLogger(),
  });
}

/** Reads snapshots from /api/events as they arrive. */
function subscribe(dash: DashboardHandle): { snapshots: Snapshot[]; close(): void } {
  const snapshots: Snapshot[] = [];
  const abort = new AbortController();
  const parser = createParser({
    onEvent: (e) => {
      if (e.event === 'snapshot') snapshots.push(JSON.parse(e.data) as Snapshot);
    },
  });
  void fetch(`${dash.baseUrl}api/events`, {
    headers: { authorization: `Bearer ${dash.token}` },
    signal: abort.signal,
  })
    .then(async (res) => {
      const decoder = new TextDecoder();
      for await (const chunk of res.body!) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
    })
    .catch(() => {});
  return { snapshots, close: () => abort.abort() };
}

function kindStatus(s: Snapshot | undefined, kind: string): string | undefined {
  return s?.kinds.find((k) => k.kind === kind)?.status;
}

describe('dashboard server', () => {
  let server: ApiServerHandle;
  let mgr: Manager;
  let dash: DashboardHandle;

  before(async () => {
    server = await startApiServer({ port: 0, tls: false });
    mgr = manager(server.kubeconfig);
    await mgr.start();
    dash = await startDashboard({ manager: mgr, token: 'fixed-token-for-test', minIntervalMs: 50 });
  });

  after(async () => {
    await dash?.stop();
    await mgr?.stop();
    await server?.close();
  });

  test('listens on loopback by default and prints a URL carrying the token', () => {
    assert.equal(dash.host, '127.0.0.1');
    assert.ok(dash.port > 0);
    assert.equal(dash.url, `http://127.0.0.1:${dash.port}/?token=fixed-token-for-test`);
  });

  test('nothing is served without the token', async () => {
    for (const path of ['', 'api/snapshot', 'api/events', 'app.js']) {
      const res = await fetch(`${dash.baseUrl}${path}`);
      assert.equal(res.status, 401, path);
      await res.body?.cancel();
    }
    const wrong = await fetch(`${dash.baseUrl}api/snapshot`, { headers: { authorization: 'Bearer nope' } });
    assert.equal(wrong.status, 401);
    const wrongQuery = await fetch(`${dash.baseUrl}?token=nope`, { redirect: 'manual' });
    assert.equal(wrongQuery.status, 401);
  });

  test('the token in the URL becomes an HttpOnly cookie and leaves the URL', async () => {
    const res = await fetch(dash.url, { redirect: 'manual' });
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), '/');
    const cookie = res.headers.get('set-cookie') ?? '';
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Strict/);
    const page = await fetch(dash.baseUrl, { headers: { cookie: cookie.split(';')[0]! } });
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<script type="module" src="app.js">/);
    const csp = page.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline/);
  });

  test('it is read-only', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const res = await fetch(`${dash.baseUrl}api/snapshot`, {
        method,
        headers: { authorization: `Bearer ${dash.token}` },
      });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.get('allow'), 'GET, HEAD');
    }
  });

  test('the event stream pushes a snapshot at once and again when the cluster changes', async () => {
    const stream = subscribe(dash);
    try {
      await waitFor('a first snapshot with pods', () => stream.snapshots.find((s) => s.pods));
      await mgr.client.create({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'lonely', namespace: 'default' },
        spec: { containers: [{ name: 'c', image: 'busybox' }] },
      });
      // No data plane here: the pod stays unscheduled, and the page hears about it.
      const snap = await waitFor('a snapshot with the new pod', () =>
        stream.snapshots.find((s) => s.pods?.stuck.some((p) => p.name === 'lonely')),
      );
      assert.equal(snap.pods?.byState.pending, 1);
    } finally {
      stream.close();
    }
  });

  test('a kind appears when its CRD is installed and disappears when it is removed', async () => {
    const stream = subscribe(dash);
    try {
      await waitFor('a first snapshot', () => stream.snapshots.length > 0);
      assert.equal(kindStatus(stream.snapshots.at(-1), 'AppWrapper'), 'not-installed');
      assert.equal(stream.snapshots.at(-1)?.appWrappers, undefined);
      const [crd] = await loadYaml('config/crd/appwrapper-crd.yaml');
      await mgr.client.create(crd!);
      const shown = await waitFor('AppWrappers to be shown', () =>
        stream.snapshots.find((s) => kindStatus(s, 'AppWrapper') === 'shown'),
      );
      assert.deepEqual(shown.appWrappers, { items: [], omitted: 0 });
      await mgr.client.delete(crd as KubeObject);
      await waitFor('AppWrappers to be hidden again', () => {
        const last = stream.snapshots.at(-1);
        return kindStatus(last, 'AppWrapper') === 'not-installed' && last?.appWrappers === undefined;
      });
    } finally {
      stream.close();
    }
  });
});

describe('dashboard with RBAC', () => {
  test('kinds the manager may not list are hidden, and the manager stays ready', async () => {
    const server = await startApiServer({ port: 0, tls: false, authorizationMode: 'RBAC' });
    const admin = manager(server.kubeconfig);
    // Pods and nodes only: no Jobs, no CRDs.
    for (const obj of [
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'dashboard-viewer' },
        rules: [{ apiGroups: [''], resources: ['pods', 'nodes'], verbs: ['get', 'list', 'watch'] }],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'dashboard-viewer' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'dashboard-viewer' },
        subjects: [{ kind: 'ServiceAccount', name: 'viewer', namespace: 'default' }],
      },
    ]) {
      await admin.client.create(obj);
    }
    const mgr = manager(
      server.kubeconfigFor(server.mintServiceAccountToken('default', 'viewer')),
      '127.0.0.1:0',
    );
    await mgr.start();
    const dash = await startDashboard({ manager: mgr, minIntervalMs: 50 });
    try {
      const snap = await waitFor('every kind to be decided', async () => {
        const res = await fetch(`${dash.baseUrl}api/snapshot`, {
          headers: { authorization: `Bearer ${dash.token}` },
        });
        const s = (await res.json()) as Snapshot;
        return s.kinds.every((k) => k.status !== 'starting') ? s : undefined;
      });
      assert.equal(kindStatus(snap, 'Pod'), 'shown');
      assert.equal(kindStatus(snap, 'Node'), 'shown');
      assert.equal(kindStatus(snap, 'Job'), 'forbidden');
      assert.equal(snap.offloads, undefined);
      const ready = await fetch(`${mgr.healthServer!.url}/readyz`);
      assert.equal(ready.status, 200, await ready.text());
    } finally {
      await dash.stop();
      await mgr.stop();
      await admin.stop();
      await server.close();
    }
  });
});

test('bind addresses are host:port, [v6]:port, :port or a bare port', () => {
  assert.deepEqual(parseAddress('127.0.0.1:8082'), { host: '127.0.0.1', port: 8082 });
  assert.deepEqual(parseAddress('[::1]:0'), { host: '::1', port: 0 });
  assert.deepEqual(parseAddress(':9000'), { host: '', port: 9000 });
  assert.deepEqual(parseAddress('9000'), { host: '', port: 9000 });
  assert.throws(() => parseAddress('localhost'), /not host:port/);
  assert.throws(() => parseAddress('h:70000'), /bad port/);
});
