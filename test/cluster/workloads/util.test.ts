import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { IndexSet } from '../../../src/cluster/workloads/job-indexes.ts';
import { computeHash, scaledValue } from '../../../src/cluster/workloads/util.ts';
import { canonicalJson } from '../../../src/lib/json.ts';

describe('workload utilities', () => {
  test('scaledValue follows intstr rounding', () => {
    assert.equal(scaledValue('25%', 10, true), 3);
    assert.equal(scaledValue('25%', 10, false), 2);
    assert.equal(scaledValue(2, 10, true), 2);
    assert.equal(scaledValue('0%', 10, true), 0);
    assert.throws(() => scaledValue('abc', 10, true), /invalid value for IntOrString/);
  });

  test('template hashes ignore key order and change with the collision count', () => {
    const a = { metadata: { labels: { a: '1', b: '2' } }, spec: { containers: [{ name: 'c', image: 'x' }] } };
    const b = { spec: { containers: [{ image: 'x', name: 'c' }] }, metadata: { labels: { b: '2', a: '1' } } };
    assert.equal(canonicalJson(a), canonicalJson(b));
    assert.equal(computeHash(a), computeHash(b));
    assert.notEqual(computeHash(a, 1), computeHash(a));
    assert.match(computeHash(a), /^[bcdfghjklmnpqrstvwxz2456789]+$/);
  });

  test('completed index sets render like status.completedIndexes', () => {
    assert.equal(new IndexSet([5, 0, 1, 2, 7, 9, 8]).toString(), '0-2,5,7-9');
    assert.equal(IndexSet.parse('0-2,5,7-9', 8).toString(), '0-2,5,7');
    assert.equal(IndexSet.parse('', 3).total, 0);
    assert.equal(new IndexSet([3]).with([4, 3]).toString(), '3-4');
  });
});
