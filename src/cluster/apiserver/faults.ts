/**
 * Fault injection for reliability tests of controllers: a share of failed requests
 * (500, 429 with Retry-After, 409), watch streams cut on a period, resourceVersions
 * expired on a period, and added latency. Everything is off by default.
 */
import { errors } from './errors.ts';
import type { ObjectStore } from './store.ts';

export interface FaultOptions {
  /** Share (0..1) of resource requests that fail. */
  errorRate?: number;
  /** Which failures to draw from; defaults to all three. */
  errorCodes?: (500 | 429 | 409)[];
  /** Cut every open watch stream on this period. */
  watchCutMs?: number;
  /** Forget watch history on this period so resumes get 410 Expired. */
  expireMs?: number;
  /** Latency added to every resource request. */
  latencyMs?: number;
  /** Verbs the error rate applies to (default: all). */
  verbs?: string[];
}

export class Faults {
  private opts: FaultOptions = {};
  private readonly watches = new Set<() => void>();
  private timers: NodeJS.Timeout[] = [];
  private readonly store: ObjectStore;
  private random: () => number;

  constructor(store: ObjectStore, random: () => number = Math.random) {
    this.store = store;
    this.random = random;
  }

  get options(): Readonly<FaultOptions> {
    return this.opts;
  }

  configure(opts: FaultOptions): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.opts = { ...opts };
    if (opts.watchCutMs) {
      this.timers.push(setInterval(() => this.cutWatches(), opts.watchCutMs).unref());
    }
    if (opts.expireMs) {
      this.timers.push(setInterval(() => this.store.expireHistory(), opts.expireMs).unref());
    }
  }

  stop(): void {
    this.configure({});
  }

  cutWatches(): void {
    for (const cut of [...this.watches]) cut();
  }

  trackWatch(cut: () => void): void {
    this.watches.add(cut);
  }

  untrackWatch(cut: () => void): void {
    this.watches.delete(cut);
  }

  async beforeRequest(verb: string): Promise<void> {
    const o = this.opts;
    if (o.latencyMs) await new Promise((r) => setTimeout(r, o.latencyMs));
    if (!o.errorRate || (o.verbs && !o.verbs.includes(verb))) return;
    if (this.random() >= o.errorRate) return;
    const codes = o.errorCodes?.length ? o.errorCodes : [500, 429, 409];
    const code = codes[Math.floor(this.random() * codes.length)]!;
    if (code === 429) throw errors.tooManyRequests(1);
    if (code === 409)
      throw errors.conflict(
        { group: '', resource: 'injected' },
        'fault',
        'the object has been modified; please apply your changes to the latest version and try again',
      );
    throw errors.internal('injected fault');
  }
}
