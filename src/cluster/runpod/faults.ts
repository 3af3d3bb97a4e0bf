/**
 * Fault injection for the RunPod stand-in: answers chosen requests with an error (with
 * RunPod's problem-details body), delays them past a client's timeout, or drops the
 * connection, so controllers can be tested against rate limits, outages and timeouts.
 */

export interface FaultRule {
  /** HTTP method to match (any when absent). */
  method?: string;
  /** Matches the request path (e.g. `/v2/pods`); a string matches as a prefix. */
  path?: string | RegExp;
  /** Answer with this status (429, 500, 502, 503, 400 ...). */
  status?: number;
  /** Problem `detail` for the answer. */
  detail?: string;
  /** Seconds for `Retry-After` (429 and 503). */
  retryAfterSeconds?: number;
  /** Hold the request this long before answering (or before passing it on when no status). */
  delayMs?: number;
  /** Destroy the connection instead of answering. */
  drop?: boolean;
  /** How many requests this rule applies to (default: until cleared). */
  times?: number;
  /** Apply to each matching request with this probability (0..1, default 1). */
  probability?: number;
}

export interface MatchedFault {
  rule: FaultRule;
}

export class Faults {
  private rules: { rule: FaultRule; left: number }[] = [];
  private readonly random: () => number;
  /** Requests a fault was applied to, by status ('drop', 'delay' for the others). */
  readonly applied: Record<string, number> = {};

  constructor(random: () => number = Math.random) {
    this.random = random;
  }

  /** Adds a rule; returns a function that removes it. */
  inject(rule: FaultRule): () => void {
    const entry = { rule, left: rule.times ?? Number.POSITIVE_INFINITY };
    this.rules.push(entry);
    return () => {
      this.rules = this.rules.filter((r) => r !== entry);
    };
  }

  /** Every request fails with 503 until `clear()` (a RunPod outage). */
  outage(detail = 'service temporarily unavailable'): () => void {
    return this.inject({ status: 503, detail, retryAfterSeconds: 1 });
  }

  clear(): void {
    this.rules = [];
  }

  match(method: string, path: string): FaultRule | undefined {
    for (const entry of this.rules) {
      const r = entry.rule;
      if (entry.left <= 0) continue;
      if (r.method && r.method.toUpperCase() !== method) continue;
      if (r.path !== undefined) {
        if (typeof r.path === 'string' ? !path.startsWith(r.path) : !r.path.test(path)) continue;
      }
      if (r.probability !== undefined && this.random() >= r.probability) continue;
      entry.left--;
      const key = r.drop ? 'drop' : r.status !== undefined ? String(r.status) : 'delay';
      this.applied[key] = (this.applied[key] ?? 0) + 1;
      return r;
    }
    return undefined;
  }
}
