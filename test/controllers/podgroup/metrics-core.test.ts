/** The pure parts of the podgroup metrics: what a written status changed. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { groupsByPhase, statusChange } from '../../../src/controllers/podgroup/metrics.ts';
import { podGroup } from './fixtures.ts';

describe('podgroup status changes', () => {
  test('the first phase comes from None; an unchanged phase is no transition', () => {
    const pending = { state: { phase: 'Pending' as const } };
    assert.deepEqual(statusChange(undefined, pending), {
      transition: { from: 'None', to: 'Pending' },
      restarted: false,
    });
    assert.deepEqual(statusChange(pending, { ...pending, running: 1 }), {
      transition: undefined,
      restarted: false,
    });
  });

  test('a deadlock restart is a higher restart count', () => {
    const stuck = { state: { phase: 'Unschedulable' as const }, restarts: 1 };
    assert.equal(statusChange(stuck, { ...stuck, restarts: 2 }).restarted, true);
    assert.equal(statusChange(stuck, stuck).restarted, false);
  });

  test('a PodGroup without a phase is Unknown; every phase is reported', () => {
    const running = podGroup('a');
    running.status = { state: { phase: 'Running' } };
    assert.deepEqual(groupsByPhase([running, podGroup('b')]), [
      [{ phase: 'Pending' }, 0],
      [{ phase: 'Running' }, 1],
      [{ phase: 'Recovering' }, 0],
      [{ phase: 'Unschedulable' }, 0],
      [{ phase: 'Completed' }, 0],
      [{ phase: 'Unknown' }, 1],
    ]);
  });
});
