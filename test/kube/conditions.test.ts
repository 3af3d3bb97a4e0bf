import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type Condition,
  findCondition,
  isConditionFalse,
  isConditionTrue,
  removeCondition,
  rfc3339,
  setCondition,
  withCondition,
} from '../../src/kube/conditions.ts';

const t0 = new Date('2025-03-01T10:00:00.123Z');
const t1 = new Date('2025-03-01T10:05:00Z');

describe('setCondition', () => {
  test('adds a new condition stamped with now', () => {
    const list: Condition[] = [];
    assert.equal(setCondition(list, { type: 'Ready', status: 'False', reason: 'Waiting' }, t0), true);
    assert.deepEqual(list, [
      { type: 'Ready', status: 'False', reason: 'Waiting', lastTransitionTime: '2025-03-01T10:00:00Z' },
    ]);
  });

  test('keeps lastTransitionTime when the status does not change', () => {
    const list: Condition[] = [
      { type: 'Ready', status: 'False', reason: 'A', lastTransitionTime: rfc3339(t0) },
    ];
    assert.equal(setCondition(list, { type: 'Ready', status: 'False', reason: 'B', message: 'm' }, t1), true);
    assert.equal(list[0]!.lastTransitionTime, '2025-03-01T10:00:00Z');
    assert.equal(list[0]!.reason, 'B');
    assert.equal(list[0]!.message, 'm');
  });

  test('moves lastTransitionTime when the status flips', () => {
    const list: Condition[] = [{ type: 'Ready', status: 'False', lastTransitionTime: rfc3339(t0) }];
    setCondition(list, { type: 'Ready', status: 'True' }, t1);
    assert.equal(list[0]!.lastTransitionTime, '2025-03-01T10:05:00Z');
    assert.ok(isConditionTrue(list, 'Ready'));
  });

  test('reports no change for an identical condition', () => {
    const list: Condition[] = [
      { type: 'Ready', status: 'True', reason: 'R', lastTransitionTime: rfc3339(t0) },
    ];
    assert.equal(setCondition(list, { type: 'Ready', status: 'True', reason: 'R' }, t1), false);
  });

  test('withCondition leaves the input alone', () => {
    const list: Condition[] = [{ type: 'A', status: 'True', lastTransitionTime: rfc3339(t0) }];
    const { conditions, changed } = withCondition(list, { type: 'A', status: 'False' }, t1);
    assert.equal(changed, true);
    assert.equal(list[0]!.status, 'True');
    assert.equal(conditions[0]!.status, 'False');
  });
});

test('find, check and remove', () => {
  const list: Condition[] = [
    { type: 'A', status: 'True' },
    { type: 'B', status: 'False' },
  ];
  assert.equal(findCondition(list, 'B')?.status, 'False');
  assert.ok(isConditionFalse(list, 'B'));
  assert.ok(!isConditionTrue(list, 'C'));
  assert.ok(removeCondition(list, 'A'));
  assert.ok(!removeCondition(list, 'A'));
  assert.equal(list.length, 1);
  assert.equal(findCondition(undefined, 'A'), undefined);
});
