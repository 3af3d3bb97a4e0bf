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
 * Group commit: writes gather in a batch; a worker thread (sqlite-writer.ts) commits one batch
 * at a time, and whatever arrives while a commit waits on its fsync forms the next batch, so
 * under load many writes share one fsync and the event loop never waits on the disk.
 */
import { DatabaseSync } from 'node:sqlite';
import { Worker } from 'node:worker_threads';
import type { StoredRecord } from '../apiserver/store.ts';
import type { RestoredState, StoreBackend } from '../apiserver/store-backend.ts';
import { MIGRATIONS, type Migration } from './schema.ts';

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

/** The tables every troupe state database holds from schema version 1 on. */
const TROUPE_TABLES = ['objects', 'settings'];

/**
 * Why a valid SQLite file is not a troupe state database, if it is not: tables but no troupe
 * schema version (another program's database), or a version without troupe's tables. An
 * empty file (or one SQLite just created) is a new state database.
 */
function foreignTables(db: DatabaseSync, version: number): string | undefined {
  const tables = (
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
      name: string;
    }[]
  ).map((r) => r.name);
  const missing = TROUPE_TABLES.filter((t) => !tables.includes(t));
  if (version === 0 ? tables.length === 0 : missing.length === 0) return undefined;
  const holds = tables.length ? `it holds the tables ${tables.join(', ')}` : 'it holds no tables';
  return (
    `it is an SQLite database troupe did not write (${holds} and ` +
    `${version === 0 ? 'no troupe schema version' : `schema version ${version} without troupe's tables`}); ` +
    '--reset would delete it, so move it away first if another program needs it'
  );
}

/** One write of a batch, as posted to the writer thread. */
export type WriteOp =
  | [
      op: 'put',
      storage: string,
      key: string,
      namespace: string,
      name: string,
      uid: string,
      rv: number,
      labels: string,
      fields: string,
      json: string,
    ]
  | [op: 'del', storage: string, key: string]
  | [op: 'drop', storage: string]
  | [op: 'set', name: string, value: string];

interface Batch {
  promise: Promise<void>;
  resolve: () => void;
  /** The last resourceVersion the batch holds, set when it goes to the writer. */
  rv: number;
}

function newBatch(): Batch {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve, rv: 0 };
}

// Sources run as .ts (type stripping) and built as .js: the writer is the sibling file either way.
const WRITER = new URL(
  import.meta.url.endsWith('.ts') ? './sqlite-writer.ts' : './sqlite-writer.js',
  import.meta.url,
);

type Row = [
  storage: string,
  key: string,
  namespace: string,
  name: string,
  uid: string,
  rv: number,
  labels: string,
  fields: string,
  json: string,
];

export class SqliteBackend implements StoreBackend {
  readonly file: string;
  /** The main thread's connection: opening, migrating, loading and reading settings. */
  private readonly db: DatabaseSync;
  /** Started with the first commit, once the database is known to be usable. */
  private writer: Worker | undefined;
  private ops: WriteOp[] = [];
  /** Writes gathering for the next commit. */
  private next: Batch | undefined;
  /** The batch the writer is committing. */
  private inFlight: Batch | undefined;
  private scheduled = false;
  private lastRv = 0;
  /** Every write up to this resourceVersion is on disk. */
  private durableRv = 0;
  private closed = false;
  private failed = false;
  /**
   * Called once when a commit fails: the process must not go on serving what is not on disk.
   * What waits on the failed commit (and on any later one) is never released, so nothing it
   * holds is acknowledged. The API server sets this (see server.ts).
   */
  onFatal: (err: Error) => void = (err) => {
    throw err;
  };

  private constructor(file: string, db: DatabaseSync) {
    this.file = file;
    this.db = db;
  }

  private startWriter(): Worker {
    const w = new Worker(WRITER, { workerData: { file: this.file } });
    // Pending commits do not keep a process alive that has nothing else to do; nothing waiting
    // on them has been acknowledged.
    w.unref();
    w.on('message', (m: { ok?: true; error?: string }) => this.committed(m));
    w.on('error', (err) => this.fail(err.message));
    this.writer = w;
    return w;
  }

  /**
   * Opens (creating or migrating) the database; throws StateError for one it cannot use.
   * `migrations` is the schema's list; a test passes a longer one to exercise the upgrade path.
   */
  static open(file: string, migrations: readonly Migration[] = MIGRATIONS): SqliteBackend {
    const latest = migrations.length;
    let db: DatabaseSync | undefined;
    try {
      db = new DatabaseSync(file);
      db.exec('PRAGMA busy_timeout = 5000');
      // Everything that could refuse the file comes before the first PRAGMA that writes
      // (journal_mode = WAL rewrites the header): a file troupe cannot use is left as it was.
      const version = Number(
        (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version,
      );
      if (version > latest) {
        throw new StateError(
          file,
          `it was written by a newer troupe (schema version ${version}; this troupe reads up to ${latest}); upgrade troupe to use it`,
        );
      }
      const foreign = foreignTables(db, version);
      if (foreign) throw new StateError(file, foreign);
      db.exec('PRAGMA journal_mode = WAL');
      db.exec('PRAGMA synchronous = FULL');
      if (version < latest) {
        db.exec('BEGIN IMMEDIATE');
        for (let v = version; v < latest; v++) migrations[v]!(db);
        db.exec(`PRAGMA user_version = ${latest}`);
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
      const select = this.db.prepare(
        'SELECT storage, key, namespace, name, uid, rv, labels, fields, json FROM objects',
      );
      // Arrays rather than one object per row: a restart reads every object, 100,000s of rows.
      select.setReturnArrays(true);
      for (const row of select.iterate() as Iterable<Row>) {
        const [storage, key, namespace, name, uid, rowRv, labels, fields, json] = row;
        let t = tables.get(storage);
        if (!t) {
          t = [];
          tables.set(storage, t);
        }
        t.push({
          key,
          namespace,
          name,
          uid,
          rv: Number(rowRv),
          json,
          labels: labels === '{}' ? {} : (JSON.parse(labels) as Record<string, string>),
          fields: JSON.parse(fields) as Record<string, string>,
        });
      }
      this.lastRv = rv;
      this.durableRv = rv;
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

  /** Stores settings (port, token, certificate) with the next commit. */
  saveSettings(values: Record<string, string>): Promise<void> | undefined {
    for (const [k, v] of Object.entries(values)) this.record(['set', k, v]);
    return this.pending();
  }

  put(storage: string, r: StoredRecord): void {
    this.lastRv = r.rv;
    this.record([
      'put',
      storage,
      r.key,
      r.namespace,
      r.name,
      r.uid,
      r.rv,
      JSON.stringify(r.labels),
      JSON.stringify(r.fields),
      r.json,
    ]);
  }

  remove(storage: string, key: string, rv: number): void {
    this.lastRv = rv;
    this.record(['del', storage, key]);
  }

  dropTable(storage: string, rv: number): void {
    this.lastRv = rv;
    this.record(['drop', storage]);
  }

  pending(rv?: number): Promise<void> | undefined {
    if (rv !== undefined) {
      if (rv <= this.durableRv) return undefined;
      if (this.inFlight && rv <= this.inFlight.rv) return this.inFlight.promise;
    }
    return (this.next ?? this.inFlight)?.promise;
  }

  /** Commits what is gathered, then closes both connections and the writer. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (let p = this.pending(); p; p = this.pending()) {
      this.flush();
      await p;
    }
    const w = this.writer;
    if (w) {
      await new Promise<void>((resolve) => {
        w.once('message', () => resolve());
        w.once('exit', () => resolve());
        w.postMessage({ close: true });
      });
      await w.terminate();
    }
    this.db.close();
  }

  /**
   * Adds a write to the gathering batch. After close, what in-process components still write
   * while the cluster shuts down (the server no longer answers) is acknowledged to nobody and
   * not stored.
   */
  private record(op: WriteOp): void {
    if (this.closed) return;
    this.ops.push(op);
    this.next ??= newBatch();
    if (!this.inFlight && !this.scheduled) {
      this.scheduled = true;
      // After this turn's I/O callbacks: every write they make joins the batch.
      setImmediate(() => {
        this.scheduled = false;
        this.flush();
      });
    }
  }

  private flush(): void {
    if (this.inFlight || !this.next) return;
    this.inFlight = this.next;
    this.inFlight.rv = this.lastRv;
    this.next = undefined;
    const ops = this.ops;
    this.ops = [];
    (this.writer ?? this.startWriter()).postMessage({ ops, rv: this.lastRv });
  }

  private committed(m: { ok?: true; error?: string; closed?: true }): void {
    if (m.closed) return;
    if (m.error !== undefined) {
      this.fail(m.error);
      return;
    }
    const done = this.inFlight;
    this.inFlight = undefined;
    if (done) this.durableRv = Math.max(this.durableRv, done.rv);
    done?.resolve();
    // What gathered during that fsync goes at once: this is the group commit.
    this.flush();
  }

  private fail(message: string): void {
    if (this.failed) return;
    this.failed = true;
    this.inFlight = undefined;
    this.next = undefined;
    this.ops = [];
    this.closed = true;
    void this.writer?.terminate();
    this.onFatal(new Error(`cannot commit to the cluster state in ${this.file}: ${message}`));
  }
}
