/**
 * Shared types of the embedded API server. Everything here mirrors apimachinery's
 * shapes (ObjectMeta, Status, field errors) so the HTTP layer can emit them verbatim.
 */

export type { KubeObject, ManagedFieldsEntry, ObjectMeta, OwnerReference } from '../../kube/object.ts';

import type { KubeObject } from '../../kube/object.ts';

/** The `reason` values of metav1.CauseType used in 422 Invalid responses. */
export type CauseType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueTypeInvalid'
  | 'InternalError'
  | 'FieldManagerConflict'
  | 'UnexpectedServerResponse';

/** One entry of Status.details.causes (field.Error in apimachinery). */
export interface FieldError {
  reason: CauseType;
  /** JSON path as Kubernetes prints it: `spec.containers[0].image`, `metadata.labels`. */
  field: string;
  /** The full human message, as apimachinery renders it: `Required value`, `Invalid value: "x": must be ...`. */
  message: string;
}

/** Kinds of access the HTTP layer hands to a strategy; `subresource` is '' for the main endpoint. */
export interface RequestContext {
  subresource: string;
  dryRun: boolean;
  fieldManager?: string;
  /** The authenticated user, for managedFields and audit-like logs. */
  user: string;
  /** The user's groups (CertificateSigningRequests record them). */
  groups?: string[];
}

/** A table column as served in meta.k8s.io/v1 Table responses. */
export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description?: string;
  priority?: number;
}

export interface TablePrinter {
  columns: TableColumn[];
  /** One row's cells, in column order. The first column is conventionally NAME. */
  cells(obj: KubeObject, now: Date): unknown[];
}

/**
 * Per-kind behaviour, the equivalent of kube-apiserver's registry strategies
 * (pkg/registry/<group>/<kind>/strategy.go). Every hook is optional: a kind with no
 * strategy is stored as given. Hooks mutate `obj` in place and return field errors.
 */
export interface Strategy {
  /** Defaulting (SetDefaults_*): runs on create and on every update of the main resource. */
  default?(obj: KubeObject): void;
  /** PrepareForCreate: e.g. clear status, add server-set conditions. */
  prepareForCreate?(obj: KubeObject, ctx: RequestContext): void;
  /** PrepareForUpdate: e.g. keep old status on the main endpoint, keep old spec on /status. */
  prepareForUpdate?(obj: KubeObject, old: KubeObject, ctx: RequestContext): void;
  validateCreate?(obj: KubeObject, ctx: RequestContext): FieldError[];
  validateUpdate?(obj: KubeObject, old: KubeObject, ctx: RequestContext): FieldError[];
  /** Values for fieldSelector beyond metadata.name/metadata.namespace (e.g. spec.nodeName). */
  selectableFields?(obj: KubeObject): Record<string, string>;
  /** Whether a spec change bumps metadata.generation (true for most kinds with a spec). */
  tracksGeneration?: boolean;
  table?: TablePrinter;
}

/** Settles what a store hook took for a write: kept once the write is stored, given back otherwise. */
export type FinishWrite = (stored: boolean) => void;

/**
 * The generic registry store's BeginCreate, BeginUpdate and AfterDelete, for kinds whose
 * objects hold something outside themselves (a Service's cluster IPs and node ports). The
 * begin hooks run after mutating admission and before the strategy's prepare and validation,
 * may change the object, and throw an ApiError to refuse the write. A dry run must not take
 * what another write could ask for while this one waits on validating admission.
 */
export interface StoreHooks {
  beginCreate?(obj: KubeObject, dryRun: boolean): FinishWrite;
  /** Writes to the main resource only: upstream's status stores have no BeginUpdate. */
  beginUpdate?(obj: KubeObject, old: KubeObject, dryRun: boolean): FinishWrite;
  /** Once the object has left storage (not when its deletion merely started). */
  afterDelete?(obj: KubeObject): void;
}

export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

/** A served resource, built-in or from a CRD. */
export interface ResourceType {
  group: string; // '' for the core group
  version: string;
  resource: string; // plural, e.g. 'pods'
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  verbs: string[];
  /** Names of served subresources: 'status', 'scale', 'binding', 'eviction'. */
  subresources: string[];
  scale?: ScaleSubresource;
  strategy: Strategy;
  storeHooks?: StoreHooks;
  /** Whether this version is the storage version (CRDs with several versions). */
  storage?: boolean;
  /**
   * Another resource whose storage this one shares, in that resource's shape (as
   * events.k8s.io/v1 events are core/v1 events in kube-apiserver), with the conversion.
   */
  sharedStorage?: {
    group: string;
    /** The owning resource's version (v1 when absent). */
    version?: string;
    resource: string;
    toStorage(obj: KubeObject): KubeObject;
    fromStorage(obj: KubeObject): KubeObject;
  };
}

export function groupVersion(rt: Pick<ResourceType, 'group' | 'version'>): string {
  return rt.group === '' ? rt.version : `${rt.group}/${rt.version}`;
}
