/**
 * The built-in resources the embedded API server serves, with the names, short names,
 * categories, verbs and subresources kube-apiserver's discovery shows for them.
 */

import { crdStrategy } from '../crd/crd-strategy.ts';
import type { ResourceType, StoreHooks, Strategy } from '../types.ts';
import { selfSubjectAccessReviewStrategy, subjectAccessReviewStrategy } from './authorization.ts';
import { ALL_VERBS, type CatalogEntry, CREATE_ONLY, catalogEntries, catalogResourceType } from './catalog.ts';
import { configMapStrategy } from './configmaps.ts';
import { daemonSetStrategy } from './daemonsets.ts';
import { deploymentStrategy } from './deployments.ts';
import { endpointsStrategy } from './endpoints.ts';
import { coreEventStrategy, coreEventToEventsV1, eventsV1Strategy, eventsV1ToCoreEvent } from './events.ts';
import { jobStrategy } from './jobs.ts';
import { leaseStrategy } from './leases.ts';
import { namespaceStrategy } from './namespaces.ts';
import { nodeStrategy } from './nodes.ts';
import { podStrategy } from './pods.ts';
import { roleBindingStrategy, roleStrategy } from './rbac.ts';
import { replicaSetStrategy } from './replicasets.ts';
import { secretStrategy } from './secrets.ts';
import { serviceAccountStrategy } from './serviceaccounts.ts';
import { serviceStrategy } from './services.ts';
import { statefulSetStrategy } from './statefulsets.ts';
import { webhookConfigurationStrategy } from './webhooks.ts';
import { specScale } from './workload.ts';

export { ALL_VERBS } from './catalog.ts';

const NAMESPACE_VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];

interface Spec {
  group: string;
  version: string;
  resource: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  verbs?: string[];
  subresources?: string[];
  scale?: ResourceType['scale'];
  strategy: Strategy;
  storeHooks?: StoreHooks;
  sharedStorage?: ResourceType['sharedStorage'];
}

function rt(s: Spec): ResourceType {
  const out: ResourceType = {
    group: s.group,
    version: s.version,
    resource: s.resource,
    singular: s.singular,
    kind: s.kind,
    listKind: `${s.kind}List`,
    namespaced: s.namespaced,
    shortNames: s.shortNames ?? [],
    categories: s.categories ?? [],
    verbs: s.verbs ?? ALL_VERBS,
    subresources: s.subresources ?? [],
    strategy: s.strategy,
  };
  if (s.scale) out.scale = s.scale;
  if (s.storeHooks) out.storeHooks = s.storeHooks;
  if (s.sharedStorage) out.sharedStorage = s.sharedStorage;
  return out;
}

const ALL = ['all'];
const API_EXTENSIONS = ['api-extensions'];

export interface BuiltinOptions {
  /** The Service REST layer (cluster IPs, node ports); without it Services get no addresses. */
  serviceHooks?: StoreHooks;
  /** Behaviour added to catalog kinds, keyed `group/version/resource`. */
  catalog?: Record<string, Partial<CatalogEntry>>;
  /** The server's time, for what strategies stamp (a pod's PodScheduled condition on create). */
  now?: () => Date;
}

/**
 * A fresh list on every call (strategies hold no state, but callers may mutate the
 * records). events (core/v1) and events.k8s.io/v1 events share one storage upstream; see
 * events.ts for the conversion between the two shapes.
 */
export function builtinResourceTypes(opts: BuiltinOptions = {}): ResourceType[] {
  return [
    // core/v1
    rt({
      group: '',
      version: 'v1',
      resource: 'namespaces',
      singular: 'namespace',
      kind: 'Namespace',
      namespaced: false,
      shortNames: ['ns'],
      verbs: NAMESPACE_VERBS,
      subresources: ['finalize', 'status'],
      strategy: namespaceStrategy(),
    }),
    rt({
      group: '',
      version: 'v1',
      resource: 'pods',
      singular: 'pod',
      kind: 'Pod',
      namespaced: true,
      shortNames: ['po'],
      categories: ALL,
      subresources: [
        'status',
        'binding',
        'eviction',
        'log',
        'exec',
        'attach',
        'portforward',
        'proxy',
        'ephemeralcontainers',
      ],
      strategy: podStrategy(opts.now),
    }),
    rt({
      group: '',
      version: 'v1',
      resource: 'nodes',
      singular: 'node',
      kind: 'Node',
      namespaced: false,
      shortNames: ['no'],
      subresources: ['status', 'proxy'],
      strategy: nodeStrategy(),
    }),
    rt({
      group: '',
      version: 'v1',
      resource: 'events',
      singular: 'event',
      kind: 'Event',
      namespaced: true,
      shortNames: ['ev'],
      strategy: coreEventStrategy(),
    }),
    rt({
      group: '',
      version: 'v1',
      resource: 'configmaps',
      singular: 'configmap',
      kind: 'ConfigMap',
      namespaced: true,
      shortNames: ['cm'],
      strategy: configMapStrategy(),
    }),
    rt({
      group: '',
      version: 'v1',
      resource: 'secrets',
      singular: 'secret',
      kind: 'Secret',
      namespaced: true,
      strategy: secretStrategy(),
    }),
    rt({
      group: '',
      version: 'v1',
      resource: 'services',
      singular: 'service',
      kind: 'Service',
      namespaced: true,
      shortNames: ['svc'],
      categories: ALL,
      subresources: ['status', 'proxy'],
      strategy: serviceStrategy(),
      storeHooks: opts.serviceHooks,
    }),
    rt({
      group: '',
      version: 'v1',
      resource: 'serviceaccounts',
      singular: 'serviceaccount',
      kind: 'ServiceAccount',
      namespaced: true,
      shortNames: ['sa'],
      subresources: ['token'],
      strategy: serviceAccountStrategy(),
    }),
    rt({
      group: '',
      version: 'v1',
      resource: 'endpoints',
      singular: 'endpoints',
      kind: 'Endpoints',
      namespaced: true,
      shortNames: ['ep'],
      strategy: endpointsStrategy(),
    }),
    // apps/v1
    rt({
      group: 'apps',
      version: 'v1',
      resource: 'deployments',
      singular: 'deployment',
      kind: 'Deployment',
      namespaced: true,
      shortNames: ['deploy'],
      categories: ALL,
      subresources: ['status', 'scale'],
      scale: specScale(),
      strategy: deploymentStrategy(),
    }),
    rt({
      group: 'apps',
      version: 'v1',
      resource: 'replicasets',
      singular: 'replicaset',
      kind: 'ReplicaSet',
      namespaced: true,
      shortNames: ['rs'],
      categories: ALL,
      subresources: ['status', 'scale'],
      scale: specScale(),
      strategy: replicaSetStrategy(),
    }),
    rt({
      group: 'apps',
      version: 'v1',
      resource: 'statefulsets',
      singular: 'statefulset',
      kind: 'StatefulSet',
      namespaced: true,
      shortNames: ['sts'],
      categories: ALL,
      subresources: ['status', 'scale'],
      scale: specScale(),
      strategy: statefulSetStrategy(),
    }),
    // DaemonSets have no scale subresource upstream: their size follows the nodes.
    rt({
      group: 'apps',
      version: 'v1',
      resource: 'daemonsets',
      singular: 'daemonset',
      kind: 'DaemonSet',
      namespaced: true,
      shortNames: ['ds'],
      categories: ALL,
      subresources: ['status'],
      strategy: daemonSetStrategy(),
    }),
    // batch/v1
    rt({
      group: 'batch',
      version: 'v1',
      resource: 'jobs',
      singular: 'job',
      kind: 'Job',
      namespaced: true,
      categories: ALL,
      subresources: ['status'],
      strategy: jobStrategy(),
    }),
    // coordination.k8s.io/v1
    rt({
      group: 'coordination.k8s.io',
      version: 'v1',
      resource: 'leases',
      singular: 'lease',
      kind: 'Lease',
      namespaced: true,
      strategy: leaseStrategy(),
    }),
    // events.k8s.io/v1
    rt({
      group: 'events.k8s.io',
      version: 'v1',
      resource: 'events',
      singular: 'event',
      kind: 'Event',
      namespaced: true,
      shortNames: ['ev'],
      strategy: eventsV1Strategy(),
      // One storage with core/v1 events, as in kube-apiserver: `kubectl describe` sees
      // the Events controllers write through events.k8s.io/v1, and the other way round.
      sharedStorage: {
        group: '',
        resource: 'events',
        toStorage: eventsV1ToCoreEvent,
        fromStorage: coreEventToEventsV1,
      },
    }),
    // rbac.authorization.k8s.io/v1
    rt({
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      resource: 'roles',
      singular: 'role',
      kind: 'Role',
      namespaced: true,
      strategy: roleStrategy(false),
    }),
    rt({
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      resource: 'clusterroles',
      singular: 'clusterrole',
      kind: 'ClusterRole',
      namespaced: false,
      strategy: roleStrategy(true),
    }),
    rt({
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      resource: 'rolebindings',
      singular: 'rolebinding',
      kind: 'RoleBinding',
      namespaced: true,
      strategy: roleBindingStrategy(false),
    }),
    rt({
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      resource: 'clusterrolebindings',
      singular: 'clusterrolebinding',
      kind: 'ClusterRoleBinding',
      namespaced: false,
      strategy: roleBindingStrategy(true),
    }),
    // admissionregistration.k8s.io/v1
    rt({
      group: 'admissionregistration.k8s.io',
      version: 'v1',
      resource: 'mutatingwebhookconfigurations',
      singular: 'mutatingwebhookconfiguration',
      kind: 'MutatingWebhookConfiguration',
      namespaced: false,
      categories: API_EXTENSIONS,
      strategy: webhookConfigurationStrategy(true),
    }),
    rt({
      group: 'admissionregistration.k8s.io',
      version: 'v1',
      resource: 'validatingwebhookconfigurations',
      singular: 'validatingwebhookconfiguration',
      kind: 'ValidatingWebhookConfiguration',
      namespaced: false,
      categories: API_EXTENSIONS,
      strategy: webhookConfigurationStrategy(false),
    }),
    // apiextensions.k8s.io/v1
    rt({
      group: 'apiextensions.k8s.io',
      version: 'v1',
      resource: 'customresourcedefinitions',
      singular: 'customresourcedefinition',
      kind: 'CustomResourceDefinition',
      namespaced: false,
      shortNames: ['crd', 'crds'],
      categories: API_EXTENSIONS,
      subresources: ['status'],
      strategy: crdStrategy,
    }),
    // authorization.k8s.io/v1
    rt({
      group: 'authorization.k8s.io',
      version: 'v1',
      resource: 'selfsubjectaccessreviews',
      singular: 'selfsubjectaccessreview',
      kind: 'SelfSubjectAccessReview',
      namespaced: false,
      verbs: CREATE_ONLY,
      strategy: selfSubjectAccessReviewStrategy(),
    }),
    rt({
      group: 'authorization.k8s.io',
      version: 'v1',
      resource: 'selfsubjectrulesreviews',
      singular: 'selfsubjectrulesreview',
      kind: 'SelfSubjectRulesReview',
      namespaced: false,
      verbs: CREATE_ONLY,
      // Answered from RBAC, never stored; the request needs nothing but a namespace.
      strategy: {},
    }),
    rt({
      group: 'authorization.k8s.io',
      version: 'v1',
      resource: 'subjectaccessreviews',
      singular: 'subjectaccessreview',
      kind: 'SubjectAccessReview',
      namespaced: false,
      verbs: CREATE_ONLY,
      strategy: subjectAccessReviewStrategy(),
    }),
    ...catalogEntries(opts.catalog).map(catalogResourceType),
  ];
}
