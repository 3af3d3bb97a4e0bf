import { lowerBound } from './list-view.ts';
import type { RestoredState, StoreBackend } from './store-backend.ts';
import type { KubeObject } from './types.ts';

/**
 * In-memory object storage with a global, monotonic resourceVersion and watch fan-out.
 *
 * Objects are kept as their serialized JSON (plus the labels and selectable fields the
 * server filters on), because almost every read is a serialization: lists and watch
 * events are string concatenation, which keeps 100k-object lists and many watchers
 * cheap. Readers that need an object parse a fresh copy, so stored state can never be
 * mutated behind the store's back.
 */

export interface StoredRecord {
  /** `namespace/name`, or `name` for cluster-scoped objects. */
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly rv: number;
  readonly json: string;
  /**
   * What `JSON.parse(json)` gives, made when the record is written by copying the object (a
   * quarter of the cost of parsing it): in-process watchers share it and decoding copies it.
   * Nobody writes to it (under the test runner it is frozen). Kept while the record is the
   * object's current one (the store drops it once the record is replaced or deleted, so the
   * heap holds one per live object); absent on restored records.
   */
  parsed?: KubeObject;
  readonly labels: Readonly<Record<string, string>>;
  /** Selectable fields, including metadata.name and metadata.namespace. */
  readonly fields: Readonly<Record<string, string>>;
}

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  readonly type: EventType;
  readonly storage: string;
  readonly rv: number;
  readonly record: StoredRecord;
  /**
   * The record before a MODIFIED or DELETED event; lets filtered watches turn a change into
   * ADDED/DELETED, and paginated lists read the table as of an earlier resourceVersion.
   */
  readonly prev?: StoredRecord;
}

export interface WatchFilter {
  namespace?: string;
  matches(record: StoredRecord): boolean;
}

export interface Watcher {
  readonly storage: string;
  readonly filter: WatchFilter;
  /** Delivers one event already translated for this watcher's filter. */
  deliver(type: EventType, record: StoredRecord, event: StoreEvent): void;
}

export class TooOldResourceVersionError extends Error {
  readonly requested: number;
  readonly oldest: number;
  constructor(requested: number, oldest: number) {
    super(`too old resource version: ${requested} (${oldest})`);
    this.requested = requested;
    this.oldest = oldest;
  }
}

export interface StoreOptions {
  /** Events kept for watch resumption; older resourceVersions answer 410 Expired. */
  historySize?: number;
  /** Durable storage beneath the in-memory tables (none: memory only, `--ephemeral`). */
  backend?: StoreBackend;
  /** Objects and resourceVersion loaded from the backend at start. */
  restored?: RestoredState;
}

export class ObjectStore {
  private rv = 1;
  private readonly tables = new Map<string, Map<string, StoredRecord>>();
  private readonly history: (StoreEvent | undefined)[];
  private historyStart = 0; // index of the oldest event in the ring
  private historyLen = 0;
  /** Events at or below this resourceVersion can no longer be replayed. */
  private compactedRv = 1;
  private readonly watchers = new Map<string, Set<Watcher>>();
  /** Listeners to every table's writes (see subscribe). */
  private readonly subscribers = new Set<(event: StoreEvent) => void>();
  /** Keys of each table in order, brought up to date when read (see sortedKeys). */
  private readonly sorted = new Map<string, SortedKeys>();
  private readonly backend: StoreBackend | undefined;

  constructor(opts: StoreOptions = {}) {
    // kube-apiserver keeps a few minutes of events (etcd compaction); 10k events is generous and
    // keeps old records from lingering in the heap.
    this.history = new Array(opts.historySize ?? 10_000);
    this.backend = opts.backend;
    if (opts.restored) {
      // Events before a restart are gone, as after an etcd compaction: a watch resumed from an
      // older resourceVersion gets 410 Expired and its informer relists.
      this.rv = opts.restored.rv;
      this.compactedRv = opts.restored.rv;
      for (const [storage, records] of opts.restored.tables) {
        const t = this.table(storage);
        for (const r of records) t.set(r.key, r);
      }
    }
  }

  /** Whether writes go to durable storage beneath the tables (not `--ephemeral`). */
  get durable(): boolean {
    return this.backend !== undefined;
  }

  /**
   * Settles once every write up to `rv` is durable; undefined when it already is (always so
   * without a backend). A response showing state at `rv` waits on it, so a client never sees
   * what a crash could lose.
   */
  durableAt(rv: number): Promise<void> | undefined {
    return this.backend?.pending(rv);
  }

  /** Commits what is gathered and closes the backend. */
  async close(): Promise<void> {
    await this.backend?.close();
  }

  /** The resourceVersion of the latest write (what a list at "now" reports). */
  get currentRv(): number {
    return this.rv;
  }

  /** Reserves the resourceVersion the next write will carry. */
  nextRv(): number {
    return this.rv + 1;
  }

  table(storage: string): Map<string, StoredRecord> {
    let t = this.tables.get(storage);
    if (!t) {
      t = new Map();
      this.tables.set(storage, t);
    }
    return t;
  }

  get(storage: string, key: string): StoredRecord | undefined {
    return this.tables.get(storage)?.get(key);
  }

  /** Writes a record whose json already carries `rv` (from nextRv()). */
  put(storage: string, record: StoredRecord): StoreEvent {
    if (record.rv !== this.rv + 1)
      throw new Error(`store: write with rv ${record.rv}, expected ${this.rv + 1}`);
    this.rv = record.rv;
    this.backend?.put(storage, record);
    const t = this.table(storage);
    const prev = t.get(record.key);
    t.set(record.key, record);
    if (!prev) this.keyChanged(storage, record.key, 'added', t.size);
    const event: StoreEvent = prev
      ? { type: 'MODIFIED', storage, rv: record.rv, record, prev }
      : { type: 'ADDED', storage, rv: record.rv, record };
    this.publish(event);
    if (prev) prev.parsed = undefined;
    return event;
  }

  /** Removes a record; `finalRecord` is the object as last seen, re-stamped with the deletion's rv. */
  remove(storage: string, finalRecord: StoredRecord): StoreEvent {
    if (finalRecord.rv !== this.rv + 1)
      throw new Error(`store: delete with rv ${finalRecord.rv}, expected ${this.rv + 1}`);
    this.rv = finalRecord.rv;
    this.backend?.remove(storage, finalRecord.key, finalRecord.rv);
    const t = this.table(storage);
    const prev = t.get(finalRecord.key);
    t.delete(finalRecord.key);
    this.keyChanged(storage, finalRecord.key, 'removed', t.size);
    const event: StoreEvent = { type: 'DELETED', storage, rv: finalRecord.rv, record: finalRecord, prev };
    this.publish(event);
    if (prev) prev.parsed = undefined;
    finalRecord.parsed = undefined;
    return event;
  }

  /** Drops a whole table (CRD deletion) without events; callers delete objects first for watchers. */
  dropTable(storage: string): void {
    this.backend?.dropTable(storage, this.rv);
    this.tables.delete(storage);
    this.sorted.delete(storage);
  }

  /**
   * The table's keys in order (what list pagination walks). Sorted once; after that the keys
   * created and deleted since are applied when the table is next listed, each by binary search
   * with the unchanged runs copied whole: a page read while pods are being created costs a copy
   * of the key array, not a sort or a walk of the table, and a write costs one array push.
   */
  sortedKeys(storage: string): readonly string[] {
    const t = this.table(storage);
    let s = this.sorted.get(storage);
    if (!s) {
      s = { keys: [...t.keys()].sort(), added: [], removed: [] };
      this.sorted.set(storage, s);
    } else if (s.added.length > 0 || s.removed.length > 0) {
      s.keys = applyKeyEdits(s.keys, s.added, s.removed, t);
      s.added = [];
      s.removed = [];
    }
    return s.keys;
  }

  private keyChanged(storage: string, key: string, how: 'added' | 'removed', size: number): void {
    const s = this.sorted.get(storage);
    if (!s) return;
    s[how].push(key);
    // A table written far more than it is listed: sort afresh when it is listed again.
    if (s.added.length + s.removed.length > size / 2 + 1000) this.sorted.delete(storage);
  }

  /**
   * Calls `fn` with every committed write of every table, in order, as it happens (before the
   * write's caller goes on): the server's own caches follow the store through it.
   */
  subscribe(fn: (event: StoreEvent) => void): () => void {
    this.subscribers.add(fn);
    return () => {
      this.subscribers.delete(fn);
    };
  }

  private publish(event: StoreEvent): void {
    this.appendHistory(event);
    for (const fn of this.subscribers) {
      try {
        fn(event);
      } catch (err) {
        this.onWatcherError(err, event);
      }
    }
    const ws = this.watchers.get(event.storage);
    if (!ws) return;
    for (const w of ws) {
      // One watcher's failure must neither hide the event from the others nor fail the
      // write that was already committed.
      try {
        dispatch(w, event);
      } catch (err) {
        this.onWatcherError(err, event);
      }
    }
  }

  /** Where a watcher's exception goes (the server logs it); never rethrown into a write. */
  onWatcherError: (err: unknown, event: StoreEvent) => void = (err, event) => {
    process.emitWarning(
      `watcher failed on ${event.type} ${event.storage} ${event.record.key}: ${err instanceof Error ? err.stack : String(err)}`,
    );
  };

  private appendHistory(event: StoreEvent): void {
    const cap = this.history.length;
    if (this.historyLen === cap) {
      const dropped = this.history[this.historyStart]!;
      this.compactedRv = dropped.rv;
      this.historyStart = (this.historyStart + 1) % cap;
      this.historyLen--;
    }
    this.history[(this.historyStart + this.historyLen) % cap] = event;
    this.historyLen++;
  }

  /**
   * What a table held at `rv` for the keys written since: each key's record then, or undefined
   * if it did not exist. The rest of the table is as it is now. A paginated list reads its
   * later pages through this, as etcd serves them at the first page's revision; once `rv` has
   * left the history this throws TooOldResourceVersionError (etcd: compacted).
   */
  changedSince(storage: string, rv: number): Map<string, StoredRecord | undefined> {
    if (rv < this.compactedRv) throw new TooOldResourceVersionError(rv, this.compactedRv + 1);
    const changes = new Map<string, StoredRecord | undefined>();
    const cap = this.history.length;
    // Newest first, so the last write wins for the oldest event after rv: the state at rv.
    for (let i = this.historyLen - 1; i >= 0; i--) {
      const e = this.history[(this.historyStart + i) % cap]!;
      if (e.rv <= rv) break;
      if (e.storage === storage) changes.set(e.record.key, e.type === 'ADDED' ? undefined : e.prev);
    }
    return changes;
  }

  /** Fault injection: forget history so every resume from an older resourceVersion gets 410. */
  expireHistory(): void {
    this.compactedRv = this.rv;
    this.historyStart = 0;
    this.historyLen = 0;
    this.history.fill(undefined);
  }

  /**
   * Registers a watcher. With `fromRv`, first replays every event after it (410 if
   * compacted). Replay and registration happen synchronously, so no event is lost or
   * delivered twice.
   */
  watch(watcher: Watcher, fromRv?: number): () => void {
    if (fromRv !== undefined) {
      // kube-apiserver's watch cache names the oldest resourceVersion one can still resume from
      // (staging/src/k8s.io/apiserver/pkg/storage/cacher/watch_cache.go: `oldest-1`).
      if (fromRv < this.compactedRv) throw new TooOldResourceVersionError(fromRv, this.compactedRv);
      const cap = this.history.length;
      for (let i = 0; i < this.historyLen; i++) {
        const e = this.history[(this.historyStart + i) % cap]!;
        if (e.rv > fromRv && e.storage === watcher.storage) dispatch(watcher, e);
      }
    }
    let set = this.watchers.get(watcher.storage);
    if (!set) {
      set = new Set();
      this.watchers.set(watcher.storage, set);
    }
    set.add(watcher);
    return () => {
      set.delete(watcher);
    };
  }

  watcherCount(): number {
    let n = 0;
    for (const s of this.watchers.values()) n += s.size;
    return n;
  }
}

interface SortedKeys {
  keys: string[];
  /** Keys created since `keys` was made, in creation order (a key may come again). */
  added: string[];
  /** Keys deleted since, likewise. */
  removed: string[];
}

/**
 * `keys` with what the table no longer holds taken out and what it holds anew put in, in
 * order: each edit found by binary search, the runs between edits copied whole.
 */
function applyKeyEdits(
  keys: readonly string[],
  added: readonly string[],
  removed: readonly string[],
  table: ReadonlyMap<string, unknown>,
): string[] {
  const edits: { at: number; insert?: string }[] = [];
  for (const k of new Set(removed)) {
    if (table.has(k)) continue;
    const at = lowerBound(keys, k);
    if (keys[at] === k) edits.push({ at });
  }
  for (const k of [...new Set(added)].sort()) {
    if (!table.has(k)) continue;
    const at = lowerBound(keys, k);
    if (keys[at] !== k) edits.push({ at, insert: k });
  }
  // By position; at one position the new keys (all smaller than the key there) go first.
  edits.sort((a, b) => a.at - b.at || (a.insert === undefined ? 1 : 0) - (b.insert === undefined ? 1 : 0));
  const parts: string[][] = [];
  let from = 0;
  for (const e of edits) {
    parts.push(keys.slice(from, e.at));
    if (e.insert === undefined) from = e.at + 1;
    else {
      parts.push([e.insert]);
      from = e.at;
    }
  }
  parts.push(keys.slice(from));
  return ([] as string[]).concat(...parts);
}

/** Translates an event for a filtered watcher, as kube-apiserver's watch cache does. */
function dispatch(w: Watcher, e: StoreEvent): void {
  const f = w.filter;
  const inNs = (r: StoredRecord) => f.namespace === undefined || r.namespace === f.namespace;
  const now = inNs(e.record) && f.matches(e.record);
  if (e.type === 'MODIFIED') {
    const before = e.prev !== undefined && inNs(e.prev) && f.matches(e.prev);
    if (now && before) w.deliver('MODIFIED', e.record, e);
    else if (now) w.deliver('ADDED', e.record, e);
    else if (before) w.deliver('DELETED', e.record, e);
    return;
  }
  if (now) w.deliver(e.type, e.record, e);
}
