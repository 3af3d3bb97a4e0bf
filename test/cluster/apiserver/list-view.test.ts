/**
 * List pages read through the store's kept key order and through a snapshot view (the table
 * as of a continue token's resourceVersion), against the plain answer: every key sorted.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { currentView, readPage, viewAt } from '../../../src/cluster/apiserver/list-view.ts';
import { ObjectStore, type StoredRecord } from '../../../src/cluster/apiserver/store.ts';

const T = '/configmaps';

function rec(store: ObjectStore, name: string, ns = 'a'): StoredRecord {
  const rv = store.nextRv();
  return { key: `${ns}/${name}`, namespace: ns, name, uid: name, rv, json: '{}', labels: {}, fields: {} };
}

function write(store: ObjectStore, name: string, ns = 'a'): void {
  store.put(T, rec(store, name, ns));
}

function remove(store: ObjectStore, name: string, ns = 'a'): void {
  store.remove(T, rec(store, name, ns));
}

test('the kept key order follows creates, deletes and re-creates between lists', () => {
  const store = new ObjectStore();
  for (const n of ['m', 'c', 'x', 'a']) write(store, n);
  assert.deepEqual(store.sortedKeys(T), ['a/a', 'a/c', 'a/m', 'a/x']);
  write(store, 'b');
  remove(store, 'm');
  write(store, 'm');
  write(store, 'm'); // an update: no new key
  remove(store, 'x');
  write(store, 'z', 'b');
  assert.deepEqual(store.sortedKeys(T), [...store.table(T).keys()].sort());
  assert.deepEqual(store.sortedKeys(T), ['a/a', 'a/b', 'a/c', 'a/m', 'b/z']);
});

test('the kept key order agrees with a fresh sort through random creates, deletes and lists', () => {
  const store = new ObjectStore();
  // A fixed pseudo-random sequence (xorshift), so a failure repeats.
  let seed = 12345;
  const next = (n: number) => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  for (let step = 0; step < 3000; step++) {
    const name = `k${next(200)}`;
    const ns = next(3) === 0 ? 'b' : 'a';
    if (store.get(T, `${ns}/${name}`) && next(2) === 0) remove(store, name, ns);
    else write(store, name, ns);
    if (next(10) === 0)
      assert.deepEqual(store.sortedKeys(T), [...store.table(T).keys()].sort(), `step ${step}`);
  }
});

test('a continued page reads the table as of its first page: deleted keys back, created ones hidden', () => {
  const store = new ObjectStore();
  for (let i = 0; i < 10; i++) write(store, `k${i}`);
  const at = store.currentRv;
  const first = readPage(
    currentView(store.table(T), store.sortedKeys(T)),
    '',
    undefined,
    () => true,
    4,
    true,
  );
  assert.deepEqual(
    first.records.map((r) => r.name),
    ['k0', 'k1', 'k2', 'k3'],
  );
  assert.equal(first.remaining, 6);
  remove(store, 'k5');
  write(store, 'k55');
  write(store, 'k6');
  const view = viewAtFor(store, at);
  const next = readPage(view, 'a/k3\u0000', undefined, () => true, 4, true);
  // As stored then (the first write was resourceVersion 2): k6's update since is not seen.
  assert.deepEqual(
    next.records.map((r) => [r.name, r.rv]),
    [
      ['k4', 6],
      ['k5', 7],
      ['k6', 8],
      ['k7', 9],
    ],
  );
  assert.equal(next.remaining, 2, 'k8 and k9; k55 did not exist then');
  const last = readPage(view, 'a/k7\u0000', undefined, () => true, 4, true);
  assert.deepEqual(
    last.records.map((r) => r.name),
    ['k8', 'k9'],
  );
  assert.equal(last.more, false);
});

function viewAtFor(store: ObjectStore, rv: number) {
  return viewAt(store.table(T), store.sortedKeys(T), store.changedSince(T, rv));
}
