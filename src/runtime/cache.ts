/**
 * The shared cache: one informer per (kind, namespace, selectors), shared by every
 * controller of the process, so each kind is listed and watched once. Reads are served
 * from memory; the first read of a kind starts its informer and waits for it to sync
 * (controller-runtime's informer cache does the same).
 */

import { parseLabelSelector, type Selector } from '../kube/labels.ts';
import type { Clock } from '../lib/clock.ts';
import { Informer, type InformerMetrics } from './informer.ts';
import { type Logger, silentLogger } from './log.ts';
import type { RestMapper } from './resources.ts';
import type { RestClient } from './rest.ts';
import {
  type IndexFunc,
  indexByLabel,
  indexByNodeName,
  indexByOwnerUid,
  NAMESPACE_INDEX,
  NODE_NAME_INDEX,
  OWNER_UID_INDEX,
} from './store.ts';
import { composeTransforms, stripForCache, type Transform } from './transform.ts';
import { type KindRef, type KubeObject, keyOf, kindKey } from './types.ts';

export interface CacheOptions {
  /** Limits every namespaced informer to this namespace (the manager's `--namespace`). */
  namespace?: string;
  /** Resync period of every informer (ms); 0 or unset disables resync. */
  resyncMs?: number;
  pageSize?: number;
  logger?: Logger;
  metrics?: InformerMetrics;
  /** The controllers' clock, given to every informer (InformerOptions.clock). */
  clock?: Clock;
}

export interface InformerScope {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface CacheListOptions {
  namespace?: string;
  /** A label selector string (`app=x,tier in (a,b)`) or a parsed Selector. */
  labelSelector?: string | Selector;
  /** Restrict to the objects an index maps `value` to. */
  index?: { name: string; value: string };
  signal?: AbortSignal;
}

/** Index functions the cache can add on first use, by name. */
function builtinIndex(name: string): IndexFunc | undefined {
  if (name === NODE_NAME_INDEX) return indexByNodeName;
  if (name === OWNER_UID_INDEX) return indexByOwnerUid;
  if (name.startsWith('label:')) return indexByLabel(name.slice('label:'.length));
  return undefined;
}

export class Cache {
  readonly namespace: string | undefined;
  private readonly rest: RestClient;
  private readonly mapper: RestMapper;
  private readonly opts: CacheOptions;
  private readonly log: Logger;
  private readonly informers = new Map<string, Informer>();
  private readonly creating = new Map<string, Promise<Informer>>();
  private readonly indexes = new Map<string, Map<string, IndexFunc>>();
  private readonly transforms = new Map<string, Transform>();
  private started = false;
  private stopped = false;

  constructor(rest: RestClient, mapper: RestMapper, opts: CacheOptions = {}) {
    this.rest = rest;
    this.mapper = mapper;
    this.opts = opts;
    this.namespace = opts.namespace || undefined;
    this.log = opts.logger ?? silentLogger();
  }

  /**
   * Adds a transform for `kind`, run after the default one (which drops managedFields and
   * the last-applied annotation). Must be called before the kind's informer is created.
   */
  setTransform(kind: KindRef, fn: Transform): void {
    this.transforms.set(kindKey(kind), fn);
  }

  /** Adds an index to every present and future informer of `kind`. */
  addIndex(kind: KindRef, name: string, fn: IndexFunc): void {
    const k = kindKey(kind);
    let m = this.indexes.get(k);
    if (!m) {
      m = new Map();
      this.indexes.set(k, m);
    }
    m.set(name, fn);
    for (const inf of this.informers.values()) {
      if (kindKey(inf.kind) === k) inf.addIndexer(name, fn as IndexFunc<KubeObject>);
    }
  }

  /**
   * The shared informer for `kind` in `scope` (default: the cache's namespace), created
   * and, if the cache is running, started on first request.
   */
  async informerFor<T extends KubeObject = KubeObject>(
    kind: KindRef,
    scope: InformerScope = {},
  ): Promise<Informer<T>> {
    const info = await this.mapper.resourceFor(kind);
    const namespace = info.namespaced ? scope.namespace || this.namespace : undefined;
    if (info.namespaced && this.namespace && namespace !== this.namespace) {
      throw new Error(`namespace ${namespace ?? '(all)'} is outside the cache's scope ${this.namespace}`);
    }
    const id = `${kindKey(kind)}|${namespace ?? ''}|${scope.labelSelector ?? ''}|${scope.fieldSelector ?? ''}`;
    const existing = this.informers.get(id);
    if (existing) return existing as unknown as Informer<T>;
    let pending = this.creating.get(id);
    if (!pending) {
      pending = Promise.resolve().then(() => {
        const inf = new Informer(this.rest, this.mapper, {
          kind,
          namespace,
          labelSelector: scope.labelSelector,
          fieldSelector: scope.fieldSelector,
          resyncMs: this.opts.resyncMs,
          pageSize: this.opts.pageSize,
          transform: composeTransforms(stripForCache, this.transforms.get(kindKey(kind))),
          dropsManagedFields: true,
          logger: this.log,
          metrics: this.opts.metrics,
          clock: this.opts.clock,
        });
        for (const [name, fn] of this.indexes.get(kindKey(kind)) ?? []) {
          inf.addIndexer(name, fn as IndexFunc<KubeObject>);
        }
        this.informers.set(id, inf);
        this.creating.delete(id);
        if (this.started && !this.stopped) inf.start();
        return inf;
      });
      this.creating.set(id, pending);
    }
    return (await pending) as unknown as Informer<T>;
  }

  /** Starts every informer created so far and any created later. */
  start(): void {
    if (this.started) return;
    this.started = true;
    for (const inf of this.informers.values()) inf.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }

  /** True when every informer created so far has synced. */
  get hasSynced(): boolean {
    for (const inf of this.informers.values()) if (!inf.hasSynced) return false;
    return true;
  }

  /** Resolves true once every informer created so far has synced. */
  async waitForSync(signal?: AbortSignal): Promise<boolean> {
    const results = await Promise.all([...this.informers.values()].map((i) => i.waitForSync(signal)));
    return results.every(Boolean);
  }

  /** Informers created so far, for health reporting. */
  allInformers(): Informer[] {
    return [...this.informers.values()];
  }

  /** The cached object, or undefined. Starts and syncs the kind's informer on first use. */
  async get<T extends KubeObject = KubeObject>(
    kind: KindRef,
    name: string,
    namespace?: string,
    opts: { signal?: AbortSignal } = {},
  ): Promise<T | undefined> {
    const inf = await this.synced<T>(kind, namespace, opts.signal);
    const namespaced = this.mapper.peek(kind)?.namespaced ?? true;
    return inf.get(namespaced ? keyOf(namespace ?? this.namespace, name) : name);
  }

  /** Cached objects of `kind`, filtered by namespace, label selector and/or index. */
  async list<T extends KubeObject = KubeObject>(kind: KindRef, opts: CacheListOptions = {}): Promise<T[]> {
    const inf = await this.synced<T>(kind, opts.namespace, opts.signal);
    let items: T[];
    if (opts.index) {
      if (!inf.store.hasIndex(opts.index.name)) {
        const fn = builtinIndex(opts.index.name);
        if (!fn) throw new Error(`no index ${opts.index.name} on ${kind.kind}; add it with cache.addIndex`);
        this.addIndex(kind, opts.index.name, fn);
      }
      items = inf.store.byIndex(opts.index.name, opts.index.value);
      if (opts.namespace) items = items.filter((o) => o.metadata.namespace === opts.namespace);
    } else if (opts.namespace && inf.namespace === undefined) {
      items = inf.store.byIndex(NAMESPACE_INDEX, opts.namespace);
    } else {
      items = inf.list();
    }
    if (opts.labelSelector !== undefined) {
      const sel =
        typeof opts.labelSelector === 'string' ? parseLabelSelector(opts.labelSelector) : opts.labelSelector;
      if (!sel.empty) items = items.filter((o) => sel.matches(o.metadata.labels));
    }
    return items;
  }

  private async synced<T extends KubeObject>(
    kind: KindRef,
    namespace: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Informer<T>> {
    if (this.namespace && namespace && namespace !== this.namespace) {
      throw new Error(`namespace ${namespace} is outside the cache's scope ${this.namespace}`);
    }
    const inf = await this.informerFor<T>(kind);
    if (!inf.hasSynced) {
      if (!this.started) throw new Error(`cache not started: cannot read ${kind.kind}`);
      const ok = await inf.waitForSync(signal);
      if (!ok) throw new Error(`cache for ${kind.kind} did not sync (stopped or aborted)`);
    }
    return inf;
  }
}
