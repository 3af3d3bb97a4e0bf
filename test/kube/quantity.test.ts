import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  addQuantities,
  addResourceList,
  canonicalizeQuantity,
  compareQuantities,
  formatQuantity,
  maxResourceList,
  milliValue,
  parseQuantity,
  parseQuantityMilli,
  parseResourceList,
  QUANTITY_FORMAT_ERROR,
  QUANTITY_SUFFIX_ERROR,
  QuantityParseError,
  quantityFromMilli,
  quantityValue,
  subtractQuantities,
  tryParseQuantity,
} from '../../src/kube/quantity.ts';

describe('parseQuantity', () => {
  test('reads every suffix family into exact milli-units', () => {
    assert.equal(parseQuantityMilli('100m'), 100n);
    assert.equal(parseQuantityMilli('2'), 2000n);
    assert.equal(parseQuantityMilli('1.5'), 1500n);
    assert.equal(parseQuantityMilli('1e3'), 1_000_000n);
    assert.equal(parseQuantityMilli('1E3'), 1_000_000n);
    assert.equal(parseQuantityMilli('500Ki'), 512_000_000n);
    assert.equal(parseQuantityMilli('1Gi'), 1_073_741_824_000n);
    assert.equal(parseQuantityMilli('1k'), 1_000_000n);
    assert.equal(parseQuantityMilli('1M'), 1_000_000_000n);
    assert.equal(parseQuantityMilli('1E'), 10n ** 21n);
    assert.equal(parseQuantityMilli('-1'), -1000n);
    assert.equal(parseQuantityMilli('+3'), 3000n);
    assert.equal(parseQuantityMilli('.5'), 500n);
    assert.equal(parseQuantityMilli(2), 2000n);
    assert.equal(parseQuantityMilli(0.25), 250n);
  });

  test('keeps nano precision and rounds anything finer up, away from zero', () => {
    assert.equal(parseQuantity('1n').nanos, 1n);
    assert.equal(parseQuantity('1u').nanos, 1000n);
    assert.equal(parseQuantity('0.0000000001').nanos, 1n);
    assert.equal(parseQuantity('-0.0000000001').nanos, -1n);
    assert.equal(milliValue('1u'), 1n, 'MilliValue rounds up');
    assert.equal(quantityValue('1500m'), 2n, 'Value rounds up');
  });

  test('remembers the format of the suffix', () => {
    assert.equal(parseQuantity('1Gi').format, 'BinarySI');
    assert.equal(parseQuantity('1G').format, 'DecimalSI');
    assert.equal(parseQuantity('1e9').format, 'DecimalExponent');
    assert.equal(parseQuantity('12').format, 'DecimalSI');
  });

  test('rejects malformed input with apimachinery texts', () => {
    for (const bad of ['', 'abc', '1 Gi', ' 1', '1GiB', '1.2.3', '1Kb']) {
      assert.throws(
        () => parseQuantity(bad),
        { name: 'QuantityParseError', message: QUANTITY_FORMAT_ERROR },
        bad,
      );
    }
    for (const bad of ['1K', '1e', '1e+', '--1', '1Ki2', '1mi']) {
      assert.throws(() => parseQuantity(bad), { message: QUANTITY_SUFFIX_ERROR }, bad);
    }
    assert.ok(new QuantityParseError('x', 'y') instanceof Error);
    assert.equal(tryParseQuantity('nope'), undefined);
    assert.equal(tryParseQuantity({}), undefined);
  });
});

describe('formatQuantity', () => {
  const cases: [string, string][] = [
    ['0', '0'],
    ['0m', '0'],
    ['100m', '100m'],
    ['1000m', '1'],
    ['1.5', '1500m'],
    ['0.1', '100m'],
    ['1000', '1k'],
    ['1500', '1500'],
    ['12000', '12k'],
    ['1e3', '1e3'],
    ['1.5e3', '1500'],
    ['1e-3', '1e-3'],
    ['1Gi', '1Gi'],
    ['1.5Gi', '1536Mi'],
    ['0.5Gi', '512Mi'],
    ['1024Mi', '1Gi'],
    ['1024', '1024'],
    ['512Ki', '512Ki'],
    ['0.5Ki', '512'],
    ['1.5Ki', '1536'],
    ['-1Gi', '-1Gi'],
    ['-100m', '-100m'],
    ['1u', '1u'],
    ['1000u', '1m'],
    ['1M', '1M'],
    ['1000k', '1M'],
  ];
  for (const [input, want] of cases) {
    test(`${input} → ${want}`, () => assert.equal(canonicalizeQuantity(input), want));
  }

  test('binary values that are not whole bytes fall back to DecimalSI', () => {
    assert.equal(formatQuantity({ nanos: 1024_500_000_000n, format: 'BinarySI' }), '1024500m');
  });

  test('DecimalSI caps the suffix at E', () => {
    assert.equal(canonicalizeQuantity('1000E'), '1000E');
  });
});

describe('arithmetic', () => {
  test('compare across formats', () => {
    assert.equal(compareQuantities('1', '1000m'), 0);
    assert.equal(compareQuantities('1Gi', '1G'), 1);
    assert.equal(compareQuantities('999m', '1'), -1);
  });

  test('add and subtract keep the first operand format', () => {
    const sum = addQuantities('1Gi', '512Mi');
    assert.equal(sum.format, 'BinarySI');
    assert.equal(formatQuantity(sum), '1536Mi');
    assert.equal(formatQuantity(addQuantities('100m', '1')), '1100m');
    assert.equal(formatQuantity(subtractQuantities('1', '250m')), '750m');
    assert.equal(formatQuantity(quantityFromMilli(2500n)), '2500m');
  });

  test('resource lists sum and take maxima, skipping malformed entries', () => {
    const list = parseResourceList({ cpu: '500m', memory: '1Gi', bogus: 'x' });
    assert.deepEqual(Object.keys(list), ['cpu', 'memory']);
    addResourceList(list, parseResourceList({ cpu: '1', 'nvidia.com/gpu': '1' }));
    assert.equal(milliValue(list.cpu!), 1500n);
    assert.equal(milliValue(list['nvidia.com/gpu']!), 1000n);
    maxResourceList(list, parseResourceList({ cpu: '2', memory: '1Mi' }));
    assert.equal(milliValue(list.cpu!), 2000n);
    assert.equal(formatQuantity(list.memory!), '1Gi');
  });
});
