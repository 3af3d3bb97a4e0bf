/**
 * Per-kind patch metadata of the built-in kinds, as data: for each field path pattern the Go
 * struct tags kube-apiserver reads (`patchStrategy`, `patchMergeKey`) for strategic merge
 * patch and the `+listType` / `+listMapKey` / `+structType`/`+mapType=atomic` markers that
 * server-side apply reads. Written from k8s.io/api's types.
 *
 * Paths are field names joined by dots, from the object root, with list items transparent:
 * `spec.containers.env` is the env list of any container. A list missing here is atomic for
 * SSA and replaced by SMP; an object missing here is merged key by key by both.
 */

export interface FieldRule {
  /** SMP: 'merge' merges a list by patchMergeKey (or as a set when the list holds scalars). */
  patchStrategy?: 'merge' | 'retainKeys' | 'merge,retainKeys';
  patchMergeKey?: string;
  /** SSA: how the list is owned and merged. */
  listType?: 'atomic' | 'set' | 'map';
  listMapKeys?: string[];
  /** Schema defaults of key fields, used when an item omits one (Container ports' protocol). */
  listMapKeyDefaults?: Record<string, unknown>;
  /** SSA: the object (or, on a list, each of its items) is one atomic value. */
  atomic?: boolean;
  /**
   * The typed Go object always serialises this field (a non-pointer struct, or a list without
   * omitempty), so it never counts as newly added when field ownership is computed.
   */
  alwaysPresent?: boolean;
}

export type KindRules = Readonly<Record<string, FieldRule>>;

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

const byKey = (key: string): FieldRule => ({
  patchStrategy: 'merge',
  patchMergeKey: key,
  listType: 'map',
  listMapKeys: [key],
});

/** Prefixes every pattern of `rules` with `prefix` ('' in `rules` names the prefix itself). */
function under(prefix: string, rules: KindRules): KindRules {
  return Object.fromEntries(Object.entries(rules).map(([p, r]) => [p === '' ? prefix : `${prefix}.${p}`, r]));
}

const OBJECT_META: KindRules = {
  '': { alwaysPresent: true },
  finalizers: { patchStrategy: 'merge', listType: 'set' },
  ownerReferences: { ...byKey('uid'), atomic: true },
};

const CONTAINER: KindRules = {
  ports: {
    patchStrategy: 'merge',
    patchMergeKey: 'containerPort',
    listType: 'map',
    listMapKeys: ['containerPort', 'protocol'],
    listMapKeyDefaults: { protocol: 'TCP' },
  },
  env: byKey('name'),
  'env.valueFrom.fieldRef': { atomic: true },
  'env.valueFrom.resourceFieldRef': { atomic: true },
  'env.valueFrom.configMapKeyRef': { atomic: true },
  'env.valueFrom.secretKeyRef': { atomic: true },
  volumeMounts: byKey('mountPath'),
  volumeDevices: byKey('devicePath'),
  resources: { alwaysPresent: true },
  'resources.claims': { listType: 'map', listMapKeys: ['name'] },
};

const POD_SPEC: KindRules = {
  '': { alwaysPresent: true },
  containers: { ...byKey('name'), alwaysPresent: true },
  initContainers: byKey('name'),
  ephemeralContainers: byKey('name'),
  ...under('containers', CONTAINER),
  ...under('initContainers', CONTAINER),
  ...under('ephemeralContainers', CONTAINER),
  volumes: { ...byKey('name'), patchStrategy: 'merge,retainKeys' },
  imagePullSecrets: { ...byKey('name'), atomic: true },
  hostAliases: byKey('ip'),
  // Tolerations carry no patch strategy and are +listType=atomic: a patch replaces them whole.
  topologySpreadConstraints: {
    patchStrategy: 'merge',
    patchMergeKey: 'topologyKey',
    listType: 'map',
    listMapKeys: ['topologyKey', 'whenUnsatisfiable'],
  },
  schedulingGates: byKey('name'),
  resourceClaims: { ...byKey('name'), patchStrategy: 'merge,retainKeys' },
  'affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution': { atomic: true },
};

const POD_STATUS: KindRules = {
  '': { alwaysPresent: true },
  conditions: byKey('type'),
  podIPs: byKey('ip'),
  hostIPs: { patchStrategy: 'merge', patchMergeKey: 'ip', listType: 'atomic' },
  // containerStatuses/initContainerStatuses/ephemeralContainerStatuses have no patch strategy
  // and are +listType=atomic in k8s.io/api: a patch replaces them whole.
  resourceClaimStatuses: { ...byKey('name'), patchStrategy: 'merge,retainKeys' },
};

/** A PodTemplateSpec value (not a pointer), e.g. Deployment's spec.template. */
const POD_TEMPLATE: KindRules = {
  '': { alwaysPresent: true },
  ...under('metadata', OBJECT_META),
  ...under('spec', POD_SPEC),
};

const SPEC_STATUS: KindRules = { spec: { alwaysPresent: true }, status: { alwaysPresent: true } };
const STATUS_CONDITIONS: KindRules = { 'status.conditions': byKey('type') };

const WORKLOAD: KindRules = {
  ...under('metadata', OBJECT_META),
  ...SPEC_STATUS,
  'spec.selector': { atomic: true },
  ...under('spec.template', POD_TEMPLATE),
  ...STATUS_CONDITIONS,
};

const META_ONLY: KindRules = under('metadata', OBJECT_META);
const WITH_SPEC_STATUS: KindRules = { ...META_ONLY, ...SPEC_STATUS };

/** Keyed by `group/version/Kind` (`v1/Pod` for the core group). */
export const SMP_TABLE: Readonly<Record<string, KindRules>> = {
  'v1/Pod': { ...META_ONLY, ...under('spec', POD_SPEC), ...under('status', POD_STATUS) },
  'v1/PodTemplate': { ...META_ONLY, ...under('template', POD_TEMPLATE) },
  'v1/ReplicationController': {
    ...WITH_SPEC_STATUS,
    'spec.selector': { atomic: true },
    ...under('spec.template', { ...POD_TEMPLATE, '': {} }),
    ...STATUS_CONDITIONS,
  },
  'v1/Node': {
    ...WITH_SPEC_STATUS,
    'spec.podCIDRs': { patchStrategy: 'merge', listType: 'set' },
    ...STATUS_CONDITIONS,
    'status.addresses': byKey('type'),
    'status.nodeInfo': { alwaysPresent: true },
    'status.daemonEndpoints': { alwaysPresent: true },
  },
  'v1/Service': {
    ...WITH_SPEC_STATUS,
    'spec.ports': {
      patchStrategy: 'merge',
      patchMergeKey: 'port',
      listType: 'map',
      listMapKeys: ['port', 'protocol'],
      listMapKeyDefaults: { protocol: 'TCP' },
    },
    'spec.selector': { atomic: true },
    'status.loadBalancer': { alwaysPresent: true },
    ...STATUS_CONDITIONS,
  },
  'v1/Namespace': { ...WITH_SPEC_STATUS, ...STATUS_CONDITIONS },
  'v1/PersistentVolumeClaim': { ...WITH_SPEC_STATUS, ...STATUS_CONDITIONS },
  'v1/PersistentVolume': WITH_SPEC_STATUS,
  'v1/ConfigMap': META_ONLY,
  'v1/Secret': META_ONLY,
  'v1/Event': { ...META_ONLY, involvedObject: { alwaysPresent: true } },
  'v1/Endpoints': META_ONLY,
  'v1/ServiceAccount': { ...META_ONLY, secrets: { patchStrategy: 'merge', patchMergeKey: 'name' } },
  'v1/LimitRange': { ...META_ONLY, spec: { alwaysPresent: true } },
  'v1/ResourceQuota': WITH_SPEC_STATUS,
  'v1/Binding': { ...META_ONLY, target: { alwaysPresent: true } },
  'apps/v1/Deployment': {
    ...WORKLOAD,
    'spec.strategy': { patchStrategy: 'retainKeys', alwaysPresent: true },
  },
  'apps/v1/ReplicaSet': WORKLOAD,
  'apps/v1/StatefulSet': { ...WORKLOAD, 'spec.updateStrategy': { alwaysPresent: true } },
  'apps/v1/DaemonSet': { ...WORKLOAD, 'spec.updateStrategy': { alwaysPresent: true } },
  'apps/v1/ControllerRevision': META_ONLY,
  'batch/v1/Job': {
    ...WORKLOAD,
    // Job conditions merge by type under SMP but are +listType=atomic for SSA.
    'status.conditions': { patchStrategy: 'merge', patchMergeKey: 'type', listType: 'atomic' },
  },
  'batch/v1/CronJob': {
    ...WITH_SPEC_STATUS,
    'spec.jobTemplate': { alwaysPresent: true },
    ...under('spec.jobTemplate.metadata', OBJECT_META),
    'spec.jobTemplate.spec': { alwaysPresent: true },
    'spec.jobTemplate.spec.selector': { atomic: true },
    ...under('spec.jobTemplate.spec.template', POD_TEMPLATE),
  },
  'coordination.k8s.io/v1/Lease': { ...META_ONLY, spec: { alwaysPresent: true } },
  'discovery.k8s.io/v1/EndpointSlice': META_ONLY,
  'events.k8s.io/v1/Event': META_ONLY,
  'policy/v1/PodDisruptionBudget': {
    ...WITH_SPEC_STATUS,
    'spec.selector': { atomic: true },
    ...STATUS_CONDITIONS,
  },
  'scheduling.k8s.io/v1/PriorityClass': META_ONLY,
  'rbac.authorization.k8s.io/v1/Role': META_ONLY,
  'rbac.authorization.k8s.io/v1/ClusterRole': META_ONLY,
  'rbac.authorization.k8s.io/v1/RoleBinding': { ...META_ONLY, roleRef: { alwaysPresent: true } },
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': { ...META_ONLY, roleRef: { alwaysPresent: true } },
  'admissionregistration.k8s.io/v1/MutatingWebhookConfiguration': { ...META_ONLY, webhooks: byKey('name') },
  'admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration': { ...META_ONLY, webhooks: byKey('name') },
  'apiextensions.k8s.io/v1/CustomResourceDefinition': {
    ...WITH_SPEC_STATUS,
    'status.conditions': { listType: 'map', listMapKeys: ['type'] },
    'status.acceptedNames': { alwaysPresent: true },
  },
  'apiregistration.k8s.io/v1/APIService': { ...WITH_SPEC_STATUS, ...STATUS_CONDITIONS },
  'networking.k8s.io/v1/Ingress': WITH_SPEC_STATUS,
  'networking.k8s.io/v1/IngressClass': { ...META_ONLY, spec: { alwaysPresent: true } },
  'networking.k8s.io/v1/NetworkPolicy': { ...META_ONLY, spec: { alwaysPresent: true } },
  'storage.k8s.io/v1/StorageClass': META_ONLY,
  'storage.k8s.io/v1/CSIDriver': { ...META_ONLY, spec: { alwaysPresent: true } },
  'storage.k8s.io/v1/CSINode': { ...META_ONLY, spec: { alwaysPresent: true } },
  'storage.k8s.io/v1/VolumeAttachment': WITH_SPEC_STATUS,
  'autoscaling/v1/HorizontalPodAutoscaler': WITH_SPEC_STATUS,
  // The view of workloads' scale subresource: a typed kind, so strategic merge applies to it.
  'autoscaling/v1/Scale': WITH_SPEC_STATUS,
  'autoscaling/v2/HorizontalPodAutoscaler': { ...WITH_SPEC_STATUS, ...STATUS_CONDITIONS },
  'node.k8s.io/v1/RuntimeClass': META_ONLY,
  'certificates.k8s.io/v1/CertificateSigningRequest': {
    ...WITH_SPEC_STATUS,
    'status.conditions': { listType: 'map', listMapKeys: ['type'] },
  },
};

/** The ObjectMeta rules alone: what any object, custom resources included, has. */
export const OBJECT_META_RULES: KindRules = META_ONLY;

/** `apps/v1/Deployment`, `v1/Pod`: the table key of a kind. */
export function gvkKey(gvk: GroupVersionKind | string): string {
  if (typeof gvk === 'string') return gvk;
  return gvk.group === '' ? `${gvk.version}/${gvk.kind}` : `${gvk.group}/${gvk.version}/${gvk.kind}`;
}

/** The key for an object's own apiVersion and kind. */
export function objectGvkKey(obj: { apiVersion?: unknown; kind?: unknown }): string {
  return `${String(obj.apiVersion)}/${String(obj.kind)}`;
}

/**
 * Whether the server accepts application/strategic-merge-patch+json for this kind: only
 * built-in kinds are eligible; custom resources get 415 as from kube-apiserver.
 */
export function supportsStrategicMerge(gvk: GroupVersionKind | string): boolean {
  return Object.hasOwn(SMP_TABLE, gvkKey(gvk));
}

/** The rules of a built-in kind, or undefined for kinds not in the table. */
export function rulesFor(gvk: GroupVersionKind | string): KindRules | undefined {
  const key = gvkKey(gvk);
  return Object.hasOwn(SMP_TABLE, key) ? SMP_TABLE[key] : undefined;
}
