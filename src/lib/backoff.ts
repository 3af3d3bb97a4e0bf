/**
 * Exponential backoff: the one formula (`backoffDelay`) every retry, restart and requeue
 * delay of the program uses, and `Backoff`, a stateful sequence of such delays with jitter
 * for reconnect loops (informer watches, leader election, status-conflict retries). Jitter
 * spreads the reconnects of many clients after an API server restart, as client-go's
 * wait.Backoff does.
 */

import { random } from './random.ts';

/**
 * `baseMs * factor^exponent`, capped at `maxMs`: the delay after `exponent + 1` consecutive
 * failures (exponent 0 is the first retry). The exponent is clamped so the power stays
 * finite and the cap always wins for long failure streaks.
 */
export function backoffDelay(exponent: number, baseMs: number, maxMs: number, factor = 2): number {
  return Math.min(maxMs, baseMs * factor ** Math.min(Math.max(0, exponent), 30));
}

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
    this.random = opts.random ?? random;
  }

  /** Number of delays handed out since the last reset. */
  get attempts(): number {
    return this.attempt;
  }

  /** The next delay in ms; grows until `maxMs` (jitter may exceed it by `jitter`). */
  next(): number {
    const base = backoffDelay(this.attempt, this.initialMs, this.maxMs, this.factor);
    this.attempt++;
    return base * (1 + this.jitter * this.random());
  }

  reset(): void {
    this.attempt = 0;
  }
}
