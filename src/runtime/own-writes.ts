/**
 * Read-your-writes over the cache: a controller's own last write of each object, used in
 * place of the cached copy until the watch delivers that write. A reconcile queued behind
 * a write would otherwise decide on the older copy and repeat, or undo, what it just did.
 * Memory only: after a restart the cache is the truth again.
 */

import type { KubeObject } from './types.ts';

interface Written<T> {
  obj: T;
  /**
   * The resourceVersions this write superseded: the one it was made from and, when it was
   * made on top of an earlier own write the cache has not shown yet, that one's too. While
   * the cache shows any of them it lags our writes.
   */
  older: Set<string | undefined>;
}

export class OwnWrites<T extends KubeObject = KubeObject> {
  private readonly byKey = new Map<string, Written<T>>();

  /**
   * The object to act on: our last write of it while the cache still shows a
   * resourceVersion that write superseded, else the cached copy (the write is then forgotten).
   */
  latest(key: string, cached: T): T {
    const w = this.byKey.get(key);
    if (!w) return cached;
    if (w.older.has(cached.metadata.resourceVersion)) return w.obj;
    this.byKey.delete(key);
    return cached;
  }

  /** Remembers `written`, the server's answer to a write of the version `fromRv`. */
  record(key: string, fromRv: string | undefined, written: T): void {
    const prev = this.byKey.get(key);
    // Writes in a row before the cache catches up: the cache may still show any of them.
    const older =
      prev && prev.obj.metadata.resourceVersion === fromRv
        ? new Set(prev.older)
        : new Set<string | undefined>();
    older.add(fromRv);
    this.byKey.set(key, { obj: written, older });
  }

  forget(key: string): void {
    this.byKey.delete(key);
  }
}
