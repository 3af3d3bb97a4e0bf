/**
 * Time source for the queue and rate limiters, injectable so their unit tests can
 * advance time deterministically instead of sleeping.
 */

export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds, monotonic. */
  now(): number;
  /** Runs `fn` after `ms`; the timer never keeps the process alive. */
  setTimer(fn: () => void, ms: number): TimerHandle;
}

export const realClock: Clock = {
  now: () => performance.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, Math.max(0, Math.ceil(ms)));
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
};
