/**
 * The controller contract and the machinery that runs one controller.
 *
 * A controller declares its name, its primary kind (`for`), the kinds it owns (mapped
 * to the owner through controller owner references) and any other watches with a
 * function from an event to keys; then implements one `reconcile(key, ctx)`. The
 * runtime turns events into keys on a work queue and calls `reconcile` with at most
 * `maxConcurrentReconciles` keys at a time and never the same key twice at once:
 * - resolved with `{ requeueAfter: ms }`: reconciled again after that delay;
 * - resolved with `{ requeue: true }`: reconciled again after the rate limiter's delay;
 * - resolved otherwise: done until the next event;
 * - thrown: retried with per-key exponential backoff (5 ms → 1000 s) under a
 *   10 qps / 100 burst bucket, unless it is a TerminalError.
 */

import { randomUUID } from 'node:crypto';
import { type Clock, realClock } from '../lib/clock.ts';
import { defaultControllerRateLimiter, type RateLimiter } from '../lib/ratelimiter.ts';
import { WorkQueue } from '../lib/workqueue.ts';
import type { Cache } from './cache.ts';
import { type Client, FencedError } from './client.ts';
import type { MetricsContext } from './custom-metrics.ts';
import { isConflict, isTerminal } from './errors.ts';
import type { EventRecorder } from './events.ts';
import type { EventHandler, HandlerRegistration } from './informer.ts';
import type { Logger } from './log.ts';
import type { RuntimeMetrics } from './metrics.ts';
import type { IndexFunc } from './store.ts';
import type { Transform } from './transform.ts';
import { type KindRef, type KubeObject, keyOf, objectKey, parseKey } from './types.ts';

/**
 * Retries after which a key's write conflicts are no longer routine: something keeps
 * rewriting the object under the controller (another controller fighting over a field),
 * which a person should look at, so they are logged as errors again.
 */
const PERSISTENT_CONFLICT = 5;

export interface ReconcileResult {
  /** Reconcile this key again after this many ms (periodic checks, timeouts). */
  requeueAfter?: number;
  /** Reconcile again after the rate limiter's backoff. */
  requeue?: boolean;
}

// biome-ignore lint/suspicious/noConfusingVoidType: lets `async reconcile() {}` (Promise<void>) satisfy the contract.
export type ReconcileReturn = ReconcileResult | undefined | void;

export interface ReconcileContext<M = unknown> {
  /** The controller's name. */
  controller: string;
  key: string;
  namespace: string | undefined;
  name: string;
  /** Writes are fenced: they throw FencedError once this process is not the leader. */
  client: Client;
  cache: Cache;
  log: Logger;
  recorder: EventRecorder;
  /** Aborted when the controller must stop (leadership lost, shutdown deadline). */
  signal: AbortSignal;
  /** Failed attempts of this key so far (0 on a first try). */
  retries: number;
  /** What the definition's `metrics` hook returned for this manager (undefined without one). */
  metrics: M;
  /** The time to decide by: never Date.now(), so tests and simulations can move it. */
  clock: Clock;
}

export type WatchEventType = 'add' | 'update' | 'delete';

export interface WatchEvent<T extends KubeObject = KubeObject> {
  type: WatchEventType;
  obj: T;
  /** Previous state, on updates. */
  old?: T;
  /** True for objects delivered by the initial list of a (re)started controller. */
  initialList?: boolean;
  /** True for deletions inferred by a relist. */
  finalStateUnknown?: boolean;
}

/** Keys to reconcile for an object seen in an event (on updates: called for old and new). */
export type MapFunc = (obj: KubeObject, event: WatchEvent) => string[] | undefined;

export type Predicate = (event: WatchEvent) => boolean;

export interface WatchSpec extends KindRef {
  /** Default: the object's own key. */
  map?: MapFunc;
  predicates?: Predicate[];
  /** Server-side filter of this watch's informer. */
  labelSelector?: string;
  fieldSelector?: string;
}

export interface IndexSpec {
  kind: KindRef;
  name: string;
  fn: IndexFunc;
}

export interface ControllerDefinition<M = unknown> {
  /** Unique; used in metrics, logs, `--controllers` and the work queue name. */
  name: string;
  /** The primary kind: each of its events enqueues its own key. */
  for: KindRef;
  /** Filters on primary events (all must pass). */
  predicates?: Predicate[];
  /** Secondary kinds whose events enqueue their controller owner of the primary kind. */
  owns?: KindRef[];
  /** Other kinds with their own mapping to keys. */
  watches?: WatchSpec[];
  /** Cache indexes the reconcile reads through (`cache.list(kind, { index })`). */
  indexes?: IndexSpec[];
  /** Extra cache transforms by kind (run after managedFields stripping). */
  transforms?: { kind: KindRef; fn: Transform }[];
  maxConcurrentReconciles?: number;
  rateLimiter?: () => RateLimiter<string>;
  /**
   * Registers the controller's own metrics; called once by each manager the controller
   * is added to (and only if it is enabled), its result handed to reconciles as `ctx.metrics`.
   */
  metrics?(m: MetricsContext): M;
  reconcile(key: string, ctx: ReconcileContext<M>): ReconcileReturn | Promise<ReconcileReturn>;
}

// ---- mapping helpers -------------------------------------------------------

function groupOf(apiVersion: string): string {
  const i = apiVersion.indexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
}

/**
 * Maps an object to its owner of kind `owner` (controller-runtime's EnqueueRequestForOwner).
 * By default only the controlling owner reference counts.
 */
export function enqueueOwner(owner: KindRef, opts: { controllerOnly?: boolean } = {}): MapFunc {
  const group = groupOf(owner.apiVersion);
  const controllerOnly = opts.controllerOnly ?? true;
  return (obj) => {
    const keys: string[] = [];
    for (const ref of obj.metadata.ownerReferences ?? []) {
      if (controllerOnly && !ref.controller) continue;
      if (ref.kind !== owner.kind || groupOf(ref.apiVersion) !== group) continue;
      keys.push(keyOf(obj.metadata.namespace, ref.name));
    }
    return keys;
  };
}

/**
 * Maps an object to `<its namespace>/<value of label>` (e.g. pods labelled with their
 * group's name to the group). `clusterScoped` yields just the value.
 */
export function enqueueByLabel(label: string, opts: { clusterScoped?: boolean } = {}): MapFunc {
  return (obj) => {
    const v = obj.metadata.labels?.[label];
    if (!v) return [];
    return [opts.clusterScoped ? v : keyOf(obj.metadata.namespace, v)];
  };
}

/** Always the same keys (a singleton reconciler). */
export function enqueueConst(...keys: string[]): MapFunc {
  return () => keys;
}

export const enqueueObject: MapFunc = (obj) => [objectKey(obj)];

// ---- predicates ------------------------------------------------------------

/** Updates pass only when metadata.generation changed (spec edits, not status). */
export const generationChanged: Predicate = (e) =>
  e.type !== 'update' || e.old?.metadata.generation !== e.obj.metadata.generation;

/** Filters resyncs: updates pass only when the object actually changed. */
export const resourceVersionChanged: Predicate = (e) =>
  e.type !== 'update' || e.old?.metadata.resourceVersion !== e.obj.metadata.resourceVersion;

export const labelsChanged: Predicate = (e) =>
  e.type !== 'update' ||
  JSON.stringify(e.old?.metadata.labels ?? {}) !== JSON.stringify(e.obj.metadata.labels ?? {});

export const annotationsChanged: Predicate = (e) =>
  e.type !== 'update' ||
  JSON.stringify(e.old?.metadata.annotations ?? {}) !== JSON.stringify(e.obj.metadata.annotations ?? {});

export function anyOf(...ps: Predicate[]): Predicate {
  return (e) => ps.some((p) => p(e));
}

// ---- runner ----------------------------------------------------------------

export interface ControllerDeps {
  cache: Cache;
  client: Client;
  recorder: EventRecorder;
  logger: Logger;
  metrics?: RuntimeMetrics;
  /** The controller's own metrics, as its `metrics` hook returned them. */
  custom?: unknown;
  /** Default the real clock. */
  clock?: Clock;
}

interface Source {
  kind: KindRef;
  map: MapFunc;
  predicates: Predicate[];
  labelSelector?: string;
  fieldSelector?: string;
}

/**
 * Runs one controller for one leadership term: `start` registers its event handlers
 * (the cache replays every cached object, so the term starts by reconciling everything)
 * and starts its workers; `stop` unregisters, drains in-flight reconciles and ends.
 */
export class ControllerRunner {
  readonly def: ControllerDefinition;
  readonly name: string;
  private readonly deps: ControllerDeps;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly maxConcurrent: number;
  private queue: WorkQueue<string> | undefined;
  private registrations: HandlerRegistration[] = [];
  private workers: Promise<void>[] = [];
  private abort: AbortController | undefined;
  private termClient: Client | undefined;

  constructor(def: ControllerDefinition, deps: ControllerDeps) {
    this.def = def;
    this.name = def.name;
    this.deps = deps;
    this.clock = deps.clock ?? realClock;
    this.log = deps.logger.child({ controller: def.name });
    this.maxConcurrent = Math.max(1, def.maxConcurrentReconciles ?? 1);
    deps.metrics?.initController(def.name, this.maxConcurrent);
  }

  /** Every (kind, selectors) this controller reads events from. */
  sources(): Source[] {
    const primary: Source = { kind: this.def.for, map: enqueueObject, predicates: this.def.predicates ?? [] };
    const owned = (this.def.owns ?? []).map<Source>((kind) => ({
      kind,
      map: enqueueOwner(this.def.for),
      predicates: [],
    }));
    const watches = (this.def.watches ?? []).map<Source>((w) => ({
      kind: { apiVersion: w.apiVersion, kind: w.kind },
      map: w.map ?? enqueueObject,
      predicates: w.predicates ?? [],
      labelSelector: w.labelSelector,
      fieldSelector: w.fieldSelector,
    }));
    return [primary, ...owned, ...watches];
  }

  get running(): boolean {
    return this.queue !== undefined && !this.queue.shuttingDown;
  }

  /** The live queue (for tests and diagnostics). */
  get workQueue(): WorkQueue<string> | undefined {
    return this.queue;
  }

  async start(): Promise<void> {
    if (this.running) return;
    const metrics = this.deps.metrics;
    const queue = new WorkQueue<string>({
      name: this.name,
      clock: this.clock,
      rateLimiter: this.def.rateLimiter?.() ?? defaultControllerRateLimiter<string>(this.clock),
      metrics: metrics?.queueHooks(this.name),
    });
    metrics?.trackQueue(this.name, queue);
    this.queue = queue;
    const abort = new AbortController();
    this.abort = abort;
    // Reconciles of this term cannot write once it is over, even if this process leads
    // again later: a straggler must not race the next term's worker on the same key.
    this.termClient = this.deps.client.withFence(() => {
      if (abort.signal.aborted) throw new FencedError(`controller ${this.name} stopped`);
    });
    for (const src of this.sources()) {
      const inf = await this.deps.cache.informerFor(src.kind, {
        labelSelector: src.labelSelector,
        fieldSelector: src.fieldSelector,
      });
      if (queue.shuttingDown) return;
      this.registrations.push(inf.addHandler(this.handlerFor(src, queue)));
    }
    this.log.info({ workers: this.maxConcurrent }, 'starting workers');
    this.workers = Array.from({ length: this.maxConcurrent }, () => this.worker(queue));
  }

  /**
   * Stops taking work and waits up to `timeoutMs` for in-flight reconciles; then aborts
   * their signal. Resolves once the workers have returned or the timeout passed.
   */
  async stop(timeoutMs = 30_000): Promise<void> {
    const queue = this.queue;
    if (!queue) return;
    for (const r of this.registrations) r.remove();
    this.registrations = [];
    const drained = queue.shutDownWithDrain();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), timeoutMs);
      timer.unref();
    });
    const late = await Promise.race([drained.then(() => false), timedOut]);
    clearTimeout(timer);
    if (late)
      this.log.warn({ inFlight: queue.inFlight() }, 'reconciles still running at the shutdown deadline');
    this.abort?.abort(new Error('controller stopped'));
    if (!late) await Promise.all(this.workers);
    this.workers = [];
    this.queue = undefined;
  }

  /** Stops at once: in-flight reconciles are told to abort (leadership lost). */
  async abortNow(): Promise<void> {
    this.abort?.abort(new Error('leadership lost'));
    await this.stop(0);
  }

  private handlerFor(src: Source, queue: WorkQueue<string>): EventHandler {
    const enqueue = (event: WatchEvent) => {
      for (const p of src.predicates) if (!p(event)) return;
      const keys = new Set<string>();
      for (const k of src.map(event.obj, event) ?? []) keys.add(k);
      if (event.old) for (const k of src.map(event.old, event) ?? []) keys.add(k);
      for (const k of keys) if (k) queue.add(k);
    };
    return {
      add: (obj, initialList) => enqueue({ type: 'add', obj, initialList }),
      update: (old, obj) => enqueue({ type: 'update', obj, old }),
      delete: (obj, finalStateUnknown) => enqueue({ type: 'delete', obj, finalStateUnknown }),
    };
  }

  private async worker(queue: WorkQueue<string>): Promise<void> {
    const metrics = this.deps.metrics;
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      metrics?.activeWorkers.inc({ controller: this.name });
      try {
        await this.reconcileOne(queue, key);
      } finally {
        metrics?.activeWorkers.dec({ controller: this.name });
        queue.done(key);
      }
    }
  }

  private async reconcileOne(queue: WorkQueue<string>, key: string): Promise<void> {
    const metrics = this.deps.metrics;
    const controller = this.name;
    const { namespace, name } = parseKey(key);
    const parent = this.log;
    let child: Logger | undefined;
    const started = this.clock.monotonic();
    const ctx: ReconcileContext = {
      controller,
      key,
      namespace,
      name,
      client: this.termClient ?? this.deps.client,
      cache: this.deps.cache,
      // Made on first use: most reconciles log nothing, and a child logger plus its uuid
      // cost more than the reconcile.
      get log() {
        child ??= parent.child({ key, reconcileID: randomUUID() });
        return child;
      },
      recorder: this.deps.recorder,
      signal: this.abort?.signal ?? new AbortController().signal,
      retries: queue.numRequeues(key),
      metrics: this.deps.custom,
      clock: this.clock,
    };
    let result: ReconcileResult | undefined;
    try {
      result = (await this.def.reconcile(key, ctx)) as ReconcileResult | undefined;
    } catch (err) {
      metrics?.reconcileErrors.inc({ controller });
      metrics?.reconcileTotal.inc({ controller, result: 'error' });
      if (isTerminal(err)) {
        metrics?.terminalReconcileErrors.inc({ controller });
        queue.forget(key);
        ctx.log.error({ err }, 'reconcile failed with a terminal error; not retrying');
      } else if (ctx.signal.aborted) {
        ctx.log.debug({ err }, 'reconcile interrupted by shutdown');
      } else if (isConflict(err) && ctx.retries < PERSISTENT_CONFLICT) {
        // A version-guarded write lost a race with another writer: the retry reads the new
        // version and usually succeeds. Routine, so no one needs to act on it.
        queue.addRateLimited(key);
        ctx.log.debug(
          { reason: (err as Error).message, retries: ctx.retries },
          'reconcile hit a write conflict; retrying with the latest object',
        );
      } else {
        queue.addRateLimited(key);
        ctx.log.error({ err, retries: ctx.retries }, 'reconcile failed; retrying with backoff');
      }
      return;
    } finally {
      metrics?.reconcileTime.observe({ controller }, (this.clock.monotonic() - started) / 1000);
    }
    if (result?.requeueAfter !== undefined && result.requeueAfter > 0) {
      queue.forget(key);
      queue.addAfter(key, result.requeueAfter);
      metrics?.reconcileTotal.inc({ controller, result: 'requeue_after' });
    } else if (result?.requeue) {
      queue.addRateLimited(key);
      metrics?.reconcileTotal.inc({ controller, result: 'requeue' });
    } else {
      queue.forget(key);
      metrics?.reconcileTotal.inc({ controller, result: 'success' });
    }
  }
}
