/** The pure parts of burst offloading's metrics: where a remote pod stands, as its virtual pod says. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { billingSpend, remotePodsByState, remoteState } from '../../../src/controllers/offload/metrics.ts';
import type { Pod } from '../../../src/controllers/offload/types.ts';

function vpod(annotations: Record<string, string>, phase?: string, deleting = false): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'j-runpod',
      namespace: 'ns',
      labels: { 'runpod.io/managed': 'true' },
      annotations: { 'runpod.io/provider': 'runpod', ...annotations },
      ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    ...(phase ? { status: { phase } } : {}),
  } as Pod;
}

describe('remote pod states', () => {
  test('from the claim to the terminated remote pod', () => {
    const id = { 'runpod.io/pod-id': 'p1' };
    assert.equal(remoteState(vpod({})), 'Launching');
    assert.equal(remoteState(vpod(id)), 'Pending');
    assert.equal(remoteState(vpod(id, 'Pending')), 'Pending');
    assert.equal(remoteState(vpod(id, 'Running')), 'Running');
    assert.equal(remoteState(vpod(id, 'Running', true)), 'Terminating');
    assert.equal(remoteState(vpod(id, 'Succeeded')), 'Terminating');
    assert.equal(remoteState(vpod({ ...id, 'runpod.io/remote-terminated': 'true' }, 'Succeeded')), undefined);
  });

  test('only virtual pods count, and every state is reported', () => {
    const local = { ...vpod({}, 'Running'), metadata: { name: 'local', namespace: 'ns' } } as Pod;
    assert.deepEqual(remotePodsByState([local, vpod({ 'runpod.io/pod-id': 'p1' }, 'Running')]), [
      [{ state: 'Launching' }, 0],
      [{ state: 'Pending' }, 0],
      [{ state: 'Running' }, 1],
      [{ state: 'Terminating' }, 0],
    ]);
  });
});

describe('spend', () => {
  test('a finished Job’s remote pod bills until it is terminated', () => {
    const linked = (cost: string, phase: string, extra: Record<string, string> = {}) =>
      vpod({ 'runpod.io/pod-id': 'p', 'runpod.io/cost-per-hr': cost, ...extra }, phase);
    assert.equal(
      billingSpend([
        linked('0.5', 'Running'),
        linked('0.25', 'Succeeded'),
        linked('1', 'Failed', { 'runpod.io/remote-terminated': 'true' }),
      ]),
      0.75,
    );
  });
});
