/**
 * The shape every Kubernetes object shares (apimachinery's ObjectMeta, OwnerReference,
 * ManagedFieldsEntry), defined once for the runtime, the controllers and the embedded API
 * server. Deliberately loose (like unstructured.Unstructured): kind-specific code narrows
 * `spec`/`status` itself, with the built-in kinds' types from `kubernetes-models`.
 */

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: 'Apply' | 'Update';
  apiVersion?: string;
  time?: string;
  fieldsType?: 'FieldsV1';
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: ManagedFieldsEntry[];
  [key: string]: unknown;
}

/** Any stored object. Kind-specific code narrows `spec`/`status` itself. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** A kind, as controllers declare what they watch. */
export interface KindRef {
  apiVersion: string;
  kind: string;
}
