import type { Clock, TimerHandle } from '../../src/runtime/clock.ts';

/** A clock that only moves when the test says so; timers fire inside `advance`. */
export class FakeClock implements Clock {
  private t = 0;
  private timers: { at: number; fn: () => void; cancelled: boolean }[] = [];

  now(): number {
    return this.t;
  }

  setTimer(fn: () => void, ms: number): TimerHandle {
    const timer = { at: this.t + Math.max(0, ms), fn, cancelled: false };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  /** Moves time forward by `ms`, firing due timers in time order. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = this.timers.filter((x) => !x.cancelled && x.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.t = Math.max(this.t, due.at);
      due.cancelled = true;
      due.fn();
    }
    this.timers = this.timers.filter((x) => !x.cancelled);
    this.t = end;
  }

  pendingTimers(): number {
    return this.timers.filter((x) => !x.cancelled).length;
  }
}
