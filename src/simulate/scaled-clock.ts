/**
 * Wall-clock time sped up by a factor: `now()` moves `scale` times faster than real time and
 * every timer fires after its delay divided by `scale`. One such clock shared by the embedded
 * cluster and the controllers keeps them consistent with each other (a 10 s deadlock timeout
 * and a 10 s kubelet delay stay equal), which a per-component `--time-scale` does not. It is
 * the fallback when no virtual clock is given: a run is only as deterministic as the machine.
 */

import { type Clock, realClock, type TimerHandle } from '../lib/clock.ts';

export class ScaledClock implements Clock {
  private readonly scale: number;
  private readonly base: number;
  private readonly t0: number;

  constructor(scale: number, start = Date.now()) {
    this.scale = scale;
    this.base = start;
    this.t0 = performance.now();
  }

  /** Whole milliseconds, as Date.now() gives them (event names and timestamps rely on it). */
  now(): number {
    return Math.floor(this.base + (performance.now() - this.t0) * this.scale);
  }

  /** Scaled like `now()`, so durations measured by the controllers agree with it. */
  monotonic(): number {
    return (performance.now() - this.t0) * this.scale;
  }

  setTimer(fn: () => void, ms: number): TimerHandle {
    return realClock.setTimer(fn, Math.max(0, ms / this.scale));
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return realClock.sleep(Math.max(0, ms / this.scale), signal);
  }
}
