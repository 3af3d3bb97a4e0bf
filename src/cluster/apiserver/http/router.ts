/**
 * Parses Kubernetes API paths:
 *   /api/v1/[namespaces/<ns>/]<resource>[/<name>[/<subresource>]]
 *   /apis/<group>/<version>/[namespaces/<ns>/]<resource>[/<name>[/<subresource>]]
 * Hand-written: the grammar is ambiguous around `namespaces/<x>` (a namespace object or
 * a namespaced path) and needs the registry to decide, which no generic router does.
 */
import type { ResourceRegistry } from '../registry.ts';
import type { ResourceType } from '../types.ts';

export interface ResourcePath {
  kind: 'resource';
  rt: ResourceType;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string;
}

export type ParsedPath =
  | ResourcePath
  | { kind: 'api' }
  | { kind: 'apis' }
  | { kind: 'group'; group: string }
  | { kind: 'groupVersion'; group: string; version: string }
  | { kind: 'unknownResource'; group: string; version: string; resource: string }
  | { kind: 'other'; path: string };

export function parsePath(pathname: string, registry: ResourceRegistry): ParsedPath {
  const segs = pathname
    .split('/')
    .filter((s) => s !== '')
    .map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (segs[0] === 'api') {
    if (segs.length === 1) return { kind: 'api' };
    group = '';
    version = segs[1]!;
    rest = segs.slice(2);
  } else if (segs[0] === 'apis') {
    if (segs.length === 1) return { kind: 'apis' };
    if (segs.length === 2) return { kind: 'group', group: segs[1]! };
    group = segs[1]!;
    version = segs[2]!;
    rest = segs.slice(3);
  } else {
    return { kind: 'other', path: pathname };
  }
  if (rest.length === 0) return { kind: 'groupVersion', group, version };
  // Deprecated `/watch/` prefix paths are normalised by the caller via ?watch=true.
  if (rest[0] === 'watch') rest = rest.slice(1);
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const maybe = registry.get(group, version, rest[2]!);
    const isNamespaceSub =
      group === '' && (rest[2] === 'status' || rest[2] === 'finalize') && rest.length === 3;
    if (!isNamespaceSub && (maybe?.namespaced || rest.length > 3)) {
      namespace = rest[1]!;
      rest = rest.slice(2);
    }
  }
  const resource = rest[0]!;
  const rt = registry.get(group, version, resource);
  if (!rt) return { kind: 'unknownResource', group, version, resource };
  return { kind: 'resource', rt, namespace, name: rest[1], subresource: rest[2] ?? '' };
}
