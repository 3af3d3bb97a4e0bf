/**
 * The NamespaceLifecycle admission plugin: content needs a live namespace, and the
 * namespaces a cluster cannot run without may never be deleted.
 */
import { errors } from '../errors.ts';
import type { ObjectStore } from '../store.ts';
import type { ResourceType } from '../types.ts';

/** The plugin's immortal namespaces, as kube-apiserver registers it. */
const IMMORTAL_NAMESPACES = new Set(['default', 'kube-system', 'kube-public']);

/**
 * Refuses deleting an immortal namespace. kube-apiserver runs this as mutating admission
 * before the object is read, so it answers 403 even for dry runs.
 */
export function admitNamespaceDelete(rt: ResourceType, name: string): void {
  if (rt.group !== '' || rt.kind !== 'Namespace' || !IMMORTAL_NAMESPACES.has(name)) return;
  throw errors.forbidden({ group: '', resource: rt.resource }, name, 'this namespace may not be deleted');
}

/** Refuses namespaced content in a missing (404) or terminating (403) namespace. */
export function admitNamespacedCreate(
  store: ObjectStore,
  rt: ResourceType,
  namespace: string,
  name: string,
): void {
  if (!namespace) {
    throw errors.badRequest(
      `the server could not find the requested resource: a namespace is required for ${rt.resource}`,
    );
  }
  const ns = store.get('/namespaces', namespace);
  if (!ns) throw errors.notFound({ group: '', resource: 'namespaces' }, namespace);
  if (ns.json.includes('"deletionTimestamp"')) {
    throw errors.forbiddenRaw(
      `${rt.resource}${rt.group ? `.${rt.group}` : ''} "${name}" is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
      {
        name,
        group: rt.group,
        kind: rt.resource,
        causes: [
          {
            reason: 'NamespaceTerminating',
            message: `namespace ${namespace} is being terminated`,
            field: 'metadata.namespace',
          },
        ],
      },
    );
  }
}
