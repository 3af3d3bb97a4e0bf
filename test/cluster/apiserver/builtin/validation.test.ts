import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  dedupe,
  formatFieldError,
  invalid,
  notSupported,
  renderValue,
  required,
  tooLong,
} from '../../../../src/cluster/apiserver/builtin/field-errors.ts';
import {
  formatLabelSelector,
  labelSelectorString,
  validateLabelSelector,
} from '../../../../src/cluster/apiserver/builtin/selector.ts';
import {
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  nameIsDNSSubdomain,
  validateAnnotations,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from '../../../../src/cluster/apiserver/builtin/validation.ts';
import { semanticEqual } from '../../../../src/lib/json.ts';

describe('name validators', () => {
  test('DNS-1123 subdomain', () => {
    assert.deepEqual(isDNS1123Subdomain('a.b-c'), []);
    assert.equal(isDNS1123Subdomain('a'.repeat(254))[0], 'must be no more than 253 characters');
    assert.equal(isDNS1123Subdomain('-a').length, 1);
  });

  test('DNS-1123 label and DNS-1035 label', () => {
    assert.deepEqual(isDNS1123Label('123-abc'), []);
    assert.deepEqual(isDNS1123Label('a.b'), ['must not contain dots']);
    assert.deepEqual(isDNS1123Label('a'.repeat(64)), ['must be no more than 63 characters']);
    assert.deepEqual(isDNS1035Label('abc-123'), []);
    assert.equal(isDNS1035Label('1abc').length, 1);
  });

  test('qualified names', () => {
    assert.deepEqual(isQualifiedName('example.com/My_Name.1'), []);
    assert.deepEqual(isQualifiedName('/x'), ['prefix part must be non-empty']);
    assert.deepEqual(isQualifiedName('x/'), [
      'name part must be non-empty',
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]);
    assert.match(isQualifiedName('Bad.Prefix/x')[0]!, /^prefix part a lowercase RFC 1123 subdomain/);
  });

  test('generateName prefixes are masked as apimachinery masks them', () => {
    // maskTrailingDash replaces the last two characters with 'a', so the one before the dash goes unchecked.
    assert.deepEqual(nameIsDNSSubdomain('web-', true), []);
    assert.deepEqual(nameIsDNSSubdomain('a_-', true), []);
    assert.equal(nameIsDNSSubdomain('a_-', false).length, 1);
  });

  test('label values', () => {
    assert.deepEqual(isValidLabelValue(''), []);
    assert.deepEqual(isValidLabelValue('a-b_c.d'), []);
    assert.equal(isValidLabelValue('-a').length, 1);
  });
});

describe('field errors', () => {
  test('values render like ErrorBody', () => {
    assert.equal(renderValue('x'), '"x"');
    assert.equal(renderValue(3), '3');
    assert.equal(renderValue(true), 'true');
    assert.equal(renderValue(null), 'null');
    assert.equal(renderValue({ a: 1 }), '{"a":1}');
    assert.equal(invalid('spec.x', 'v', 'bad').message, 'Invalid value: "v": bad');
    assert.equal(required('spec.x').message, 'Required value');
    assert.equal(
      notSupported('f', 'x', ['a', 'b']).message,
      'Unsupported value: "x": supported values: "a", "b"',
    );
    assert.equal(
      tooLong('metadata.annotations', 262144).message,
      'Too long: may not be more than 262144 bytes',
    );
    assert.equal(formatFieldError(required('spec.x', 'why')), 'spec.x: Required value: why');
  });

  test('dedupe drops repeats', () => {
    assert.equal(dedupe([required('a'), required('a'), required('b')]).length, 2);
  });
});

describe('object meta', () => {
  test('name or generateName, namespace rules', () => {
    assert.deepEqual(validateObjectMeta({}, true, nameIsDNSSubdomain).map(formatFieldError), [
      'metadata.name: Required value: name or generateName is required',
      'metadata.namespace: Required value',
    ]);
    assert.deepEqual(
      validateObjectMeta({ name: 'x', namespace: 'ns' }, false, nameIsDNSSubdomain).map(formatFieldError),
      ['metadata.namespace: Forbidden: not allowed on this type'],
    );
    assert.deepEqual(
      validateObjectMeta({ name: 'x', generateName: 'web-', namespace: 'ns' }, true, nameIsDNSSubdomain),
      [],
    );
  });

  test('annotations: case-insensitive keys and a size cap', () => {
    assert.deepEqual(validateAnnotations({ 'Example.com/Key': 'v' }, 'metadata.annotations'), []);
    const big = validateAnnotations({ k: 'x'.repeat(256 * 1024) }, 'metadata.annotations');
    assert.equal(
      formatFieldError(big[0]!),
      'metadata.annotations: Too long: may not be more than 262144 bytes',
    );
  });

  test('owner references need their fields and a single controller', () => {
    const errs = validateObjectMeta(
      {
        name: 'x',
        namespace: 'n',
        ownerReferences: [
          { apiVersion: 'v1', kind: 'A', name: 'a', uid: '1', controller: true },
          { apiVersion: 'v1', kind: 'B', name: 'b', uid: '2', controller: true },
          { apiVersion: '', kind: 'C', name: 'c', uid: '3' },
        ],
      },
      true,
      nameIsDNSSubdomain,
    ).map(formatFieldError);
    assert.equal(errs.length, 2);
    assert.equal(
      errs[0],
      'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
    );
    assert.match(
      errs[1]!,
      /Only one reference can have Controller set to true\. Found "true" in references for A\/a and B\/b$/,
    );
  });

  test('updates may not rename or decrement generation', () => {
    const errs = validateObjectMetaUpdate({ name: 'y', generation: 1 }, { name: 'x', generation: 2 }).map(
      formatFieldError,
    );
    assert.deepEqual(errs, [
      'metadata.generation: Invalid value: 1: must not be decremented',
      'metadata.name: Invalid value: "y": field is immutable',
    ]);
  });
});

describe('label selectors', () => {
  test('validation messages', () => {
    const errs = validateLabelSelector(
      {
        matchExpressions: [
          { key: 'a', operator: 'In' },
          { key: 'b', operator: 'Exists', values: ['x'] },
          { key: 'c', operator: 'Near' },
        ],
      },
      'spec.selector',
    ).map(formatFieldError);
    assert.deepEqual(errs, [
      "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      'spec.selector.matchExpressions[2].operator: Invalid value: "Near": not a valid selector operator',
    ]);
  });

  test('formatting sorts by key and values', () => {
    const sel = {
      matchLabels: { tier: 'fe', app: 'web' },
      matchExpressions: [
        { key: 'env', operator: 'In', values: ['prod', 'dev'] },
        { key: 'legacy', operator: 'DoesNotExist' },
      ],
    };
    assert.equal(labelSelectorString(sel), 'app=web,env in (dev,prod),!legacy,tier=fe');
    assert.equal(formatLabelSelector({}), '<none>');
    assert.equal(formatLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Bad' }] }), '<error>');
  });
});

test('deepEqual treats absent, null and empty alike', () => {
  assert.ok(semanticEqual({ a: [] }, {}));
  assert.ok(semanticEqual({ a: null, b: { c: {} } }, { b: {} }));
  assert.ok(!semanticEqual({ a: 1 }, { a: '1' }));
  assert.ok(!semanticEqual([1, 2], [2, 1]));
});
