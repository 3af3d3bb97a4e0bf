import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backoffDelay } from '../../src/lib/backoff.ts';
import { isoNow, ManualClock, realClock, setRepeating } from '../../src/lib/clock.ts';

test('ManualClock fires due timers in time order, ties in the order they were set', () => {
  const clock = new ManualClock(1000);
  const fired: string[] = [];
  clock.setTimer(() => fired.push(`b@${clock.now()}`), 20);
  clock.setTimer(() => fired.push(`a@${clock.now()}`), 10);
  clock.setTimer(() => fired.push(`c@${clock.now()}`), 20);
  const cancelled = clock.setTimer(() => fired.push('never'), 5);
  cancelled.cancel();
  assert.equal(clock.nextTimerAt(), 1010);
  clock.advance(15);
  assert.deepEqual(fired, ['a@1010']);
  assert.equal(clock.now(), 1015);
  clock.advance(100);
  assert.deepEqual(fired, ['a@1010', 'b@1020', 'c@1020']);
  assert.equal(clock.now(), 1115);
  assert.equal(clock.nextTimerAt(), undefined);
  assert.equal(clock.pendingTimers(), 0);
});

test('ManualClock: a timer set by a firing timer fires in the same advance when due; jumping to the next timer', () => {
  const clock = new ManualClock();
  const fired: number[] = [];
  clock.setTimer(() => {
    fired.push(clock.now());
    clock.setTimer(() => fired.push(clock.now()), 5);
  }, 5);
  clock.advance(10);
  assert.deepEqual(fired, [5, 10]);
  clock.setTimer(() => fired.push(clock.now()), 1_000_000);
  // What a virtual clock does: jump straight to the next due timer.
  clock.advanceTo(clock.nextTimerAt()!);
  assert.deepEqual(fired, [5, 10, 1_000_010]);
});

test('ManualClock.sleep resolves when time passes it, or early on abort', async () => {
  const clock = new ManualClock();
  let done = false;
  const slept = clock.sleep(100).then(() => {
    done = true;
  });
  clock.advance(99);
  await Promise.resolve();
  assert.equal(done, false);
  clock.advance(1);
  await slept;
  assert.equal(done, true);
  const ac = new AbortController();
  const aborted = clock.sleep(1000, ac.signal);
  ac.abort();
  await aborted;
  assert.equal(clock.pendingTimers(), 0);
});

test('realClock reads epoch milliseconds and isoNow renders them as objects carry time', async () => {
  const before = Date.now();
  const t = realClock.now();
  assert.ok(t >= before && t <= Date.now());
  assert.match(isoNow(new ManualClock(Date.UTC(2026, 0, 2, 3, 4, 5, 6))), /^2026-01-02T03:04:05\.006Z$/);
  await new Promise<void>((resolve) => realClock.setTimer(resolve, 1));
});

test('monotonic: the real clock reads performance time, never backwards; a ManualClock reads its own time', async () => {
  const a = realClock.monotonic();
  await new Promise<void>((resolve) => realClock.setTimer(resolve, 2));
  const b = realClock.monotonic();
  assert.ok(b > a, `monotonic moved from ${a} to ${b}`);
  // Not epoch time: a wall-clock step cannot move it.
  assert.ok(Math.abs(realClock.now() - b) > 1_000_000);
  const clock = new ManualClock(5000);
  assert.equal(clock.monotonic(), 5000);
  clock.advance(250);
  assert.equal(clock.monotonic(), clock.now());
});

test('setRepeating fires once per period as the clock passes it, until cancelled', () => {
  const clock = new ManualClock(1000);
  const at: number[] = [];
  const handle = setRepeating(clock, () => at.push(clock.now()), 100);
  clock.advance(99);
  assert.deepEqual(at, []);
  clock.advance(251);
  assert.deepEqual(at, [1100, 1200, 1300]);
  assert.equal(clock.nextTimerAt(), 1400);
  handle.cancel();
  clock.advance(1000);
  assert.deepEqual(at, [1100, 1200, 1300]);
  assert.equal(clock.pendingTimers(), 0);
});

test('setRepeating stops when cancelled from inside its own run', () => {
  const clock = new ManualClock();
  let runs = 0;
  const handle = setRepeating(
    clock,
    () => {
      if (++runs === 2) handle.cancel();
    },
    10,
  );
  clock.advance(100);
  assert.equal(runs, 2);
  assert.equal(clock.pendingTimers(), 0);
});

test('backoffDelay: base * factor^exponent, capped, finite for long streaks', () => {
  assert.deepEqual(
    [0, 1, 2, 3].map((n) => backoffDelay(n, 10, 50)),
    [10, 20, 40, 50],
  );
  assert.equal(backoffDelay(1e9, 5, 1000), 1000);
  assert.equal(backoffDelay(-3, 5, 1000), 5);
  assert.equal(backoffDelay(2, 100, 10_000, 3), 900);
});
