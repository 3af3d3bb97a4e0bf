import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compileSchema } from '../../../../src/cluster/apiserver/crd/index.ts';
import type { JSONSchemaProps, ValidationRule } from '../../../../src/cluster/apiserver/crd/types.ts';
import { podSequence, podSequenceSchema } from './fixtures.ts';

function withSpec(properties: Record<string, JSONSchemaProps>, rules: ValidationRule[]): JSONSchemaProps {
  return {
    type: 'object',
    properties: { spec: { type: 'object', properties, 'x-kubernetes-validations': rules } },
  };
}

const replicaProps: Record<string, JSONSchemaProps> = {
  replicas: { type: 'integer' },
  maxReplicas: { type: 'integer' },
  name: { type: 'string' },
  tags: { type: 'array', items: { type: 'string' } },
  labels: { type: 'object', additionalProperties: { type: 'string' } },
  'max-surge': { type: 'integer' },
  when: { type: 'string', format: 'date-time' },
  timeout: { type: 'string', format: 'duration' },
};

function rulesErrors(rules: ValidationRule[], spec: unknown, oldSpec?: unknown) {
  const cs = compileSchema(withSpec(replicaProps, rules));
  return cs.validateRules({ spec }, oldSpec === undefined ? undefined : { spec: oldSpec });
}

describe('x-kubernetes-validations', () => {
  test('a failing rule without message reports "failed rule" on the object without its value', () => {
    assert.deepEqual(
      rulesErrors([{ rule: 'self.replicas <= self.maxReplicas' }], { replicas: 5, maxReplicas: 3 }),
      [
        {
          reason: 'FieldValueInvalid',
          field: 'spec',
          message: 'Invalid value: failed rule: self.replicas <= self.maxReplicas',
        },
      ],
    );
    assert.deepEqual(
      rulesErrors([{ rule: 'self.replicas <= self.maxReplicas' }], { replicas: 2, maxReplicas: 3 }),
      [],
    );
  });

  test('message, reason and fieldPath shape the error', () => {
    assert.deepEqual(
      rulesErrors(
        [
          {
            rule: 'self.replicas <= self.maxReplicas',
            message: 'replicas must not exceed maxReplicas',
            reason: 'FieldValueForbidden',
            fieldPath: '.replicas',
          },
        ],
        { replicas: 5, maxReplicas: 3 },
      ),
      [
        {
          reason: 'FieldValueForbidden',
          field: 'spec.replicas',
          message: 'Forbidden: replicas must not exceed maxReplicas',
        },
      ],
    );
    assert.deepEqual(
      rulesErrors(
        [{ rule: 'has(self.name)', reason: 'FieldValueRequired', message: 'name is required' }],
        {},
      ),
      [{ reason: 'FieldValueRequired', field: 'spec', message: 'Required value: name is required' }],
    );
  });

  test('messageExpression builds the message from self, falling back to message when it fails', () => {
    const rule: ValidationRule = {
      rule: 'self.replicas <= self.maxReplicas',
      message: 'too many replicas',
      messageExpression: "'replicas ' + string(self.replicas) + ' exceeds ' + string(self.maxReplicas)",
    };
    assert.equal(
      rulesErrors([rule], { replicas: 5, maxReplicas: 3 })[0]!.message,
      'Invalid value: replicas 5 exceeds 3',
    );
    const broken = { ...rule, messageExpression: "'missing ' + self.name" };
    assert.equal(
      rulesErrors([broken], { replicas: 5, maxReplicas: 3 })[0]!.message,
      'Invalid value: too many replicas',
    );
  });

  test('rules on scalars print the value', () => {
    const cs = compileSchema({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            replicas: {
              type: 'integer',
              'x-kubernetes-validations': [{ rule: 'self % 2 == 0', message: 'must be even' }],
            },
          },
        },
      },
    });
    assert.deepEqual(cs.validateRules({ spec: { replicas: 3 } }), [
      { reason: 'FieldValueInvalid', field: 'spec.replicas', message: 'Invalid value: 3: must be even' },
    ]);
  });

  test('transition rules run only on update and compare with oldSelf', () => {
    const rule: ValidationRule = { rule: 'self.replicas >= oldSelf.replicas', message: 'cannot scale down' };
    assert.deepEqual(rulesErrors([rule], { replicas: 1 }), []);
    assert.deepEqual(rulesErrors([rule], { replicas: 1 }, { replicas: 3 }), [
      { reason: 'FieldValueInvalid', field: 'spec', message: 'Invalid value: cannot scale down' },
    ]);
    assert.deepEqual(rulesErrors([rule], { replicas: 4 }, { replicas: 3 }), []);
  });

  test('unchanged values are ratcheted on update', () => {
    const rule: ValidationRule = { rule: 'self.replicas <= self.maxReplicas' };
    const bad = { replicas: 5, maxReplicas: 3 };
    assert.equal(rulesErrors([rule], bad).length, 1);
    assert.deepEqual(rulesErrors([rule], bad, structuredClone(bad)), []);
  });

  test('runtime errors read like cel-go', () => {
    assert.deepEqual(rulesErrors([{ rule: 'self.name == "x"' }], {}), [
      {
        reason: 'FieldValueInvalid',
        field: 'spec',
        message: 'Invalid value: "object": no such key: name evaluating rule: self.name == "x"',
      },
    ]);
  });

  test('integers are CEL ints, so arithmetic with int literals works', () => {
    assert.deepEqual(rulesErrors([{ rule: 'self.replicas + 1 == 4' }], { replicas: 3 }), []);
  });

  test('escaped property names, maps and lists', () => {
    assert.deepEqual(rulesErrors([{ rule: 'self.max__dash__surge == 2' }], { 'max-surge': 2 }), []);
    assert.deepEqual(
      rulesErrors([{ rule: "self.labels['app'] == 'web' && 'app' in self.labels" }], {
        labels: { app: 'web' },
      }),
      [],
    );
    assert.deepEqual(
      rulesErrors([{ rule: 'self.tags.all(t, t.startsWith("x-")) && size(self.tags) == 2' }], {
        tags: ['x-a', 'x-b'],
      }),
      [],
    );
    assert.deepEqual(rulesErrors([{ rule: 'self.tags.exists_one(t, t == "a")' }], { tags: ['a', 'b'] }), []);
  });

  test('Kubernetes list, regex and string extensions', () => {
    assert.deepEqual(
      rulesErrors([{ rule: 'self.tags.isSorted() && self.tags.indexOf("b") == 1' }], { tags: ['a', 'b'] }),
      [],
    );
    assert.deepEqual(rulesErrors([{ rule: '[1, 5, 3].max() == 5 && [1, 2].sum() == 3' }], {}), []);
    assert.deepEqual(
      rulesErrors([{ rule: 'self.name.find("[0-9]+") == "42" && self.name.findAll("[a-z]").size() == 3' }], {
        name: 'abc42',
      }),
      [],
    );
    assert.deepEqual(
      rulesErrors(
        [{ rule: 'self.name.lowerAscii().split("-").size() == 2 && self.name.matches("^[A-Z]")' }],
        { name: 'Web-App' },
      ),
      [],
    );
  });

  test('date-time and duration formats become timestamps and durations', () => {
    assert.deepEqual(
      rulesErrors(
        [{ rule: 'self.when > timestamp("2020-01-01T00:00:00Z") && self.timeout < duration("2h")' }],
        {
          when: '2024-05-01T10:00:00Z',
          timeout: '90m',
        },
      ),
      [],
    );
  });

  test('metadata.name is visible at the resource root', () => {
    const cs = compileSchema({
      type: 'object',
      properties: { spec: { type: 'object' } },
      'x-kubernetes-validations': [{ rule: "self.metadata.name.startsWith('ok-')", message: 'bad name' }],
    });
    assert.deepEqual(cs.validateRules({ metadata: { name: 'ok-1' }, spec: {} }), []);
    assert.deepEqual(cs.validateRules({ metadata: { name: 'no' }, spec: {} }), [
      { reason: 'FieldValueInvalid', field: '<nil>', message: 'Invalid value: bad name' },
    ]);
  });

  test('rules are skipped when the object has blocking schema errors', () => {
    const cs = compileSchema(withSpec(replicaProps, [{ rule: 'self.replicas > 0' }]));
    assert.deepEqual(cs.validate({ spec: { replicas: 'x' } }).at(-1), {
      reason: 'FieldValueInvalid',
      field: '<nil>',
      message:
        'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    });
  });

  test('PodSequence: each pod group needs pods or podSelector, and scope is immutable', () => {
    const cs = compileSchema(podSequenceSchema);
    const ok = podSequence({ podGroups: [{ pods: ['a'] }, { podSelector: { matchLabels: { app: 'x' } } }] });
    cs.default(ok);
    assert.deepEqual(cs.validate(ok), []);
    const both = podSequence({ podGroups: [{ pods: ['a'], podSelector: {} }, {}] });
    cs.default(both);
    assert.deepEqual(cs.validate(both), [
      {
        reason: 'FieldValueInvalid',
        field: 'spec.podGroups[0]',
        message: 'Invalid value: must specify either pods or podSelector',
      },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.podGroups[1]',
        message: 'Invalid value: must specify either pods or podSelector',
      },
    ]);
    const moved = structuredClone(ok);
    (moved.spec as Record<string, unknown>).scope = 'Node';
    assert.deepEqual(cs.validate(moved, ok), [
      { reason: 'FieldValueInvalid', field: 'spec', message: 'Invalid value: scope is immutable' },
    ]);
  });
});
