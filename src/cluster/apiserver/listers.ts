/**
 * Listers for what the server consults on every request: the objects of one resource,
 * decoded once and kept until the store writes that resource again. kube-apiserver's admission
 * plugins read PriorityClasses, LimitRanges, ResourceQuotas, StorageClasses, RuntimeClasses,
 * webhook configurations and ValidatingAdmissionPolicies (and their bindings) from informers'
 * listers rather than list storage per request (plugin/pkg/admission/resourcequota/
 * resource_access.go, staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/generic/
 * policy_source.go, which marks its compiled policies dirty on any informer event), and its
 * RBAC authorizer reads roles and bindings the same way (plugin/pkg/auth/authorizer/rbac,
 * fed by the shared informer factory). Here the cache listens to the store's own write
 * stream, so it is never stale: a write is seen before its response.
 *
 * The cached objects are frozen and shared by every request: read them, copy what you change.
 */
import type { Api } from './api.ts';
import { storageKey } from './registry.ts';
import type { KubeObject, ResourceType } from './types.ts';

export class Lister {
  private readonly api: Api;
  private readonly group: string;
  private readonly version: string;
  private readonly resource: string;
  /** The store table this cache follows, once subscribed. */
  private storage: string | undefined;
  private all: readonly KubeObject[] | undefined;
  private byName: Map<string, KubeObject> | undefined;
  private readonly byNamespace = new Map<string, readonly KubeObject[]>();
  private readonly byNamespacedName = new Map<string, Map<string, KubeObject>>();

  constructor(api: Api, group: string, version: string, resource: string) {
    this.api = api;
    this.group = group;
    this.version = version;
    this.resource = resource;
  }

  /** Every object, or one namespace's. */
  list(namespace?: string): readonly KubeObject[] {
    const rt = this.resourceType();
    if (!rt) return [];
    if (namespace === undefined) {
      this.all ??= this.load(rt, undefined);
      return this.all;
    }
    let objs = this.byNamespace.get(namespace);
    if (!objs) {
      objs = this.load(rt, namespace);
      this.byNamespace.set(namespace, objs);
    }
    return objs;
  }

  /** An object by name: cluster-scoped, or in `namespace`. */
  get(name: string, namespace?: string): KubeObject | undefined {
    if (namespace !== undefined) {
      let names = this.byNamespacedName.get(namespace);
      if (!names) {
        names = new Map(this.list(namespace).map((o) => [o.metadata.name ?? '', o]));
        this.byNamespacedName.set(namespace, names);
      }
      return names.get(name);
    }
    if (!this.byName) {
      this.byName = new Map();
      for (const o of this.list()) this.byName.set(o.metadata.name ?? '', o);
    }
    return this.byName.get(name);
  }

  private resourceType(): ResourceType | undefined {
    const rt = this.api.registry.get(this.group, this.version, this.resource);
    if (rt && this.storage === undefined) {
      this.storage = storageKey(rt);
      // Every write of the resource (create, update, delete; dry runs never reach the store)
      // drops what it could change: the whole list and the namespace's.
      this.api.store.watch({
        storage: this.storage,
        filter: { matches: () => true },
        deliver: (_type, rec) => {
          this.all = undefined;
          this.byName = undefined;
          this.byNamespace.delete(rec.namespace);
          this.byNamespacedName.delete(rec.namespace);
        },
      });
    }
    return rt;
  }

  private load(rt: ResourceType, namespace: string | undefined): readonly KubeObject[] {
    return Object.freeze(this.api.list(rt, namespace).records.map((r) => deepFreeze(this.api.decode(rt, r))));
  }
}

/** Freezes a decoded JSON value throughout, so a plugin that writes into a shared object fails loudly. */
function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v)) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}
