/**
 * In-memory helpers over object metadata (controllerutil in controller-runtime):
 * owner references and finalizers. They change the object passed in; writing it back
 * is the caller's job (or use Client.addFinalizer / removeFinalizer).
 */

import type { KubeObject, OwnerReference } from './types.ts';

export class AlreadyOwnedError extends Error {
  readonly owner: OwnerReference;
  constructor(obj: KubeObject, owner: OwnerReference) {
    super(
      `${obj.kind} ${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''} is already controlled by ${owner.kind} ${owner.name}`,
    );
    this.name = 'AlreadyOwnedError';
    this.owner = owner;
  }
}

function groupOf(apiVersion: string): string {
  const i = apiVersion.indexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
}

/** Same owner: same group and kind and name (the version may differ), as controller-runtime compares. */
function sameOwner(a: OwnerReference, b: OwnerReference): boolean {
  return groupOf(a.apiVersion) === groupOf(b.apiVersion) && a.kind === b.kind && a.name === b.name;
}

function referenceTo(owner: KubeObject): OwnerReference {
  const { name, uid } = owner.metadata;
  if (!name || !uid)
    throw new Error(`owner ${owner.kind} must have a name and uid (was it read from the server?)`);
  return { apiVersion: owner.apiVersion, kind: owner.kind, name, uid };
}

function checkScope(owner: KubeObject, obj: KubeObject): void {
  const ownerNs = owner.metadata.namespace;
  if (ownerNs && ownerNs !== obj.metadata.namespace) {
    throw new Error(
      `cross-namespace owner references are not allowed: owner ${owner.kind} ${ownerNs}/${owner.metadata.name} and object in ${obj.metadata.namespace ?? '(cluster scope)'}`,
    );
  }
}

/**
 * Marks `owner` as the managing controller of `obj` (controller=true, blockOwnerDeletion=true),
 * so garbage collection deletes `obj` with its owner and `Owns` watches map it back.
 * Throws AlreadyOwnedError if another controller already manages it.
 */
export function setControllerReference(owner: KubeObject, obj: KubeObject): void {
  checkScope(owner, obj);
  const ref: OwnerReference = { ...referenceTo(owner), controller: true, blockOwnerDeletion: true };
  const existing = getControllerOf(obj);
  if (existing && !sameOwner(existing, ref)) throw new AlreadyOwnedError(obj, existing);
  upsertOwner(obj, ref);
}

/** Adds (or refreshes) a non-controlling owner reference. */
export function setOwnerReference(owner: KubeObject, obj: KubeObject): void {
  checkScope(owner, obj);
  const ref = referenceTo(owner);
  const existing = (obj.metadata.ownerReferences ?? []).find((r) => sameOwner(r, ref));
  if (existing?.controller) ref.controller = true;
  if (existing?.blockOwnerDeletion !== undefined) ref.blockOwnerDeletion = existing.blockOwnerDeletion;
  upsertOwner(obj, ref);
}

export function removeOwnerReference(owner: KubeObject, obj: KubeObject): boolean {
  const refs = obj.metadata.ownerReferences ?? [];
  const ref = referenceTo(owner);
  const kept = refs.filter((r) => !sameOwner(r, ref));
  if (kept.length === refs.length) return false;
  obj.metadata.ownerReferences = kept;
  return true;
}

function upsertOwner(obj: KubeObject, ref: OwnerReference): void {
  const refs = obj.metadata.ownerReferences ?? [];
  const i = refs.findIndex((r) => sameOwner(r, ref));
  if (i >= 0) refs[i] = ref;
  else refs.push(ref);
  obj.metadata.ownerReferences = refs;
}

export function getControllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((r) => r.controller === true);
}

export function isControlledBy(obj: KubeObject, owner: KubeObject): boolean {
  const ref = getControllerOf(obj);
  return ref !== undefined && ref.uid === owner.metadata.uid;
}

export function hasFinalizer(obj: KubeObject, finalizer: string): boolean {
  return obj.metadata.finalizers?.includes(finalizer) ?? false;
}

/** Adds `finalizer`; returns whether the object changed. */
export function addFinalizer(obj: KubeObject, finalizer: string): boolean {
  if (hasFinalizer(obj, finalizer)) return false;
  obj.metadata.finalizers = [...(obj.metadata.finalizers ?? []), finalizer];
  return true;
}

/** Removes `finalizer`; returns whether the object changed. */
export function removeFinalizer(obj: KubeObject, finalizer: string): boolean {
  if (!hasFinalizer(obj, finalizer)) return false;
  obj.metadata.finalizers = (obj.metadata.finalizers ?? []).filter((f) => f !== finalizer);
  return true;
}

export function isBeingDeleted(obj: KubeObject): boolean {
  return Boolean(obj.metadata.deletionTimestamp);
}
