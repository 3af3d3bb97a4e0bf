/**
 * The in-process Kubernetes API client of the simulated data plane (nodes, scheduler,
 * kubelet, workload controllers, garbage collector, stand-ins). It calls the API
 * server's generic API directly — the same code path an HTTP request takes after
 * decoding, so the same validation, admission, resourceVersions and watch events — but
 * without serialization and sockets, which is what lets one process simulate 1,000
 * nodes and 100,000 pods. Each component could be swapped for the real one talking HTTP.
 * Each write holds the server's clock until it settles, so a virtual clock
 * (src/lib/virtual-clock.ts) never moves on under a write in flight.
 */

import { clone, shared } from '../lib/json.ts';
import { type Api, type DeleteOptions, type ListOptions, objectKey } from './apiserver/api.ts';
import { bindPod } from './apiserver/binding.ts';
import { ApiError } from './apiserver/errors.ts';
import type { PatchRequest } from './apiserver/patcher.ts';
import { storageKey } from './apiserver/registry.ts';
import type { EventType } from './apiserver/store.ts';
import type { KubeObject, ResourceType } from './apiserver/types.ts';

/** group/version/resource, e.g. { group: 'apps', version: 'v1', resource: 'deployments' }. */
export interface Gvr {
  group: string;
  version: string;
  resource: string;
}

export const GVR = {
  pods: { group: '', version: 'v1', resource: 'pods' },
  nodes: { group: '', version: 'v1', resource: 'nodes' },
  namespaces: { group: '', version: 'v1', resource: 'namespaces' },
  events: { group: '', version: 'v1', resource: 'events' },
  /** The same Events as events.k8s.io/v1 (one storage): what kube-scheduler writes. */
  eventsV1: { group: 'events.k8s.io', version: 'v1', resource: 'events' },
  leases: { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' },
  jobs: { group: 'batch', version: 'v1', resource: 'jobs' },
  deployments: { group: 'apps', version: 'v1', resource: 'deployments' },
  replicasets: { group: 'apps', version: 'v1', resource: 'replicasets' },
  statefulsets: { group: 'apps', version: 'v1', resource: 'statefulsets' },
  daemonsets: { group: 'apps', version: 'v1', resource: 'daemonsets' },
  controllerrevisions: { group: 'apps', version: 'v1', resource: 'controllerrevisions' },
  replicationcontrollers: { group: '', version: 'v1', resource: 'replicationcontrollers' },
  cronjobs: { group: 'batch', version: 'v1', resource: 'cronjobs' },
  poddisruptionbudgets: { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets' },
  services: { group: '', version: 'v1', resource: 'services' },
  endpoints: { group: '', version: 'v1', resource: 'endpoints' },
  endpointslices: { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' },
  persistentvolumeclaims: { group: '', version: 'v1', resource: 'persistentvolumeclaims' },
  persistentvolumes: { group: '', version: 'v1', resource: 'persistentvolumes' },
  storageclasses: { group: 'storage.k8s.io', version: 'v1', resource: 'storageclasses' },
} as const satisfies Record<string, Gvr>;

export type WatchHandler = (type: EventType, obj: KubeObject) => void;

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /**
   * Receive the object every shared watcher of the same event receives, parsed once, instead
   * of a private copy. The handler, and everything it passes the object to or keeps it for,
   * must never write to it.
   */
  shared?: boolean;
}

export class ClusterClient {
  readonly api: Api;
  /** The user recorded in managedFields and admission requests. */
  readonly user: string;

  constructor(api: Api, user: string) {
    this.api = api;
    this.user = user;
  }

  /** A client acting as another component (its own user/field manager). */
  as(user: string): ClusterClient {
    return new ClusterClient(this.api, user);
  }

  rt(gvr: Gvr): ResourceType {
    const rt = this.api.registry.get(gvr.group, gvr.version, gvr.resource);
    if (!rt) throw new Error(`resource ${gvr.resource}.${gvr.group}/${gvr.version} is not served`);
    return rt;
  }

  served(gvr: Gvr): boolean {
    return this.api.registry.get(gvr.group, gvr.version, gvr.resource) !== undefined;
  }

  get<T extends KubeObject = KubeObject>(gvr: Gvr, namespace: string, name: string): T | undefined {
    return this.api.tryGet(this.rt(gvr), namespace, name) as T | undefined;
  }

  /** The resourceVersion an object is stored at, without decoding it; undefined when absent. */
  storedVersion(gvr: Gvr, namespace: string, name: string): string | undefined {
    const rt = this.rt(gvr);
    const rec = this.api.store.get(storageKey(rt), objectKey(rt, namespace, name));
    return rec ? String(rec.rv) : undefined;
  }

  list<T extends KubeObject = KubeObject>(gvr: Gvr, namespace?: string, opts: ListOptions = {}): T[] {
    const rt = this.rt(gvr);
    return this.api.list(rt, namespace, opts).records.map((r) => this.api.decode(rt, r) as T);
  }

  /**
   * Watches from now, first delivering every existing object as ADDED (synchronously,
   * so no event can fall between the listing and the watch). Returns a stop function.
   */
  watch(gvr: Gvr, handler: WatchHandler, opts: WatchOptions = {}): () => void {
    const rt = this.rt(gvr);
    const parse = opts.shared ? parseShared : JSON.parse;
    return this.api.watch(
      rt,
      opts.namespace,
      { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector },
      {
        event: (type, json, _rv, parsed) => {
          if (type === 'BOOKMARK') return;
          // The stored record's own object when the event carries it: shared as it is, or
          // copied (cheaper than parsing).
          if (parsed) handler(type, opts.shared ? parsed : clone(parsed));
          else handler(type, parse(json) as KubeObject);
        },
      },
    );
  }

  /** Runs one write, holding a virtual clock until it settles. */
  private held<T>(write: () => Promise<T>): Promise<T> {
    const clock = this.api.clock;
    if (!clock.hold) return write();
    const release = clock.hold(this.user);
    try {
      return write().finally(release);
    } catch (err) {
      release();
      throw err;
    }
  }

  create<T extends KubeObject = KubeObject>(gvr: Gvr, obj: KubeObject): Promise<T> {
    return this.held(
      () =>
        this.api.create(this.rt(gvr), obj.metadata.namespace ?? '', clone(obj), {
          user: this.user,
          fieldManager: this.user,
        }) as Promise<T>,
    );
  }

  update<T extends KubeObject = KubeObject>(gvr: Gvr, obj: KubeObject, subresource = ''): Promise<T> {
    return this.held(
      () =>
        this.api.update(this.rt(gvr), obj.metadata.namespace ?? '', obj.metadata.name!, clone(obj), {
          user: this.user,
          fieldManager: this.user,
          subresource,
        }) as Promise<T>,
    );
  }

  /**
   * Read-modify-write without a resourceVersion precondition (retries internally on races).
   * `fn` changes a fresh copy; what it returns (or the copy) is stored as it is. Updates and
   * patches resolve to the stored object, shared with watchers: read it, do not write to it.
   */
  mutate<T extends KubeObject = KubeObject>(
    gvr: Gvr,
    namespace: string,
    name: string,
    fn: (obj: T) => unknown,
    subresource = '',
  ): Promise<T> {
    return this.held(
      () =>
        this.api.updateWith(
          this.rt(gvr),
          namespace,
          name,
          { user: this.user, fieldManager: this.user, subresource },
          (cur) => {
            const next = fn(cur as T);
            return (next ?? cur) as KubeObject;
          },
          false,
        ) as Promise<T>,
    );
  }

  patch<T extends KubeObject = KubeObject>(
    gvr: Gvr,
    namespace: string,
    name: string,
    type: 'merge' | 'json' | 'strategic',
    patch: unknown,
    subresource = '',
  ): Promise<T> {
    const contentType =
      type === 'merge'
        ? 'application/merge-patch+json'
        : type === 'json'
          ? 'application/json-patch+json'
          : 'application/strategic-merge-patch+json';
    const req: PatchRequest = { contentType, body: JSON.stringify(patch) };
    return this.held(
      () =>
        this.api.patch(this.rt(gvr), namespace, name, req, {
          user: this.user,
          fieldManager: this.user,
          subresource,
        }) as Promise<T>,
    );
  }

  async delete(
    gvr: Gvr,
    namespace: string,
    name: string,
    opts: Omit<DeleteOptions, 'user'> = {},
  ): Promise<boolean> {
    try {
      const r = await this.held(() =>
        this.api.delete(this.rt(gvr), namespace, name, { ...opts, user: this.user }),
      );
      return r.deleted;
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return false;
      throw err;
    }
  }

  /** POST pods/<name>/binding. */
  bind(namespace: string, name: string, node: string): Promise<void> {
    const binding = {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name, namespace },
      target: { kind: 'Node', name: node },
    };
    return this.held(() =>
      bindPod(this.api, namespace, binding, { user: this.user, fieldManager: this.user }),
    );
  }
}

/**
 * The last event parsed for shared watchers. The store hands every watcher of a write the same
 * string (the fan-out is synchronous), so one slot parses each event once: most of the data
 * plane watches pods and nodes, and a parse per watcher was a large share of its CPU.
 */
let lastShared: { json: string; obj: KubeObject } | undefined;

function parseShared(json: string): KubeObject {
  if (lastShared?.json === json) return lastShared.obj;
  const obj = shared(JSON.parse(json) as KubeObject);
  lastShared = { json, obj };
  return obj;
}

export function isNotFound(err: unknown): boolean {
  return err instanceof ApiError && err.code === 404;
}

export function isConflict(err: unknown): boolean {
  return err instanceof ApiError && err.code === 409;
}
