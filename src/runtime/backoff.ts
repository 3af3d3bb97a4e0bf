/**
 * Exponential backoff with jitter, used wherever the runtime retries a connection
 * (informer watches, leader election, status-conflict retries). Jitter spreads the
 * reconnects of many clients after an API server restart, as client-go's
 * wait.Backoff does.
 */

export interface BackoffOptions {
  /** First delay in ms. */
  initialMs?: number;
  /** Upper bound of the delay before jitter, in ms. */
  maxMs?: number;
  /** Multiplier between consecutive delays. */
  factor?: number;
  /** Fraction of the delay added at random: delay * (1 + jitter * random). */
  jitter?: number;
  /** Source of randomness in [0, 1), replaceable for deterministic tests. */
  random?: () => number;
}

export class Backoff {
  readonly initialMs: number;
  readonly maxMs: number;
  readonly factor: number;
  readonly jitter: number;
  private readonly random: () => number;
  private attempt = 0;

  constructor(opts: BackoffOptions = {}) {
    this.initialMs = opts.initialMs ?? 200;
    this.maxMs = opts.maxMs ?? 30_000;
    this.factor = opts.factor ?? 2;
    this.jitter = opts.jitter ?? 0.5;
    this.random = opts.random ?? Math.random;
  }

  /** Number of delays handed out since the last reset. */
  get attempts(): number {
    return this.attempt;
  }

  /** The next delay in ms; grows until `maxMs` (jitter may exceed it by `jitter`). */
  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * this.factor ** this.attempt);
    this.attempt++;
    return base * (1 + this.jitter * this.random());
  }

  reset(): void {
    this.attempt = 0;
  }
}

/** Resolves after `ms`, or early (without rejecting) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
