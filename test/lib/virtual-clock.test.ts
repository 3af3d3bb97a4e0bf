import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as immediate } from 'node:timers/promises';
import { holdClock, realClock } from '../../src/lib/clock.ts';
import { random, randomUUID, seededRandom, seedRandom } from '../../src/lib/random.ts';
import { runUntil, StallError, startSimulation, VirtualClock } from '../../src/lib/virtual-clock.ts';

test('runUntil jumps from timer to timer, firing each at its due time', async () => {
  const clock = new VirtualClock(0);
  const fired: [string, number][] = [];
  clock.setTimer(() => fired.push(['b', clock.now()]), 3_600_000);
  clock.setTimer(() => {
    fired.push(['a', clock.now()]);
    clock.setTimer(() => fired.push(['c', clock.now()]), 7_200_000);
  }, 1000);
  const r = await runUntil(clock, 24 * 3_600_000);
  assert.deepEqual(fired, [
    ['a', 1000],
    ['b', 3_600_000],
    ['c', 7_201_000],
  ]);
  assert.equal(r.outcome, 'reached');
  assert.equal(r.now, 24 * 3_600_000);
  assert.equal(r.steps, 4);
});

test('time stands still while a component holds the clock, however long the work takes', async () => {
  const clock = new VirtualClock(0);
  const seen: number[] = [];
  clock.setTimer(() => seen.push(clock.now()), 10);
  const release = clock.hold('worker');
  const run = runUntil(clock, 100);
  // The work is done in several turns of the event loop, some after real I/O waits.
  for (let i = 0; i < 5; i++) await immediate();
  await realClock.sleep(20);
  assert.equal(clock.now(), 0);
  assert.deepEqual(clock.holders(), [['worker', 1]]);
  release();
  release(); // a second release does nothing
  const r = await run;
  assert.deepEqual(seen, [10]);
  assert.equal(r.now, 100);
  assert.ok(clock.idle);
});

test('work started by a timer runs to the end before time moves on', async () => {
  const clock = new VirtualClock(0);
  const log: string[] = [];
  // A chain of async steps (promises and turns of the loop) that each hold the clock briefly.
  const job = async (name: string) => {
    for (let i = 0; i < 3; i++) {
      const release = holdClock(clock, name);
      await immediate();
      log.push(`${name}${i}@${clock.now()}`);
      release();
      await Promise.resolve();
    }
  };
  clock.setTimer(() => void job('x'), 5);
  clock.setTimer(() => log.push(`y@${clock.now()}`), 6);
  await runUntil(clock, 10);
  assert.deepEqual(log, ['x0@5', 'x1@5', 'x2@5', 'y@6']);
});

test('a predicate ends the run once it holds, and a run with nothing left to happen ends idle', async () => {
  const clock = new VirtualClock(0);
  let n = 0;
  const tick = () => {
    n++;
    clock.setTimer(tick, 1000);
  };
  clock.setTimer(tick, 1000);
  const r = await runUntil(clock, () => n >= 5);
  assert.equal(r.outcome, 'reached');
  assert.equal(clock.now(), 5000);
  const empty = new VirtualClock(0);
  assert.equal((await runUntil(empty, () => false)).outcome, 'idle');
});

test('maxStepMs bounds each jump', async () => {
  const clock = new VirtualClock(0);
  const steps: number[] = [];
  clock.setTimer(() => {}, 10_000);
  await runUntil(clock, 10_000, { maxStepMs: 4000, onStep: (t) => steps.push(t) });
  assert.deepEqual(steps, [4000, 8000, 10_000]);
});

test('a component that never releases is reported by name, not a hang', async () => {
  const clock = new VirtualClock(0);
  clock.setTimer(() => {}, 1000);
  clock.hold('informer Pod.v1');
  clock.hold('apiserver GET /api/v1/pods');
  clock.hold('apiserver GET /api/v1/pods');
  await assert.rejects(runUntil(clock, 2000, { stallMs: 50 }), (err: unknown) => {
    assert.ok(err instanceof StallError);
    assert.equal(err.at, 0);
    assert.deepEqual(err.holders, [
      ['apiserver GET /api/v1/pods', 2],
      ['informer Pod.v1', 1],
    ]);
    assert.match(err.message, /held by: apiserver GET \/api\/v1\/pods ×2, informer Pod\.v1/);
    return true;
  });
});

test('a timer that keeps re-arming at the same instant is reported, not spun on forever', async () => {
  const clock = new VirtualClock(0);
  const again = () => clock.setTimer(again, 0);
  clock.setTimer(again, 0);
  await assert.rejects(
    runUntil(clock, 1000, { maxInstantMs: 30 }),
    /time stuck .*busiest meanwhile: \(timers set\) ×\d+/,
  );
});

test('counts crossing a socket: busy(+1) by the sender, busy(-1) by the receiver, clear on close', async () => {
  const clock = new VirtualClock(0);
  clock.busy('watch 1', 1);
  clock.busy('watch 1', 1);
  clock.busy('watch 1', -1);
  assert.ok(!clock.idle);
  clock.clear('watch 1');
  assert.ok(clock.idle);
  clock.busy('watch 1', -1); // an acknowledgement after the stream closed: never below zero
  assert.ok(clock.idle);
  assert.deepEqual(clock.holders(), []);
});

test('the seeded source repeats its draws and uids; unseeded it is Math.random again', () => {
  const a = seededRandom(7);
  const b = seededRandom(7);
  const xs = Array.from({ length: 5 }, a);
  assert.deepEqual(xs, Array.from({ length: 5 }, b));
  assert.ok(xs.every((x) => x >= 0 && x < 1));
  assert.notDeepEqual(xs, Array.from({ length: 5 }, seededRandom(8)));
  startSimulation({ seed: 3 });
  const first = [random(), randomUUID()];
  seedRandom(3);
  assert.deepEqual([random(), randomUUID()], first);
  assert.match(first[1] as string, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  seedRandom(undefined);
  assert.notEqual(randomUUID(), randomUUID());
});

test('work that never settles at one instant (a livelock) is reported with who kept busy', async () => {
  const clock = new VirtualClock(0);
  clock.setTimer(() => {}, 1000);
  let spinning = true;
  const spin = () => {
    if (!spinning) return;
    const release = clock.hold('retry loop');
    setImmediate(() => {
      release();
      setImmediate(spin);
    });
  };
  spin();
  const outcome = await runUntil(clock, 2000, { maxInstantMs: 100, stallMs: 20 }).catch(
    (err: unknown) => err,
  );
  spinning = false;
  assert.ok(outcome instanceof StallError, String(outcome));
  assert.equal(outcome.at, 0);
  assert.equal(outcome.busiest[0]?.[0], 'retry loop');
  assert.match(outcome.message, /time stuck .*busiest meanwhile: retry loop ×\d+/);
});
