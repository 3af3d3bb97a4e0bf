/**
 * The embedded cluster's durable storage, as k3s keeps a cluster in SQLite behind kine: one
 * database file through Node's built-in `node:sqlite`, in WAL mode with `synchronous=FULL`.
 *
 * Durability: a write is acknowledged (its HTTP response released) only after the COMMIT of
 * the transaction holding it returned, and with WAL + `synchronous=FULL` SQLite fsyncs the WAL
 * at every commit. So an acknowledged write survives a SIGKILL and also an OS crash or power
 * loss (NORMAL would only survive a process crash). Commits follow resourceVersion order, so
 * whatever a crash interrupts, the file holds a prefix of the history: no half-written object
 * and no later write without an earlier one.
 *
 * Group commit: the first write of an event-loop turn opens a transaction, every write of the
 * turn joins it, and a setImmediate commits it; all responses of the turn share one fsync.
 */
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { StoredRecord } from '../apiserver/store.ts';
import type { RestoredState, StoreBackend } from '../apiserver/store-backend.ts';
import { MIGRATIONS, SCHEMA_VERSION } from './schema.ts';

/** A state file that cannot be used, with what to do about it. */
export class StateError extends Error {
  readonly file: string;
  constructor(file: string, problem: string) {
    super(
      `cannot use the cluster state in ${file}: ${problem}. Nothing was changed. ` +
        'Start afresh with --reset (deletes the stored cluster), or use another --data-dir' +
        ' (or --ephemeral for a cluster kept in memory only).',
    );
    this.file = file;
  }
}

interface Row {
  storage: string;
  key: string;
  namespace: string;
  name: string;
  uid: string;
  rv: number;
  labels: string;
  fields: string;
  json: string;
}

export class SqliteBackend implements StoreBackend {
  readonly file: string;
  private readonly db: DatabaseSync;
  private readonly upsert: StatementSync;
  private readonly del: StatementSync;
  private readonly drop: StatementSync;
  private readonly setSetting: StatementSync;
  private open: { promise: Promise<void>; resolve: () => void } | undefined;
  private lastRv = 0;
  private closed = false;
  /** Called when a commit fails: the process must not go on serving what is not on disk. */
  onFatal: (err: Error) => void = (err) => {
    throw err;
  };

  private constructor(file: string, db: DatabaseSync) {
    this.file = file;
    this.db = db;
    this.upsert = db.prepare(
      `INSERT INTO objects (storage, key, namespace, name, uid, rv, labels, fields, json)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (storage, key) DO UPDATE SET uid = excluded.uid, rv = excluded.rv,
         labels = excluded.labels, fields = excluded.fields, json = excluded.json`,
    );
    this.del = db.prepare('DELETE FROM objects WHERE storage = ? AND key = ?');
    this.drop = db.prepare('DELETE FROM objects WHERE storage = ?');
    this.setSetting = db.prepare(
      'INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
    );
  }

  /** Opens (creating or migrating) the database; throws StateError for one it cannot use. */
  static open(file: string): SqliteBackend {
    let db: DatabaseSync | undefined;
    try {
      db = new DatabaseSync(file);
      db.exec('PRAGMA busy_timeout = 5000');
      db.exec('PRAGMA journal_mode = WAL');
      db.exec('PRAGMA synchronous = FULL');
      const version = Number(
        (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version,
      );
      if (version > SCHEMA_VERSION) {
        throw new StateError(
          file,
          `it was written by a newer troupe (schema version ${version}; this troupe reads up to ${SCHEMA_VERSION}); upgrade troupe to use it`,
        );
      }
      if (version < SCHEMA_VERSION) {
        db.exec('BEGIN IMMEDIATE');
        for (let v = version; v < SCHEMA_VERSION; v++) MIGRATIONS[v]!(db);
        db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
        db.exec('COMMIT');
      }
      return new SqliteBackend(file, db);
    } catch (err) {
      try {
        if (db?.isTransaction) db.exec('ROLLBACK');
        db?.close();
      } catch {
        // Already failing: the first error is the one to report.
      }
      if (err instanceof StateError) throw err;
      const msg = err instanceof Error ? err.message : String(err);
      throw new StateError(file, `${msg} (the file is damaged, truncated or not a troupe state database)`);
    }
  }

  /** Every stored object and the last resourceVersion handed out. */
  load(): RestoredState {
    try {
      const rv = Number(this.setting('rv') ?? '1');
      const tables = new Map<string, StoredRecord[]>();
      for (const row of this.db.prepare('SELECT * FROM objects').iterate() as Iterable<Row>) {
        let t = tables.get(row.storage);
        if (!t) {
          t = [];
          tables.set(row.storage, t);
        }
        t.push({
          key: row.key,
          namespace: row.namespace,
          name: row.name,
          uid: row.uid,
          rv: Number(row.rv),
          json: row.json,
          labels: JSON.parse(row.labels) as Record<string, string>,
          fields: JSON.parse(row.fields) as Record<string, string>,
        });
      }
      this.lastRv = rv;
      return { rv, tables };
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      throw new StateError(this.file, `${msg} (the file is damaged or truncated)`);
    }
  }

  setting(name: string): string | undefined {
    const row = this.db.prepare('SELECT value FROM settings WHERE name = ?').get(name) as
      | { value: string }
      | undefined;
    return row?.value;
  }

  /** Stores settings (port, token, certificate) durably at once. */
  saveSettings(values: Record<string, string>): void {
    if (!this.begin()) return;
    for (const [k, v] of Object.entries(values)) this.setSetting.run(k, v);
    this.commit();
  }

  put(storage: string, r: StoredRecord): void {
    if (!this.begin()) return;
    this.upsert.run(
      storage,
      r.key,
      r.namespace,
      r.name,
      r.uid,
      r.rv,
      JSON.stringify(r.labels),
      JSON.stringify(r.fields),
      r.json,
    );
    this.lastRv = r.rv;
  }

  remove(storage: string, key: string, rv: number): void {
    if (!this.begin()) return;
    this.del.run(storage, key);
    this.lastRv = rv;
  }

  dropTable(storage: string, rv: number): void {
    if (!this.begin()) return;
    this.drop.run(storage);
    this.lastRv = rv;
  }

  pending(): Promise<void> | undefined {
    return this.open?.promise;
  }

  close(): void {
    if (this.closed) return;
    if (this.open) this.commit();
    this.closed = true;
    this.db.close();
  }

  /**
   * Opens the batch writes join; false once closed. What in-process components still write
   * while the cluster shuts down (the server no longer answers) is acknowledged to nobody and
   * not stored.
   */
  private begin(): boolean {
    if (this.closed) return false;
    if (this.open) return true;
    this.db.exec('BEGIN');
    let resolve!: () => void;
    const promise = new Promise<void>((r) => {
      resolve = r;
    });
    this.open = { promise, resolve };
    // After this turn's I/O callbacks: every write they made joins this commit.
    setImmediate(() => {
      if (this.open?.promise === promise) this.commit();
    });
    return true;
  }

  private commit(): void {
    const batch = this.open;
    if (!batch) return;
    try {
      this.setSetting.run('rv', String(this.lastRv));
      this.db.exec('COMMIT');
    } catch (err) {
      this.open = undefined;
      this.onFatal(
        new Error(
          `cannot commit to the cluster state in ${this.file}: ${err instanceof Error ? err.message : String(err)}`,
        ),
      );
      return;
    }
    this.open = undefined;
    batch.resolve();
  }
}
