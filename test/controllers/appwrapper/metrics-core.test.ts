/** The pure parts of the AppWrapper metrics: which written statuses are resets or failures. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AppWrapperStatus } from '../../../src/apis/workload.codeflare.dev/v1beta2.ts';
import { appWrappersByPhase, setbackOf } from '../../../src/controllers/appwrapper/metrics.ts';

const unhealthy = (reason: string): AppWrapperStatus['conditions'] => [
  { type: 'Unhealthy', status: 'True', reason, message: '', lastTransitionTime: '2026-01-01T00:00:00Z' },
];

describe('AppWrapper setbacks', () => {
  test('entering Resetting or Failed counts once, with the Unhealthy reason', () => {
    const running: AppWrapperStatus = { phase: 'Running' };
    const resetting: AppWrapperStatus = { phase: 'Resetting', conditions: unhealthy('FoundFailedPods') };
    assert.deepEqual(setbackOf(running, resetting), { kind: 'reset', reason: 'FoundFailedPods' });
    assert.equal(setbackOf(resetting, { ...resetting, resettingCount: 1 }), undefined);
    assert.deepEqual(setbackOf(running, { phase: 'Failed', conditions: unhealthy('MissingComponent') }), {
      kind: 'failure',
      reason: 'MissingComponent',
    });
    assert.equal(setbackOf(running, { phase: 'Succeeded' }), undefined);
  });

  test('a reason the controller does not write is Other, so the label stays bounded', () => {
    assert.deepEqual(setbackOf(undefined, { phase: 'Failed', conditions: unhealthy('Whatever') }), {
      kind: 'failure',
      reason: 'Other',
    });
    assert.deepEqual(setbackOf({ phase: 'Running' }, { phase: 'Failed' }), {
      kind: 'failure',
      reason: 'Other',
    });
  });

  test('the empty phase is reported as Empty', () => {
    const counts = new Map(
      appWrappersByPhase([
        { apiVersion: 'workload.codeflare.dev/v1beta2', kind: 'AppWrapper', metadata: { name: 'a' } },
      ]).map(([l, n]) => [l.phase, n]),
    );
    assert.equal(counts.get('Empty'), 1);
    assert.equal(counts.get('Running'), 0);
    assert.equal(counts.size, 9);
  });
});
