/**
 * ControllerRevisions for DaemonSets and StatefulSets: `kubectl rollout history` lists one
 * revision per template with its change cause, and `kubectl rollout undo` brings the previous
 * template back as the newest revision — as for Deployments.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AppsV1Api } from '@kubernetes/client-node';
import { startTestCluster, type TestCluster } from '../../support/cluster.ts';
import { waitFor } from '../../support/wait.ts';

const SETS = `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: default}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: "busybox:1.36"}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  replicas: 1
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: "postgres:16"}]}
`;

describe('rollout history and undo for DaemonSets and StatefulSets', () => {
  let c: TestCluster;
  before(async () => {
    c = await startTestCluster({ nodes: 1, timeScale: 20 });
    await c.kubectl(['apply', '-f', '-'], SETS);
  });
  after(() => c.close());

  for (const [kind, name, container, from, to] of [
    ['daemonset', 'agent', 'agent', 'busybox:1.36', 'busybox:1.37'],
    ['statefulset', 'db', 'db', 'postgres:16', 'postgres:17'],
  ] as const) {
    test(`${kind}: history lists each template, undo restores the previous one`, async () => {
      const apps = c.kc.makeApiClient(AppsV1Api);
      await waitFor(`${kind} revision 1`, async () => {
        const revs = await apps.listNamespacedControllerRevision({ namespace: 'default' });
        return revs.items.find((r) => r.metadata?.ownerReferences?.[0]?.name === name && r.revision === 1);
      });
      await c.kubectl(['set', 'image', `${kind}/${name}`, `${container}=${to}`]);
      await c.kubectl(['annotate', kind, name, `kubernetes.io/change-cause=upgrade to ${to}`]);
      const two = await waitFor(`${kind} revision 2`, async () => {
        const revs = await apps.listNamespacedControllerRevision({ namespace: 'default' });
        return revs.items.find((r) => r.metadata?.ownerReferences?.[0]?.name === name && r.revision === 2);
      });
      assert.equal(two.metadata?.ownerReferences?.[0]?.controller, true);
      const history = await c.kubectl(['rollout', 'history', `${kind}/${name}`]);
      assert.match(history, /REVISION\s+CHANGE-CAUSE/);
      assert.match(history, /^1\s+<none>$/m);
      assert.match(history, /^2\s+/m);
      const detail = await c.kubectl(['rollout', 'history', `${kind}/${name}`, '--revision=1']);
      assert.match(detail, new RegExp(`Image:\\s+${from.replace('.', '\\.')}`));

      const undo = await c.kubectl(['rollout', 'undo', `${kind}/${name}`]);
      assert.match(undo, /rolled back/);
      const image = await c.kubectl([
        'get',
        kind,
        name,
        '-o',
        'jsonpath={.spec.template.spec.containers[0].image}',
      ]);
      assert.equal(image, from);
      await waitFor(`${kind} revision 3 is the first template`, async () => {
        const out = await c.kubectl(['rollout', 'history', `${kind}/${name}`]);
        return /^2\s+/m.test(out) && /^3\s+/m.test(out) && !/^1\s+/m.test(out);
      });
    });
  }
});
