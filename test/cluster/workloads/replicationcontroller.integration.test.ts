/**
 * The ReplicationController controller (the ReplicaSet controller behind upstream's adapter):
 * replicas kept, `kubectl scale rc`, the scale subresource with its label-map selector.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { startTestCluster, type TestCluster } from '../../support/cluster.ts';
import { waitFor } from '../../support/wait.ts';

const RC = `apiVersion: v1
kind: ReplicationController
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: nginx, image: nginx}]}
`;

describe('ReplicationController controller', () => {
  let c: TestCluster;
  before(async () => {
    c = await startTestCluster({ nodes: 1, timeScale: 20 });
  });
  after(() => c.close());

  test('keeps spec.replicas ready pods, selector defaulted from the template', async () => {
    await c.kubectl(['apply', '-f', '-'], RC);
    const core = c.kc.makeApiClient(CoreV1Api);
    const rc = await waitFor('two ready replicas', async () => {
      const r = await core.readNamespacedReplicationController({ name: 'web', namespace: 'default' });
      return r.status?.readyReplicas === 2 ? r : undefined;
    });
    assert.deepEqual(rc.spec?.selector, { app: 'web' });
    const pods = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' });
    assert.equal(pods.items.length, 2);
    assert.equal(pods.items[0]!.metadata?.ownerReferences?.[0]?.kind, 'ReplicationController');
    const row = await c.kubectl(['get', 'rc', 'web', '--no-headers']);
    assert.match(row, /^web\s+2\s+2\s+2\s+/);
  });

  test('kubectl scale rc and the scale subresource', async () => {
    await c.kubectl(['scale', 'rc', 'web', '--replicas=3']);
    const core = c.kc.makeApiClient(CoreV1Api);
    await waitFor('three ready replicas', async () => {
      const r = await core.readNamespacedReplicationController({ name: 'web', namespace: 'default' });
      return r.status?.readyReplicas === 3;
    });
    const scale = await core.readNamespacedReplicationControllerScale({ name: 'web', namespace: 'default' });
    assert.equal(scale.spec?.replicas, 3);
    assert.equal(scale.status?.replicas, 3);
    assert.equal(scale.status?.selector, 'app=web');
    await c.kubectl(['scale', 'rc', 'web', '--replicas=1']);
    await waitFor('one pod left', async () => {
      const pods = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' });
      return pods.items.filter((p) => !p.metadata?.deletionTimestamp).length === 1;
    });
  });
});
