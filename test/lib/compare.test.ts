import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareStrings } from '../../src/lib/compare.ts';

test('compareStrings orders by code unit, not by locale', () => {
  assert.deepEqual(['b', 'B', 'a', 'a-1', 'a'].sort(compareStrings), ['B', 'a', 'a', 'a-1', 'b']);
  assert.equal(compareStrings('x', 'x'), 0);
});
