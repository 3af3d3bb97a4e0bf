import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nextPhase, type PreviousState } from '../../../src/controllers/podgroup/phase.ts';
import type { Tally } from '../../../src/controllers/podgroup/tally.ts';

test('a gang with an old failure and a member that cannot be placed settles instead of cycling', () => {
  // 1 of 2 required members failed earlier; its replacement cannot be scheduled; nothing placed.
  // nextPhase reads the members' count only; the counts below say what they are.
  const t: Tally = {
    members: [{}, {}] as Tally['members'],
    running: 0,
    succeeded: 0,
    failed: 1,
    pending: 1,
    unschedulable: 1,
    terminating: 0,
    placed: 0,
    live: 1,
    schedulerMessage: '0/500 nodes are available: 500 Insufficient nvidia.com/gpu.',
    gangVerdict: undefined,
    newestJoin: 0,
    vanishedRunning: 0,
    newlyRunning: 0,
  };
  const req = { required: 2, minMemberMode: true, formed: true };
  let prev: PreviousState | undefined;
  const phases: string[] = [];
  // The same observation again and again, as a controller reconciling its own status write sees it.
  for (let i = 0; i < 6; i++) {
    const r = nextPhase(prev, t, req);
    phases.push(r.phase);
    prev = { phase: r.phase, reason: r.reason, running: t.running, succeeded: t.succeeded, failed: t.failed };
  }
  assert.deepEqual(phases, ['Recovering', 'Unschedulable', 'Pending', 'Pending', 'Pending', 'Pending']);
  // A failure not seen before still makes a Pending group Recovering.
  assert.equal(nextPhase(prev, { ...t, failed: 2 }, req).phase, 'Recovering');
});
