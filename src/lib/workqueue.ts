/**
 * The work queue of every controller, the runtime's (src/runtime/controller.ts) and the
 * embedded cluster's loops (src/cluster/workloads/loop.ts) alike, with client-go's guarantees:
 * - an item added several times before it is processed is processed once (dirty set);
 * - an item is never handed to two workers at once: added while in flight, it is
 *   marked dirty and handed out again only after `done` (processing set);
 * - delayed adds (`addAfter`) keep the earliest requested time per item;
 * - `addRateLimited` delays by the rate limiter (per-item backoff + overall bucket).
 *
 * Shutdown differs on purpose from client-go: once shut down, queued items that have not
 * started are dropped rather than drained, because every controller rebuilds its work
 * from the cluster on start; only in-flight items are waited for (`shutDownWithDrain`).
 *
 * Delays run on the injected Clock; delayed items wait in one heap (heap-js) behind a
 * single timer. While an item is queued or processing the queue holds a virtual clock
 * (src/lib/virtual-clock.ts): time must not move on under work not yet done.
 */

import { Heap } from 'heap-js';
import { type Clock, holdClock, realClock, type TimerHandle } from './clock.ts';
import { defaultControllerRateLimiter, type RateLimiter } from './ratelimiter.ts';

/** Observation hooks, called synchronously; metrics.ts binds them to Prometheus. */
export interface WorkQueueMetrics {
  /** An item entered the dirty set (workqueue_adds_total). */
  added?(): void;
  /** Items waiting to be processed (workqueue_depth). */
  depth?(n: number): void;
  /** Seconds an item waited between being added and handed out. */
  queueLatency?(seconds: number): void;
  /** Seconds between being handed out and `done`. */
  workDuration?(seconds: number): void;
  /** An item was re-added through the rate limiter (workqueue_retries_total). */
  retried?(): void;
}

export interface WorkQueueOptions<T> {
  name?: string;
  rateLimiter?: RateLimiter<T>;
  clock?: Clock;
  metrics?: WorkQueueMetrics;
}

export class WorkQueue<T> {
  readonly name: string;
  private readonly rateLimiter: RateLimiter<T>;
  private readonly clock: Clock;
  private readonly metrics: WorkQueueMetrics;

  // FIFO of ready items; `head` avoids O(n) shifts.
  private queue: T[] = [];
  private head = 0;
  private readonly dirty = new Set<T>();
  private readonly processing = new Map<T, number>(); // item -> start time
  private readonly addTimes = new Map<T, number>();
  private getters: ((item: T | undefined) => void)[] = [];

  private readonly waitingReadyAt = new Map<T, number>();
  private readonly waitingHeap = new Heap<{ value: T; priority: number }>((a, b) => a.priority - b.priority);
  private timer: TimerHandle | undefined;
  private timerAt = Number.POSITIVE_INFINITY;

  private shutting = false;
  private drainWaiters: (() => void)[] = [];
  private releaseClock: (() => void) | undefined;

  constructor(opts: WorkQueueOptions<T> = {}) {
    this.name = opts.name ?? '';
    this.clock = opts.clock ?? realClock;
    this.rateLimiter = opts.rateLimiter ?? defaultControllerRateLimiter<T>(this.clock);
    this.metrics = opts.metrics ?? {};
  }

  get shuttingDown(): boolean {
    return this.shutting;
  }

  /** Items ready to be handed out (not counting in-flight or delayed ones). */
  len(): number {
    return this.queue.length - this.head;
  }

  /** Items waiting for a delayed add to fire. */
  delayedLen(): number {
    return this.waitingReadyAt.size;
  }

  /** Items currently handed out and not yet done. */
  inFlight(): number {
    return this.processing.size;
  }

  isDirty(item: T): boolean {
    return this.dirty.has(item);
  }

  add(item: T): void {
    if (this.shutting || this.dirty.has(item)) return;
    this.dirty.add(item);
    this.metrics.added?.();
    this.metrics.depth?.(this.dirty.size);
    if (!this.addTimes.has(item)) this.addTimes.set(item, this.clock.now());
    this.holdWhileBusy();
    if (this.processing.has(item)) return;
    this.enqueue(item);
  }

  /** Adds `item` after `ms`; an item already waiting keeps the earlier of the two times. */
  addAfter(item: T, ms: number): void {
    if (this.shutting) return;
    if (!(ms > 0)) {
      this.add(item);
      return;
    }
    const readyAt = this.clock.now() + ms;
    const existing = this.waitingReadyAt.get(item);
    if (existing !== undefined && existing <= readyAt) return;
    this.waitingReadyAt.set(item, readyAt);
    // Stale heap entries (superseded times) are skipped when popped.
    this.waitingHeap.push({ value: item, priority: readyAt });
    this.armTimer();
  }

  /** Re-adds after the rate limiter's delay (a failed attempt). */
  addRateLimited(item: T): void {
    if (this.shutting) return;
    this.metrics.retried?.();
    this.addAfter(item, this.rateLimiter.when(item));
  }

  /** Clears the item's failure history; call after a successful attempt. */
  forget(item: T): void {
    this.rateLimiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.rateLimiter.numRequeues(item);
  }

  /** The next item to process, or undefined once the queue is shut down. */
  get(): Promise<T | undefined> {
    if (this.shutting) return Promise.resolve(undefined);
    const item = this.take();
    if (item !== undefined) return Promise.resolve(item);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Marks the end of processing; an item re-added meanwhile becomes ready again. */
  done(item: T): void {
    const started = this.processing.get(item);
    if (started === undefined) return;
    this.processing.delete(item);
    this.metrics.workDuration?.((this.clock.now() - started) / 1000);
    this.holdWhileBusy();
    if (this.shutting) {
      if (this.processing.size === 0) this.resolveDrain();
      return;
    }
    if (this.dirty.has(item)) this.enqueue(item);
  }

  /** Stops handing out items; pending `get`s resolve with undefined. */
  shutDown(): void {
    if (this.shutting) return;
    this.shutting = true;
    this.timer?.cancel();
    this.timer = undefined;
    this.waitingReadyAt.clear();
    this.waitingHeap.clear();
    this.holdWhileBusy();
    const getters = this.getters;
    this.getters = [];
    for (const g of getters) g(undefined);
    if (this.processing.size === 0) this.resolveDrain();
  }

  /** Shuts down and resolves once every in-flight item is done. */
  shutDownWithDrain(): Promise<void> {
    const p = new Promise<void>((resolve) => {
      if (this.shutting && this.processing.size === 0) resolve();
      else this.drainWaiters.push(resolve);
    });
    this.shutDown();
    return p;
  }

  /** Sum of the seconds every in-flight item has been processing. */
  unfinishedWorkSeconds(): number {
    const now = this.clock.now();
    let total = 0;
    for (const start of this.processing.values()) total += now - start;
    return total / 1000;
  }

  longestRunningProcessorSeconds(): number {
    const now = this.clock.now();
    let longest = 0;
    for (const start of this.processing.values()) longest = Math.max(longest, now - start);
    return longest / 1000;
  }

  /** Holds the clock while an item is queued or processing, releases it when none is. */
  private holdWhileBusy(): void {
    // Once shut down, queued items are dropped: only in-flight ones still count.
    const busy = (!this.shutting && this.dirty.size > 0) || this.processing.size > 0;
    if (busy) this.releaseClock ??= holdClock(this.clock, `workqueue ${this.name}`);
    else if (this.releaseClock) {
      this.releaseClock();
      this.releaseClock = undefined;
    }
  }

  private enqueue(item: T): void {
    const getter = this.getters.shift();
    if (getter) {
      this.startProcessing(item);
      getter(item);
      return;
    }
    this.queue.push(item);
  }

  private take(): T | undefined {
    if (this.head >= this.queue.length) return undefined;
    const item = this.queue[this.head] as T;
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    this.startProcessing(item);
    return item;
  }

  private startProcessing(item: T): void {
    const now = this.clock.now();
    this.dirty.delete(item);
    this.metrics.depth?.(this.dirty.size);
    const added = this.addTimes.get(item);
    if (added !== undefined) {
      this.metrics.queueLatency?.((now - added) / 1000);
      this.addTimes.delete(item);
    }
    this.processing.set(item, now);
  }

  private armTimer(): void {
    const next = this.nextReadyAt();
    if (next === undefined) return;
    if (this.timer && this.timerAt <= next) return;
    this.timer?.cancel();
    this.timerAt = next;
    this.timer = this.clock.setTimer(() => this.fireDelayed(), next - this.clock.now());
  }

  private nextReadyAt(): number | undefined {
    for (;;) {
      const top = this.waitingHeap.peek();
      if (!top) return undefined;
      if (this.waitingReadyAt.get(top.value) === top.priority) return top.priority;
      this.waitingHeap.pop();
    }
  }

  private fireDelayed(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    for (;;) {
      const top = this.waitingHeap.peek();
      if (!top || top.priority > now) break;
      this.waitingHeap.pop();
      if (this.waitingReadyAt.get(top.value) !== top.priority) continue;
      this.waitingReadyAt.delete(top.value);
      this.add(top.value);
    }
    this.armTimer();
  }

  private resolveDrain(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }
}
