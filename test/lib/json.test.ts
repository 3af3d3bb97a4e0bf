import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  arrayOf,
  canonicalJson,
  clone,
  isObject,
  jsonEqual,
  recordOf,
  semanticEqual,
  stringOf,
} from '../../src/lib/json.ts';

test('canonicalJson: equal up to key order and undefined members, as JSON sees values', () => {
  assert.equal(
    canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: undefined } }),
    '{"a":{"d":[1,{"x":1,"y":2}]},"b":1}',
  );
  assert.equal(canonicalJson({ a: 1, b: undefined }), canonicalJson({ a: 1 }));
  assert.notEqual(canonicalJson({ a: [1, 2] }), canonicalJson({ a: [2, 1] }), 'array order counts');
  assert.notEqual(canonicalJson({ a: null }), canonicalJson({}), 'null is a value');
});

test('jsonEqual: key order and undefined members do not count, null and array order do', () => {
  assert.ok(jsonEqual({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 }));
  assert.ok(jsonEqual({ a: 1, b: undefined }, { a: 1 }));
  assert.ok(jsonEqual(undefined, null), 'JSON writes a missing value as null');
  assert.ok(!jsonEqual({ a: null }, {}));
  assert.ok(!jsonEqual([1, 2], [2, 1]));
  assert.ok(!jsonEqual({ a: 1 }, { a: 1, b: 2 }));
  assert.ok(!jsonEqual({ a: 1, b: 2 }, { a: 1 }));
  assert.ok(!jsonEqual([], {}));
  assert.ok(!jsonEqual('1', 1));
  // The same verdict as comparing canonical texts.
  for (const [a, b] of [
    [{ x: [{ y: 1, z: undefined }] }, { x: [{ y: 1 }] }],
    [{ x: 1 }, { x: '1' }],
  ] as const)
    assert.equal(jsonEqual(a, b), canonicalJson(a) === canonicalJson(b));
});

test('semanticEqual: absent, null, empty map and empty list are the zero value, as in Go', () => {
  assert.ok(semanticEqual({ a: [], b: {} }, { c: null }));
  assert.ok(semanticEqual(undefined, []));
  assert.ok(!semanticEqual({ a: 0 }, {}), 'a zero number is a value here');
  assert.ok(!semanticEqual({ a: [1] }, { a: [] }));
});

test('clone copies deeply and drops undefined members; isObject is a non-null non-array object', () => {
  const v = { a: { b: [1, { c: 2 }] }, d: undefined };
  const c = clone(v);
  assert.deepEqual(c, { a: { b: [1, { c: 2 }] } });
  assert.notEqual(c.a, v.a);
  assert.equal(clone(undefined), undefined);
  assert.ok(isObject({}));
  assert.ok(!isObject([]));
  assert.ok(!isObject(null));
  assert.ok(!isObject('x'));
});

test('recordOf, arrayOf and stringOf read loose JSON: the value of the right type, else the empty one', () => {
  const obj = { a: 1 };
  assert.equal(recordOf(obj), obj);
  for (const v of [null, undefined, 0, '', 'x', [1], false]) assert.deepEqual(recordOf(v), {});
  const list = [1, 2];
  assert.equal(arrayOf(list), list);
  assert.deepEqual(arrayOf({ length: 1 }), []);
  assert.equal(stringOf('s'), 's');
  assert.equal(stringOf(5), '');
});
