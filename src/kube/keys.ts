/**
 * Object keys, client-go's MetaNamespaceKeyFunc and SplitMetaNamespaceKey: `namespace/name`
 * for namespaced objects, `name` for cluster-scoped ones. One helper for the controllers,
 * the runtime's cache and work queues, and the embedded cluster's controller loops.
 *
 * A cluster-scoped key parses to an absent namespace (`undefined`, as `metadata.namespace`
 * is absent on such objects), not Go's empty string: callers that need a string write
 * `namespace ?? ''`.
 */

/** `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(obj: { metadata: { name?: string; namespace?: string } }): string {
  const ns = obj.metadata.namespace;
  return ns ? `${ns}/${obj.metadata.name ?? ''}` : (obj.metadata.name ?? '');
}

/** The key of `name` in `namespace` (cluster-scoped when the namespace is absent or empty). */
export function keyOf(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/** The namespace (absent for a cluster-scoped key) and name of a key. */
export function parseKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}
