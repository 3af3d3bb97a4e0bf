import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { humanDuration, shortHumanDuration, translateTimestampSince } from '../../../src/kube/duration.ts';

const s = 1000;
const m = 60 * s;
const h = 60 * m;
const d = 24 * h;

describe('humanDuration (apimachinery duration.HumanDuration)', () => {
  const cases: [number, string][] = [
    [-3 * s, '<invalid>'],
    [-1500, '0s'],
    [0, '0s'],
    [5 * s, '5s'],
    [119 * s, '119s'],
    [2 * m, '2m'],
    [3 * m + 2 * s, '3m2s'],
    [9 * m + 59 * s, '9m59s'],
    [10 * m + 30 * s, '10m'],
    [179 * m, '179m'],
    [3 * h, '3h'],
    [5 * h + 10 * m, '5h10m'],
    [8 * h + 10 * m, '8h'],
    [47 * h, '47h'],
    [2 * d, '2d'],
    [3 * d + 4 * h, '3d4h'],
    [8 * d, '8d'],
    [729 * d, '729d'],
    [2 * 365 * d + 30 * d, '2y30d'],
    [3 * 365 * d, '3y'],
    [9 * 365 * d, '9y'],
  ];
  for (const [ms, want] of cases) test(`${ms}ms → ${want}`, () => assert.equal(humanDuration(ms), want));
});

describe('shortHumanDuration', () => {
  const cases: [number, string][] = [
    [-5 * s, '<invalid>'],
    [59 * s, '59s'],
    [61 * s, '1m'],
    [5 * h, '5h'],
    [30 * d, '30d'],
    [400 * d, '1y'],
  ];
  for (const [ms, want] of cases) test(`${ms}ms → ${want}`, () => assert.equal(shortHumanDuration(ms), want));
});

test('translateTimestampSince renders AGE cells and <unknown> for missing times', () => {
  const now = new Date('2025-01-01T00:10:00Z');
  assert.equal(translateTimestampSince('2025-01-01T00:07:58Z', now), '2m2s');
  assert.equal(translateTimestampSince(undefined, now), '<unknown>');
  assert.equal(translateTimestampSince('garbage', now), '<unknown>');
});
