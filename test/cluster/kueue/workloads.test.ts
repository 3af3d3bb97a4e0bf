/** Workload status changes and the scheduler's admission events, pure. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Workload } from '../../../src/cluster/kueue/api.ts';
import { admissionEvents, admit, requeue } from '../../../src/cluster/kueue/workloads.ts';

const admission = { clusterQueue: 'cluster-queue', podSetAssignments: [] };

function workload(created: string): Workload {
  return {
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'Workload',
    metadata: { name: 'w', namespace: 'default', creationTimestamp: created },
    spec: { podSets: [] },
  };
}

describe('admission events', () => {
  test("Kueue v0.19's wording: the wait since creation, in whole seconds", () => {
    const wl = workload('2026-01-01T00:00:00Z');
    const at = new Date('2026-01-01T00:00:42.400Z');
    admit(wl, admission, at);
    assert.deepEqual(admissionEvents(wl, at), {
      quotaReserved: 'Quota reserved in ClusterQueue cluster-queue, wait time since queued was 42s',
      admitted: 'Admitted by ClusterQueue cluster-queue, wait time since reservation was 0s',
    });
  });

  test('a requeued workload waits since its Requeued transition; halves round to even as Go prints them', () => {
    const wl = workload('2026-01-01T00:00:00Z');
    requeue(wl, 'BackoffFinished', 'The workload backoff was finished', new Date('2026-01-01T00:10:00Z'));
    const at = new Date('2026-01-01T00:10:02.500Z');
    admit(wl, admission, at);
    assert.match(admissionEvents(wl, at).quotaReserved, /, wait time since queued was 2s$/);
    assert.match(
      admissionEvents(wl, at, 'main: default-flavor(Fit;borrow=1)').quotaReserved,
      /, wait time since queued was 2s; Flavors considered: main: default-flavor\(Fit;borrow=1\)$/,
    );
    const later = new Date('2026-01-01T00:10:03.500Z');
    assert.match(admissionEvents(wl, later).quotaReserved, /, wait time since queued was 4s$/);
  });
});
