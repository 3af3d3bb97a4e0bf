/**
 * Read-your-writes over the cache: a controller's own last write of each object, used in
 * place of the cached copy until the watch delivers that write. A reconcile queued behind
 * a write would otherwise decide on the older copy and repeat, or undo, what it just did.
 * Memory only: after a restart the cache is the truth again.
 */

import type { KubeObject } from './types.ts';

export class OwnWrites<T extends KubeObject = KubeObject> {
  private readonly byKey = new Map<string, { fromRv: string | undefined; obj: T }>();

  /**
   * The object to act on: our last write of it while the cache still shows the
   * resourceVersion that write replaced, else the cached copy (the write is then forgotten).
   */
  latest(key: string, cached: T): T {
    const w = this.byKey.get(key);
    if (!w) return cached;
    if (cached.metadata.resourceVersion === w.fromRv) return w.obj;
    this.byKey.delete(key);
    return cached;
  }

  /** Remembers `written`, the server's answer to a write of the version `fromRv`. */
  record(key: string, fromRv: string | undefined, written: T): void {
    this.byKey.set(key, { fromRv, obj: written });
  }

  forget(key: string): void {
    this.byKey.delete(key);
  }
}
