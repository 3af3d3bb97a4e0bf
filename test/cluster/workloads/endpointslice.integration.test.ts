/** The EndpointSlice controller: a Service's ready pods, ports resolved by name, readiness and removal. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DiscoveryV1Api } from '@kubernetes/client-node';
import { testClusterForSuite } from '../../support/cluster.ts';
import { webDeployment, webService } from '../../support/manifests.ts';
import { waitFor } from '../../support/wait.ts';

const APP = `${webDeployment()}---\n${webService()}`;

describe('EndpointSlice controller', () => {
  const c = testClusterForSuite({ nodes: 1, timeScale: 20 });

  test("a Service's slice lists its ready pods with the named target port", async () => {
    await c.kubectl(['apply', '-f', '-'], APP);
    const discovery = c.kc.makeApiClient(DiscoveryV1Api);
    const slice = await waitFor('two ready endpoints', async () => {
      const list = await discovery.listNamespacedEndpointSlice({
        namespace: 'default',
        labelSelector: 'kubernetes.io/service-name=web',
      });
      const s = list.items[0];
      return s?.endpoints?.filter((e) => e.conditions?.ready).length === 2 ? s : undefined;
    });
    assert.equal(slice.addressType, 'IPv4');
    assert.equal(
      slice.metadata?.labels?.['endpointslice.kubernetes.io/managed-by'],
      'endpointslice-controller.k8s.io',
    );
    assert.equal(slice.metadata?.ownerReferences?.[0]?.kind, 'Service');
    assert.deepEqual(JSON.parse(JSON.stringify(slice.ports)), [
      { name: 'http', port: 8080, protocol: 'TCP' },
    ]);
    assert.equal(slice.endpoints?.[0]?.targetRef?.kind, 'Pod');
    const row = await c.kubectl([
      'get',
      'endpointslices',
      '-l',
      'kubernetes.io/service-name=web',
      '--no-headers',
    ]);
    assert.match(row, /^web-\S+\s+IPv4\s+8080\s+\S+,\S+\s+/);
  });

  test('scaling the pods and deleting the Service follow', async () => {
    await c.kubectl(['scale', 'deployment', 'web', '--replicas=1']);
    const discovery = c.kc.makeApiClient(DiscoveryV1Api);
    await waitFor('one endpoint left', async () => {
      const list = await discovery.listNamespacedEndpointSlice({
        namespace: 'default',
        labelSelector: 'kubernetes.io/service-name=web',
      });
      return list.items[0]?.endpoints?.filter((e) => !e.conditions?.terminating).length === 1;
    });
    await c.kubectl(['delete', 'service', 'web']);
    await waitFor('slice removed', async () => {
      const list = await discovery.listNamespacedEndpointSlice({
        namespace: 'default',
        labelSelector: 'kubernetes.io/service-name=web',
      });
      return list.items.length === 0;
    });
  });
});
