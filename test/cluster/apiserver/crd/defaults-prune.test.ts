import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { compileSchema } from '../../../../src/cluster/apiserver/crd/index.ts';
import type { JSONSchemaProps } from '../../../../src/cluster/apiserver/crd/types.ts';
import { unknownFieldWarning } from '../../../../src/cluster/apiserver/openapi/index.ts';
import { podSequence, podSequenceSchema } from './fixtures.ts';

const schema: JSONSchemaProps = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer', default: 1 },
        strategy: {
          type: 'object',
          default: {},
          properties: {
            type: { type: 'string', default: 'Rolling' },
            rolling: { type: 'object', properties: { maxSurge: { type: 'integer', default: 25 } } },
          },
        },
        ports: {
          type: 'array',
          items: {
            type: 'object',
            properties: { name: { type: 'string' }, protocol: { type: 'string', default: 'TCP' } },
          },
        },
        labels: { type: 'object', additionalProperties: { type: 'string', default: 'none' } },
        note: { type: 'string' },
        extra: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          properties: { known: { type: 'string' } },
        },
      },
    },
  },
};

describe('defaulting', () => {
  test('defaults apply at every level, for missing objects only when they have a default', () => {
    const obj: Record<string, unknown> = {
      spec: { ports: [{ name: 'http' }, { name: 'dns', protocol: 'UDP' }] },
    };
    compileSchema(schema).default(obj);
    assert.deepEqual(obj.spec, {
      replicas: 1,
      // strategy is created from its own default, then defaulted inside; rolling has no default.
      strategy: { type: 'Rolling' },
      ports: [
        { name: 'http', protocol: 'TCP' },
        { name: 'dns', protocol: 'UDP' },
      ],
    });
  });

  test('a missing parent is not created to hold a nested default', () => {
    const obj: Record<string, unknown> = { spec: { strategy: { type: 'Recreate' } } };
    compileSchema(schema).default(obj);
    assert.deepEqual((obj.spec as Record<string, unknown>).strategy, { type: 'Recreate' });
    const withRolling: Record<string, unknown> = { spec: { strategy: { rolling: {} } } };
    compileSchema(schema).default(withRolling);
    assert.deepEqual((withRolling.spec as Record<string, unknown>).strategy, {
      type: 'Rolling',
      rolling: { maxSurge: 25 },
    });
  });

  test('no spec means no spec defaults', () => {
    const obj: Record<string, unknown> = { metadata: { name: 'x' } };
    compileSchema(schema).default(obj);
    assert.deepEqual(obj, { metadata: { name: 'x' } });
  });

  test('non-nullable nulls are replaced by their default or dropped', () => {
    const obj: Record<string, unknown> = { spec: { replicas: null, note: null, labels: { a: null } } };
    compileSchema(schema).default(obj);
    const spec = obj.spec as Record<string, unknown>;
    assert.equal(spec.replicas, 1);
    assert.equal('note' in spec, false);
    assert.deepEqual(spec.labels, { a: 'none' });
  });

  test('defaults are copies, not shared', () => {
    const a: Record<string, unknown> = { spec: {} };
    const b: Record<string, unknown> = { spec: {} };
    const cs = compileSchema(schema);
    cs.default(a);
    cs.default(b);
    ((a.spec as Record<string, unknown>).strategy as Record<string, unknown>).type = 'changed';
    assert.equal(((b.spec as Record<string, unknown>).strategy as Record<string, unknown>).type, 'Rolling');
  });

  test('PodSequence: scope and schedulingGateName get their documented defaults', () => {
    const obj = podSequence({ podGroups: [{ name: 'Pod 1', pods: ['pod-1'] }] });
    compileSchema(podSequenceSchema).default(obj);
    assert.deepEqual(obj.spec, {
      podGroups: [{ name: 'Pod 1', pods: ['pod-1'] }],
      scope: 'Cluster',
      schedulingGateName: 'podsequence.example.com/sequence-gate',
    });
  });
});

describe('pruning', () => {
  test('unknown fields are dropped and reported with their paths', () => {
    const obj: Record<string, unknown> = {
      apiVersion: 'x/v1',
      kind: 'X',
      metadata: { name: 'a', bogus: true },
      spec: {
        note: 'n',
        foo: 1,
        ports: [{ name: 'p', junk: 'j' }],
        extra: { known: 'k', anything: { deep: 1 } },
      },
      status: { phase: 'x' },
    };
    const unknown = compileSchema(schema).prune(obj);
    assert.deepEqual(unknown, ['metadata.bogus', 'spec.foo', 'spec.ports[0].junk', 'status']);
    assert.equal(unknownFieldWarning(unknown[1]!), 'unknown field "spec.foo"');
    assert.deepEqual(obj, {
      apiVersion: 'x/v1',
      kind: 'X',
      metadata: { name: 'a' },
      spec: { note: 'n', ports: [{ name: 'p' }], extra: { known: 'k', anything: { deep: 1 } } },
    });
  });

  test('x-kubernetes-preserve-unknown-fields still prunes inside its known properties', () => {
    const s: JSONSchemaProps = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          properties: { known: { type: 'object', properties: { a: { type: 'string' } } } },
        },
      },
    };
    const obj: Record<string, unknown> = { spec: { free: 1, known: { a: 'x', b: 'y' } } };
    assert.deepEqual(compileSchema(s).prune(obj), ['spec.known.b']);
    assert.deepEqual(obj.spec, { free: 1, known: { a: 'x' } });
  });

  test('embedded resources keep apiVersion, kind and ObjectMeta fields', () => {
    const s: JSONSchemaProps = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            template: {
              type: 'object',
              'x-kubernetes-embedded-resource': true,
              properties: { spec: { type: 'object', properties: { image: { type: 'string' } } } },
            },
          },
        },
      },
    };
    const obj: Record<string, unknown> = {
      spec: {
        template: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { labels: { a: 'b' }, nope: 1 },
          spec: { image: 'nginx', other: true },
        },
      },
    };
    assert.deepEqual(compileSchema(s).prune(obj), [
      'spec.template.metadata.nope',
      'spec.template.spec.other',
    ]);
    assert.deepEqual(obj.spec, {
      template: { apiVersion: 'v1', kind: 'Pod', metadata: { labels: { a: 'b' } }, spec: { image: 'nginx' } },
    });
  });
});
