/**
 * The worker thread that commits the state database's write batches (see sqlite-backend.ts).
 * node:sqlite is synchronous: a COMMIT with synchronous=FULL waits for an fsync, which would
 * stall every request of the API server if it ran on the main thread. Here it waits alone,
 * while the main thread serves and gathers the next batch.
 */
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
import type { WriteOp } from './sqlite-backend.ts';

const db = new DatabaseSync((workerData as { file: string }).file);
db.exec('PRAGMA busy_timeout = 5000');
db.exec('PRAGMA synchronous = FULL');
const upsert = db.prepare(
  `INSERT INTO objects (storage, key, namespace, name, uid, rv, labels, fields, json)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
   ON CONFLICT (storage, key) DO UPDATE SET uid = excluded.uid, rv = excluded.rv,
     labels = excluded.labels, fields = excluded.fields, json = excluded.json`,
);
const del = db.prepare('DELETE FROM objects WHERE storage = ? AND key = ?');
const drop = db.prepare('DELETE FROM objects WHERE storage = ?');
const set = db.prepare(
  'INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
);

parentPort!.on('message', (msg: { ops: WriteOp[]; rv: number } | { close: true }) => {
  if ('close' in msg) {
    db.close();
    parentPort!.postMessage({ closed: true });
    return;
  }
  try {
    db.exec('BEGIN');
    for (const op of msg.ops) {
      if (op[0] === 'put') upsert.run(op[1], op[2], op[3], op[4], op[5], op[6], op[7], op[8], op[9]);
      else if (op[0] === 'del') del.run(op[1], op[2]);
      else if (op[0] === 'drop') drop.run(op[1]);
      else set.run(op[1], op[2]);
    }
    set.run('rv', String(msg.rv));
    db.exec('COMMIT');
    parentPort!.postMessage({ ok: true });
  } catch (err) {
    try {
      if (db.isTransaction) db.exec('ROLLBACK');
    } catch {
      // The commit error is the one to report.
    }
    parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) });
  }
});
