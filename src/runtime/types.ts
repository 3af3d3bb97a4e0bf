/**
 * Object shapes the runtime handles. Deliberately loose (like unstructured.Unstructured):
 * controllers narrow `spec`/`status` themselves.
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
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: ManagedFieldsEntry[];
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** What addresses one object: its type and, for namespaced kinds, namespace. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string };
}

/** A kind, as controllers declare what they watch. */
export interface KindRef {
  apiVersion: string;
  kind: string;
}

export interface ListResult<T extends KubeObject = KubeObject> {
  items: T[];
  resourceVersion: string;
  continue?: string;
}

/** `namespace/name`, or `name` for cluster-scoped objects (client-go's MetaNamespaceKeyFunc). */
export function objectKey(obj: { metadata: { name?: string; namespace?: string } }): string {
  const ns = obj.metadata.namespace;
  return ns ? `${ns}/${obj.metadata.name ?? ''}` : (obj.metadata.name ?? '');
}

export function keyOf(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

export function parseKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

export function kindKey(k: KindRef): string {
  return `${k.apiVersion}/${k.kind}`;
}
