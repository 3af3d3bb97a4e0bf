import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  crdSchemaKey,
  crdSchemasFromCRDs,
  strictDecodingError,
  unknownFields,
  unknownFieldsForCRD,
  unknownFieldWarning,
} from '../../../../src/cluster/apiserver/openapi/index.ts';
import type { KubeObject } from '../../../../src/cluster/apiserver/types.ts';
import { PODSEQUENCE_CRD } from './fixtures.ts';

const POD = { group: '', version: 'v1', kind: 'Pod' };
const DEPLOYMENT = { group: 'apps', version: 'v1', kind: 'Deployment' };

function validPod(): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'p',
      namespace: 'default',
      labels: { app: 'a', 'podgroup.jhwagner.github.io/name': 'g' },
      annotations: { note: 'x' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'u' }],
      managedFields: [
        { manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } },
      ],
    },
    spec: {
      schedulingGates: [{ name: 'gate' }],
      nodeSelector: { disk: 'ssd' },
      tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }],
          },
        },
      },
      containers: [
        {
          name: 'c',
          image: 'nginx',
          resources: { limits: { cpu: '1', memory: '1Gi', 'nvidia.com/gpu': 1 }, requests: { cpu: 0.5 } },
          ports: [{ containerPort: 80, protocol: 'TCP' }],
          env: [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          readinessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 5 },
        },
      ],
      volumes: [{ name: 'v', configMap: { name: 'cm', items: [{ key: 'a', path: 'a' }] } }],
    },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

describe('unknownFields (built-in kinds)', () => {
  test('accepts a valid object', () => {
    assert.deepEqual(unknownFields(POD, validPod()), []);
  });

  test('finds unknown fields at every depth, in the decoder path form', () => {
    const pod = validPod();
    pod.foo = 1;
    (pod.metadata as Record<string, unknown>).bogus = true;
    const spec = pod.spec as {
      containers: Array<Record<string, unknown>>;
      affinity: Record<string, unknown>;
    };
    spec.containers[0]!.foo = 'bar';
    (spec.containers[0]!.resources as Record<string, unknown>).limitz = {};
    spec.affinity.nodeAffinity = {
      requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpression: [] }] },
    };
    // In input order, as the decoder meets them.
    assert.deepEqual(unknownFields(POD, pod), [
      'metadata.bogus',
      'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpression',
      'spec.containers[0].resources.limitz',
      'spec.containers[0].foo',
      'foo',
    ]);
  });

  test('is case-sensitive, like the strict decoder', () => {
    const pod = validPod();
    (pod.spec as Record<string, unknown>).NodeName = 'n';
    assert.deepEqual(unknownFields(POD, pod), ['spec.NodeName']);
  });

  test('follows a pod template inside a workload', () => {
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'a' } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 0 } },
        template: {
          metadata: { labels: { app: 'a' } },
          spec: { containers: [{ name: 'c', image: 'i', imagePullPolicyy: 'Always' }] },
        },
      },
    };
    assert.deepEqual(unknownFields(DEPLOYMENT, deployment), [
      'spec.template.spec.containers[0].imagePullPolicyy',
    ]);
  });

  test('map values with a schema are checked; free-form values are not', () => {
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
      data: { 'any.key': 'v' },
      binaryData: { b: 'AA==' },
    };
    assert.deepEqual(unknownFields({ group: '', version: 'v1', kind: 'ConfigMap' }, cm), []);
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'xs.example.com' },
      spec: {
        group: 'example.com',
        names: { kind: 'X', plural: 'xs' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    default: { a: 1 },
                    additionalProperties: { type: 'string' },
                    typo: 1,
                  },
                },
              },
            },
          },
        ],
      },
    };
    assert.deepEqual(
      unknownFields({ group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition' }, crd),
      ['spec.versions[0].schema.openAPIV3Schema.properties.spec.typo'],
    );
  });

  test('knows nothing unknown about a kind it has no schema for', () => {
    assert.deepEqual(unknownFields({ group: 'example.com', version: 'v1', kind: 'Thing' }, { foo: 1 }), []);
  });
});

describe('unknownFieldsForCRD', () => {
  const gvk = { group: 'scheduling.example.com', version: 'v1alpha1', kind: 'PodSequence' };
  const schema = crdSchemasFromCRDs([PODSEQUENCE_CRD as unknown as KubeObject]).get(
    crdSchemaKey(gvk.group, gvk.version, gvk.kind),
  );

  test('accepts declared, preserved, embedded and map fields', () => {
    const obj = {
      apiVersion: 'scheduling.example.com/v1alpha1',
      kind: 'PodSequence',
      metadata: { name: 's', labels: { a: 'b' } },
      spec: {
        podNames: ['a'],
        extra: { anything: { goes: true } },
        template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' } },
        labels: { k: 'v' },
      },
      status: { phase: 'Done' },
    };
    assert.deepEqual(unknownFieldsForCRD(gvk, schema, obj), []);
  });

  test('reports undeclared fields, including inside an object that declares none', () => {
    const obj = {
      apiVersion: 'scheduling.example.com/v1alpha1',
      kind: 'PodSequence',
      metadata: { name: 's', bogus: 1 },
      spec: { podNames: ['a'], foo: 1, fixed: { dropped: true }, template: { metadata: { nope: 1 } } },
    };
    assert.deepEqual(unknownFieldsForCRD(gvk, schema, obj), [
      'metadata.bogus',
      'spec.foo',
      'spec.fixed.dropped',
      'spec.template.metadata.nope',
    ]);
  });

  test('a version without a schema accepts anything', () => {
    assert.deepEqual(unknownFieldsForCRD(gvk, undefined, { spec: { foo: 1 } }), []);
  });
});

test('messages have the API server wording', () => {
  assert.equal(
    strictDecodingError(['spec.foo', 'spec.containers[0].bar']),
    'strict decoding error: unknown field "spec.foo", unknown field "spec.containers[0].bar"',
  );
  assert.equal(unknownFieldWarning('spec.foo'), 'unknown field "spec.foo"');
});
