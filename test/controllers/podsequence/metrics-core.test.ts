/** The pure parts of the PodSequence metrics. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Release } from '../../../src/controllers/podsequence/core.ts';
import { successorGroups } from '../../../src/controllers/podsequence/metrics.ts';

const release = (name: string, group: number): Release => ({
  name,
  group,
  fromResourceVersion: '1',
  patch: {},
});

describe('release latency observations', () => {
  test('one per group that follows another, none for the first group', () => {
    assert.equal(successorGroups([release('a', 0), release('b', 0)]), 0);
    assert.equal(successorGroups([release('c', 1), release('d', 1)]), 1);
    // Node scope: different groups released on different nodes in one pass.
    assert.equal(successorGroups([release('e', 0), release('f', 1), release('g', 2)]), 2);
  });
});
