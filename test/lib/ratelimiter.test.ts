import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Backoff } from '../../src/lib/backoff.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import {
  defaultControllerRateLimiter,
  ItemExponentialRateLimiter,
  MaxOfRateLimiter,
  TokenBucketRateLimiter,
} from '../../src/lib/ratelimiter.ts';

describe('ItemExponentialRateLimiter', () => {
  test('doubles from 5 ms per failure and caps at 1000 s', () => {
    const rl = new ItemExponentialRateLimiter<string>(5, 1_000_000);
    assert.deepEqual(
      [1, 2, 3, 4, 5].map(() => rl.when('a')),
      [5, 10, 20, 40, 80],
    );
    assert.equal(rl.numRequeues('a'), 5);
    for (let i = 0; i < 40; i++) rl.when('a');
    assert.equal(rl.when('a'), 1_000_000);
  });

  test('tracks items independently and forgets them', () => {
    const rl = new ItemExponentialRateLimiter<string>(5, 1_000_000);
    rl.when('a');
    rl.when('a');
    assert.equal(rl.when('b'), 5);
    rl.forget('a');
    assert.equal(rl.numRequeues('a'), 0);
    assert.equal(rl.when('a'), 5);
    assert.equal(rl.numRequeues('b'), 1);
  });

  test('never overflows to a non-finite delay', () => {
    const rl = new ItemExponentialRateLimiter<string>(5, 1_000_000);
    for (let i = 0; i < 2000; i++) rl.when('x');
    assert.equal(rl.when('x'), 1_000_000);
  });
});

describe('TokenBucketRateLimiter', () => {
  test('allows a burst, then spaces reservations at 1/qps', () => {
    const clock = new ManualClock();
    const rl = new TokenBucketRateLimiter<string>(10, 100, clock);
    for (let i = 0; i < 100; i++) assert.equal(rl.when(`k${i}`), 0);
    assert.equal(rl.when('k100'), 100);
    assert.equal(rl.when('k101'), 200);
  });

  test('refills at qps, never above burst', () => {
    const clock = new ManualClock();
    const rl = new TokenBucketRateLimiter<string>(10, 3, clock);
    for (let i = 0; i < 3; i++) rl.when('x');
    clock.advance(200); // two tokens back
    assert.equal(rl.when('x'), 0);
    assert.equal(rl.when('x'), 0);
    assert.equal(rl.when('x'), 100);
    clock.advance(60_000);
    assert.deepEqual(
      [1, 2, 3, 4].map(() => rl.when('y')),
      [0, 0, 0, 100],
    );
  });
});

describe('MaxOfRateLimiter', () => {
  test('default controller limiter is the max of backoff and bucket', () => {
    const clock = new ManualClock();
    const rl = defaultControllerRateLimiter<string>(clock);
    // Distinct items within the burst: only the 5 ms base applies.
    for (let i = 0; i < 100; i++) assert.equal(rl.when(`item-${i}`), 5);
    // Bucket exhausted: 100 ms beats a first failure's 5 ms.
    assert.equal(rl.when('another'), 100);
    clock.advance(3_600_000);
    // Repeated failures of one item: the exponential backoff dominates.
    const delays = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map(() => rl.when('item-0'));
    assert.deepEqual(delays.slice(0, 2), [10, 20]);
    assert.equal(delays[11], 5 * 2 ** 12);
    assert.equal(rl.numRequeues('item-0'), 13);
    rl.forget('item-0');
    assert.equal(rl.numRequeues('item-0'), 0);
  });

  test('reports the largest requeue count of its parts', () => {
    const a = new ItemExponentialRateLimiter<string>(1, 100);
    const b = new ItemExponentialRateLimiter<string>(2, 100);
    const rl = new MaxOfRateLimiter(a, b);
    assert.equal(rl.when('x'), 2);
    a.when('x');
    assert.equal(rl.numRequeues('x'), 2);
  });
});

describe('Backoff', () => {
  test('grows by its factor up to the cap, with jitter on top, and resets', () => {
    const b = new Backoff({ initialMs: 100, maxMs: 1000, factor: 2, jitter: 0.5, random: () => 1 });
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6].map(() => b.next()),
      [150, 300, 600, 1200, 1500, 1500],
    );
    assert.equal(b.attempts, 6);
    b.reset();
    assert.equal(b.next(), 150);
    const noJitter = new Backoff({ initialMs: 10, random: () => 0 });
    assert.equal(noJitter.next(), 10);
  });
});
