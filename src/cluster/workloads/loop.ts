/**
 * The work loop shared by the simulated kube-controller-manager: a deduplicating queue
 * keyed by string, never running one key twice at once (a key re-added while it runs is
 * run again afterwards), delayed adds, and per-key exponential backoff after errors.
 *
 * Deliberately tiny: the project's full controller runtime (src/runtime) talks HTTP through
 * @kubernetes/client-node and architecture rules keep cluster/ from importing it, while these
 * loops run in-process against the API's generic store.
 */

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
}

export class Loop {
  readonly name: string;
  private readonly workers: number;
  private readonly syncFn: (key: string) => Promise<void>;
  private readonly baseMs: number;
  private readonly maxMs: number;
  private readonly log: LogFn;
  /** Insertion-ordered set of keys waiting to run. */
  private readonly queue = new Set<string>();
  private readonly processing = new Set<string>();
  /** Keys added while running: they go back to the queue when their run ends. */
  private readonly dirty = new Set<string>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly failures = new Map<string, number>();
  private readonly waiters: (() => void)[] = [];
  private running: Promise<void>[] = [];
  private stopped = false;
  private started = false;

  constructor(opts: LoopOptions) {
    this.name = opts.name;
    this.workers = Math.max(1, opts.workers ?? 2);
    this.syncFn = opts.sync;
    this.baseMs = opts.backoff?.baseMs ?? 5;
    this.maxMs = opts.backoff?.maxMs ?? 30_000;
    this.log = opts.log ?? (() => {});
  }

  /** Queues a key now (a pending delayed add of the same key is kept: the earliest wins). */
  enqueue(key: string): void {
    if (this.stopped) return;
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queue.has(key)) return;
    this.queue.add(key);
    this.wake();
  }

  /** Queues a key after a delay; a sooner request replaces a later one. */
  enqueueAfter(key: string, ms: number): void {
    if (this.stopped) return;
    if (ms <= 0) {
      this.enqueue(key);
      return;
    }
    const at = Date.now() + ms;
    const existing = this.timers.get(key);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.enqueue(key);
    }, ms);
    this.timers.set(key, { at, timer });
  }

  /** Queued (not running, not delayed) keys, for tests and metrics. */
  get depth(): number {
    return this.queue.size;
  }

  /** True when nothing is queued or running (delayed keys do not count). */
  get idle(): boolean {
    return this.queue.size === 0 && this.processing.size === 0;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    for (let i = 0; i < this.workers; i++) this.running.push(this.work());
  }

  /** Stops taking keys, cancels delayed ones, and waits for running syncs to end. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.queue.clear();
    this.dirty.clear();
    for (const w of this.waiters.splice(0)) w();
    await Promise.all(this.running);
    this.running = [];
  }

  private wake(): void {
    const w = this.waiters.shift();
    if (w) w();
  }

  private next(): Promise<string | undefined> {
    for (;;) {
      if (this.stopped) return Promise.resolve(undefined);
      const first = this.queue.values().next();
      if (!first.done) {
        this.queue.delete(first.value);
        return Promise.resolve(first.value);
      }
      return new Promise<void>((resolve) => this.waiters.push(resolve)).then(() => this.next());
    }
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.next();
      if (key === undefined) return;
      this.processing.add(key);
      try {
        await this.syncFn(key);
        this.failures.delete(key);
      } catch (err) {
        const n = (this.failures.get(key) ?? 0) + 1;
        this.failures.set(key, n);
        const delay = Math.min(this.maxMs, this.baseMs * 2 ** Math.min(n - 1, 30));
        this.log(n > 3 ? 'warn' : 'debug', `${this.name}: sync of ${key} failed, retrying`, {
          error: err instanceof Error ? err.message : String(err),
          attempt: n,
          retryInMs: delay,
        });
        this.enqueueAfter(key, delay);
      } finally {
        this.processing.delete(key);
        if (this.dirty.delete(key)) this.enqueue(key);
      }
    }
  }
}
