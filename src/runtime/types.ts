/**
 * Object shapes the runtime handles. Deliberately loose (like unstructured.Unstructured):
 * controllers narrow `spec`/`status` themselves.
 */

export type { KindRef, KubeObject, ManagedFieldsEntry, ObjectMeta, OwnerReference } from '../kube/object.ts';

import type { KindRef, KubeObject } from '../kube/object.ts';

/** What addresses one object: its type and, for namespaced kinds, namespace. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  metadata: { name?: string; namespace?: string };
}

export interface ListResult<T extends KubeObject = KubeObject> {
  items: T[];
  resourceVersion: string;
  continue?: string;
}

export function kindKey(k: KindRef): string {
  return `${k.apiVersion}/${k.kind}`;
}

export { keyOf, objectKey, parseKey } from '../kube/keys.ts';
