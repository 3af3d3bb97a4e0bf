import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  formatGoDuration,
  humanDuration,
  parseGoDuration,
  shortHumanDuration,
  translateTimestampSince,
} from '../../src/kube/duration.ts';

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
    // As a custom resource's date column prints them (kubectl AGE).
    [45 * s, '45s'],
    [5 * m + 3 * s, '5m3s'],
    [90 * m, '90m'],
    [3 * h + 20 * m, '3h20m'],
    [20 * h, '20h'],
    [2 * d + 5 * h, '2d5h'],
    [400 * d, '400d'],
    [3 * 365 * d + 10 * d, '3y10d'],
    [-5 * s, '<invalid>'],
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

describe('parseGoDuration (time.ParseDuration)', () => {
  const cases: [string, number | undefined][] = [
    ['90s', 90 * s],
    ['1h2m3.5s', h + 2 * m + 3500],
    ['1.5m', 90 * s],
    ['.5s', 500],
    ['1.s', s],
    ['300ms', 300],
    ['1500us', 1.5],
    ['1500µs', 1.5],
    ['1500μs', 1.5],
    ['2000000ns', 2],
    ['-1.5h', -1.5 * h],
    ['+2s', 2 * s],
    ['0', 0],
    ['-0', 0],
    ['+0', 0],
    ['', undefined],
    ['-', undefined],
    ['10', undefined],
    ['0s0', undefined],
    ['.s', undefined],
    ['1d', undefined],
    ['1 m', undefined],
    ['1m ', undefined],
    ['+-1s', undefined],
  ];
  for (const [input, want] of cases)
    test(`${JSON.stringify(input)} → ${want}`, () => assert.equal(parseGoDuration(input), want));
});

test('formatGoDuration prints as Duration.String', () => {
  assert.equal(formatGoDuration(0), '0s');
  assert.equal(formatGoDuration(500), '500ms');
  assert.equal(formatGoDuration(-90 * s), '-1m30s');
  assert.equal(formatGoDuration(1500), '1.5s');
  assert.equal(formatGoDuration(h + 2 * s), '1h0m2s');
});
