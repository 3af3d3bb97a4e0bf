/**
 * PodDisruptionBudgets on the embedded cluster: the disruption controller's status, and
 * evictions (`kubectl drain`, the client's eviction call) refused with 429 while a budget
 * allows no disruption.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CoreV1Api, PolicyV1Api } from '@kubernetes/client-node';
import { testClusterForSuite } from '../../support/cluster.ts';
import { waitFor } from '../../support/wait.ts';

const APP = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: nginx}]
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {app: web}}
            topologyKey: kubernetes.io/hostname
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: web}}
`;

describe('PodDisruptionBudgets and eviction', () => {
  const c = testClusterForSuite({ nodes: 2, timeScale: 20 });

  test('the disruption controller reports healthy pods and allowed disruptions', async () => {
    await c.kubectl(['apply', '-f', '-'], APP);
    const policy = c.kc.makeApiClient(PolicyV1Api);
    const pdb = await waitFor('budget counts two healthy pods', async () => {
      const p = await policy.readNamespacedPodDisruptionBudget({ name: 'web', namespace: 'default' });
      return p.status?.currentHealthy === 2 ? p : undefined;
    });
    assert.equal(pdb.status?.desiredHealthy, 2);
    assert.equal(pdb.status?.expectedPods, 2);
    assert.equal(pdb.status?.disruptionsAllowed, 0);
    assert.equal(pdb.status?.conditions?.[0]?.reason, 'InsufficientPods');
    const row = await c.kubectl(['get', 'pdb', 'web', '--no-headers']);
    assert.match(row, /^web\s+2\s+N\/A\s+0\s+/);
  });

  test('an eviction the budget forbids answers 429 with the budget as its cause; kubectl drain waits', async () => {
    const core = c.kc.makeApiClient(CoreV1Api);
    const pods = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' });
    const victim = pods.items[0]!;
    const refused = await core
      .createNamespacedPodEviction({
        name: victim.metadata!.name!,
        namespace: 'default',
        body: { metadata: { name: victim.metadata!.name!, namespace: 'default' } },
      })
      .then(
        () => undefined,
        (err: { code?: number; body?: string }) => err,
      );
    assert.equal(refused?.code, 429);
    const status = JSON.parse(refused!.body!);
    assert.equal(status.message, "Cannot evict pod as it would violate the pod's disruption budget.");
    assert.deepEqual(status.details.causes, [
      {
        reason: 'DisruptionBudget',
        message: 'The disruption budget web needs 2 healthy pods and has 2 currently',
      },
    ]);
    const node = victim.spec!.nodeName!;
    const drain = await c.kubectlResult(['drain', node, '--ignore-daemonsets', '--timeout=3s']);
    assert.notEqual(drain.code, 0);
    assert.match(
      drain.stderr + drain.stdout,
      /Cannot evict pod as it would violate the pod's disruption budget/,
    );
    assert.ok(
      (await core.readNamespacedPod({ name: victim.metadata!.name!, namespace: 'default' })).metadata,
    );
  });

  test('once the budget allows one disruption, drain evicts the pod and the budget counts it', async () => {
    await c.kubectl(['patch', 'pdb', 'web', '--type=merge', '-p', '{"spec":{"minAvailable":1}}']);
    const policy = c.kc.makeApiClient(PolicyV1Api);
    await waitFor('one disruption allowed', async () => {
      const p = await policy.readNamespacedPodDisruptionBudget({ name: 'web', namespace: 'default' });
      return p.status?.disruptionsAllowed === 1 && p.status.observedGeneration === p.metadata?.generation;
    });
    const core = c.kc.makeApiClient(CoreV1Api);
    const pods = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=web' });
    const node = pods.items[0]!.spec!.nodeName!;
    const out = await c.kubectl(['drain', node, '--ignore-daemonsets', '--timeout=60s']);
    assert.match(out, /evicted/);
    assert.match(out, new RegExp(`node/${node} drained`));
  });
});
