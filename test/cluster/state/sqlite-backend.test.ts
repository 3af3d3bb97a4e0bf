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
