/**
 * The PodSequence controller's metrics, scraped from the manager's /metrics over HTTP
 * while it runs against the embedded API server, the test standing in for the kubelet.
 */

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { PodSequence } from '../../../src/apis/scheduling.example.com/v1alpha1.ts';
import { GVR } from '../../../src/cluster/client.ts';
import type { Pod } from '../../../src/controllers/podsequence/objects.ts';
import type { Manager } from '../../../src/runtime/index.ts';
import { scrapeUntil } from '../../runtime/scrape.ts';
import { waitFor } from '../../support/wait.ts';
import { gatedPod, type Harness, PODSEQ_GVR, startHarness } from './harness.ts';

const NS = 'default';
const CLUSTER = { scope: 'Cluster' };

describe('podsequence metrics', () => {
  let h: Harness;
  let manager: Manager;

  before(async () => {
    h = await startHarness();
    manager = await h.startController({}, { healthProbeAddress: '127.0.0.1:0' });
  });
  after(() => h?.close());

  const released = (name: string) => {
    const pod = h.cluster.get(GVR.pods, NS, name) as Pod | undefined;
    return pod !== undefined && (pod.spec?.schedulingGates ?? []).length === 0;
  };

  test('sequences by phase, pods released and the release latency of each following group', async () => {
    // The pods exist before the sequence, so the first reconcile releases the first group whole.
    for (const p of ['db-1', 'db-2', 'app']) await h.cluster.create(GVR.pods, gatedPod(p));
    const seq: PodSequence = {
      apiVersion: 'scheduling.example.com/v1alpha1',
      kind: 'PodSequence',
      metadata: { name: 'tiers', namespace: NS },
      spec: { podGroups: [{ pods: ['db-1', 'db-2'] }, { pods: ['app'] }] },
    };
    await h.cluster.create(PODSEQ_GVR, seq);

    let s = await scrapeUntil(
      manager,
      'the first group released and the sequence in progress',
      (s) =>
        s.value('troupe_podsequence_sequences', { phase: 'InProgress' }) === 1 &&
        s.value('troupe_podsequence_pods_released_total', CLUSTER) === 2,
    );
    for (const phase of ['Pending', 'Completed', 'Failed', 'Unknown'])
      assert.equal(s.value('troupe_podsequence_sequences', { phase }), 0, phase);
    // The first group follows no other: its release is not a step of the sequence.
    assert.equal(s.value('troupe_podsequence_release_latency_seconds_count', CLUSTER), 0);
    assert.equal(s.value('troupe_podsequence_pods_released_total', { scope: 'Node' }), 0);

    await h.kubelet.ready('db-1', NS);
    await h.kubelet.ready('db-2', NS);
    await waitFor('app released', () => released('app'));
    s = await scrapeUntil(
      manager,
      'the second group counted',
      (s) => s.value('troupe_podsequence_pods_released_total', CLUSTER) === 3,
    );
    assert.equal(s.value('troupe_podsequence_release_latency_seconds_count', CLUSTER), 1);
    assert.ok((s.value('troupe_podsequence_release_latency_seconds_sum', CLUSTER) ?? 0) > 0);
    assert.equal(s.value('troupe_podsequence_release_latency_seconds_bucket', { ...CLUSTER, le: '+Inf' }), 1);

    await h.kubelet.ready('app', NS);
    s = await scrapeUntil(
      manager,
      'the sequence completed',
      (s) => s.value('troupe_podsequence_sequences', { phase: 'Completed' }) === 1,
    );
    assert.equal(s.value('troupe_podsequence_sequences', { phase: 'InProgress' }), 0);
    assert.equal(s.value('troupe_podsequence_pods_released_total', CLUSTER), 3);
  });
});
