/**
 * The one time source of the program. Everything that decides by time (work queues, rate
 * limiters, controllers, the simulated data plane) reads `now()` and waits through
 * `setTimer`/`sleep` of an injected Clock, never `Date.now()` or `setTimeout` directly, so a
 * test can move time by hand (ManualClock) and a simulation can run on virtual time: a
 * virtual clock only has to implement this interface and jump to the next due timer.
 */

import { Heap } from 'heap-js';

export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Epoch milliseconds, the scale of objects' timestamps (`new Date(clock.now())`). */
  now(): number;
  /**
   * Milliseconds on a clock that only moves forward and never jumps with the wall clock
   * (NTP steps, a user setting the time); only differences between two readings mean
   * anything. Durations and deadlines (reconcile latency, lease renew deadlines, TTLs) are
   * measured on it, as Go's time.Time carries a monotonic reading that client-go's leader
   * election and work queue subtract; timestamps written into objects come from `now()`.
   */
  monotonic(): number;
  /** Runs `fn` after `ms`; the timer never keeps the process alive. */
  setTimer(fn: () => void, ms: number): TimerHandle;
  /** Resolves after `ms`, or early (without rejecting) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Says "busy" to a clock that jumps ahead when every component is idle (VirtualClock):
   * time stands still until the returned release is called (once; later calls do nothing).
   * Absent on clocks that follow the wall; call it through `holdClock`.
   */
  hold?(who: string): () => void;
  /**
   * Present on a clock that idles (VirtualClock) and unique in the process: an HTTP client
   * and server sharing the clock recognise each other by it and count the watch events
   * between them with `busy(key, ±1)`.
   */
  readonly id?: string;
  busy?(key: string, delta: number): void;
  clear?(key: string): void;
}

const released = () => {};

/** `clock.hold(who)`, or a no-op release for clocks that do not wait for idleness. */
export function holdClock(clock: Clock, who: string): () => void {
  return clock.hold ? clock.hold(who) : released;
}

/** Wall-clock time and Node's timers. */
export const realClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, Math.max(0, Math.ceil(ms)));
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
  sleep(ms, signal) {
    return new Promise((resolve) => {
      if (signal?.aborted) {
        resolve();
        return;
      }
      const onAbort = () => {
        clearTimeout(timer);
        resolve();
      };
      // Unlike setTimer this timer is kept referenced: whoever awaits it is still working.
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
};

/** `realClock.sleep`, for code with no clock of its own to wait on (CLI retries, scripts). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return realClock.sleep(ms, signal);
}

/** The clock's time as an RFC 3339 timestamp with milliseconds, as objects carry it. */
export function isoNow(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}

interface ManualTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A clock that moves only when told: `advance` fires due timers in time order (ties in
 * the order they were set), with `now()` at each timer's due time while it runs.
 * `nextTimerAt` is what a virtual clock needs to jump straight to the next event.
 */
export class ManualClock implements Clock {
  private t: number;
  private seq = 0;
  private readonly timers = new Heap<ManualTimer>((a, b) => a.at - b.at || a.seq - b.seq);

  constructor(start = 0) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  /** The same reading as `now()`: manual time never goes backwards. */
  monotonic(): number {
    return this.t;
  }

  setTimer(fn: () => void, ms: number): TimerHandle {
    const timer: ManualTimer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) {
        resolve();
        return;
      }
      const handle = this.setTimer(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        handle.cancel();
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Moves time forward by `ms`, firing every timer due by then in time order. */
  advance(ms: number): void {
    this.advanceTo(this.t + ms);
  }

  /** Moves time to `at` (never backwards), firing every timer due by then in time order. */
  advanceTo(at: number): void {
    for (;;) {
      const next = this.peekLive();
      if (!next || next.at > at) break;
      this.timers.pop();
      this.t = Math.max(this.t, next.at);
      next.cancelled = true;
      next.fn();
    }
    this.t = Math.max(this.t, at);
  }

  /** When the next live timer is due, or undefined when none is set. */
  nextTimerAt(): number | undefined {
    return this.peekLive()?.at;
  }

  pendingTimers(): number {
    let n = 0;
    for (const t of this.timers) if (!t.cancelled) n++;
    return n;
  }

  private peekLive(): ManualTimer | undefined {
    for (;;) {
      const top = this.timers.peek();
      if (!top?.cancelled) return top;
      this.timers.pop();
    }
  }
}

/**
 * `setInterval` on a Clock: runs `fn` every `ms` until cancelled. Each run schedules the
 * next one on the same clock, so a ManualClock (or a virtual clock) advancing by several
 * periods fires it once per period, and the real clock's timer never keeps the process alive.
 */
export function setRepeating(clock: Clock, fn: () => void, ms: number): TimerHandle {
  let current: TimerHandle;
  let cancelled = false;
  const tick = () => {
    if (cancelled) return;
    current = clock.setTimer(tick, ms);
    fn();
  };
  current = clock.setTimer(tick, ms);
  return {
    cancel: () => {
      cancelled = true;
      current.cancel();
    },
  };
}
