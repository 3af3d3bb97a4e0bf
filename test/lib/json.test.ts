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

test('clone equals a JSON round trip, key order and "__proto__" members included', () => {
  const roundTrip = (v: unknown) => JSON.parse(JSON.stringify(v));
  const tricky: unknown[] = [
    { b: 1, a: [undefined, () => 1, Number.NaN, Infinity, -0], 2: 'x', 1: 'y', f: () => 1 },
    { at: new Date(0), nested: { at: new Date(1000) } },
    JSON.parse('{"__proto__": {"polluted": true}, "z": {"__proto__": [1]}}'),
    [null, true, 'ünïcode', 1e21, { '': 0 }],
    'plain',
    7,
  ];
  for (const v of tricky) {
    const c = clone(v);
    assert.deepStrictEqual(c, roundTrip(v));
    assert.equal(JSON.stringify(c), JSON.stringify(v), 'same keys in the same order');
  }
  const proto = clone(tricky[2]) as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(proto), Object.prototype, 'a "__proto__" member is not a prototype');
  assert.deepEqual(Object.keys(proto), ['__proto__', 'z']);
  // Random JSON documents: the copy and the round trip agree.
  let seed = 42;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const gen = (depth: number): unknown => {
    switch (depth > 3 ? rand(4) : rand(7)) {
      case 0:
        return rand(1000) - 500;
      case 1:
        return `s${rand(50)}`;
      case 2:
        return rand(2) === 0;
      case 3:
        return null;
      case 4:
        return Array.from({ length: rand(4) }, () => gen(depth + 1));
      default: {
        const o: Record<string, unknown> = {};
        for (let i = rand(5); i > 0; i--)
          o[rand(3) === 0 ? String(rand(20)) : `k${rand(20)}`] = gen(depth + 1);
        if (rand(5) === 0) o.gone = undefined;
        return o;
      }
    }
  };
  for (let i = 0; i < 500; i++) {
    const v = gen(0);
    assert.equal(JSON.stringify(clone(v)), JSON.stringify(roundTrip(v)));
  }
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
