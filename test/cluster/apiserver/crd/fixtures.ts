/** Test CRDs: PodSequence as its seed README describes it, and a small Widget kind. */

import type {
  CustomResourceDefinition,
  JSONSchemaProps,
} from '../../../../src/cluster/apiserver/crd/types.ts';

const labelSelector: JSONSchemaProps = {
  type: 'object',
  'x-kubernetes-map-type': 'atomic',
  properties: {
    matchLabels: { type: 'object', additionalProperties: { type: 'string' } },
    matchExpressions: {
      type: 'array',
      items: {
        type: 'object',
        required: ['key', 'operator'],
        properties: {
          key: { type: 'string' },
          operator: { type: 'string', enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'] },
          values: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' },
        },
      },
    },
  },
};

const condition: JSONSchemaProps = {
  type: 'object',
  required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  properties: {
    type: { type: 'string', maxLength: 316 },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
    observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
    lastTransitionTime: { type: 'string', format: 'date-time' },
    reason: { type: 'string', maxLength: 1024, minLength: 1 },
    message: { type: 'string', maxLength: 32768 },
  },
};

export const podSequenceSchema: JSONSchemaProps = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      required: ['podGroups'],
      properties: {
        podGroups: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              pods: { type: 'array', items: { type: 'string' } },
              podSelector: labelSelector,
              nodeSelector: { type: 'object', additionalProperties: { type: 'string' } },
            },
            'x-kubernetes-validations': [
              {
                rule: 'has(self.pods) != has(self.podSelector)',
                message: 'must specify either pods or podSelector',
              },
            ],
          },
        },
        scope: { type: 'string', enum: ['Cluster', 'Node'], default: 'Cluster' },
        namespace: { type: 'string' },
        schedulingGateName: { type: 'string', default: 'podsequence.example.com/sequence-gate' },
      },
      'x-kubernetes-validations': [
        {
          rule: 'self.scope == oldSelf.scope',
          message: 'scope is immutable',
        },
      ],
    },
    status: {
      type: 'object',
      properties: {
        phase: { type: 'string', enum: ['Pending', 'InProgress', 'Completed', 'Failed'] },
        currentIndex: { type: 'integer' },
        nodeStatus: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              nodeName: { type: 'string' },
              currentIndex: { type: 'integer' },
              readyPodsInCurrentGroup: { type: 'integer' },
              phase: { type: 'string' },
              conditions: {
                type: 'array',
                items: condition,
                'x-kubernetes-list-type': 'map',
                'x-kubernetes-list-map-keys': ['type'],
              },
            },
          },
        },
        currentGroupPods: { type: 'array', items: { type: 'string' } },
        readyPodsInCurrentGroup: { type: 'integer' },
        processedPods: { type: 'array', items: { type: 'string' } },
        message: { type: 'string' },
      },
    },
  },
};

export function podSequenceCRD(): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'podsequences.scheduling.example.com' },
    spec: {
      group: 'scheduling.example.com',
      names: {
        kind: 'PodSequence',
        listKind: 'PodSequenceList',
        plural: 'podsequences',
        singular: 'podsequence',
        shortNames: ['podseq'],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: structuredClone(podSequenceSchema) },
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
            { name: 'Current', type: 'integer', jsonPath: '.status.currentIndex' },
            { name: 'Scope', type: 'string', jsonPath: '.spec.scope', priority: 1 },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
        },
      ],
    },
  };
}

export function podSequence(
  spec: Record<string, unknown>,
  name = 'example-sequence',
): Record<string, unknown> {
  return {
    apiVersion: 'scheduling.example.com/v1alpha1',
    kind: 'PodSequence',
    metadata: { name, namespace: 'default' },
    spec,
  };
}
