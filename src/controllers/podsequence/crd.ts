/**
 * The PodSequence CustomResourceDefinition. `config/crd/podsequence-crd.yaml` is this
 * object as YAML (a test keeps the two equal). The schema rejects what it can with clear
 * messages: no groups, a group with both or neither of pods/podSelector, an empty
 * selector, an unknown scope, malformed names. The rest (a pod named in two groups) is
 * reported by the controller as a Failed sequence.
 */

import { GROUP, KIND, PLURAL, VERSION } from './types.ts';

const DNS_SUBDOMAIN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
const DNS_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
const QUALIFIED_NAME =
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$';

const labelSelector = {
  type: 'object',
  description:
    'Label selector matching pods in the sequence namespace (metav1.LabelSelector). Use it for pods with generated names (DaemonSets, Deployments). Must not be empty.',
  properties: {
    matchLabels: {
      type: 'object',
      description: 'Equality-based requirements, ANDed.',
      additionalProperties: { type: 'string' },
    },
    matchExpressions: {
      type: 'array',
      description: 'Set-based requirements, ANDed.',
      maxItems: 64,
      items: {
        type: 'object',
        required: ['key', 'operator'],
        properties: {
          key: { type: 'string', description: 'The label key.' },
          operator: {
            type: 'string',
            description: 'In, NotIn, Exists or DoesNotExist.',
            enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'],
          },
          values: {
            type: 'array',
            description: 'Values for In and NotIn; empty for Exists and DoesNotExist.',
            items: { type: 'string' },
          },
        },
      },
    },
  },
  'x-kubernetes-map-type': 'atomic',
  'x-kubernetes-validations': [
    {
      rule: '(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && size(self.matchExpressions) > 0)',
      message: 'podSelector must not be empty: an empty selector would select every pod in the namespace',
    },
  ],
};

const condition = {
  type: 'object',
  required: ['type', 'status'],
  properties: {
    type: { type: 'string' },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
    reason: { type: 'string' },
    message: { type: 'string' },
    lastTransitionTime: { type: 'string', format: 'date-time' },
    observedGeneration: { type: 'integer', format: 'int64' },
  },
};

const phase = { type: 'string', enum: ['Pending', 'InProgress', 'Completed', 'Failed'] };

const podGroup = {
  type: 'object',
  description: 'A tier of pods started together. Set exactly one of pods and podSelector.',
  properties: {
    name: {
      type: 'string',
      maxLength: 253,
      description: 'Optional name for the group (for identification).',
    },
    pods: {
      type: 'array',
      description: 'Explicit pod names in this group.',
      minItems: 1,
      maxItems: 5000,
      items: { type: 'string', minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN },
      'x-kubernetes-list-type': 'set',
    },
    podSelector: labelSelector,
    nodeSelector: {
      type: 'object',
      description:
        'Node selector for node-scoped sequences (reserved for future use, as in the original project; stored, not acted on).',
      additionalProperties: { type: 'string' },
    },
  },
  'x-kubernetes-validations': [
    {
      rule: '!(has(self.pods) && has(self.podSelector))',
      message: 'set either pods or podSelector, not both',
    },
    { rule: 'has(self.pods) || has(self.podSelector)', message: 'one of pods or podSelector is required' },
  ],
};

export const podSequenceCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${PLURAL}.${GROUP}` },
  spec: {
    group: GROUP,
    names: {
      kind: KIND,
      listKind: `${KIND}List`,
      plural: PLURAL,
      singular: 'podsequence',
      shortNames: ['podseq'],
    },
    scope: 'Namespaced',
    versions: [
      {
        name: VERSION,
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: [
          { name: 'Scope', type: 'string', jsonPath: '.spec.scope' },
          { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
          {
            name: 'Group',
            type: 'string',
            description: 'Current group of all groups',
            jsonPath: '.status.progress',
          },
          {
            name: 'Current',
            type: 'string',
            description: 'Name of the current group',
            jsonPath: '.status.currentGroupName',
          },
          {
            name: 'Ready',
            type: 'string',
            description: 'Ready pods of the current group (Cluster scope) or completed nodes (Node scope)',
            jsonPath: '.status.currentGroupReady',
          },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          { name: 'Message', type: 'string', priority: 1, jsonPath: '.status.message' },
        ],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            description:
              'PodSequence starts ordered groups (tiers) of pods by removing their scheduling gate once every pod of the earlier groups is Ready, cluster-wide or per node.',
            required: ['spec'],
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
                    description: 'Ordered list of pod groups.',
                    minItems: 1,
                    maxItems: 1000,
                    items: podGroup,
                  },
                  scope: {
                    type: 'string',
                    description:
                      'Cluster (default): a group waits for every pod of the earlier groups; Node: per node.',
                    enum: ['Cluster', 'Node'],
                    default: 'Cluster',
                  },
                  namespace: {
                    type: 'string',
                    description:
                      'Namespace where the pods are located (defaults to the PodSequence namespace).',
                    maxLength: 63,
                    pattern: DNS_LABEL,
                  },
                  schedulingGateName: {
                    type: 'string',
                    description:
                      'Name of the scheduling gate to manage (default: podsequence.example.com/sequence-gate).',
                    maxLength: 317,
                    pattern: QUALIFIED_NAME,
                  },
                },
              },
              status: {
                type: 'object',
                properties: {
                  phase: { ...phase, description: 'Pending, InProgress, Completed or Failed.' },
                  currentIndex: {
                    type: 'integer',
                    description:
                      'Index of the group being processed (cluster-wide, or the least across nodes).',
                  },
                  nodeStatus: {
                    type: 'array',
                    description: 'Per-node status (node-scoped sequences).',
                    items: {
                      type: 'object',
                      required: ['nodeName'],
                      properties: {
                        nodeName: { type: 'string' },
                        currentIndex: { type: 'integer' },
                        readyPodsInCurrentGroup: { type: 'integer' },
                        phase,
                        conditions: { type: 'array', items: condition },
                      },
                    },
                  },
                  currentGroupPods: {
                    type: 'array',
                    description: 'Pod names in the current group (cluster-scoped only).',
                    items: { type: 'string' },
                  },
                  readyPodsInCurrentGroup: {
                    type: 'integer',
                    description: 'Ready pods in the current group (cluster-scoped only).',
                  },
                  processedPods: {
                    type: 'array',
                    description: 'Pods of the groups already completed.',
                    items: { type: 'string' },
                  },
                  message: { type: 'string', description: 'What the sequence is doing or waiting for.' },
                  observedGeneration: { type: 'integer', format: 'int64' },
                  conditions: { type: 'array', items: condition },
                  totalGroups: { type: 'integer' },
                  progress: { type: 'string' },
                  currentGroupName: { type: 'string' },
                  currentGroupReady: { type: 'string' },
                },
              },
            },
          },
        },
      },
    ],
  },
};
