/**
 * The garbage collector (pkg/controller/garbagecollector). It watches every served,
 * deletable resource (core and events.k8s.io Events excepted, as upstream), keeps a graph of
 * objects by uid with their dependents indexed by owner uid, and:
 *  - deletes (background, or as the object's own finalizers say) an object whose owners
 *    are all gone, and strips references to missing owners from objects that still have one;
 *  - for an owner deleted with the `foregroundDeletion` finalizer, deletes its dependents
 *    (foreground when they have dependents of their own) and removes the finalizer once no
 *    dependent with blockOwnerDeletion=true remains;
 *  - for an owner deleted with the `orphan` finalizer, removes the dependents' references to
 *    it, then the finalizer.
 * Resources added at run time (CRDs) are picked up when the registry changes.
 */
import type { Clock } from '../../lib/clock.ts';
import type { KubeObject, OwnerReference, ResourceType } from '../apiserver/types.ts';
import { type ClusterClient, type Gvr, isConflict, isNotFound } from '../client.ts';
import type { RunningController } from './context.ts';
import { gvrKey, type InformerFactory } from './informer.ts';
import { type LogFn, Loop } from './loop.ts';

const FOREGROUND = 'foregroundDeletion';
const ORPHAN = 'orphan';

interface GraphNode {
  uid: string;
  gvr: Gvr;
  namespace: string;
  name: string;
  owners: OwnerReference[];
  deleting: boolean;
  /** Being deleted with the foregroundDeletion finalizer. */
  deletingDependents: boolean;
  /** Being deleted with the orphan finalizer. */
  orphaning: boolean;
}

function hasFinalizer(obj: KubeObject, f: string): boolean {
  return obj.metadata.finalizers?.includes(f) ?? false;
}

function toNode(gvr: Gvr, obj: KubeObject): GraphNode {
  const deleting = !!obj.metadata.deletionTimestamp;
  return {
    uid: obj.metadata.uid!,
    gvr,
    namespace: obj.metadata.namespace ?? '',
    name: obj.metadata.name!,
    owners: obj.metadata.ownerReferences ?? [],
    deleting,
    deletingDependents: deleting && hasFinalizer(obj, FOREGROUND),
    orphaning: deleting && hasFinalizer(obj, ORPHAN),
  };
}

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf('/');
  return i < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

export interface GarbageCollectorOptions {
  workers?: number;
  log?: LogFn;
  clock?: Clock;
}

export class GarbageCollector implements RunningController {
  private readonly client: ClusterClient;
  private readonly informers: InformerFactory;
  private readonly log: LogFn;
  private readonly loop: Loop;
  private readonly nodes = new Map<string, GraphNode>();
  private readonly dependents = new Map<string, Set<string>>();
  private readonly monitors = new Map<string, { gvr: Gvr; unsubscribe: () => void; owned: boolean }>();
  private readonly onRegistryChange = () => this.syncMonitors(true);

  constructor(client: ClusterClient, informers: InformerFactory, opts: GarbageCollectorOptions = {}) {
    this.client = client;
    this.informers = informers;
    this.log = opts.log ?? (() => {});
    this.loop = new Loop({
      name: 'garbagecollector',
      workers: opts.workers ?? 4,
      log: this.log,
      clock: opts.clock,
      sync: (k) => this.sync(k),
    });
    this.syncMonitors(false);
    this.client.api.registry.on('changed', this.onRegistryChange);
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    this.client.api.registry.off('changed', this.onRegistryChange);
    for (const m of this.monitors.values()) {
      m.unsubscribe();
      if (m.owned) this.informers.drop(m.gvr);
    }
    this.monitors.clear();
    await this.loop.stop();
  }

  /** Objects in the graph, for tests and metrics. */
  get graphSize(): number {
    return this.nodes.size;
  }

  // ---------- monitors ----------

  /** The resources to watch: one served version per group/resource, listable, watchable, deletable. */
  private monitoredResources(): Map<string, Gvr> {
    const reg = this.client.api.registry;
    const out = new Map<string, Gvr>();
    const byStorage = new Map<string, ResourceType[]>();
    for (const rt of reg.all()) {
      if (rt.resource.includes('/')) continue;
      if (rt.resource === 'events' && (rt.group === '' || rt.group === 'events.k8s.io')) continue;
      if (!['list', 'watch', 'delete'].every((v) => rt.verbs.includes(v))) continue;
      const k = `${rt.group}/${rt.resource}`;
      const l = byStorage.get(k) ?? [];
      l.push(rt);
      byStorage.set(k, l);
    }
    for (const [k, rts] of byStorage) {
      const order = reg.versions(rts[0]!.group);
      const rt =
        rts.find((r) => r.storage) ??
        [...rts].sort((a, b) => order.indexOf(a.version) - order.indexOf(b.version))[0]!;
      out.set(k, { group: rt.group, version: rt.version, resource: rt.resource });
    }
    return out;
  }

  private syncMonitors(startNew: boolean): void {
    const want = this.monitoredResources();
    for (const [k, m] of this.monitors) {
      const w = want.get(k);
      if (w && gvrKey(w) === gvrKey(m.gvr)) continue;
      m.unsubscribe();
      if (m.owned) this.informers.drop(m.gvr);
      this.monitors.delete(k);
      this.forgetResource(m.gvr);
    }
    for (const [k, gvr] of want) {
      if (this.monitors.has(k)) continue;
      const owned = !this.informers.has(gvr);
      const inf = this.informers.events(gvr);
      const unsubscribe = inf.subscribe((type, obj) => this.onEvent(gvr, type, obj));
      this.monitors.set(k, { gvr, unsubscribe, owned });
      if (startNew) inf.start();
    }
  }

  /** A resource stopped being served (CRD deleted): its objects are gone for the graph. */
  private forgetResource(gvr: Gvr): void {
    for (const n of [...this.nodes.values()]) {
      if (n.gvr.group === gvr.group && n.gvr.resource === gvr.resource) this.removeNode(n);
    }
  }

  // ---------- graph ----------

  private onEvent(gvr: Gvr, type: string, obj: KubeObject): void {
    const uid = obj.metadata.uid;
    if (!uid) return;
    if (type === 'DELETED') {
      const n = this.nodes.get(uid);
      if (n) this.removeNode(n);
      return;
    }
    const old = this.nodes.get(uid);
    const node = toNode(gvr, obj);
    this.nodes.set(uid, node);
    const oldOwners = new Map((old?.owners ?? []).map((r) => [r.uid, r]));
    const newOwners = new Map(node.owners.map((r) => [r.uid, r]));
    for (const [ou, ref] of oldOwners) {
      const now = newOwners.get(ou);
      if (!now) {
        this.unindex(ou, uid);
        this.enqueueIfDeletingDependents(ou);
      } else if (ref.blockOwnerDeletion && !now.blockOwnerDeletion) {
        this.enqueueIfDeletingDependents(ou);
      }
    }
    let dangling = false;
    for (const ou of newOwners.keys()) {
      if (!oldOwners.has(ou)) {
        let s = this.dependents.get(ou);
        if (!s) {
          s = new Set();
          this.dependents.set(ou, s);
        }
        s.add(uid);
      }
      if (!this.nodes.has(ou)) dangling = true;
    }
    // An owner the graph has never seen may be gone: check it (upstream's virtual nodes).
    if (dangling) this.enqueue(`d:${uid}`);
    if (node.orphaning && !old?.orphaning) this.enqueue(`o:${uid}`);
    if (node.deletingDependents && !old?.deletingDependents) {
      for (const d of this.dependents.get(uid) ?? []) this.enqueue(`d:${d}`);
      this.enqueue(`d:${uid}`);
    }
  }

  private removeNode(n: GraphNode): void {
    this.nodes.delete(n.uid);
    for (const r of n.owners) {
      this.unindex(r.uid, n.uid);
      this.enqueueIfDeletingDependents(r.uid);
    }
    for (const d of this.dependents.get(n.uid) ?? []) this.enqueue(`d:${d}`);
  }

  private unindex(owner: string, dep: string): void {
    const s = this.dependents.get(owner);
    if (!s) return;
    s.delete(dep);
    if (s.size === 0) this.dependents.delete(owner);
  }

  private enqueueIfDeletingDependents(uid: string): void {
    if (this.nodes.get(uid)?.deletingDependents) this.enqueue(`d:${uid}`);
  }

  /** Keys queued before start wait in the loop until its workers run. */
  private enqueue(key: string): void {
    this.loop.enqueue(key);
  }

  // ---------- workers ----------

  private async sync(key: string): Promise<void> {
    const uid = key.slice(2);
    if (key.startsWith('o:')) return this.attemptToOrphan(uid);
    return this.attemptToDelete(uid);
  }

  private async attemptToDelete(uid: string): Promise<void> {
    const node = this.nodes.get(uid);
    if (!node) return;
    const latest = this.client.get(node.gvr, node.namespace, node.name);
    if (!latest || latest.metadata.uid !== uid) return;
    if (latest.metadata.deletionTimestamp) {
      if (hasFinalizer(latest, FOREGROUND)) await this.processDeletingDependents(node);
      return;
    }
    const owners = latest.metadata.ownerReferences ?? [];
    if (owners.length === 0) return;
    const solid: OwnerReference[] = [];
    const dangling: OwnerReference[] = [];
    const waiting: OwnerReference[] = [];
    for (const ref of owners) {
      const state = this.ownerState(ref, node);
      if (state === 'absent') dangling.push(ref);
      else if (state === 'deletingDependents') waiting.push(ref);
      else solid.push(ref);
    }
    if (solid.length > 0) {
      if (dangling.length === 0 && waiting.length === 0) return;
      const drop = new Set([...dangling, ...waiting].map((r) => r.uid));
      await this.mutate(node, (cur) => {
        const refs = (cur.metadata.ownerReferences ?? []).filter((r) => !drop.has(r.uid));
        if (refs.length) cur.metadata.ownerReferences = refs;
        else delete cur.metadata.ownerReferences;
      });
      return;
    }
    if (waiting.length > 0 && (this.dependents.get(uid)?.size ?? 0) > 0) {
      for (const d of this.dependents.get(uid) ?? []) {
        if (this.nodes.get(d)?.deletingDependents) {
          // An owner and a dependent both waiting on each other: stop this object from blocking.
          await this.mutate(node, (cur) => {
            for (const r of cur.metadata.ownerReferences ?? [])
              if (r.blockOwnerDeletion) r.blockOwnerDeletion = false;
          });
          break;
        }
      }
      await this.deleteObject(node, 'Foreground');
      return;
    }
    const policy = hasFinalizer(latest, ORPHAN)
      ? 'Orphan'
      : hasFinalizer(latest, FOREGROUND)
        ? 'Foreground'
        : 'Background';
    await this.deleteObject(node, policy);
  }

  /** Whether an owner exists: the graph knows every watched object; others are looked up live. */
  private ownerState(ref: OwnerReference, dependent: GraphNode): 'absent' | 'deletingDependents' | 'present' {
    const known = this.nodes.get(ref.uid);
    if (known) return known.deletingDependents ? 'deletingDependents' : 'present';
    const { group, version } = splitApiVersion(ref.apiVersion);
    const reg = this.client.api.registry;
    const rt =
      reg.byKind(group, version, ref.kind) ??
      reg.all().find((r) => r.group === group && r.kind === ref.kind && !r.resource.includes('/'));
    // An owner kind nobody serves cannot be judged; upstream retries it forever, we keep the dependent.
    if (!rt) return 'present';
    if (rt.namespaced && dependent.namespace === '') return 'absent';
    const owner = this.client.get(
      { group: rt.group, version: rt.version, resource: rt.resource },
      rt.namespaced ? dependent.namespace : '',
      ref.name,
    );
    if (!owner || owner.metadata.uid !== ref.uid) return 'absent';
    return owner.metadata.deletionTimestamp && hasFinalizer(owner, FOREGROUND)
      ? 'deletingDependents'
      : 'present';
  }

  /** processDeletingDependentsItem: drop the foreground finalizer once nothing blocks. */
  private async processDeletingDependents(node: GraphNode): Promise<void> {
    const blocking: GraphNode[] = [];
    for (const d of this.dependents.get(node.uid) ?? []) {
      const dep = this.nodes.get(d);
      if (!dep) continue;
      if (dep.owners.some((r) => r.uid === node.uid && r.blockOwnerDeletion === true)) blocking.push(dep);
    }
    if (blocking.length === 0) {
      await this.removeFinalizer(node, FOREGROUND);
      return;
    }
    for (const dep of blocking) if (!dep.deletingDependents) this.enqueue(`d:${dep.uid}`);
  }

  /** attemptToOrphan: dependents forget the owner, then the owner loses its orphan finalizer. */
  private async attemptToOrphan(uid: string): Promise<void> {
    const node = this.nodes.get(uid);
    if (!node) return;
    for (const d of [...(this.dependents.get(uid) ?? [])]) {
      const dep = this.nodes.get(d);
      if (!dep) continue;
      await this.mutate(dep, (cur) => {
        const refs = (cur.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid);
        if (refs.length) cur.metadata.ownerReferences = refs;
        else delete cur.metadata.ownerReferences;
      });
    }
    await this.removeFinalizer(node, ORPHAN);
  }

  private async removeFinalizer(node: GraphNode, finalizer: string): Promise<void> {
    await this.mutate(node, (cur) => {
      const f = (cur.metadata.finalizers ?? []).filter((x) => x !== finalizer);
      if (f.length) cur.metadata.finalizers = f;
      else delete cur.metadata.finalizers;
    });
  }

  /** Read-modify-write of the object the node stands for; a vanished or replaced object is left alone. */
  private async mutate(node: GraphNode, fn: (cur: KubeObject) => void): Promise<void> {
    try {
      await this.client.mutate(node.gvr, node.namespace, node.name, (cur) => {
        if (cur.metadata.uid !== node.uid) return;
        fn(cur);
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  private async deleteObject(node: GraphNode, policy: 'Background' | 'Foreground' | 'Orphan'): Promise<void> {
    try {
      await this.client.delete(node.gvr, node.namespace, node.name, {
        propagationPolicy: policy,
        preconditions: { uid: node.uid },
      });
      this.log('debug', 'garbagecollector: deleted', {
        resource: node.gvr.resource,
        namespace: node.namespace,
        name: node.name,
        policy,
      });
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return;
      throw err;
    }
  }
}
