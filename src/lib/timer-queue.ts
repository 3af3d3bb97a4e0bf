/**
 * Many deadlines behind one clock timer: a min-heap of deadlines (heap-js) and a single
 * `clock.setTimer` armed for the earliest. 100,000 pending delays cost 100,000 heap entries,
 * not 100,000 Node timers. Cancelling is lazy: an entry is marked dead and skipped when it
 * reaches the top, and the heap is rebuilt once dead entries are the majority.
 */

import { Heap } from 'heap-js';
import { type Clock, holdClock, realClock, type TimerHandle } from './clock.ts';

export interface QueuedTimer {
  readonly at: number;
  /** False once fired or cancelled. */
  readonly active: boolean;
}

interface Entry extends QueuedTimer {
  at: number;
  seq: number;
  active: boolean;
  fn: () => void;
}

const byDeadline = (a: Entry, b: Entry) => a.at - b.at || a.seq - b.seq;

export class TimerQueue {
  private readonly heap = new Heap<Entry>(byDeadline);
  private seq = 0;
  private dead = 0;
  private timer: TimerHandle | undefined;
  private armedAt = Number.POSITIVE_INFINITY;
  private stopped = false;
  private readonly clock: Clock;
  /** Most callbacks run per wake-up; the rest run on the next turn so I/O is not starved. */
  private readonly budget: number;

  constructor(opts: { clock?: Clock; budget?: number } = {}) {
    this.clock = opts.clock ?? realClock;
    this.budget = opts.budget ?? 5000;
  }

  get size(): number {
    return this.heap.length;
  }

  /** Runs `fn` at clock time `at` (at once, on the next wake-up, when `at` has passed). */
  schedule(at: number, fn: () => void): QueuedTimer {
    const e: Entry = { at, seq: this.seq++, active: true, fn };
    if (this.stopped) {
      e.active = false;
      return e;
    }
    this.heap.push(e);
    this.arm();
    return e;
  }

  cancel(h: QueuedTimer | undefined): void {
    const e = h as Entry | undefined;
    if (!e?.active) return;
    e.active = false;
    this.dead++;
    // Cancelled entries far in the future would otherwise linger until their deadline.
    if (this.dead > 1024 && this.dead > this.heap.length / 2) this.compact();
  }

  private compact(): void {
    const live = this.heap.toArray().filter((e) => e.active);
    this.heap.init(live);
    this.dead = 0;
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
    for (const e of this.heap) e.active = false;
    this.heap.clear();
  }

  private arm(): void {
    while (this.heap.length > 0 && !this.heap.peek()!.active) this.popDead();
    const top = this.heap.peek();
    if (!top) {
      this.timer?.cancel();
      this.timer = undefined;
      this.armedAt = Number.POSITIVE_INFINITY;
      return;
    }
    if (this.timer && top.at >= this.armedAt) return;
    this.timer?.cancel();
    this.armedAt = top.at;
    // setTimeout's ceiling is 2^31-1 ms; a later deadline just wakes up early and re-arms.
    const ms = Math.min(Math.max(0, top.at - this.clock.now()), 2 ** 31 - 1);
    this.timer = this.clock.setTimer(() => this.fire(), ms);
  }

  private fire(): void {
    this.timer = undefined;
    this.armedAt = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    let n = 0;
    while (this.heap.length > 0 && n < this.budget) {
      const top = this.heap.peek()!;
      if (!top.active) {
        this.popDead();
        continue;
      }
      if (top.at > now) break;
      this.heap.pop();
      top.active = false;
      n++;
      try {
        top.fn();
      } catch {
        // A callback's failure is its owner's business; the queue must keep running.
      }
    }
    if (this.stopped) return;
    if (n >= this.budget) {
      // The rest is due now: a virtual clock must not move on before it has run.
      const release = holdClock(this.clock, 'timer-queue');
      setImmediate(() => {
        release();
        if (!this.stopped) this.fire();
      });
      return;
    }
    this.arm();
  }

  private popDead(): void {
    this.heap.pop();
    if (this.dead > 0) this.dead--;
  }
}
