/**
 * Virtual time for simulations: one clock shared by the embedded cluster and troupe's
 * controllers when they run in one process. Time stands still while any component works
 * and jumps to the next due timer when all are idle, so a simulated day of a busy cluster
 * runs in seconds to minutes and, with `seedRandom(seed)`, makes the same events in the
 * same order every run. The components still talk over the Kubernetes API; only the clock
 * (and the seeded random source) is shared.
 *
 * The API a simulation drives (`troupe simulate` is built on it):
 *
 *   const clock = startSimulation({ seed: 42 });          // a VirtualClock, random seeded
 *   const cluster = await startEmbeddedCluster({ clock, nodes: 4 });  // large: also
 *     // nodeLeaseRenewIntervalMs: 600_000 and events: false (see docs/benchmarks.md)
 *   const built = buildManager(kubeConfig, flags, { clock }); await built.manager.start();
 *   await runUntil(clock, clock.now() + 3_600_000);        // a simulated hour
 *   await runUntil(clock, () => done(), { stallMs: 10_000 }); // until a condition holds
 *   endSimulation();                                      // random back to Math.random
 *
 * The idleness protocol. A component says "busy" with `holdClock(clock, who)` and calls
 * the returned release when done; `who` names it in stall reports. Who holds:
 * - the API server, per HTTP request until its response is written, and per watch event
 *   queued to a client that shares the clock (`busy(watchKey, +1)`, see below);
 * - the in-process client of the data plane, per write until it settles;
 * - the runtime's REST client, per request until its body is read (bytes in flight on
 *   loopback belong to no process: the client side counts them);
 * - informers, from a watch event's arrival until its handlers ran (acknowledging the
 *   server's count), and while they list or reconnect;
 * - work queues, while an item is queued or processing;
 * - work due now but deferred to a later turn of the event loop: the scheduler's next turn,
 *   the kubelet's next batch, the server's namespace, quota and CRD work, webhook calls.
 * A timer that fires sets the timers it sets for the same instant only after the step, so
 * the work it started settles first.
 * A count that crosses a socket (a watch event sent by the server, handled by an informer)
 * is kept under one key with `busy(key, ±1)`; `clear(key)` drops it when the stream ends.
 *
 * `runUntil` drives: it lets I/O settle (rounds of setImmediate with no hold and nothing
 * changing, never sleeps), then advances to the next due timer (or the target time, or by
 * at most `maxStepMs`), and repeats. Bounds: a clock held busy with nothing changing for
 * `stallMs` of wall time, or virtual time stuck at one instant for `maxInstantMs`, rejects
 * with a StallError naming who holds the clock, rather than hanging.
 *
 * Determinism: the same seed draws the same names, uids and jitter, timers due at one
 * instant fire in the order they were set, and each instant's work settles before time
 * moves, so the same scenario makes the same events in the same order. What could still
 * differ is the order of two writes at one instant that race over loopback (a controller's
 * request and a data-plane write); the tests and bench/simclock.ts compare whole runs.
 */

import { setImmediate as immediate } from 'node:timers/promises';
import { ManualClock, type TimerHandle } from './clock.ts';
import { seedRandom } from './random.ts';

/**
 * HTTP headers of a watch between a client and a server sharing one virtual clock: the
 * client names the clock's id in the request, the server answers with the key it counts
 * the stream's events under, and the client acknowledges each event under that key.
 */
export const SHARED_CLOCK_HEADER = 'x-troupe-virtual-clock';
export const SHARED_CLOCK_KEY = 'x-troupe-virtual-clock-key';

/** Where simulations start by default: a fixed instant, so timestamps repeat across runs. */
export const SIMULATION_EPOCH = Date.UTC(2026, 0, 1);

let clocks = 0;

const STUCK = 'time stuck at one instant past maxInstantMs of wall time: work there never settles';

export class VirtualClock extends ManualClock {
  /** Unique in the process: a client and a server sharing this clock recognise each other by it. */
  readonly id: string;
  private readonly counts = new Map<string, number>();
  private busyTotal = 0;
  /** Bumped by every hold, release and timer: "nothing changed" means this did not move. */
  private changes = 0;
  private idleWaiters = new Set<() => void>();
  private firing = false;
  private deferred: (() => void)[] = [];
  /** Holds and timers by name since time last moved: who kept this instant busy. */
  private churn = new Map<string, number>();

  constructor(start = SIMULATION_EPOCH) {
    super(start);
    this.id = `${process.pid}-${++clocks}`;
  }

  override setTimer(fn: () => void, ms: number): TimerHandle {
    this.changes++;
    this.churn.set('(timers set)', (this.churn.get('(timers set)') ?? 0) + 1);
    if (!this.firing) return super.setTimer(fn, ms);
    // Set by a timer that is firing: armed once the step ends, so that the work this timer
    // starts settles before anything it scheduled for the same instant fires (and a timer
    // re-arming itself at 0 ms cannot spin inside one step).
    let inner: TimerHandle | undefined;
    let cancelled = false;
    const due = this.now() + Math.max(0, ms);
    this.deferred.push(() => {
      if (!cancelled) inner = super.setTimer(fn, due - this.now());
    });
    return {
      cancel: () => {
        cancelled = true;
        inner?.cancel();
      },
    };
  }

  /** Fires the timers due by `at` that were set before this call, in time order. */
  override advanceTo(at: number): void {
    if (at > this.now()) this.churn = new Map();
    this.firing = true;
    try {
      super.advanceTo(at);
    } finally {
      this.firing = false;
      const deferred = this.deferred;
      this.deferred = [];
      for (const arm of deferred) arm();
    }
  }

  hold(who: string): () => void {
    this.churn.set(who, (this.churn.get(who) ?? 0) + 1);
    this.add(who, 1);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.add(who, -1);
    };
  }

  /** Adds `delta` to the count kept under `key` (a count that crosses a socket); never below 0. */
  busy(key: string, delta: number): void {
    this.add(key, delta);
  }

  /** Drops the count under `key` (a watch stream ended with events never handled). */
  clear(key: string): void {
    const n = this.counts.get(key);
    if (n === undefined) return;
    this.add(key, -n);
  }

  get idle(): boolean {
    return this.busyTotal === 0;
  }

  /** Who holds the clock, by name, sorted: what a stall report shows. */
  holders(): [string, number][] {
    return [...this.counts].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }

  /** What held the clock or set timers most often since time last moved, busiest first. */
  busiest(n = 5): [string, number][] {
    return [...this.churn].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, n);
  }

  /**
   * Resolves once every component is idle and stays so for `rounds` turns of the event
   * loop with nothing changing. Rejects with StallError when held busy with nothing
   * changing for `stallMs` of wall time, or when work at this instant goes on past the wall
   * time `deadline` (a livelock: something keeps holding and releasing, or setting timers).
   */
  async settle(rounds = 3, stallMs = 30_000, deadline = Number.POSITIVE_INFINITY): Promise<void> {
    let quiet = 0;
    while (quiet < rounds) {
      // Wall time on purpose: the bound watches the real process, not the simulation.
      if (performance.now() > deadline) throw new StallError(this, STUCK);
      if (this.busyTotal > 0) {
        await this.untilIdle(stallMs, deadline);
        quiet = 0;
        continue;
      }
      const before = this.changes;
      await immediate();
      if (this.changes === before && this.busyTotal === 0) quiet++;
      else quiet = 0;
    }
  }

  private add(key: string, delta: number): void {
    this.changes++;
    const prev = this.counts.get(key) ?? 0;
    const next = prev + delta;
    if (next <= 0) {
      this.counts.delete(key);
      this.busyTotal -= prev;
    } else {
      this.counts.set(key, next);
      this.busyTotal += delta;
    }
    if (this.busyTotal === 0 && this.idleWaiters.size > 0) {
      const waiters = [...this.idleWaiters];
      this.idleWaiters.clear();
      for (const w of waiters) w();
    }
  }

  private untilIdle(stallMs: number, deadline: number): Promise<void> {
    return new Promise((resolve, reject) => {
      let seen = this.changes;
      // Wall time on purpose: the stall detector watches the real process, not the simulation.
      const check = setInterval(() => {
        if (this.changes !== seen && performance.now() <= deadline) {
          seen = this.changes;
          return;
        }
        clearInterval(check);
        this.idleWaiters.delete(wake);
        const why =
          performance.now() > deadline ? STUCK : `held busy with nothing changing for ${stallMs} ms`;
        reject(new StallError(this, why));
      }, stallMs);
      const wake = () => {
        clearInterval(check);
        resolve();
      };
      this.idleWaiters.add(wake);
    });
  }
}

/** The simulation cannot go on: who holds the clock (or keeps time at one instant) is named. */
export class StallError extends Error {
  readonly at: number;
  readonly holders: [string, number][];
  /** Who held the clock or set timers most often meanwhile: the suspects of a livelock. */
  readonly busiest: [string, number][];

  constructor(clock: VirtualClock, why: string) {
    const holders = clock.holders();
    const busiest = clock.busiest();
    const list = (xs: [string, number][]) =>
      xs.length > 0 ? xs.map(([k, n]) => (n > 1 ? `${k} ×${n}` : k)).join(', ') : 'nobody';
    super(
      `virtual clock stalled at ${new Date(clock.now()).toISOString()}: ${why}; held by: ${list(holders)}; ` +
        `busiest meanwhile: ${list(busiest)}`,
    );
    this.name = 'StallError';
    this.at = clock.now();
    this.holders = holders;
    this.busiest = busiest;
  }
}

export interface RunOptions {
  /** Advance at most this much virtual time per step (default unbounded: straight to the next timer). */
  maxStepMs?: number;
  /** Wall ms the clock may be held with nothing changing before StallError (default 30 s). */
  stallMs?: number;
  /** Wall ms virtual time may stay at one instant while work goes on before StallError (default 5 min). */
  maxInstantMs?: number;
  /** Event-loop turns with nothing changing that count as settled (default 3). */
  settleRounds?: number;
  signal?: AbortSignal;
  /** Called after each advance, with the new time. */
  onStep?(now: number): void;
}

export interface RunResult {
  /** Virtual time reached. */
  now: number;
  /** Times the clock advanced. */
  steps: number;
  /** Wall milliseconds the run took. */
  wallMs: number;
  /**
   * `reached`: the time or the predicate; `idle`: no timer left and the predicate still
   * false (nothing more will ever happen); `aborted`: the signal.
   */
  outcome: 'reached' | 'idle' | 'aborted';
}

/**
 * Runs the simulation until virtual time `until` (epoch ms) or until `until()` is true
 * (checked whenever everything is idle), jumping from timer to timer.
 */
export async function runUntil(
  clock: VirtualClock,
  until: number | (() => boolean),
  opts: RunOptions = {},
): Promise<RunResult> {
  // Wall time on purpose: how long the run took, and the stuck-instant bound.
  const wallStart = performance.now();
  const stallMs = opts.stallMs ?? 30_000;
  const maxInstantMs = opts.maxInstantMs ?? 300_000;
  const maxStep = opts.maxStepMs ?? Number.POSITIVE_INFINITY;
  const target = typeof until === 'number' ? until : Number.POSITIVE_INFINITY;
  const reached = typeof until === 'number' ? () => clock.now() >= until : until;
  let steps = 0;
  let instant = clock.now();
  let instantSince = wallStart;
  const result = (outcome: RunResult['outcome']): RunResult => ({
    now: clock.now(),
    steps,
    wallMs: performance.now() - wallStart,
    outcome,
  });
  for (;;) {
    await clock.settle(opts.settleRounds, stallMs, instantSince + maxInstantMs);
    if (opts.signal?.aborted) return result('aborted');
    if (reached()) return result('reached');
    const next = clock.nextTimerAt();
    if (next === undefined && target === Number.POSITIVE_INFINITY) return result('idle');
    const to = Math.min(next ?? target, target, clock.now() + maxStep);
    if (to > instant) {
      instant = to;
      instantSince = performance.now();
    } else if (performance.now() - instantSince > maxInstantMs) {
      throw new StallError(clock, STUCK);
    }
    clock.advanceTo(to);
    steps++;
    opts.onStep?.(clock.now());
  }
}

/**
 * Starts a simulation run: seeds the program's random source (names, uids, jitter) and
 * returns the clock to hand to the embedded cluster and the manager.
 */
export function startSimulation(opts: { seed?: number; start?: number } = {}): VirtualClock {
  seedRandom(opts.seed ?? 0);
  return new VirtualClock(opts.start ?? SIMULATION_EPOCH);
}

/** Ends a simulation run: the random source is Math.random again. */
export function endSimulation(): void {
  seedRandom(undefined);
}
