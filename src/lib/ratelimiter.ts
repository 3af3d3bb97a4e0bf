/**
 * Per-item and overall rate limiters with client-go's workqueue semantics:
 * `when(item)` reserves the next slot and returns how long to wait, `forget(item)`
 * clears an item's failure history, `numRequeues(item)` reports it.
 */

import { backoffDelay } from './backoff.ts';
import { type Clock, realClock } from './clock.ts';

export interface RateLimiter<T> {
  /** Delay in ms before `item` may be processed again; records one more failure. */
  when(item: T): number;
  forget(item: T): void;
  numRequeues(item: T): number;
}

/** base * 2^failures, capped at max: client-go's ItemExponentialFailureRateLimiter. */
export class ItemExponentialRateLimiter<T> implements RateLimiter<T> {
  private readonly failures = new Map<T, number>();
  readonly baseMs: number;
  readonly maxMs: number;

  constructor(baseMs = 5, maxMs = 1_000_000) {
    this.baseMs = baseMs;
    this.maxMs = maxMs;
  }

  when(item: T): number {
    const exp = this.failures.get(item) ?? 0;
    this.failures.set(item, exp + 1);
    return backoffDelay(exp, this.baseMs, this.maxMs);
  }

  forget(item: T): void {
    this.failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}

/**
 * Token bucket shared by all items (golang.org/x/time/rate reservation semantics):
 * tokens may go negative, each reservation waits until its token would exist.
 */
export class TokenBucketRateLimiter<T> implements RateLimiter<T> {
  readonly qps: number;
  readonly burst: number;
  private tokens: number;
  private last: number;
  private readonly clock: Clock;

  constructor(qps = 10, burst = 100, clock: Clock = realClock) {
    this.qps = qps;
    this.burst = burst;
    this.clock = clock;
    this.tokens = burst;
    this.last = clock.now();
  }

  when(_item: T): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  forget(_item: T): void {}

  numRequeues(_item: T): number {
    return 0;
  }
}

/** The longest delay of several limiters: controller-runtime's default combination. */
export class MaxOfRateLimiter<T> implements RateLimiter<T> {
  private readonly limiters: RateLimiter<T>[];

  constructor(...limiters: RateLimiter<T>[]) {
    this.limiters = limiters;
  }

  when(item: T): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.when(item));
    return max;
  }

  forget(item: T): void {
    for (const l of this.limiters) l.forget(item);
  }

  numRequeues(item: T): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.numRequeues(item));
    return max;
  }
}

/** Per-item 5 ms → 1000 s exponential backoff combined with a 10 qps / 100 burst bucket. */
export function defaultControllerRateLimiter<T>(clock: Clock = realClock): RateLimiter<T> {
  return new MaxOfRateLimiter<T>(
    new ItemExponentialRateLimiter<T>(5, 1_000_000),
    new TokenBucketRateLimiter<T>(10, 100, clock),
  );
}
