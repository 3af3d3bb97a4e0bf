/** Resource types shaped like the ones the embedded server serves, for the OpenAPI tests. */
import type { ResourceType } from '../../../../src/cluster/apiserver/types.ts';

const CRUD = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

function rt(
  group: string,
  version: string,
  resource: string,
  kind: string,
  namespaced: boolean,
  extra: Partial<ResourceType> = {},
): ResourceType {
  return {
    group,
    version,
    resource,
    singular: kind.toLowerCase(),
    kind,
    listKind: `${kind}List`,
    namespaced,
    shortNames: [],
    categories: [],
    verbs: CRUD,
    subresources: [],
    strategy: {},
    ...extra,
  };
}

export const BUILTIN_RESOURCES: ResourceType[] = [
  rt('', 'v1', 'namespaces', 'Namespace', false, { subresources: ['status'] }),
  rt('', 'v1', 'pods', 'Pod', true, { subresources: ['status', 'binding', 'eviction'] }),
  rt('', 'v1', 'nodes', 'Node', false, { subresources: ['status'] }),
  rt('', 'v1', 'events', 'Event', true),
  rt('', 'v1', 'configmaps', 'ConfigMap', true),
  rt('', 'v1', 'secrets', 'Secret', true),
  rt('', 'v1', 'services', 'Service', true, { subresources: ['status'] }),
  rt('', 'v1', 'serviceaccounts', 'ServiceAccount', true),
  rt('', 'v1', 'endpoints', 'Endpoints', true),
  rt('apps', 'v1', 'deployments', 'Deployment', true, { subresources: ['status', 'scale'] }),
  rt('apps', 'v1', 'replicasets', 'ReplicaSet', true, { subresources: ['status', 'scale'] }),
  rt('apps', 'v1', 'statefulsets', 'StatefulSet', true, { subresources: ['status', 'scale'] }),
  rt('apps', 'v1', 'daemonsets', 'DaemonSet', true, { subresources: ['status'] }),
  rt('batch', 'v1', 'jobs', 'Job', true, { subresources: ['status'] }),
  rt('coordination.k8s.io', 'v1', 'leases', 'Lease', true),
  rt('events.k8s.io', 'v1', 'events', 'Event', true),
  rt('rbac.authorization.k8s.io', 'v1', 'roles', 'Role', true),
  rt('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', false),
  rt('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', true),
  rt('rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', 'ClusterRoleBinding', false),
  rt(
    'admissionregistration.k8s.io',
    'v1',
    'mutatingwebhookconfigurations',
    'MutatingWebhookConfiguration',
    false,
  ),
  rt(
    'admissionregistration.k8s.io',
    'v1',
    'validatingwebhookconfigurations',
    'ValidatingWebhookConfiguration',
    false,
  ),
  rt('apiextensions.k8s.io', 'v1', 'customresourcedefinitions', 'CustomResourceDefinition', false, {
    subresources: ['status'],
  }),
  rt('authorization.k8s.io', 'v1', 'subjectaccessreviews', 'SubjectAccessReview', false, {
    verbs: ['create'],
  }),
  rt('authorization.k8s.io', 'v1', 'selfsubjectaccessreviews', 'SelfSubjectAccessReview', false, {
    verbs: ['create'],
  }),
];

/** The PodSequence CRD of the pod-sequence seed, trimmed to what the tests need. */
export const PODSEQUENCE_CRD = {
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
    },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1alpha1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            description: 'PodSequence starts pods in a given order.',
            type: 'object',
            properties: {
              spec: {
                description: 'PodSequenceSpec defines the desired order.',
                type: 'object',
                required: ['podNames'],
                properties: {
                  podNames: {
                    description: 'Names of the pods to start, in order.',
                    type: 'array',
                    items: { type: 'string' },
                  },
                  mode: { description: 'lite or full.', type: 'string', enum: ['lite', 'full'] },
                  template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: {} },
                  extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                  fixed: { type: 'object' },
                  labels: { type: 'object', additionalProperties: { type: 'string' } },
                },
              },
              status: {
                type: 'object',
                properties: { phase: { type: 'string' } },
              },
            },
          },
        },
      },
    ],
  },
};

export const PODSEQUENCE_RESOURCE: ResourceType = rt(
  'scheduling.example.com',
  'v1alpha1',
  'podsequences',
  'PodSequence',
  true,
  {
    subresources: ['status'],
    shortNames: ['ps'],
  },
);
