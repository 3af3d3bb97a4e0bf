/**
 * What the object store needs from durable storage, and nothing more: the store keeps every
 * object in memory (reads never touch the backend) and hands each write to the backend in
 * resourceVersion order. The backend groups the writes of one event-loop turn into one commit
 * (group commit) and says when they are durable, so the HTTP layer can hold a response until
 * everything it shows is on disk.
 */
import type { StoredRecord } from './store.ts';

export interface StoreBackend {
  /** Records a create or update (in the open batch; durable once `pending()` settles). */
  put(storage: string, record: StoredRecord): void;
  /** Records a deletion; `rv` is the deletion's resourceVersion. */
  remove(storage: string, key: string, rv: number): void;
  /** Drops a whole table (a CRD's objects once it is deleted). */
  dropTable(storage: string, rv: number): void;
  /**
   * Settles once every write recorded so far (with `rv`: every write up to that
   * resourceVersion) is durable; undefined when nothing waits.
   */
  pending(rv?: number): Promise<void> | undefined;
  /** Commits what is gathered and closes the database. */
  close(): Promise<void>;
}

/** What a restarted server starts from. */
export interface RestoredState {
  /** The last resourceVersion handed out before the restart; the next write gets rv + 1. */
  rv: number;
  tables: Map<string, StoredRecord[]>;
}
