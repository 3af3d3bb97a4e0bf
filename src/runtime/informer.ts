/**
 * An informer: list, then watch from the list's resourceVersion, keeping an indexed
 * store current and telling handlers what changed (client-go's Reflector +
 * SharedIndexInformer).
 *
 * Resilience, which the library's own makeInformer lacks (it stops on errors):
 * - a watch that ends normally (server timeout, bookmarks keep the resourceVersion
 *   fresh) resumes from the last resourceVersion seen, without relisting;
 * - 410 Gone (expired resourceVersion, on connect or as an ERROR event) relists and
 *   turns the difference into add/update/delete events;
 * - any other error (refused connection, 5xx, cut stream) retries with exponential
 *   backoff and jitter, forever, until `stop`.
 */

import { Backoff, type BackoffOptions } from '../lib/backoff.ts';
import { type Clock, holdClock, realClock, setRepeating, sleep, type TimerHandle } from '../lib/clock.ts';
import { random } from '../lib/random.ts';
import { ApiError, isGone, type Status } from './errors.ts';
import type { Logger } from './log.ts';
import { silentLogger } from './log.ts';
import { type ResourceInfo, RestMapper } from './resources.ts';
import type { RestClient } from './rest.ts';
import { type IndexFunc, indexByNamespace, NAMESPACE_INDEX, Store } from './store.ts';
import { stripForCache, type Transform } from './transform.ts';
import { type KindRef, type KubeObject, objectKey } from './types.ts';
import { parseWatchEvent } from './watch-event.ts';

export interface EventHandler<T extends KubeObject = KubeObject> {
  /** `initialList` is true for objects delivered by the first list (or replayed to a late handler). */
  add?(obj: T, initialList: boolean): void;
  /** Also called on resync with `oldObj === newObj`. */
  update?(oldObj: T, newObj: T): void;
  /** `finalStateUnknown`: the deletion was inferred by a relist, `obj` is the last state seen. */
  delete?(obj: T, finalStateUnknown: boolean): void;
}

export interface HandlerRegistration {
  remove(): void;
}

export interface InformerMetrics {
  relisted?(kind: string): void;
  watchRestarted?(kind: string, reason: 'closed' | 'gone' | 'error'): void;
  objects?(kind: string, n: number): void;
}

export interface InformerOptions {
  kind: KindRef;
  /** Limit to one namespace; ignored for cluster-scoped kinds. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Replays every cached object to `update` this often (ms); 0 disables. */
  resyncMs?: number;
  /** Applied to each object before caching; defaults to `stripForCache`. */
  transform?: Transform;
  /**
   * The transform drops metadata.managedFields, so watch events need not decode them
   * (default: true with the default transform, false with another).
   */
  dropsManagedFields?: boolean;
  /** List page size. */
  pageSize?: number;
  /** Reconnect backoff after errors. */
  backoff?: BackoffOptions;
  /** Server-side watch timeout range in seconds (client-go picks 5–10 min at random). */
  watchTimeoutSeconds?: [number, number];
  logger?: Logger;
  metrics?: InformerMetrics;
  /**
   * The controllers' clock: resyncs run on it, and a virtual clock is held from the start of
   * a list until its watch is established and while a watch event is being handled.
   */
  clock?: Clock;
}

class GoneError extends Error {}

export class Informer<T extends KubeObject = KubeObject> {
  readonly kind: KindRef;
  readonly namespace: string | undefined;
  readonly labelSelector: string | undefined;
  readonly fieldSelector: string | undefined;
  readonly store = new Store<T>();
  private readonly rest: RestClient;
  private readonly mapper: RestMapper;
  private readonly opts: InformerOptions;
  private readonly transform: Transform;
  private readonly dropsManagedFields: boolean;
  private readonly log: Logger;
  private readonly metrics: InformerMetrics;
  private readonly kindName: string;
  private handlers: EventHandler<T>[] = [];
  private synced = false;
  private syncWaiters: ((ok: boolean) => void)[] = [];
  private running: Promise<void> | undefined;
  private stopped = false;
  // One signal for the informer's life: stop() must also cancel a request started after it was called.
  private readonly abort = new AbortController();
  private resyncTimer: TimerHandle | undefined;
  private rv = '';
  private readonly clock: Clock;
  private releaseClock: (() => void) | undefined;

  constructor(rest: RestClient, mapper: RestMapper, opts: InformerOptions) {
    this.rest = rest;
    this.mapper = mapper;
    this.opts = opts;
    this.kind = opts.kind;
    this.namespace = opts.namespace || undefined;
    this.labelSelector = opts.labelSelector || undefined;
    this.fieldSelector = opts.fieldSelector || undefined;
    this.transform = opts.transform ?? stripForCache;
    this.dropsManagedFields = opts.dropsManagedFields ?? opts.transform === undefined;
    this.kindName = `${opts.kind.kind}.${opts.kind.apiVersion}`;
    this.log = (opts.logger ?? silentLogger()).child({ informer: this.kindName, namespace: this.namespace });
    this.metrics = opts.metrics ?? {};
    this.clock = opts.clock ?? realClock;
    this.store.addIndexer(NAMESPACE_INDEX, indexByNamespace as IndexFunc<T>);
  }

  get hasSynced(): boolean {
    return this.synced;
  }

  get isRunning(): boolean {
    return this.running !== undefined && !this.stopped;
  }

  /** The resourceVersion of the last list, event or bookmark processed. */
  get lastResourceVersion(): string {
    return this.rv;
  }

  /**
   * Registers a handler. Every object already cached is replayed to it as an `add`
   * (initialList=true), as client-go does for late handlers; this includes the pages of
   * a first list still in progress, which would otherwise be missed.
   */
  addHandler(handler: EventHandler<T>): HandlerRegistration {
    this.handlers = [...this.handlers, handler];
    if (handler.add) {
      for (const obj of this.store.values()) this.call(() => handler.add?.(obj, true));
    }
    return {
      remove: () => {
        this.handlers = this.handlers.filter((h) => h !== handler);
      },
    };
  }

  addIndexer(name: string, fn: IndexFunc<T>): void {
    this.store.addIndexer(name, fn);
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  list(): T[] {
    return this.store.list();
  }

  start(): void {
    if (this.running || this.stopped) return;
    this.running = this.run();
    const resync = this.opts.resyncMs ?? 0;
    if (resync > 0) this.resyncTimer = setRepeating(this.clock, () => this.resync(), resync);
  }

  /** Resolves true once the first list is in the store, false if stopped or aborted first. */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (this.stopped || signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(ok);
      };
      const onAbort = () => {
        this.syncWaiters = this.syncWaiters.filter((w) => w !== done);
        resolve(false);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.syncWaiters.push(done);
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.resyncTimer?.cancel();
    this.abort.abort();
    this.resolveSync(false);
    await this.running;
  }

  private async run(): Promise<void> {
    try {
      await this.loop();
    } finally {
      this.holdClock(false);
    }
  }

  /**
   * While the informer lists, reconnects or waits to retry, a virtual clock stands still:
   * the events it would miss meanwhile must be handled at their time.
   */
  private holdClock(on: boolean): void {
    if (on) this.releaseClock ??= holdClock(this.clock, `informer ${this.kindName} list/watch`);
    else {
      this.releaseClock?.();
      this.releaseClock = undefined;
    }
  }

  private async loop(): Promise<void> {
    const backoff = new Backoff({ initialMs: 200, maxMs: 30_000, jitter: 1, ...this.opts.backoff });
    let needList = true;
    let info: ResourceInfo | undefined;
    while (!this.stopped) {
      this.holdClock(true);
      try {
        info ??= await this.mapper.resourceFor(this.kind);
        if (needList) {
          await this.listAndReplace(info);
          needList = false;
        }
        const productive = await this.watch(info);
        this.holdClock(true);
        this.metrics.watchRestarted?.(this.kindName, 'closed');
        // The server accepted the watch, so it is reachable: reconnect promptly. A stream
        // that ended with nothing in it waits a little, so a server that closes every
        // watch at once cannot make us spin.
        backoff.reset();
        if (!productive) await sleep(50 + random() * 100, this.abort.signal);
      } catch (err) {
        if (this.stopped) break;
        this.holdClock(true);
        if (err instanceof GoneError || isGone(err)) {
          this.log.info({ rv: this.rv }, 'resourceVersion expired, relisting');
          this.metrics.watchRestarted?.(this.kindName, 'gone');
          needList = true;
          // Relisting at once is right, but a server that keeps answering 410 must not make us spin.
          if (backoff.attempts > 0) await sleep(backoff.next(), this.abort.signal);
          else backoff.next();
          continue;
        }
        const wait = backoff.next();
        this.metrics.watchRestarted?.(this.kindName, 'error');
        this.log.warn({ err: errSummary(err), retryInMs: Math.round(wait) }, 'list/watch failed, retrying');
        // A kind that cannot be listed (its CRD missing, the server refusing) must not stop a
        // virtual clock for everyone: time goes on while this informer waits to retry.
        this.holdClock(false);
        await sleep(wait, this.abort.signal);
      }
    }
  }

  private basePath(info: ResourceInfo): string {
    return RestMapper.path(info, info.namespaced ? this.namespace : undefined);
  }

  /** Lists page by page into the store, then removes what the list no longer has. */
  private async listAndReplace(info: ResourceInfo): Promise<void> {
    const signal = this.abort.signal;
    const seen = new Set<string>();
    const initial = !this.synced;
    let cont: string | undefined;
    let limit: number | undefined = this.opts.pageSize ?? 500;
    let rv = '';
    for (;;) {
      let page: { items?: T[]; metadata?: { resourceVersion?: string; continue?: string } };
      try {
        page = await this.rest.request({
          method: 'GET',
          path: this.basePath(info),
          query: {
            labelSelector: this.labelSelector,
            fieldSelector: this.fieldSelector,
            limit,
            continue: cont,
          },
          signal,
        });
      } catch (err) {
        if (cont && isGone(err)) {
          // The continue token expired mid-list: start over in one unpaginated request.
          cont = undefined;
          limit = undefined;
          seen.clear();
          continue;
        }
        throw err;
      }
      for (const raw of page.items ?? []) {
        raw.apiVersion ??= this.kind.apiVersion;
        raw.kind ??= this.kind.kind;
        const obj = this.transform(raw) as T;
        const key = objectKey(obj);
        seen.add(key);
        const old = this.store.set(key, obj);
        if (!old) this.emitAdd(obj, initial);
        else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.emitUpdate(old, obj);
      }
      rv = page.metadata?.resourceVersion ?? rv;
      cont = page.metadata?.continue || undefined;
      if (!cont) break;
    }
    for (const key of [...this.store.keys()]) {
      if (seen.has(key)) continue;
      const old = this.store.delete(key);
      if (old) this.emitDelete(old, true);
    }
    this.rv = rv;
    this.metrics.relisted?.(this.kindName);
    this.metrics.objects?.(this.kindName, this.store.size);
    if (!this.synced) {
      this.synced = true;
      this.log.debug({ objects: this.store.size, rv }, 'synced');
      this.resolveSync(true);
    }
  }

  /**
   * One watch connection; resolves with whether it delivered anything once the stream
   * ends or is cut. Rejects when the connection cannot be made and on ERROR events.
   */
  private async watch(info: ResourceInfo): Promise<boolean> {
    const signal = this.abort.signal;
    const [lo, hi] = this.opts.watchTimeoutSeconds ?? [300, 600];
    const timeoutSeconds = Math.floor(lo + random() * (hi - lo));
    const res = await this.rest.stream({
      method: 'GET',
      path: this.basePath(info),
      query: {
        watch: 1,
        resourceVersion: this.rv,
        allowWatchBookmarks: true,
        timeoutSeconds,
        labelSelector: this.labelSelector,
        fieldSelector: this.fieldSelector,
      },
      signal,
      idleTimeoutMs: (timeoutSeconds + 60) * 1000,
    });
    let productive = false;
    let buffer = '';
    // The watch is established: from now on the server counts what it sends, and each event
    // handled here is acknowledged to a shared virtual clock.
    this.holdClock(false);
    const key = res.clockKey;
    const handled = key && this.clock.busy ? () => this.clock.busy?.(key, -1) : undefined;
    res.body.setEncoding('utf8');
    try {
      for await (const chunk of res.body as AsyncIterable<string>) {
        buffer += chunk;
        let start = 0;
        let nl = buffer.indexOf('\n', start);
        while (nl >= 0) {
          const line = buffer.slice(start, nl);
          start = nl + 1;
          if (line.trim()) {
            try {
              this.handleLine(line);
            } finally {
              handled?.();
            }
            productive = true;
          }
          nl = buffer.indexOf('\n', start);
        }
        buffer = buffer.slice(start);
      }
      if (buffer.trim()) {
        this.handleLine(buffer);
        productive = true;
      }
    } catch (err) {
      if (this.stopped) return productive;
      if (err instanceof GoneError || err instanceof ApiError) throw err;
      // A stream cut after it was established is routine (load balancers, API server
      // restarts, idle timeouts): resume from the last resourceVersion.
      this.log.debug({ err: errSummary(err) }, 'watch stream interrupted');
      return productive;
    } finally {
      res.body.destroy();
    }
    return productive;
  }

  private handleLine(line: string): void {
    let event: { type?: string; object?: T & Status };
    try {
      event = parseWatchEvent(line, this.dropsManagedFields);
    } catch {
      throw new Error(`malformed watch event: ${line.slice(0, 200)}`);
    }
    const type = event.type;
    const raw = event.object;
    if (!raw) return;
    if (type === 'ERROR') {
      const status = raw as Status;
      if (status.code === 410 || status.reason === 'Expired' || status.reason === 'Gone') {
        throw new GoneError(status.message ?? 'resourceVersion expired');
      }
      throw new ApiError({ statusCode: status.code ?? 500, method: 'WATCH', path: this.kindName, status });
    }
    const rv = raw.metadata?.resourceVersion;
    if (type === 'BOOKMARK') {
      if (rv) this.rv = rv;
      return;
    }
    raw.apiVersion ??= this.kind.apiVersion;
    raw.kind ??= this.kind.kind;
    const obj = this.transform(raw) as T;
    const key = objectKey(obj);
    if (type === 'ADDED' || type === 'MODIFIED') {
      const old = this.store.set(key, obj);
      if (old) this.emitUpdate(old, obj);
      else this.emitAdd(obj, false);
    } else if (type === 'DELETED') {
      const old = this.store.delete(key);
      this.emitDelete(obj ?? old, false);
    }
    if (rv) this.rv = rv;
    this.metrics.objects?.(this.kindName, this.store.size);
  }

  private resync(): void {
    if (!this.synced || this.stopped) return;
    for (const obj of this.store.values()) this.emitUpdate(obj, obj);
  }

  private emitAdd(obj: T, initial: boolean): void {
    for (const h of this.handlers) if (h.add) this.call(() => h.add?.(obj, initial));
  }

  private emitUpdate(oldObj: T, newObj: T): void {
    for (const h of this.handlers) if (h.update) this.call(() => h.update?.(oldObj, newObj));
  }

  private emitDelete(obj: T, unknown: boolean): void {
    for (const h of this.handlers) if (h.delete) this.call(() => h.delete?.(obj, unknown));
  }

  /** A throwing handler must not break the informer or the other handlers. */
  private call(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.log.error({ err }, 'event handler threw');
    }
  }

  private resolveSync(ok: boolean): void {
    const waiters = this.syncWaiters;
    this.syncWaiters = [];
    for (const w of waiters) w(ok);
  }
}

function errSummary(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
