/**
 * Maps a kind to its REST resource (client-go's RESTMapper): well-known built-ins from a
 * table, everything else (CRDs) through discovery of its group/version, cached and
 * refreshed on a miss so a CRD installed after start is found.
 */

import { isNotFound, NoKindMatchError } from './errors.ts';
import type { RestClient } from './rest.ts';
import type { KindRef } from './types.ts';

export interface ResourceInfo {
  apiVersion: string;
  kind: string;
  /** Plural resource name, e.g. `pods`. */
  plural: string;
  namespaced: boolean;
}

const BUILTINS: [string, string, string, boolean][] = [
  ['v1', 'Pod', 'pods', true],
  ['v1', 'Node', 'nodes', false],
  ['v1', 'Namespace', 'namespaces', false],
  ['v1', 'ConfigMap', 'configmaps', true],
  ['v1', 'Secret', 'secrets', true],
  ['v1', 'Service', 'services', true],
  ['v1', 'ServiceAccount', 'serviceaccounts', true],
  ['v1', 'Endpoints', 'endpoints', true],
  ['v1', 'Event', 'events', true],
  ['v1', 'PersistentVolumeClaim', 'persistentvolumeclaims', true],
  ['v1', 'ResourceQuota', 'resourcequotas', true],
  ['v1', 'LimitRange', 'limitranges', true],
  ['apps/v1', 'Deployment', 'deployments', true],
  ['apps/v1', 'ReplicaSet', 'replicasets', true],
  ['apps/v1', 'StatefulSet', 'statefulsets', true],
  ['apps/v1', 'DaemonSet', 'daemonsets', true],
  ['batch/v1', 'Job', 'jobs', true],
  ['batch/v1', 'CronJob', 'cronjobs', true],
  ['coordination.k8s.io/v1', 'Lease', 'leases', true],
  ['events.k8s.io/v1', 'Event', 'events', true],
  ['scheduling.k8s.io/v1', 'PriorityClass', 'priorityclasses', false],
  ['policy/v1', 'PodDisruptionBudget', 'poddisruptionbudgets', true],
  ['apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'customresourcedefinitions', false],
  ['admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', false],
  [
    'admissionregistration.k8s.io/v1',
    'ValidatingWebhookConfiguration',
    'validatingwebhookconfigurations',
    false,
  ],
  ['rbac.authorization.k8s.io/v1', 'Role', 'roles', true],
  ['rbac.authorization.k8s.io/v1', 'RoleBinding', 'rolebindings', true],
  ['rbac.authorization.k8s.io/v1', 'ClusterRole', 'clusterroles', false],
  ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'clusterrolebindings', false],
];

interface DiscoveryResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

export class RestMapper {
  private readonly known = new Map<string, ResourceInfo>();
  private readonly inflight = new Map<string, Promise<void>>();
  private readonly rest: RestClient;

  constructor(rest: RestClient) {
    this.rest = rest;
    for (const [apiVersion, kind, plural, namespaced] of BUILTINS) {
      this.register({ apiVersion, kind, plural, namespaced });
    }
  }

  register(info: ResourceInfo): void {
    this.known.set(`${info.apiVersion}/${info.kind}`, info);
  }

  /** The mapping if already known, without I/O. */
  peek(k: KindRef): ResourceInfo | undefined {
    return this.known.get(`${k.apiVersion}/${k.kind}`);
  }

  async resourceFor(k: KindRef): Promise<ResourceInfo> {
    const hit = this.peek(k);
    if (hit) return hit;
    await this.discover(k.apiVersion);
    const found = this.peek(k);
    if (!found) throw new NoKindMatchError(k);
    return found;
  }

  /** `/api/v1/namespaces/ns/pods/name/status` and friends. */
  static path(info: ResourceInfo, namespace?: string, name?: string, subresource?: string): string {
    const root = info.apiVersion.includes('/') ? `/apis/${info.apiVersion}` : `/api/${info.apiVersion}`;
    let p = root;
    if (info.namespaced && namespace) p += `/namespaces/${encodeURIComponent(namespace)}`;
    p += `/${info.plural}`;
    if (name !== undefined) p += `/${encodeURIComponent(name)}`;
    if (subresource) p += `/${subresource}`;
    return p;
  }

  private discover(apiVersion: string): Promise<void> {
    let p = this.inflight.get(apiVersion);
    if (!p) {
      const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      p = this.rest
        .request<{ resources?: DiscoveryResource[] }>({ method: 'GET', path })
        .then((list) => {
          for (const r of list.resources ?? []) {
            if (r.name.includes('/')) continue; // subresources
            this.register({ apiVersion, kind: r.kind, plural: r.name, namespaced: r.namespaced });
          }
        })
        // A group/version nobody serves (its CRD is not installed) has no kinds: resourceFor
        // then says NoKindMatch, as client-go's discovery-backed RESTMapper does.
        .catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        })
        .finally(() => this.inflight.delete(apiVersion));
      this.inflight.set(apiVersion, p);
    }
    return p;
  }
}
