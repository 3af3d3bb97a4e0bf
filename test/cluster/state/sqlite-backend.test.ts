import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import type { StoredRecord } from '../../../src/cluster/apiserver/store.ts';
import { MIGRATIONS } from '../../../src/cluster/state/schema.ts';
import { SqliteBackend, StateError } from '../../../src/cluster/state/sqlite-backend.ts';

const rec = (name: string, rv: number): StoredRecord => ({
  key: `ns/${name}`,
  namespace: 'ns',
  name,
  uid: `uid-${name}`,
  rv,
  json: JSON.stringify({ metadata: { name, resourceVersion: String(rv) } }),
  labels: { app: name },
  fields: { 'metadata.name': name, 'metadata.namespace': 'ns' },
});

test('writes of one turn share a commit; what is committed loads back with the last resourceVersion', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-sqlite-'));
  const file = join(dir, 'state.db');
  try {
    const b = SqliteBackend.open(file);
    b.load();
    b.put('/configmaps', rec('a', 2));
    b.put('/configmaps', rec('b', 3));
    const batch = b.pending();
    assert.ok(batch);
    b.put('/configmaps', rec('a', 4));
    assert.equal(b.pending(), batch, 'the same turn joins the same commit');
    await batch;
    b.remove('/configmaps', 'ns/b', 5);
    await b.pending();
    assert.equal(b.pending(), undefined);
    await b.close();

    const again = SqliteBackend.open(file);
    const state = again.load();
    // The deletion's resourceVersion counts: rv 5 is never handed out again.
    assert.equal(state.rv, 5);
    assert.deepEqual(state.tables.get('/configmaps'), [rec('a', 4)]);
    await again.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('pending(rv) waits only for the commit that holds rv; what is on disk needs no wait', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-sqlite-'));
  try {
    const b = SqliteBackend.open(join(dir, 'state.db'));
    b.load();
    b.put('/configmaps', rec('a', 2));
    b.put('/configmaps', rec('b', 3));
    assert.equal(b.pending(1), undefined, 'loaded from disk');
    const first = b.pending(3);
    assert.ok(first);
    // The batch goes to the writer after this turn; what is written then gathers in the next.
    await new Promise((r) => setImmediate(r));
    b.put('/configmaps', rec('c', 4));
    assert.equal(b.pending(3), first, 'rv 3 is in the commit under way');
    const second = b.pending(4);
    assert.ok(second && second !== first, 'rv 4 waits for the next commit');
    await first;
    assert.equal(b.pending(3), undefined);
    await second;
    assert.equal(b.pending(4), undefined);
    await b.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a valid SQLite file troupe did not write is refused before anything in it changes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-sqlite-'));
  const file = join(dir, 'state.db');
  try {
    const other = new DatabaseSync(file);
    other.exec("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')");
    other.close();
    const bytes = await readFile(file);
    assert.throws(
      () => SqliteBackend.open(file),
      (err: unknown) =>
        err instanceof StateError &&
        err.file === file &&
        /SQLite database troupe did not write \(it holds the tables notes and no troupe schema version\)/.test(
          err.message,
        ) &&
        /--reset would delete it/.test(err.message) &&
        /--data-dir/.test(err.message),
    );
    // Not even switched to WAL: the header, and every other byte, as they were.
    assert.deepEqual(await readFile(file), bytes);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a populated version-1 database runs a later migration at open, keeping every object', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-sqlite-'));
  const file = join(dir, 'state.db');
  try {
    const v1 = SqliteBackend.open(file);
    v1.load();
    v1.put('/configmaps', rec('a', 2));
    v1.put('/configmaps', rec('b', 3));
    await v1.pending();
    await v1.close();

    // A made-up version 2: a column and a setting, the kind of step a real one would be.
    const v2Migrations = [
      ...MIGRATIONS,
      (db: DatabaseSync) =>
        db.exec(`ALTER TABLE objects ADD COLUMN note TEXT NOT NULL DEFAULT 'migrated';
                 INSERT INTO settings (name, value) VALUES ('layout', 'two')`),
    ];
    const v2 = SqliteBackend.open(file, v2Migrations);
    const state = v2.load();
    assert.equal(state.rv, 3);
    assert.deepEqual(state.tables.get('/configmaps'), [rec('a', 2), rec('b', 3)]);
    assert.equal(v2.setting('layout'), 'two');
    // Writes go on through the writer thread against the migrated layout.
    v2.put('/configmaps', rec('c', 4));
    await v2.pending();
    await v2.close();

    const raw = new DatabaseSync(file, { readOnly: true });
    assert.equal((raw.prepare('PRAGMA user_version').get() as { user_version: number }).user_version, 2);
    assert.deepEqual(
      raw
        .prepare('SELECT name, note FROM objects ORDER BY name')
        .all()
        .map((r) => ({ ...r })),
      [
        { name: 'a', note: 'migrated' },
        { name: 'b', note: 'migrated' },
        { name: 'c', note: 'migrated' },
      ],
    );
    raw.close();
    // And this troupe, which knows version 1 only, refuses the upgraded file.
    assert.throws(() => SqliteBackend.open(file), /schema version 2; this troupe reads up to 1/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
