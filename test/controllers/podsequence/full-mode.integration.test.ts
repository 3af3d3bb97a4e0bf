/**
 * Full mode against the embedded API server: node taints per group, the mutating webhook
 * (served by the runtime's webhook server, registered with the API server) injecting
 * tolerations and gates, and taints lifted when the sequence is deleted.
 */

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { PodSequence } from '../../../src/apis/scheduling.example.com/v1alpha1.ts';
import { GVR } from '../../../src/cluster/client.ts';
import {
  podSequenceWebhookConfiguration,
  registerPodSequenceWebhooks,
  TAINT_FINALIZER,
  taintKey,
} from '../../../src/controllers/podsequence/index.ts';
import type { Node, Pod } from '../../../src/controllers/podsequence/objects.ts';
import { waitFor } from '../../support/wait.ts';
import { type Harness, OrderChecker, PODSEQ_GVR, startHarness } from './harness.ts';

let h: Harness;
const WEBHOOKS = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  resource: 'mutatingwebhookconfigurations',
};

before(async () => {
  h = await startHarness();
  const opts = { mode: 'full' as const };
  const mgr = await h.startController(opts, { webhook: { port: 0, host: '127.0.0.1' } }, (m) =>
    registerPodSequenceWebhooks(m, opts),
  );
  await h.cluster.create(
    WEBHOOKS,
    podSequenceWebhookConfiguration({
      url: `https://127.0.0.1:${mgr.webhooks!.port}`,
      caBundle: mgr.webhooks!.caBundle,
      excludeNamespaces: ['kube-system'],
    }),
  );
});
after(() => h?.close());

const getPod = (name: string) => h.cluster.get(GVR.pods, 'default', name) as Pod | undefined;
const getNode = (name: string) => h.cluster.get(GVR.nodes, '', name) as Node | undefined;
const taintKeys = (name: string) => (getNode(name)?.spec?.taints ?? []).map((t) => t.key);

test('taints, tolerations, injected gates and cleanup', async () => {
  const seq: PodSequence = {
    apiVersion: 'scheduling.example.com/v1alpha1',
    kind: 'PodSequence',
    metadata: { name: 'gpu', namespace: 'default' },
    spec: {
      scope: 'Node',
      podGroups: [
        { name: 'Device Plugin', podSelector: { matchLabels: { app: 'gpu-plugin' } } },
        { name: 'GPU Workload', podSelector: { matchLabels: { app: 'ml-training' } } },
      ],
    },
  };
  const checker = new OrderChecker(h.cluster, seq);
  await h.cluster.create(PODSEQ_GVR, seq);
  const blocked = taintKey('default', 'gpu', 1);
  await waitFor('every node tainted for group 2', () =>
    ['node-a', 'node-b', 'node-c'].every((n) => taintKeys(n).includes(blocked)),
  );
  const stored = h.cluster.get(PODSEQ_GVR, 'default', 'gpu') as PodSequence;
  assert.ok(stored.metadata.finalizers?.includes(TAINT_FINALIZER));

  // The DaemonSet's template learns to tolerate the later group's taint, so that the
  // DaemonSet controller still places its pods on the tainted nodes.
  const ds = await h.cluster.create(GVR.daemonsets, {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'gpu-plugin', namespace: 'default' },
    spec: {
      selector: { matchLabels: { app: 'gpu-plugin' } },
      template: {
        metadata: { labels: { app: 'gpu-plugin' } },
        spec: { containers: [{ name: 'p', image: 'plugin' }] },
      },
    },
  });
  const tolerations =
    (ds as unknown as { spec: { template: { spec: { tolerations?: { key?: string }[] } } } }).spec.template
      .spec.tolerations ?? [];
  assert.deepEqual(
    tolerations.map((t) => t.key),
    [blocked],
  );

  // Pods without gates in their templates: the webhook adds the tolerations and the gate.
  const plain = (name: string, labels: Record<string, string>, pinned?: string): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels },
    spec: {
      containers: [{ name: 'c', image: 'x' }],
      ...(pinned
        ? {
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: [
                    { matchFields: [{ key: 'metadata.name', operator: 'In', values: [pinned] }] },
                  ],
                },
              },
            },
          }
        : {}),
    },
  });
  await h.cluster.create(GVR.pods, plain('plugin-a', { app: 'gpu-plugin' }, 'node-a'));
  await h.cluster.create(GVR.pods, plain('plugin-b', { app: 'gpu-plugin' }, 'node-b'));
  await h.cluster.create(GVR.pods, plain('train-1', { app: 'ml-training' }));
  assert.deepEqual(
    getPod('plugin-a')!.spec!.tolerations!.filter((t) => t.key === blocked),
    [{ key: blocked, operator: 'Exists', effect: 'NoSchedule' }],
  );
  const train = getPod('train-1')!;
  assert.ok(
    train.spec!.schedulingGates!.some((g) => g.name === 'podsequence.example.com/sequence-gate'),
    'gate injected',
  );
  assert.equal(train.status?.conditions?.find((c) => c.type === 'PodScheduled')?.reason, 'SchedulingGated');

  await waitFor(
    'plugins running',
    () => getPod('plugin-a')?.spec?.nodeName && getPod('plugin-b')?.spec?.nodeName,
  );
  assert.ok((getPod('train-1')!.spec!.schedulingGates ?? []).length > 0);
  await h.kubelet.ready('plugin-a');
  await waitFor('node-a untainted', () => !taintKeys('node-a').includes(blocked));
  assert.ok(taintKeys('node-b').includes(blocked));
  assert.ok(taintKeys('node-c').includes(blocked));
  await waitFor('train-1 released and bound to node-a', () => getPod('train-1')?.spec?.nodeName === 'node-a');

  // Complete: its taints go from every node, node-c too, which never ran one of its pods.
  await h.kubelet.ready('plugin-b');
  await h.kubelet.ready('train-1');
  await waitFor(
    'Completed',
    () =>
      (h.cluster.get(PODSEQ_GVR, 'default', 'gpu') as PodSequence | undefined)?.status?.phase === 'Completed',
  );
  await waitFor('taints lifted on completion', () =>
    ['node-a', 'node-b', 'node-c'].every((n) => !taintKeys(n).includes(blocked)),
  );

  await h.cluster.delete(PODSEQ_GVR, 'default', 'gpu');
  await waitFor('sequence gone', () => !h.cluster.get(PODSEQ_GVR, 'default', 'gpu'));
  for (const n of ['node-a', 'node-b', 'node-c'])
    assert.ok(!taintKeys(n).includes(blocked), `${n} keeps no taint`);
  checker.stop();
  assert.deepEqual(checker.violations, []);
});
