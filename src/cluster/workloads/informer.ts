/**
 * Shared, informer-like caches over `ClusterClient.watch`: one watch per resource feeds a
 * cache (namespace/name -> object), optional secondary indexes, and every subscribed
 * handler. The in-process watch delivers synchronously inside the API write, so once a
 * write's promise resolves the cache already holds its result: the controllers here need
 * none of client-go's "expectations" bookkeeping.
 *
 * Handlers run inside someone else's write: they must only read caches and enqueue keys.
 */

import { objectKey } from '../../kube/keys.ts';
import type { KubeObject } from '../apiserver/types.ts';
import type { ClusterClient, Gvr } from '../client.ts';
import type { LogFn } from './loop.ts';

export type InformerEvent = 'ADDED' | 'MODIFIED' | 'DELETED';
export type InformerHandler = (type: InformerEvent, obj: KubeObject, old: KubeObject | undefined) => void;
export type IndexFn = (obj: KubeObject) => readonly string[];

export class Informer {
  readonly gvr: Gvr;
  readonly caching: boolean;
  private readonly client: ClusterClient;
  private readonly items = new Map<string, KubeObject>();
  private readonly indexFns = new Map<string, IndexFn>();
  private readonly indexes = new Map<string, Map<string, Set<string>>>();
  private readonly handlers = new Set<InformerHandler>();
  private readonly log: LogFn;
  private stopWatch: (() => void) | undefined;

  constructor(client: ClusterClient, gvr: Gvr, opts: { cache?: boolean; log?: LogFn } = {}) {
    this.client = client;
    this.gvr = gvr;
    this.caching = opts.cache ?? true;
    this.log = opts.log ?? (() => {});
  }

  get started(): boolean {
    return this.stopWatch !== undefined;
  }

  /** Adds a secondary index; must be called before start. */
  addIndex(name: string, fn: IndexFn): void {
    if (this.started) throw new Error(`informer ${this.gvr.resource}: index ${name} added after start`);
    if (this.indexFns.has(name)) return;
    this.indexFns.set(name, fn);
    this.indexes.set(name, new Map());
  }

  /**
   * Subscribes a handler. On a started caching informer, the cached objects are replayed to it
   * as ADDED first, as client-go does for late handlers. Returns an unsubscribe function.
   */
  subscribe(handler: InformerHandler): () => void {
    this.handlers.add(handler);
    if (this.started && this.caching) {
      for (const obj of this.items.values()) this.call(handler, 'ADDED', obj, undefined);
    }
    return () => {
      this.handlers.delete(handler);
    };
  }

  start(): void {
    if (this.started) return;
    this.stopWatch = this.client.watch(this.gvr, (type, obj) => this.onEvent(type, obj), { shared: true });
  }

  stop(): void {
    this.stopWatch?.();
    this.stopWatch = undefined;
  }

  get(key: string): KubeObject | undefined {
    return this.items.get(key);
  }

  getByName(namespace: string, name: string): KubeObject | undefined {
    return this.items.get(namespace ? `${namespace}/${name}` : name);
  }

  list(): KubeObject[] {
    return [...this.items.values()];
  }

  get size(): number {
    return this.items.size;
  }

  /** Objects whose index `name` yields `value`. */
  byIndex(name: string, value: string): KubeObject[] {
    const keys = this.indexes.get(name)?.get(value);
    if (!keys) return [];
    const out: KubeObject[] = [];
    for (const k of keys) {
      const o = this.items.get(k);
      if (o) out.push(o);
    }
    return out;
  }

  private onEvent(type: InformerEvent, shared: KubeObject): void {
    // managedFields are never read by controllers; kube-controller-manager drops them too.
    // The event's object is shared with other watchers: leave it as it is, keep a copy.
    const { managedFields: _, ...metadata } = shared.metadata;
    const obj: KubeObject = { ...shared, metadata };
    const key = objectKey(obj);
    let old: KubeObject | undefined;
    if (this.caching) {
      old = this.items.get(key);
      if (old) this.unindex(key, old);
      if (type === 'DELETED') this.items.delete(key);
      else {
        this.items.set(key, obj);
        this.index(key, obj);
      }
    }
    for (const h of this.handlers) this.call(h, type, obj, old);
  }

  private call(h: InformerHandler, type: InformerEvent, obj: KubeObject, old: KubeObject | undefined): void {
    try {
      h(type, obj, old);
    } catch (err) {
      this.log('error', `informer ${this.gvr.resource}: handler failed`, {
        error: err instanceof Error ? err.stack : String(err),
      });
    }
  }

  private index(key: string, obj: KubeObject): void {
    for (const [name, fn] of this.indexFns) {
      const idx = this.indexes.get(name)!;
      for (const v of fn(obj)) {
        let s = idx.get(v);
        if (!s) {
          s = new Set();
          idx.set(v, s);
        }
        s.add(key);
      }
    }
  }

  private unindex(key: string, obj: KubeObject): void {
    for (const [name, fn] of this.indexFns) {
      const idx = this.indexes.get(name)!;
      for (const v of fn(obj)) {
        const s = idx.get(v);
        if (!s) continue;
        s.delete(key);
        if (s.size === 0) idx.delete(v);
      }
    }
  }
}

export const BY_NAMESPACE = 'namespace';
/** Index of objects by their controller's uid; objects without a controller index as orphanIndexValue(ns). */
export const BY_CONTROLLER_UID = 'controllerUid';

export function orphanIndexValue(namespace: string): string {
  return `orphan:${namespace}`;
}

/** Objects a controller may claim: those it controls plus the orphans of its namespace. */
export function claimCandidates(inf: Informer, owner: KubeObject): KubeObject[] {
  return [
    ...inf.byIndex(BY_CONTROLLER_UID, owner.metadata.uid!),
    ...inf.byIndex(BY_CONTROLLER_UID, orphanIndexValue(owner.metadata.namespace ?? '')),
  ];
}

/** One informer per resource, shared by every controller of the process. */
export class InformerFactory {
  private readonly client: ClusterClient;
  private readonly informers = new Map<string, Informer>();
  private readonly log: LogFn;

  constructor(client: ClusterClient, log?: LogFn) {
    this.client = client;
    this.log = log ?? (() => {});
  }

  /** The caching informer for a resource, with the namespace and controller-uid indexes. */
  for(gvr: Gvr): Informer {
    const k = gvrKey(gvr);
    let inf = this.informers.get(k);
    if (inf && !inf.caching) throw new Error(`informer ${k} already exists without a cache`);
    if (!inf) {
      inf = new Informer(this.client, gvr, { log: this.log });
      inf.addIndex(BY_NAMESPACE, (o) => [o.metadata.namespace ?? '']);
      inf.addIndex(BY_CONTROLLER_UID, (o) => {
        const ref = o.metadata.ownerReferences?.find((r) => r.controller === true);
        return [ref ? ref.uid : orphanIndexValue(o.metadata.namespace ?? '')];
      });
      this.informers.set(k, inf);
    }
    return inf;
  }

  /** An informer for event fan-out only: reuses a caching one when it exists. */
  events(gvr: Gvr): Informer {
    const k = gvrKey(gvr);
    let inf = this.informers.get(k);
    if (!inf) {
      inf = new Informer(this.client, gvr, { cache: false, log: this.log });
      this.informers.set(k, inf);
    }
    return inf;
  }

  has(gvr: Gvr): boolean {
    return this.informers.has(gvrKey(gvr));
  }

  /** Stops and forgets an informer (a CRD's resource went away). */
  drop(gvr: Gvr): void {
    const k = gvrKey(gvr);
    this.informers.get(k)?.stop();
    this.informers.delete(k);
  }

  startAll(): void {
    for (const inf of this.informers.values()) inf.start();
  }

  stopAll(): void {
    for (const inf of this.informers.values()) inf.stop();
  }
}

export function gvrKey(gvr: Gvr): string {
  return `${gvr.group}/${gvr.version}/${gvr.resource}`;
}
