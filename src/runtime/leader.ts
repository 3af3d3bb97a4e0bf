/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's algorithm:
 * - a candidate takes the Lease when it has no holder, or when its record has not
 *   changed for leaseDuration as measured on the candidate's own clock (no trust in
 *   other machines' clocks);
 * - the leader renews every retryPeriod; if no renewal succeeds within renewDeadline of
 *   the last one, it stops leading. Since renewDeadline < leaseDuration, it stops
 *   acting before any other candidate may take the Lease;
 * - `isLeader` is itself bounded by the last successful renewal plus renewDeadline, so a
 *   stalled event loop or a hung request cannot stretch leadership past the deadline.
 *   The manager's fenced client checks it before every write.
 * - on `stop` the Lease is released (holder cleared) so a successor starts at once.
 * Every deadline and expiry is measured on `clock.monotonic()`: client-go's observedTime
 * (tools/leaderelection/leaderelection.go) is a Go time.Time whose monotonic reading
 * `Since`/`After` subtract, so a wall-clock step neither ends a term nor stretches it.
 */

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { type Clock, realClock, type TimerHandle } from '../lib/clock.ts';
import { random } from '../lib/random.ts';
import { type Client, FencedError } from './client.ts';
import { isAlreadyExists, isConflict, isNotFound } from './errors.ts';
import { microTime } from './events.ts';
import { type Logger, silentLogger } from './log.ts';
import type { KubeObject } from './types.ts';

export interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number;
}

export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

export interface LeaderElectionOptions {
  /** Lease name, e.g. `troupe-controller-manager`. */
  name: string;
  namespace: string;
  /** Unique per process; defaults to `<hostname>_<uuid>`. */
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Clear the Lease's holder on stop so another candidate need not wait for expiry. */
  releaseOnCancel?: boolean;
  onStartedLeading?(): void;
  onStoppedLeading?(): void;
  onNewLeader?(identity: string): void;
  /** leader_election_master_status hook. */
  onStatus?(leading: boolean): void;
  logger?: Logger;
  /** Lease times and deadlines; default the real clock. */
  clock?: Clock;
}

const LEASE = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' };

export function defaultIdentity(): string {
  return `${hostname()}_${randomUUID()}`;
}

export class LeaderElector {
  readonly identity: string;
  readonly name: string;
  readonly namespace: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  private readonly client: Client;
  private readonly opts: LeaderElectionOptions;
  private readonly log: Logger;
  private readonly stopController = new AbortController();
  private leading = false;
  private lastRenew = Number.NEGATIVE_INFINITY; // clock.monotonic() when the last successful renewal was sent
  private deadlineTimer: TimerHandle | undefined;
  private readonly clock: Clock;
  private observed: { spec: LeaseSpec; at: number; resourceVersion?: string } | undefined;
  private observedHolder: string | undefined;
  private running: Promise<void> | undefined;

  constructor(client: Client, opts: LeaderElectionOptions) {
    this.client = client;
    this.opts = opts;
    this.name = opts.name;
    this.namespace = opts.namespace;
    this.identity = opts.identity ?? defaultIdentity();
    this.clock = opts.clock ?? realClock;
    this.leaseDurationMs = opts.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = opts.retryPeriodMs ?? 2_000;
    if (this.leaseDurationMs <= this.renewDeadlineMs) {
      throw new Error('leaseDuration must be greater than renewDeadline');
    }
    if (this.renewDeadlineMs <= this.retryPeriodMs * 1.2) {
      throw new Error('renewDeadline must be greater than retryPeriod*1.2');
    }
    this.log = (opts.logger ?? silentLogger()).child({ lease: `${opts.namespace}/${opts.name}` });
  }

  /** Leading, and the last renewal is recent enough to act on. */
  get isLeader(): boolean {
    return this.leading && this.clock.monotonic() - this.lastRenew < this.renewDeadlineMs;
  }

  /** The holder last observed on the Lease. */
  get leader(): string | undefined {
    return this.observedHolder;
  }

  /** Throws FencedError unless this process may act as leader right now. */
  assertLeader(): void {
    if (!this.isLeader) throw new FencedError(`not the leader of lease ${this.namespace}/${this.name}`);
  }

  /**
   * Campaigns until elected, then renews until leadership is lost or `stop` is called.
   * Resolves when this term is over (after onStoppedLeading). Call again to re-campaign.
   */
  run(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.term().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Stops campaigning or leading and releases the Lease if held. */
  async stop(): Promise<void> {
    this.stopController.abort();
    await this.running;
  }

  private get stopped(): boolean {
    return this.stopController.signal.aborted;
  }

  private async term(): Promise<void> {
    const signal = this.stopController.signal;
    // Acquire.
    while (!this.stopped) {
      if (await this.tryAcquireOrRenew(this.retryPeriodMs)) break;
      // client-go jitters the retry period by up to 20% so candidates do not move in lockstep.
      await this.clock.sleep(this.retryPeriodMs * (1 + 0.2 * random()), signal);
    }
    if (this.stopped) return;
    this.leading = true;
    this.armDeadline();
    this.log.info({ identity: this.identity }, 'became leader');
    this.opts.onStatus?.(true);
    this.opts.onStartedLeading?.();

    // Renew.
    while (!this.stopped && this.leading) {
      await this.clock.sleep(this.retryPeriodMs, signal);
      if (this.stopped || !this.leading) break;
      let renewed = false;
      while (!this.stopped && this.isLeader) {
        const remaining = this.lastRenew + this.renewDeadlineMs - this.clock.monotonic();
        if (await this.tryAcquireOrRenew(Math.max(1, remaining))) {
          renewed = true;
          break;
        }
        await this.clock.sleep(Math.min(this.retryPeriodMs / 2, Math.max(0, remaining)), signal);
      }
      if (!renewed && !this.stopped) this.lose('failed to renew the lease within the renew deadline');
    }
    const wasLeading = this.leading;
    if (this.stopped && wasLeading) {
      // Stop acting first, then release: a successor must never overlap with us.
      this.lose('stopping');
      if (this.opts.releaseOnCancel ?? true) await this.release();
    }
  }

  /** Leadership ends now: fence, report, call back (once per term). */
  private lose(why: string): void {
    if (!this.leading) return;
    this.leading = false;
    this.lastRenew = Number.NEGATIVE_INFINITY;
    this.deadlineTimer?.cancel();
    this.log.info({ why }, 'stopped leading');
    this.opts.onStatus?.(false);
    this.opts.onStoppedLeading?.();
  }

  /** Fires when the renew deadline passes without a renewal, even if a request is still hanging. */
  private armDeadline(): void {
    this.deadlineTimer?.cancel();
    const wait = this.lastRenew + this.renewDeadlineMs - this.clock.monotonic();
    this.deadlineTimer = this.clock.setTimer(
      () => {
        if (this.leading && !this.isLeader) this.lose('renew deadline passed');
      },
      Math.max(0, wait),
    );
  }

  private async tryAcquireOrRenew(timeoutMs: number): Promise<boolean> {
    // Deadlines on the monotonic reading (client-go's observedTime); the Lease's times on the wall clock.
    const sentAt = this.clock.monotonic();
    const now = this.clock.now();
    const signal = AbortSignal.any([this.stopController.signal, AbortSignal.timeout(Math.ceil(timeoutMs))]);
    try {
      let lease: Lease | undefined;
      try {
        lease = await this.client.get<Lease>(LEASE, this.name, this.namespace, { signal });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      const mine: LeaseSpec = {
        holderIdentity: this.identity,
        leaseDurationSeconds: Math.ceil(this.leaseDurationMs / 1000),
        acquireTime: microTime(now),
        renewTime: microTime(now),
        leaseTransitions: 0,
      };
      if (!lease) {
        const created = await this.client.create<Lease>(
          { ...LEASE, metadata: { name: this.name, namespace: this.namespace }, spec: mine },
          { signal },
        );
        this.observe(created, this.clock.monotonic());
        return this.renewed(sentAt);
      }
      const spec = lease.spec ?? {};
      this.observe(lease, this.clock.monotonic());
      const holder = spec.holderIdentity ?? '';
      const observedAt = this.observed?.at ?? this.clock.monotonic();
      const durationMs = (spec.leaseDurationSeconds ?? Math.ceil(this.leaseDurationMs / 1000)) * 1000;
      if (holder && holder !== this.identity && observedAt + durationMs > this.clock.monotonic()) {
        return false; // held by another candidate and not expired by our clock
      }
      if (holder === this.identity) {
        mine.acquireTime = spec.acquireTime ?? mine.acquireTime;
        mine.leaseTransitions = spec.leaseTransitions ?? 0;
      } else {
        mine.leaseTransitions = (spec.leaseTransitions ?? 0) + 1;
      }
      const updated = await this.client.update<Lease>({ ...lease, spec: mine }, { signal });
      this.observe(updated, this.clock.monotonic());
      return this.renewed(sentAt);
    } catch (err) {
      if (!isConflict(err) && !isAlreadyExists(err) && !this.stopped) {
        this.log.debug({ err: (err as Error).message }, 'lease acquire/renew attempt failed');
      }
      return false;
    }
  }

  private renewed(sentAt: number): boolean {
    // A renewal only counts if it completed before the deadline it was meant to extend.
    if (this.leading && sentAt - this.lastRenew >= this.renewDeadlineMs) return false;
    this.lastRenew = sentAt;
    if (this.leading) this.armDeadline();
    return true;
  }

  /** `at` is the clock's monotonic reading when the Lease was read. */
  private observe(lease: Lease, at: number): void {
    const spec = lease.spec ?? {};
    const prev = this.observed;
    const changed =
      !prev ||
      prev.spec.holderIdentity !== spec.holderIdentity ||
      prev.spec.renewTime !== spec.renewTime ||
      prev.spec.acquireTime !== spec.acquireTime ||
      prev.spec.leaseTransitions !== spec.leaseTransitions;
    if (changed) this.observed = { spec: { ...spec }, at, resourceVersion: lease.metadata.resourceVersion };
    else if (prev) prev.resourceVersion = lease.metadata.resourceVersion;
    const holder = spec.holderIdentity ?? undefined;
    if (holder && holder !== this.observedHolder) {
      this.observedHolder = holder;
      this.opts.onNewLeader?.(holder);
    }
  }

  private async release(): Promise<void> {
    try {
      const lease = await this.client.get<Lease>(LEASE, this.name, this.namespace, {
        signal: AbortSignal.timeout(this.renewDeadlineMs),
      });
      if (lease.spec?.holderIdentity !== this.identity) return;
      const now = microTime(this.clock.now());
      await this.client.update<Lease>(
        {
          ...lease,
          spec: {
            holderIdentity: null,
            leaseDurationSeconds: 1,
            acquireTime: now,
            renewTime: now,
            leaseTransitions: lease.spec?.leaseTransitions ?? 0,
          },
        },
        { signal: AbortSignal.timeout(this.renewDeadlineMs) },
      );
      this.log.info('released the lease');
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'could not release the lease');
    }
  }
}
