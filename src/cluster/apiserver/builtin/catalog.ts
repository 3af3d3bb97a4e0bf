/**
 * The built-in kinds kube-apiserver 1.32 serves by default that have no rules of their own
 * here beyond metadata, the status split and generation: registered as data. Names, short
 * names, categories, scope, verbs and subresources follow kube-apiserver's discovery
 * (kubernetes/kubernetes api/discovery/*.json, the GA group versions enabled by default in
 * pkg/controlplane/apiserver/options and pkg/registry/<group>/rest/storage_<group>.go).
 * Types and defaults come from the published OpenAPI (openapi/data), which the generic
 * schema validation and defaulting read for every registered built-in kind.
 * Kinds with behaviour of their own (admission, controllers) add a `strategy` next to
 * their entry rather than a second registration.
 */

import { isObject } from '../../../lib/json.ts';
import type { KubeObject, ResourceType, Strategy, TablePrinter } from '../types.ts';
import {
  validatingAdmissionPolicyBindingStrategy,
  validatingAdmissionPolicyStrategy,
} from './admission-policies.ts';
import { localSubjectAccessReviewStrategy } from './authorization.ts';
import { csrStrategy } from './certificates.ts';
import { DEFAULT_TABLE_COLUMNS, defaultTableCells, recordOf, splitStatusUpdate } from './common.ts';
import { dedupe } from './field-errors.ts';
import { hpaStrategy, hpaV1ToV2, hpaV2ToV1 } from './hpa.ts';
import * as printers from './printers.ts';
import {
  type NameValidator,
  nameIsDNSSubdomain,
  nameIsPathSegment,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './validation.ts';

export const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
export const CREATE_ONLY = ['create'];

export interface CatalogEntry {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  verbs?: string[];
  /** 'status' gives the usual split (status cleared on create, kept on the main endpoint). */
  subresources?: string[];
  /** Whether a spec change bumps metadata.generation (the kind's upstream strategy does). */
  generation?: boolean;
  /** Upstream's name rule when it is not a DNS subdomain. */
  names?: NameValidator;
  table?: TablePrinter;
  /** Rules beyond the generic ones, merged over the generic strategy. */
  strategy?: Strategy;
  /** `strategy.validateUpdate` also judges `/status` writes (otherwise only the generic rules). */
  validatesStatus?: boolean;
  /** A review answered by the server and never stored: only `strategy` applies. */
  review?: boolean;
  sharedStorage?: ResourceType['sharedStorage'];
  scale?: ResourceType['scale'];
}

const ALL = ['all'];

/** SetDefaults_PersistentVolume(Claim)Status: phase Pending. */
function pendingPhase(obj: KubeObject): void {
  obj.status = { phase: 'Pending' };
}
const API_EXTENSIONS = ['api-extensions'];

/** The generic registry strategy: ObjectMeta validation, the status split and generation. */
export function genericStrategy(e: CatalogEntry): Strategy {
  if (e.review) return e.strategy ?? {};
  const names = e.names ?? nameIsDNSSubdomain;
  const hasStatus = e.subresources?.includes('status') ?? false;
  const base: Strategy = {
    validateCreate: (obj) => dedupe(validateObjectMeta(obj.metadata, e.namespaced, names)),
    validateUpdate: (obj, old) =>
      dedupe([
        ...validateObjectMetaUpdate(obj.metadata, old.metadata),
        ...validateObjectMeta(obj.metadata, e.namespaced, names),
      ]),
  };
  if (hasStatus) {
    base.prepareForCreate = (obj: KubeObject) => {
      delete obj.status;
    };
    base.prepareForUpdate = (obj, old, ctx) => splitStatusUpdate(obj, old, ctx, 'all');
  }
  if (e.generation) base.tracksGeneration = true;
  // Kinds without a printer get kube-apiserver's default table convertor (NAME, CREATED AT).
  base.table = e.table ?? { columns: DEFAULT_TABLE_COLUMNS, cells: defaultTableCells };
  if (!e.strategy) return base;
  const extra = e.strategy;
  return {
    ...base,
    ...extra,
    validateCreate: (obj, ctx) =>
      dedupe([...(base.validateCreate!(obj, ctx) ?? []), ...(extra.validateCreate?.(obj, ctx) ?? [])]),
    validateUpdate: (obj, old, ctx) =>
      dedupe([
        ...(base.validateUpdate!(obj, old, ctx) ?? []),
        ...(ctx.subresource === 'status' && !e.validatesStatus
          ? []
          : (extra.validateUpdate?.(obj, old, ctx) ?? [])),
      ]),
    prepareForCreate: (obj, ctx) => {
      base.prepareForCreate?.(obj, ctx);
      extra.prepareForCreate?.(obj, ctx);
    },
    prepareForUpdate: (obj, old, ctx) => {
      base.prepareForUpdate?.(obj, old, ctx);
      extra.prepareForUpdate?.(obj, old, ctx);
    },
  };
}

export function catalogResourceType(e: CatalogEntry): ResourceType {
  const rt: ResourceType = {
    group: e.group,
    version: e.version,
    resource: e.resource,
    singular: e.kind.toLowerCase(),
    kind: e.kind,
    listKind: `${e.kind}List`,
    namespaced: e.namespaced,
    shortNames: e.shortNames ?? [],
    categories: e.categories ?? [],
    verbs: e.verbs ?? ALL_VERBS,
    subresources: e.subresources ?? [],
    strategy: genericStrategy(e),
  };
  if (e.sharedStorage) rt.sharedStorage = e.sharedStorage;
  if (e.scale) rt.scale = e.scale;
  return rt;
}

/**
 * The catalog entries, by group. `extra` lets a kind with behaviour (admission rules,
 * conversions) put its strategy or storage onto its entry.
 */
export function catalogEntries(extra: Record<string, Partial<CatalogEntry>> = {}): CatalogEntry[] {
  const entries: CatalogEntry[] = [
    // core/v1
    {
      group: '',
      version: 'v1',
      resource: 'componentstatuses',
      kind: 'ComponentStatus',
      namespaced: false,
      shortNames: ['cs'],
      verbs: ['get', 'list'],
      table: printers.componentStatusTable,
    },
    {
      group: '',
      version: 'v1',
      resource: 'limitranges',
      kind: 'LimitRange',
      namespaced: true,
      shortNames: ['limits'],
    },
    {
      group: '',
      version: 'v1',
      resource: 'persistentvolumeclaims',
      kind: 'PersistentVolumeClaim',
      namespaced: true,
      shortNames: ['pvc'],
      subresources: ['status'],
      table: printers.persistentVolumeClaimTable,
      // The status is cleared on create; kube-apiserver's defaulting on read shows Pending.
      strategy: { prepareForCreate: pendingPhase },
    },
    {
      group: '',
      version: 'v1',
      resource: 'persistentvolumes',
      kind: 'PersistentVolume',
      namespaced: false,
      shortNames: ['pv'],
      subresources: ['status'],
      table: printers.persistentVolumeTable,
      strategy: { prepareForCreate: pendingPhase },
    },
    {
      group: '',
      version: 'v1',
      resource: 'podtemplates',
      kind: 'PodTemplate',
      namespaced: true,
      table: printers.podTemplateTable,
    },
    {
      group: '',
      version: 'v1',
      resource: 'replicationcontrollers',
      kind: 'ReplicationController',
      namespaced: true,
      shortNames: ['rc'],
      categories: ALL,
      subresources: ['status', 'scale'],
      generation: true,
      table: printers.replicationControllerTable,
      scale: {
        specReplicasPath: '.spec.replicas',
        statusReplicasPath: '.status.replicas',
        labelSelectorPath: '.spec.selector',
      },
      strategy: {
        // SetDefaults_ReplicationController (pkg/apis/core/v1/defaults.go): the selector and
        // labels default to the template's labels, replicas to 1.
        default(obj) {
          if (!isObject(obj.spec)) obj.spec = {};
          const spec = obj.spec as Record<string, unknown>;
          const labels = recordOf(recordOf(recordOf(spec.template).metadata).labels);
          if (Object.keys(recordOf(spec.selector)).length === 0 && Object.keys(labels).length)
            spec.selector = { ...labels };
          if (!obj.metadata.labels && Object.keys(labels).length)
            obj.metadata.labels = { ...(labels as Record<string, string>) };
          spec.replicas ??= 1;
        },
      },
    },
    {
      group: '',
      version: 'v1',
      resource: 'resourcequotas',
      kind: 'ResourceQuota',
      namespaced: true,
      shortNames: ['quota'],
      subresources: ['status'],
      table: printers.resourceQuotaTable,
    },
    // admissionregistration.k8s.io/v1
    {
      group: 'admissionregistration.k8s.io',
      version: 'v1',
      resource: 'validatingadmissionpolicies',
      kind: 'ValidatingAdmissionPolicy',
      namespaced: false,
      categories: API_EXTENSIONS,
      subresources: ['status'],
      generation: true,
      table: printers.validatingAdmissionPolicyTable,
      strategy: validatingAdmissionPolicyStrategy,
    },
    {
      group: 'admissionregistration.k8s.io',
      version: 'v1',
      resource: 'validatingadmissionpolicybindings',
      kind: 'ValidatingAdmissionPolicyBinding',
      namespaced: false,
      categories: API_EXTENSIONS,
      generation: true,
      table: printers.validatingAdmissionPolicyBindingTable,
      strategy: validatingAdmissionPolicyBindingStrategy,
    },
    // apiregistration.k8s.io/v1
    {
      group: 'apiregistration.k8s.io',
      version: 'v1',
      resource: 'apiservices',
      kind: 'APIService',
      namespaced: false,
      categories: API_EXTENSIONS,
      subresources: ['status'],
      // kube-aggregator's ValidateAPIService: a path segment (`v1.` names the core group).
      names: nameIsPathSegment,
      table: printers.apiServiceTable,
    },
    // apps/v1
    {
      group: 'apps',
      version: 'v1',
      resource: 'controllerrevisions',
      kind: 'ControllerRevision',
      namespaced: true,
      table: printers.controllerRevisionTable,
    },
    // authentication.k8s.io/v1: answered, never stored (see http/reviews.ts).
    {
      group: 'authentication.k8s.io',
      version: 'v1',
      resource: 'selfsubjectreviews',
      kind: 'SelfSubjectReview',
      namespaced: false,
      verbs: CREATE_ONLY,
      review: true,
    },
    {
      group: 'authentication.k8s.io',
      version: 'v1',
      resource: 'tokenreviews',
      kind: 'TokenReview',
      namespaced: false,
      verbs: CREATE_ONLY,
      review: true,
    },
    // authorization.k8s.io/v1
    {
      group: 'authorization.k8s.io',
      version: 'v1',
      resource: 'localsubjectaccessreviews',
      kind: 'LocalSubjectAccessReview',
      namespaced: true,
      verbs: CREATE_ONLY,
      review: true,
      strategy: localSubjectAccessReviewStrategy(),
    },
    // autoscaling: v2 is the storage version; v1 is converted from it.
    {
      group: 'autoscaling',
      version: 'v2',
      resource: 'horizontalpodautoscalers',
      kind: 'HorizontalPodAutoscaler',
      namespaced: true,
      shortNames: ['hpa'],
      categories: ALL,
      subresources: ['status'],
      generation: true,
      table: printers.horizontalPodAutoscalerTable,
      strategy: hpaStrategy,
    },
    {
      group: 'autoscaling',
      version: 'v1',
      resource: 'horizontalpodautoscalers',
      kind: 'HorizontalPodAutoscaler',
      namespaced: true,
      shortNames: ['hpa'],
      categories: ALL,
      subresources: ['status'],
      generation: true,
      table: printers.horizontalPodAutoscalerTable,
      strategy: hpaStrategy,
      sharedStorage: {
        group: 'autoscaling',
        version: 'v2',
        resource: 'horizontalpodautoscalers',
        toStorage: hpaV1ToV2,
        fromStorage: hpaV2ToV1,
      },
    },
    // batch/v1
    {
      group: 'batch',
      version: 'v1',
      resource: 'cronjobs',
      kind: 'CronJob',
      namespaced: true,
      shortNames: ['cj'],
      categories: ALL,
      subresources: ['status'],
      generation: true,
      table: printers.cronJobTable,
      strategy: {
        // SetDefaults_CronJob (pkg/apis/batch/v1/defaults.go).
        default(obj) {
          if (!isObject(obj.spec)) obj.spec = {};
          const spec = obj.spec as Record<string, unknown>;
          spec.concurrencyPolicy ??= 'Allow';
          spec.suspend ??= false;
          spec.successfulJobsHistoryLimit ??= 3;
          spec.failedJobsHistoryLimit ??= 1;
        },
      },
    },
    // certificates.k8s.io/v1
    {
      group: 'certificates.k8s.io',
      version: 'v1',
      resource: 'certificatesigningrequests',
      kind: 'CertificateSigningRequest',
      namespaced: false,
      shortNames: ['csr'],
      subresources: ['approval', 'status'],
      names: nameIsPathSegment,
      strategy: csrStrategy(),
      validatesStatus: true,
      table: printers.certificateSigningRequestTable,
    },
    // discovery.k8s.io/v1
    {
      group: 'discovery.k8s.io',
      version: 'v1',
      resource: 'endpointslices',
      kind: 'EndpointSlice',
      namespaced: true,
      generation: true,
      table: printers.endpointSliceTable,
    },
    // flowcontrol.apiserver.k8s.io/v1
    {
      group: 'flowcontrol.apiserver.k8s.io',
      version: 'v1',
      resource: 'flowschemas',
      kind: 'FlowSchema',
      namespaced: false,
      subresources: ['status'],
      generation: true,
      table: printers.flowSchemaTable,
    },
    {
      group: 'flowcontrol.apiserver.k8s.io',
      version: 'v1',
      resource: 'prioritylevelconfigurations',
      kind: 'PriorityLevelConfiguration',
      namespaced: false,
      subresources: ['status'],
      generation: true,
      table: printers.priorityLevelConfigurationTable,
    },
    // networking.k8s.io/v1
    {
      group: 'networking.k8s.io',
      version: 'v1',
      resource: 'ingressclasses',
      kind: 'IngressClass',
      namespaced: false,
      generation: true,
      table: printers.ingressClassTable,
    },
    {
      group: 'networking.k8s.io',
      version: 'v1',
      resource: 'ingresses',
      kind: 'Ingress',
      namespaced: true,
      shortNames: ['ing'],
      subresources: ['status'],
      generation: true,
      table: printers.ingressTable,
    },
    {
      group: 'networking.k8s.io',
      version: 'v1',
      resource: 'networkpolicies',
      kind: 'NetworkPolicy',
      namespaced: true,
      shortNames: ['netpol'],
      generation: true,
      table: printers.networkPolicyTable,
    },
    // node.k8s.io/v1
    {
      group: 'node.k8s.io',
      version: 'v1',
      resource: 'runtimeclasses',
      kind: 'RuntimeClass',
      namespaced: false,
      table: printers.runtimeClassTable,
    },
    // policy/v1
    {
      group: 'policy',
      version: 'v1',
      resource: 'poddisruptionbudgets',
      kind: 'PodDisruptionBudget',
      namespaced: true,
      shortNames: ['pdb'],
      subresources: ['status'],
      generation: true,
      table: printers.podDisruptionBudgetTable,
    },
    // scheduling.k8s.io/v1
    {
      group: 'scheduling.k8s.io',
      version: 'v1',
      resource: 'priorityclasses',
      kind: 'PriorityClass',
      namespaced: false,
      shortNames: ['pc'],
      table: printers.priorityClassTable,
    },
    // storage.k8s.io/v1
    {
      group: 'storage.k8s.io',
      version: 'v1',
      resource: 'csidrivers',
      kind: 'CSIDriver',
      namespaced: false,
      table: printers.csiDriverTable,
    },
    {
      group: 'storage.k8s.io',
      version: 'v1',
      resource: 'csinodes',
      kind: 'CSINode',
      namespaced: false,
      table: printers.csiNodeTable,
    },
    {
      group: 'storage.k8s.io',
      version: 'v1',
      resource: 'csistoragecapacities',
      kind: 'CSIStorageCapacity',
      namespaced: true,
      table: printers.csiStorageCapacityTable,
    },
    {
      group: 'storage.k8s.io',
      version: 'v1',
      resource: 'storageclasses',
      kind: 'StorageClass',
      namespaced: false,
      shortNames: ['sc'],
      table: printers.storageClassTable,
    },
    {
      group: 'storage.k8s.io',
      version: 'v1',
      resource: 'volumeattachments',
      kind: 'VolumeAttachment',
      namespaced: false,
      subresources: ['status'],
      table: printers.volumeAttachmentTable,
    },
  ];
  return entries.map((e) => ({ ...e, ...(extra[`${e.group}/${e.version}/${e.resource}`] ?? {}) }));
}
