import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OwnWrites } from '../../src/runtime/own-writes.ts';
import type { KubeObject } from '../../src/runtime/types.ts';

const at = (rv: string, phase: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'x', namespace: 'ns', resourceVersion: rv },
  data: { phase },
});

test('our write stands in for the cached copy until the cache moves past the version it replaced', () => {
  const writes = new OwnWrites();
  const stale = at('1', 'old');
  assert.equal(writes.latest('ns/x', stale), stale, 'nothing written: the cache decides');
  const written = at('2', 'new');
  writes.record('ns/x', '1', written);
  assert.equal(writes.latest('ns/x', stale), written, 'the cache still shows rv 1');
  const caughtUp = at('2', 'new');
  assert.equal(writes.latest('ns/x', caughtUp), caughtUp, 'the watch delivered the write');
  assert.equal(writes.latest('ns/x', stale), stale, 'and the write is forgotten');
});

test('forget drops a remembered write', () => {
  const writes = new OwnWrites();
  writes.record('ns/x', '1', at('2', 'new'));
  writes.forget('ns/x');
  const cached = at('1', 'old');
  assert.equal(writes.latest('ns/x', cached), cached);
});

test('writes in a row: the cache showing any version they superseded still lags', () => {
  const writes = new OwnWrites();
  const first = at('1', 'old');
  writes.record('ns/x', '1', at('2', 'mid'));
  const last = at('3', 'new');
  writes.record('ns/x', '2', last);
  assert.equal(writes.latest('ns/x', first), last, 'the cache still shows rv 1');
  assert.equal(writes.latest('ns/x', at('2', 'mid')), last, 'the cache shows the first write only');
  const caughtUp = at('3', 'new');
  assert.equal(writes.latest('ns/x', caughtUp), caughtUp, 'the cache caught up');
});
