/**
 * The informer's indexed store (client-go's cache.Indexer): objects by key plus any
 * number of secondary indexes, each mapping an index value to the set of keys.
 */

import type { KubeObject } from './types.ts';

/** Values under which an object is indexed; an empty list leaves it out of the index. */
export type IndexFunc<T extends KubeObject = KubeObject> = (obj: T) => string[];

export const NAMESPACE_INDEX = 'namespace';
export const NODE_NAME_INDEX = 'spec.nodeName';
export const OWNER_UID_INDEX = 'metadata.ownerReferences.uid';

export function labelIndexName(labelKey: string): string {
  return `label:${labelKey}`;
}

export const indexByNamespace: IndexFunc = (obj) => (obj.metadata.namespace ? [obj.metadata.namespace] : []);

/** Pods by the node they are bound to. */
export const indexByNodeName: IndexFunc = (obj) => {
  const node = (obj.spec as { nodeName?: string } | undefined)?.nodeName;
  return node ? [node] : [];
};

/** Objects by the uid of every owner (controller or not). */
export const indexByOwnerUid: IndexFunc = (obj) => (obj.metadata.ownerReferences ?? []).map((r) => r.uid);

export function indexByLabel(labelKey: string): IndexFunc {
  return (obj) => {
    const v = obj.metadata.labels?.[labelKey];
    return v === undefined ? [] : [v];
  };
}

export class Store<T extends KubeObject = KubeObject> {
  private readonly items = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  get size(): number {
    return this.items.size;
  }

  hasIndex(name: string): boolean {
    return this.indexers.has(name);
  }

  /** Adds an index; existing objects are indexed at once. Re-adding a name is a no-op. */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    if (this.indexers.has(name)) return;
    this.indexers.set(name, fn);
    const index = new Map<string, Set<string>>();
    this.indices.set(name, index);
    for (const [key, obj] of this.items) addToIndex(index, fn(obj), key);
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  has(key: string): boolean {
    return this.items.has(key);
  }

  keys(): IterableIterator<string> {
    return this.items.keys();
  }

  values(): IterableIterator<T> {
    return this.items.values();
  }

  list(): T[] {
    return [...this.items.values()];
  }

  /** Stores `obj` under `key`; returns the object it replaced. */
  set(key: string, obj: T): T | undefined {
    const old = this.items.get(key);
    this.items.set(key, obj);
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name)!;
      if (old) removeFromIndex(index, fn(old), key);
      addToIndex(index, fn(obj), key);
    }
    return old;
  }

  delete(key: string): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.items.delete(key);
    for (const [name, fn] of this.indexers) removeFromIndex(this.indices.get(name)!, fn(old), key);
    return old;
  }

  /** Keys indexed under `value` in index `name`; throws for an unknown index. */
  indexKeys(name: string, value: string): string[] {
    const index = this.indices.get(name);
    if (!index) throw new Error(`no index named ${name}`);
    return [...(index.get(value) ?? [])];
  }

  byIndex(name: string, value: string): T[] {
    return this.indexKeys(name, value).map((k) => this.items.get(k)!);
  }

  /** Every value present in index `name`. */
  indexValues(name: string): string[] {
    const index = this.indices.get(name);
    if (!index) throw new Error(`no index named ${name}`);
    return [...index.keys()];
  }
}

function addToIndex(index: Map<string, Set<string>>, values: string[], key: string): void {
  for (const v of values) {
    let set = index.get(v);
    if (!set) {
      set = new Set();
      index.set(v, set);
    }
    set.add(key);
  }
}

function removeFromIndex(index: Map<string, Set<string>>, values: string[], key: string): void {
  for (const v of values) {
    const set = index.get(v);
    if (!set) continue;
    set.delete(key);
    if (set.size === 0) index.delete(v);
  }
}
