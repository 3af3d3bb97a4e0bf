/**
 * One timer for everything the kubelet waits on (stage delays, probe delays, container run
 * times, back-offs, lease renewals): a binary min-heap of deadlines behind a single
 * setTimeout. 100,000 pods with pending delays cost 100,000 heap entries, not 100,000 Node
 * timers. Cancelling is lazy: a handle is marked dead and skipped when it reaches the top.
 *
 * Hand-written: the npm heaps we looked at (heap-js, tinyqueue) would still need this
 * cancel/re-arm bookkeeping around them, which is most of the code.
 */

export interface TimerHandle {
  readonly at: number;
  /** False once fired or cancelled. */
  readonly active: boolean;
}

interface Entry extends TimerHandle {
  at: number;
  seq: number;
  active: boolean;
  fn: () => void;
}

export class TimerQueue {
  private readonly heap: Entry[] = [];
  private seq = 0;
  private dead = 0;
  private timer: NodeJS.Timeout | undefined;
  private armedAt = Number.POSITIVE_INFINITY;
  private stopped = false;
  private readonly now: () => number;
  /** Most callbacks run per wake-up; the rest run on the next turn so I/O is not starved. */
  private readonly budget: number;

  constructor(opts: { now?: () => number; budget?: number } = {}) {
    this.now = opts.now ?? Date.now;
    this.budget = opts.budget ?? 5000;
  }

  get size(): number {
    return this.heap.length;
  }

  /** Runs `fn` at epoch ms `at` (at once, on the next wake-up, when `at` has passed). */
  schedule(at: number, fn: () => void): TimerHandle {
    const e: Entry = { at, seq: this.seq++, active: true, fn };
    if (this.stopped) {
      e.active = false;
      return e;
    }
    this.push(e);
    this.arm();
    return e;
  }

  cancel(h: TimerHandle | undefined): void {
    const e = h as Entry | undefined;
    if (!e?.active) return;
    e.active = false;
    this.dead++;
    // Cancelled entries far in the future would otherwise linger until their deadline.
    if (this.dead > 1024 && this.dead > this.heap.length / 2) this.compact();
  }

  private compact(): void {
    const live = this.heap.filter((e) => e.active);
    this.heap.length = 0;
    this.dead = 0;
    for (const e of live) this.push(e);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const e of this.heap) e.active = false;
    this.heap.length = 0;
  }

  private arm(): void {
    while (this.heap.length > 0 && !this.heap[0]!.active) this.popDead();
    const top = this.heap[0];
    if (!top) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.armedAt = Number.POSITIVE_INFINITY;
      return;
    }
    if (this.timer && top.at >= this.armedAt) return;
    clearTimeout(this.timer);
    this.armedAt = top.at;
    // setTimeout's ceiling is 2^31-1 ms; a later deadline just wakes up early and re-arms.
    const ms = Math.min(Math.max(0, top.at - this.now()), 2 ** 31 - 1);
    this.timer = setTimeout(() => this.fire(), ms);
    this.timer.unref?.();
  }

  private fire(): void {
    this.timer = undefined;
    this.armedAt = Number.POSITIVE_INFINITY;
    const now = this.now();
    let n = 0;
    while (this.heap.length > 0 && n < this.budget) {
      const top = this.heap[0]!;
      if (!top.active) {
        this.popDead();
        continue;
      }
      if (top.at > now) break;
      this.pop();
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
      setImmediate(() => {
        if (!this.stopped) this.fire();
      });
      return;
    }
    this.arm();
  }

  private popDead(): void {
    this.pop();
    if (this.dead > 0) this.dead--;
  }

  private less(a: Entry, b: Entry): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private push(e: Entry): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private pop(): Entry | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
        if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}
