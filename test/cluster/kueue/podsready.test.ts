/** waitForPodsReady's pure parts: settings and defaults, the re-queueing backoff, the PodsReady condition. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Workload } from '../../../src/cluster/kueue/api.ts';
import {
  notReadyTimeout,
  podsReadyCondition,
  podsReadySettings,
  requeueBackoffMs,
} from '../../../src/cluster/kueue/podsready.ts';

describe('waitForPodsReady', () => {
  test("Kueue v0.19's defaults: 30m timeout, recovery = timeout, 60 s base, 3600 s cap, no limit", () => {
    assert.deepEqual(podsReadySettings({}), {
      timeoutMs: 1_800_000,
      recoveryTimeoutMs: 1_800_000,
      blockAdmission: false,
      timestamp: 'Eviction',
      backoffBaseSeconds: 60,
      backoffMaxSeconds: 3600,
      timeScale: 1,
    });
    assert.equal(podsReadySettings({ timeout: '2m', recoveryTimeout: '0s' }).recoveryTimeoutMs, undefined);
    // A zero timeout is an unset one (defaults.go).
    assert.equal(podsReadySettings({ timeout: '0s' }).timeoutMs, 1_800_000);
  });

  test('a malformed duration is refused with the field and a fix', () => {
    assert.throws(
      () => podsReadySettings({ timeout: '5 minutes' }),
      /waitForPodsReady\.timeout: invalid duration "5 minutes" \(use a Go duration such as 5m or 90s\)/,
    );
  });

  test('backoff: base·2^(n−1), capped, with at most 0.01% jitter', () => {
    const none = () => 0;
    assert.deepEqual(
      [1, 2, 3, 4].map((n) => requeueBackoffMs(n, 60, 3600, none)),
      [60_000, 120_000, 240_000, 480_000],
    );
    assert.equal(requeueBackoffMs(10, 60, 3600, none), 3_600_000);
    assert.equal(
      requeueBackoffMs(1, 60, 3600, () => 1),
      60_006,
    );
  });

  const wl = (conditions: { type: string; status: string; reason: string; at: string }[]): Workload => ({
    apiVersion: 'kueue.x-k8s.io/v1beta2',
    kind: 'Workload',
    metadata: { name: 'w', namespace: 'default' },
    spec: { podSets: [] },
    status: {
      conditions: conditions.map((c) => ({
        type: c.type,
        status: c.status as 'True' | 'False',
        reason: c.reason,
        message: '',
        lastTransitionTime: c.at,
      })),
    },
  });

  test('the PodsReady condition: WaitForStart, Started, WaitForRecovery, Recovered', () => {
    const fresh = wl([]);
    assert.equal(podsReadyCondition(fresh, false, true).reason, 'WaitForStart');
    assert.deepEqual(podsReadyCondition(fresh, true, false), {
      status: 'False',
      reason: 'WaitForStart',
      message: 'Not all pods are ready or succeeded',
    });
    assert.deepEqual(podsReadyCondition(fresh, true, true), {
      status: 'True',
      reason: 'Started',
      message: 'All pods reached readiness and the workload is running',
    });
    const ready = wl([{ type: 'PodsReady', status: 'True', reason: 'Started', at: '2026-01-01T00:00:00Z' }]);
    assert.deepEqual(podsReadyCondition(ready, true, false), {
      status: 'False',
      reason: 'WaitForRecovery',
      message: 'At least one pod has failed, waiting for recovery',
    });
    const recovering = wl([
      { type: 'PodsReady', status: 'False', reason: 'WaitForRecovery', at: '2026-01-01T00:00:00Z' },
    ]);
    assert.equal(podsReadyCondition(recovering, true, true).reason, 'Recovered');
  });

  test('the timeout runs from admission, the recovery timeout from the loss of readiness', () => {
    const s = podsReadySettings({ timeout: '10s', recoveryTimeout: '30s' });
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    const admitted = wl([
      { type: 'Admitted', status: 'True', reason: 'Admitted', at: '2026-01-01T00:00:00Z' },
    ]);
    assert.deepEqual(notReadyTimeout(admitted, s, t0 + 4000), { cause: 'WaitForStart', remainingMs: 6000 });
    assert.deepEqual(notReadyTimeout(admitted, s, t0 + 12_000), { cause: 'WaitForStart', remainingMs: 0 });
    const lost = wl([
      { type: 'Admitted', status: 'True', reason: 'Admitted', at: '2026-01-01T00:00:00Z' },
      { type: 'PodsReady', status: 'False', reason: 'WaitForRecovery', at: '2026-01-01T00:01:00Z' },
    ]);
    assert.deepEqual(notReadyTimeout(lost, s, t0 + 70_000), {
      cause: 'WaitForRecovery',
      remainingMs: 20_000,
    });
    const ok = wl([{ type: 'PodsReady', status: 'True', reason: 'Started', at: '2026-01-01T00:00:00Z' }]);
    assert.equal(notReadyTimeout(ok, s, t0), undefined);
  });

  test('--time-scale runs the timeouts faster, as every cluster timer', () => {
    const s = podsReadySettings({ timeout: '10s', recoveryTimeout: '30s' }, 10);
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    const admitted = wl([
      { type: 'Admitted', status: 'True', reason: 'Admitted', at: '2026-01-01T00:00:00Z' },
    ]);
    assert.deepEqual(notReadyTimeout(admitted, s, t0 + 400), { cause: 'WaitForStart', remainingMs: 600 });
  });
});
