import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compileSchema } from '../../../../src/cluster/apiserver/crd/index.ts';
import type { JSONSchemaProps } from '../../../../src/cluster/apiserver/crd/types.ts';
import type { FieldError } from '../../../../src/cluster/apiserver/types.ts';

/** A resource schema whose spec has the given properties. */
function specSchema(
  properties: Record<string, JSONSchemaProps>,
  extra: JSONSchemaProps = {},
): JSONSchemaProps {
  return {
    type: 'object',
    properties: { spec: { type: 'object', properties, ...extra } },
  };
}

function errorsFor(
  properties: Record<string, JSONSchemaProps>,
  spec: unknown,
  extra?: JSONSchemaProps,
): FieldError[] {
  return compileSchema(specSchema(properties, extra)).validateOpenAPI({ spec });
}

function one(errs: FieldError[]): FieldError {
  assert.equal(errs.length, 1, JSON.stringify(errs));
  return errs[0]!;
}

describe('OpenAPI value validation messages', () => {
  test('type mismatch is FieldValueTypeInvalid naming the JSON type found', () => {
    assert.deepEqual(one(errorsFor({ replicas: { type: 'integer' } }, { replicas: 'three' })), {
      reason: 'FieldValueTypeInvalid',
      field: 'spec.replicas',
      message: 'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
    });
    assert.equal(
      one(errorsFor({ ratio: { type: 'integer' } }, { ratio: 1.5 })).message,
      'Invalid value: "number": spec.ratio in body must be of type integer: "number"',
    );
  });

  test('integers are accepted where a number is expected', () => {
    assert.deepEqual(errorsFor({ ratio: { type: 'number' } }, { ratio: 2 }), []);
  });

  test('null is a type error unless nullable', () => {
    assert.equal(
      one(errorsFor({ items: { type: 'array', items: { type: 'string' } } }, { items: [null] })).message,
      'Invalid value: "null": spec.items[0] in body must be of type string: "null"',
    );
    assert.deepEqual(errorsFor({ x: { type: 'string', nullable: true } }, { x: null }), []);
  });

  test('required is FieldValueRequired on the missing field', () => {
    assert.deepEqual(one(errorsFor({ a: { type: 'string' } }, {}, { required: ['a'] })), {
      reason: 'FieldValueRequired',
      field: 'spec.a',
      message: 'Required value',
    });
  });

  test('enum is FieldValueNotSupported listing the allowed values', () => {
    assert.deepEqual(
      one(errorsFor({ scope: { type: 'string', enum: ['Cluster', 'Node'] } }, { scope: 'Foo' })),
      {
        reason: 'FieldValueNotSupported',
        field: 'spec.scope',
        message: 'Unsupported value: "Foo": supported values: "Cluster", "Node"',
      },
    );
    assert.equal(
      one(errorsFor({ n: { type: 'integer', enum: [1, 2] } }, { n: 3 })).message,
      'Unsupported value: 3: supported values: "1", "2"',
    );
  });

  test('minimum, maximum and their exclusive forms', () => {
    const min = one(errorsFor({ r: { type: 'integer', minimum: 1 } }, { r: 0 }));
    assert.deepEqual(min, {
      reason: 'FieldValueInvalid',
      field: 'spec.r',
      message: 'Invalid value: 0: spec.r in body should be greater than or equal to 1',
    });
    assert.equal(
      one(errorsFor({ r: { type: 'integer', maximum: 10 } }, { r: 11 })).message,
      'Invalid value: 11: spec.r in body should be less than or equal to 10',
    );
    assert.equal(
      one(errorsFor({ r: { type: 'integer', minimum: 1, exclusiveMinimum: true } }, { r: 1 })).message,
      'Invalid value: 1: spec.r in body should be greater than 1',
    );
    assert.equal(
      one(errorsFor({ r: { type: 'number', maximum: 1000000, exclusiveMaximum: true } }, { r: 1000000.5 }))
        .message,
      'Invalid value: 1.0000005e+06: spec.r in body should be less than 1e+06',
    );
  });

  test('multipleOf', () => {
    assert.equal(
      one(errorsFor({ r: { type: 'integer', multipleOf: 5 } }, { r: 7 })).message,
      'Invalid value: 7: spec.r in body should be a multiple of 5',
    );
  });

  test('maxLength is FieldValueTooLong, minLength and pattern are FieldValueInvalid', () => {
    assert.deepEqual(one(errorsFor({ s: { type: 'string', maxLength: 3 } }, { s: 'abcd' })), {
      reason: 'FieldValueTooLong',
      field: 'spec.s',
      message: 'Too long: may not be more than 3 bytes',
    });
    assert.equal(
      one(errorsFor({ s: { type: 'string', minLength: 3 } }, { s: 'ab' })).message,
      'Invalid value: "ab": spec.s in body should be at least 3 chars long',
    );
    assert.equal(
      one(errorsFor({ s: { type: 'string', pattern: '^[a-z]+$' } }, { s: 'A1' })).message,
      `Invalid value: "A1": spec.s in body should match '^[a-z]+$'`,
    );
  });

  test('maxLength counts characters, not UTF-16 units', () => {
    assert.deepEqual(errorsFor({ s: { type: 'string', maxLength: 2 } }, { s: '😀😀' }), []);
  });

  test('formats: date-time, int32 range, unknown formats pass', () => {
    assert.deepEqual(one(errorsFor({ t: { type: 'string', format: 'date-time' } }, { t: 'yesterday' })), {
      reason: 'FieldValueTypeInvalid',
      field: 'spec.t',
      message: 'Invalid value: "yesterday": spec.t in body must be of type date-time: "yesterday"',
    });
    assert.deepEqual(
      errorsFor({ t: { type: 'string', format: 'date-time' } }, { t: '2024-05-01T10:00:00Z' }),
      [],
    );
    assert.deepEqual(one(errorsFor({ n: { type: 'integer', format: 'int32' } }, { n: 2 ** 31 })), {
      reason: 'FieldValueInvalid',
      field: '<nil>',
      message: 'Invalid value: "": Checked value must be of type integer with format int32 in spec.n',
    });
    assert.deepEqual(errorsFor({ n: { type: 'integer', format: 'int64' } }, { n: 2 ** 40 }), []);
    assert.deepEqual(errorsFor({ s: { type: 'string', format: 'no-such-format' } }, { s: 'x' }), []);
    assert.equal(
      one(errorsFor({ s: { type: 'string', format: 'duration' } }, { s: 'soon' })).message,
      'Invalid value: "soon": spec.s in body must be of type duration: "soon"',
    );
    assert.deepEqual(errorsFor({ s: { type: 'string', format: 'duration' } }, { s: '1h30m' }), []);
  });

  test('minItems, maxItems (FieldValueTooMany) and uniqueItems', () => {
    const list = (extra: JSONSchemaProps) => ({ l: { type: 'array', items: { type: 'string' }, ...extra } });
    assert.equal(
      one(errorsFor(list({ minItems: 2 }), { l: ['a'] })).message,
      'Invalid value: 1: spec.l in body should have at least 2 items',
    );
    assert.deepEqual(one(errorsFor(list({ maxItems: 1 }), { l: ['a', 'b'] })), {
      reason: 'FieldValueTooMany',
      field: 'spec.l',
      message: 'Too many: 2: must have at most 1 item',
    });
    assert.equal(
      one(errorsFor(list({ uniqueItems: true }), { l: ['a', 'a'] })).message,
      `Invalid value: "": spec.l in body shouldn't contain duplicates`,
    );
  });

  test('minProperties and maxProperties', () => {
    const map = (extra: JSONSchemaProps) => ({
      m: { type: 'object', additionalProperties: { type: 'string' }, ...extra },
    });
    assert.equal(
      one(errorsFor(map({ minProperties: 1 }), { m: {} })).message,
      'Invalid value: 0: spec.m in body should have at least 1 properties',
    );
    assert.deepEqual(one(errorsFor(map({ maxProperties: 1 }), { m: { a: 'x', b: 'y' } })), {
      reason: 'FieldValueTooMany',
      field: 'spec.m',
      message: 'Too many: 2: must have at most 1 item',
    });
    assert.equal(
      one(errorsFor(map({}), { m: { a: 1 } })).message,
      'Invalid value: "integer": spec.m.a in body must be of type string: "integer"',
    );
  });

  test('x-kubernetes-int-or-string accepts both and rejects others', () => {
    const ios = { port: { 'x-kubernetes-int-or-string': true } };
    assert.deepEqual(errorsFor(ios, { port: 80 }), []);
    assert.deepEqual(errorsFor(ios, { port: 'http' }), []);
    assert.equal(
      one(errorsFor(ios, { port: true })).message,
      'Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
    );
  });

  test('oneOf, anyOf, allOf and not report on the nil path with the Go-quoted name', () => {
    const props = { a: { type: 'string' }, b: { type: 'string' } };
    const oneOf = errorsFor(props, {}, { oneOf: [{ required: ['a'] }, { required: ['b'] }] });
    assert.deepEqual(oneOf[0], {
      reason: 'FieldValueInvalid',
      field: '<nil>',
      message: 'Invalid value: "": "spec" must validate one and only one schema (oneOf). Found none valid',
    });
    assert.deepEqual(oneOf[1], { reason: 'FieldValueRequired', field: 'spec.a', message: 'Required value' });
    assert.equal(
      errorsFor(props, { a: 'x', b: 'y' }, { oneOf: [{ required: ['a'] }, { required: ['b'] }] })[0]!.message,
      'Invalid value: "": "spec" must validate one and only one schema (oneOf). Found 2 valid alternatives',
    );
    assert.deepEqual(errorsFor(props, { b: 'y' }, { anyOf: [{ required: ['a'] }, { required: ['b'] }] }), []);
    assert.equal(
      errorsFor(props, {}, { anyOf: [{ required: ['a'] }, { required: ['b'] }] })[0]!.message,
      'Invalid value: "": "spec" must validate at least one schema (anyOf)',
    );
    assert.ok(
      errorsFor(props, {}, { allOf: [{ required: ['a'] }] })
        .map((e) => e.message)
        .includes('Invalid value: "": "spec" must validate all the schemas (allOf). None validated'),
    );
    assert.equal(
      one(errorsFor(props, { a: 'x' }, { not: { required: ['a'] } })).message,
      'Invalid value: "": "spec" must not validate the schema (not)',
    );
  });

  test('ratcheting: on update, values left unchanged keep passing', () => {
    const schema = compileSchema(specSchema({ r: { type: 'integer', maximum: 3 }, s: { type: 'string' } }));
    const old = { spec: { r: 5, s: 'a' } };
    assert.equal(schema.validateOpenAPI({ spec: { r: 5, s: 'b' } }).length, 1);
    assert.deepEqual(schema.validateOpenAPI({ spec: { r: 5, s: 'b' } }, old), []);
    assert.equal(schema.validateOpenAPI({ spec: { r: 6, s: 'a' } }, old).length, 1);
  });
});

describe('list types and embedded resources', () => {
  test('set lists reject duplicates, map lists duplicate keys', () => {
    const schema = compileSchema(
      specSchema({
        tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            required: ['name'],
            properties: { name: { type: 'string' }, port: { type: 'integer' } },
          },
        },
      }),
    );
    const errs = schema.validateStructure({
      spec: {
        tags: ['a', 'b', 'a'],
        ports: [
          { name: 'http', port: 80 },
          { name: 'http', port: 8080 },
        ],
      },
    });
    assert.deepEqual(errs, [
      { reason: 'FieldValueDuplicate', field: 'spec.tags[2]', message: 'Duplicate value: "a"' },
      {
        reason: 'FieldValueDuplicate',
        field: 'spec.ports[1]',
        message: 'Duplicate value: map[string]interface {}{"name":"http"}',
      },
    ]);
  });

  test('embedded resources need apiVersion and kind', () => {
    const schema = compileSchema(
      specSchema({
        template: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          'x-kubernetes-preserve-unknown-fields': true,
        },
      }),
    );
    assert.deepEqual(schema.validateStructure({ spec: { template: { kind: 'Pod' } } }), [
      { reason: 'FieldValueRequired', field: 'spec.template.apiVersion', message: 'Required value' },
    ]);
    assert.deepEqual(schema.validateStructure({ spec: { template: { apiVersion: 'v1', kind: 'Pod' } } }), []);
  });
});
