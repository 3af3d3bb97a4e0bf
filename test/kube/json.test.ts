import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalJson } from '../../src/kube/json.ts';

test('canonicalJson: equal up to key order and undefined members, as JSON sees values', () => {
  assert.equal(
    canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: undefined } }),
    '{"a":{"d":[1,{"x":1,"y":2}]},"b":1}',
  );
  assert.equal(canonicalJson({ a: 1, b: undefined }), canonicalJson({ a: 1 }));
  assert.notEqual(canonicalJson({ a: [1, 2] }), canonicalJson({ a: [2, 1] }), 'array order counts');
  assert.notEqual(canonicalJson({ a: null }), canonicalJson({}), 'null is a value');
});
