import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  finishedTime,
  generateNameWithIndex,
  nextBackoffRecord,
  remainingBackoff,
} from '../../../src/cluster/workloads/job-util.ts';
import type { Pod } from '../../../src/cluster/workloads/pods.ts';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

function pod(name: string, finishedAtS?: number): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'ns', creationTimestamp: at(0) },
    status:
      finishedAtS === undefined
        ? {}
        : { containerStatuses: [{ state: { terminated: { finishedAt: at(finishedAtS) } } }] },
  } as Pod;
}

test('finishedTime: the latest container finish, else creation, else the time given', () => {
  assert.equal(finishedTime(pod('a', 30), T0 + 999_000), T0 + 30_000);
  assert.equal(finishedTime(pod('b'), T0 + 999_000), T0);
  const bare = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'c' } } as Pod;
  assert.equal(finishedTime(bare, T0 + 5), T0 + 5);
});

test('failure backoff: failures since the last success, doubling from the base, counted from the last failure', () => {
  let rec = nextBackoffRecord({ failuresAfterLastSuccess: 0 }, [], [pod('f1', 10), pod('f2', 20)], T0);
  assert.deepEqual(rec, { failuresAfterLastSuccess: 2, lastFailureTime: T0 + 20_000 });
  // Two failures: 10 s * 2 = 20 s from the last one; 5 s have passed.
  assert.equal(remainingBackoff(rec, T0 + 25_000, 10_000, 360_000), 15_000);
  assert.equal(remainingBackoff(rec, T0 + 60_000, 10_000, 360_000), 0);
  // A success after them resets the count to the failures that came later.
  rec = nextBackoffRecord(rec, [pod('s', 30)], [pod('f3', 40)], T0);
  assert.deepEqual(rec, { failuresAfterLastSuccess: 1, lastFailureTime: T0 + 40_000 });
  assert.equal(remainingBackoff({ failuresAfterLastSuccess: 0 }, T0, 10_000, 360_000), 0);
});

test('generateNameWithIndex cuts the Job name so the name prefix fits 58 characters', () => {
  assert.equal(generateNameWithIndex('pi', 3), 'pi-3-');
  const long = generateNameWithIndex('x'.repeat(70), 12);
  assert.equal(long.length, 58);
  assert.ok(long.endsWith('-12-'));
});
