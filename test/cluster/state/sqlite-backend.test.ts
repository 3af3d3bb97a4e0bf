import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { StoredRecord } from '../../../src/cluster/apiserver/store.ts';
import { SqliteBackend } from '../../../src/cluster/state/sqlite-backend.ts';

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
