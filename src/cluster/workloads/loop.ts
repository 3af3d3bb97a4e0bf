/**
 * The work loop of the simulated kube-controller-manager: `workers` async workers over the
 * shelf's WorkQueue (deduplicated keys, never one key twice at once, delayed adds keeping the
 * earliest time) with per-key exponential backoff after a failed sync and nothing else (no
 * overall token bucket: these loops run in-process against the API's store, not over HTTP).
 */

import { type Clock, realClock } from '../../lib/clock.ts';
import { ItemExponentialRateLimiter } from '../../lib/ratelimiter.ts';
import { WorkQueue } from '../../lib/workqueue.ts';

export type LogFn = (
  level: 'debug' | 'info' | 'warn' | 'error',
  msg: string,
  fields?: Record<string, unknown>,
) => void;

export interface LoopOptions {
  name: string;
  /** Keys processed concurrently (each key still runs alone). */
  workers?: number;
  sync(key: string): Promise<void>;
  /** Backoff after a failed sync: base * 2^(failures-1), capped. */
  backoff?: { baseMs: number; maxMs: number };
  log?: LogFn;
  clock?: Clock;
}

export class Loop {
  readonly name: string;
  private readonly workers: number;
  private readonly syncFn: (key: string) => Promise<void>;
  private readonly log: LogFn;
  private readonly queue: WorkQueue<string>;
  private readonly backoff: ItemExponentialRateLimiter<string>;
  private running: Promise<void>[] = [];
  private started = false;

  constructor(opts: LoopOptions) {
    this.name = opts.name;
    this.workers = Math.max(1, opts.workers ?? 2);
    this.syncFn = opts.sync;
    this.log = opts.log ?? (() => {});
    this.backoff = new ItemExponentialRateLimiter<string>(
      opts.backoff?.baseMs ?? 5,
      opts.backoff?.maxMs ?? 30_000,
    );
    this.queue = new WorkQueue<string>({
      name: opts.name,
      clock: opts.clock ?? realClock,
      rateLimiter: this.backoff,
    });
  }

  /** Queues a key now (a pending delayed add of the same key is kept: the earliest wins). */
  enqueue(key: string): void {
    this.queue.add(key);
  }

  /** Queues a key after a delay; a sooner request replaces a later one. */
  enqueueAfter(key: string, ms: number): void {
    this.queue.addAfter(key, ms);
  }

  /** Queued (not running, not delayed) keys, for tests and metrics. */
  get depth(): number {
    return this.queue.len();
  }

  /** True when nothing is queued or running (delayed keys do not count). */
  get idle(): boolean {
    return this.queue.len() === 0 && this.queue.inFlight() === 0;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    for (let i = 0; i < this.workers; i++) this.running.push(this.work());
  }

  /** Stops taking keys, cancels delayed ones, and waits for running syncs to end. */
  async stop(): Promise<void> {
    await this.queue.shutDownWithDrain();
    await Promise.all(this.running);
    this.running = [];
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        await this.syncFn(key);
        this.backoff.forget(key);
      } catch (err) {
        const delay = this.backoff.when(key);
        const attempt = this.backoff.numRequeues(key);
        this.log(attempt > 3 ? 'warn' : 'debug', `${this.name}: sync of ${key} failed, retrying`, {
          error: err instanceof Error ? err.message : String(err),
          attempt,
          retryInMs: delay,
        });
        this.queue.addAfter(key, delay);
      } finally {
        this.queue.done(key);
      }
    }
  }
}
