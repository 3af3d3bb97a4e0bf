import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyMergePatch, PatchError } from '../../../../src/cluster/apiserver/patch/index.ts';
import { deepFreeze } from './freeze.ts';

describe('applyMergePatch (RFC 7396)', () => {
  const doc = () =>
    deepFreeze({
      metadata: { name: 'x', labels: { a: '1', b: '2' } },
      spec: { list: [1, 2, 3], nested: { keep: true } },
    });

  test('merges objects, deletes with null, replaces arrays, and leaves the input alone', () => {
    const input = doc();
    const out = applyMergePatch(input, {
      metadata: { labels: { a: null, c: '3' } },
      spec: { list: [9], extra: { x: null, y: 1 } },
    });
    assert.deepEqual(out, {
      metadata: { name: 'x', labels: { b: '2', c: '3' } },
      spec: { list: [9], nested: { keep: true }, extra: { y: 1 } },
    });
    assert.deepEqual(input.metadata.labels, { a: '1', b: '2' });
  });

  test('the result can be mutated without affecting the input', () => {
    const input = doc();
    const out = applyMergePatch(input, { spec: { other: 1 } }) as { spec: { nested: { keep: boolean } } };
    out.spec.nested.keep = false;
    assert.equal(input.spec.nested.keep, true);
  });

  test('a null or scalar patch is 400, an array patch is 422', () => {
    for (const [patch, status] of [
      [null, 400],
      [5, 400],
      [[1], 422],
    ] as const) {
      assert.throws(
        () => applyMergePatch(doc(), patch),
        (e: unknown) => e instanceof PatchError && e.status === status,
      );
    }
  });
});
