/** The Endpoints controller: a Service's pods as ready and not-ready addresses, removal with the Service. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CoreV1Api, type V1Endpoints } from '@kubernetes/client-node';
import { testClusterForSuite } from '../../support/cluster.ts';
import { webDeployment, webService } from '../../support/manifests.ts';
import { pythonScenario } from '../../support/python.ts';
import { waitFor } from '../../support/wait.ts';

/** The web app with one more pod that stays unready, behind a Service with a second port. */
const APP = `${webDeployment()}---
apiVersion: v1
kind: Pod
metadata: {name: slow, namespace: default, labels: {app: web}}
spec:
  containers:
  - name: nginx
    image: nginx
    ports: [{name: http, containerPort: 8080}]
    readinessProbe: {httpGet: {path: /, port: 8080}, initialDelaySeconds: 36000}
---
${webService({
  labels: { tier: 'front' },
  ports: [
    { name: 'http', port: 80, targetPort: 'http' },
    { name: 'admin', port: 9000, targetPort: 9000 },
  ],
})}`;

describe('Endpoints controller', () => {
  const c = testClusterForSuite({ nodes: 1, timeScale: 20 });

  test("a Service's Endpoints list its ready pods and, apart, the unready one", async () => {
    await c.kubectl(['apply', '-f', '-'], APP);
    const core = c.kc.makeApiClient(CoreV1Api);
    const ep: V1Endpoints = await waitFor('two ready addresses and one not ready', async () => {
      const e = await core
        .readNamespacedEndpoints({ name: 'web', namespace: 'default' })
        .catch(() => undefined);
      const s = e?.subsets?.[0];
      return s?.addresses?.length === 2 && s.notReadyAddresses?.length === 1 ? e : undefined;
    });
    assert.equal(ep.metadata?.labels?.tier, 'front', "the Service's labels");
    assert.equal(ep.subsets?.length, 1, 'one subset: every pod has both ports');
    assert.deepEqual(JSON.parse(JSON.stringify(ep.subsets?.[0]?.ports)), [
      { name: 'admin', port: 9000, protocol: 'TCP' },
      { name: 'http', port: 8080, protocol: 'TCP' },
    ]);
    const slow = ep.subsets?.[0]?.notReadyAddresses?.[0];
    assert.equal(slow?.targetRef?.name, 'slow');
    assert.ok(slow?.nodeName);
    const row = await c.kubectl(['get', 'endpoints', 'web', '--no-headers']);
    // formatEndpoints: each port's ready addresses in turn, three at most.
    assert.match(row, /^web\s+(\d+\.){3}\d+:9000,(\d+\.){3}\d+:9000,(\d+\.){3}\d+:8080 \+ 1 more\.\.\.\s+/);
  });

  test('the Python client reads the Endpoints the controller keeps', async () => {
    await c.kubectl(['create', 'namespace', 'pyep']);
    assert.deepEqual(await pythonScenario('endpoints', c.kubeconfigPath, 'pyep'), {
      ports: [['web', 8080]],
      ready: 1,
    });
  });

  test('scaling down and deleting the Service follow', async () => {
    await c.kubectl(['scale', 'deployment', 'web', '--replicas=1']);
    await c.kubectl(['delete', 'pod', 'slow', '--wait=false']);
    const core = c.kc.makeApiClient(CoreV1Api);
    await waitFor('one address left', async () => {
      const e = await core.readNamespacedEndpoints({ name: 'web', namespace: 'default' });
      return e.subsets?.[0]?.addresses?.length === 1 && !e.subsets?.[0]?.notReadyAddresses;
    });
    await c.kubectl(['delete', 'service', 'web']);
    await waitFor('Endpoints removed', async () => {
      const r = await c.kubectlResult(['get', 'endpoints', 'web']);
      return r.code !== 0 && /not found/.test(r.stderr);
    });
  });
});
