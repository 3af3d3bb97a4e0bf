/**
 * Simulated nodes: the kubelet side of every node of the embedded cluster, KWOK-style. It
 * registers the configured pools' Node objects, renews each node's Lease in kube-node-lease,
 * posts Ready, and adopts Nodes that users create with `kwok.x-k8s.io/node: fake` the same
 * way. Failures are simulated by stopping a node's kubelet (setReady false): the node
 * reports NotReady (or goes silent, Unreachable), and the node lifecycle controller taints it
 * and evicts pods whose tolerations run out.
 *
 * While a node's kubelet is down its KWOK annotation reads `stopped` instead of `fake`, so a
 * KWOK-compatible kubelet simulator (which manages only `fake` nodes) does not heal it.
 */
import { rfc3339 } from '../../kube/conditions.ts';
import { type Clock, realClock, setRepeating } from '../../lib/clock.ts';
import { random } from '../../lib/random.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { type ClusterClient, GVR, isConflict, isNotFound } from '../client.ts';
import { microTime, writeNodeLease } from '../kubelet/leases.ts';
import { AddressBook } from './addresses.ts';
import { DEFAULT_POOL_NAME, type NodeConfig, type Taint, validateNodeConfig } from './config.ts';
import { EventRecorder } from './events.ts';
import { NodeLifecycle } from './lifecycle.ts';
import {
  KUBELET_VERSION,
  KWOK_MANAGED_VALUE,
  KWOK_NODE_ANNOTATION,
  KWOK_STOPPED_VALUE,
  kubeletConditions,
  NODE_LEASE_NAMESPACE,
  type NodeCondition,
  nodeInfo,
  nodeObject,
  poolMembers,
  postConditions,
  type SimNodeSpec,
  unknownConditions,
} from './node-object.ts';
import type { NodesLog } from './taint-eviction.ts';

export interface NodesOptions {
  /** Every duration (lease renewal, grace periods, tolerationSeconds) is divided by this. Default 1. */
  timeScale?: number;
  /** Kubelet lease renewal interval before scaling (10 s). */
  leaseRenewIntervalMs?: number;
  /** Renew node Leases here (default true); false when another kubelet simulator renews them. */
  leases?: boolean;
  /** spec.leaseDurationSeconds written on leases (40). */
  leaseDurationSeconds?: number;
  /** Run the node lifecycle controller (taints, eviction, health, pod GC). Default true. */
  lifecycle?: boolean;
  /** node-monitor-grace-period before scaling (50 s). */
  nodeMonitorGracePeriodMs?: number;
  /** node-monitor-period before scaling (5 s). */
  nodeMonitorPeriodMs?: number;
  /** Pod GC quarantine for pods of deleted nodes, before scaling (40 s). */
  podGCQuarantineMs?: number;
  /** Manage user-created Nodes annotated `kwok.x-k8s.io/node: fake` (default true). */
  adopt?: boolean;
  /** Write events (NodeReady, NodeNotReady, TaintManagerEviction). Default true. */
  events?: boolean;
  log?: NodesLog;
  /** Lease times, health and eviction deadlines; default the real clock. */
  clock?: Clock;
}

/** A node added at run time: the pool's shape by default, any field overridable. */
export interface AddNodeSpec {
  name: string;
  /** Pool whose capacity, labels and taints are the defaults (and the instance-type label). */
  pool?: string;
  capacity?: Record<string, string | number>;
  allocatable?: Record<string, string | number>;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  taints?: Taint[];
}

/** How a node fails: its kubelet reports NotReady, or goes silent (Unreachable). */
export type NodeFailure = 'NotReady' | 'Unreachable';

export interface NodesHandle {
  /** Names of the nodes whose kubelet this component simulates. */
  names(): string[];
  addNode(spec: AddNodeSpec): Promise<KubeObject>;
  removeNode(name: string): Promise<void>;
  /** false: the kubelet reports Ready=False (or, with 'Unreachable', stops posting at all). */
  setReady(name: string, ready: boolean, failure?: NodeFailure): Promise<void>;
  /** kubectl cordon / uncordon. */
  cordon(name: string, unschedulable?: boolean): Promise<void>;
  stop(): Promise<void>;
}

interface Managed {
  name: string;
  uid: string;
  mode: 'Ready' | NodeFailure;
  leaseDue: number;
  cidr: string;
}

/** KWOK's defaults for a node that declares no capacity. */
const ADOPTED_CAPACITY = { cpu: '1k', memory: '1Ti', pods: '1M' };

export async function startNodes(
  client: ClusterClient,
  config: NodeConfig,
  opts: NodesOptions = {},
): Promise<NodesHandle> {
  const timeScale = opts.timeScale ?? 1;
  if (!(timeScale > 0)) throw new Error(`timeScale must be > 0, got ${timeScale}`);
  const log: NodesLog = opts.log ?? (() => {});
  const clock = opts.clock ?? realClock;
  const renewMs = (opts.leaseRenewIntervalMs ?? 10_000) / timeScale;
  const leaseDuration = opts.leaseDurationSeconds ?? 40;
  const events = opts.events !== false;
  const evLog = (msg: string, f: Record<string, unknown>) => log('debug', msg, f);
  const controllerEvents = events
    ? new EventRecorder(client, { component: 'node-controller' }, evLog, clock)
    : undefined;
  const evictionEvents = events
    ? new EventRecorder(client, { component: 'taint-eviction-controller' }, evLog, clock)
    : undefined;
  const kubeletEvents = events
    ? new EventRecorder(client, { component: 'kubelet' }, evLog, clock)
    : undefined;
  const addresses = new AddressBook();
  const managed = new Map<string, Managed>();
  const inflight = new Set<Promise<unknown>>();
  let stopped = false;

  const track = <T>(p: Promise<T>): Promise<T> => {
    inflight.add(p);
    void p.finally(() => inflight.delete(p)).catch(() => {});
    return p;
  };

  const lifecycle =
    opts.lifecycle === false
      ? undefined
      : new NodeLifecycle(client, {
          timeScale,
          gracePeriodMs: opts.nodeMonitorGracePeriodMs ?? 50_000,
          monitorPeriodMs: opts.nodeMonitorPeriodMs ?? 5_000,
          podGCQuarantineMs: opts.podGCQuarantineMs ?? 40_000,
          recorder: controllerEvents,
          evictionRecorder: evictionEvents,
          log,
          clock,
        });

  const nextDue = () => clock.now() + renewMs * (1 - 0.04 * random());

  async function renewLease(m: Managed): Promise<void> {
    if (opts.leases === false) return;
    // A Lease created by another writer between our update and our create is renewed next time.
    await writeNodeLease(client, m.name, m.uid, leaseDuration, microTime(clock.now())).catch((e: unknown) => {
      if (!isConflict(e)) throw e;
    });
  }

  const leaseTimer = setRepeating(
    clock,
    () => {
      const now = clock.now();
      for (const m of managed.values()) {
        if (m.mode === 'Unreachable' || m.leaseDue > now) continue;
        m.leaseDue = nextDue();
        track(renewLease(m)).catch((err: unknown) =>
          log('warn', 'lease renewal failed', { node: m.name, error: String(err) }),
        );
      }
    },
    // A tenth of the interval: renewals are at most that late, and a long interval (a
    // simulation's) does not wake the clock every second.
    Math.max(5, renewMs / 10),
  );

  function manage(node: KubeObject, cidr: string): Managed {
    const name = node.metadata.name ?? '';
    let m = managed.get(name);
    if (!m) {
      m = { name, uid: node.metadata.uid ?? '', mode: 'Ready', leaseDue: nextDue(), cidr };
      managed.set(name, m);
    } else m.uid = node.metadata.uid ?? m.uid;
    return m;
  }

  async function register(spec: SimNodeSpec, cidr: string): Promise<KubeObject> {
    let node: KubeObject;
    try {
      node = await client.create(GVR.nodes, nodeObject(spec, rfc3339()));
    } catch (err) {
      // A node that survived a restart of this component is taken over as it is.
      if (!isConflict(err)) throw err;
      node = client.get(GVR.nodes, '', spec.name)!;
    }
    const m = manage(node, cidr);
    await renewLease(m);
    return node;
  }

  /** A user's Node with the KWOK annotation: fill in what a kubelet would post, then keep it alive. */
  function adopt(node: KubeObject): void {
    const name = node.metadata.name ?? '';
    const m = manage(node, config.nodeCIDR);
    m.leaseDue = 0;
    const ready = (node.status as { conditions?: NodeCondition[] } | undefined)?.conditions?.find(
      (c) => c.type === 'Ready',
    );
    if (ready?.status === 'True') return;
    track(
      (async () => {
        await null;
        await client.mutate(
          GVR.nodes,
          '',
          name,
          (cur) => {
            cur.status ??= {};
            const st = cur.status as Record<string, unknown>;
            const capacity =
              (st.capacity as Record<string, string> | undefined) ??
              (st.allocatable as Record<string, string> | undefined);
            st.capacity = capacity ?? { ...ADOPTED_CAPACITY };
            st.allocatable ??= { ...(st.capacity as Record<string, string>) };
            st.conditions = kubeletConditions(
              true,
              rfc3339(),
              (st.conditions as NodeCondition[] | undefined) ?? [],
            );
            st.addresses ??= [
              { type: 'InternalIP', address: addresses.address(m.cidr, name) },
              { type: 'Hostname', address: name },
            ];
            st.daemonEndpoints ??= { kubeletEndpoint: { Port: 10250 } };
            st.nodeInfo ??= nodeInfo();
            const info = st.nodeInfo as Record<string, string>;
            info.kubeletVersion ||= KUBELET_VERSION;
            st.phase = 'Running';
          },
          'status',
        );
      })(),
    ).catch((err: unknown) => {
      if (!isNotFound(err)) log('warn', 'cannot adopt node', { node: name, error: String(err) });
    });
  }

  function onNode(type: string, node: KubeObject): void {
    const name = node.metadata.name ?? '';
    if (type === 'DELETED') {
      if (managed.get(name)?.uid === node.metadata.uid) forget(name);
      return;
    }
    const ann = node.metadata.annotations?.[KWOK_NODE_ANNOTATION];
    const m = managed.get(name);
    if (!m) {
      if (ann === KWOK_MANAGED_VALUE && opts.adopt !== false) adopt(node);
      return;
    }
    m.uid = node.metadata.uid ?? m.uid;
    // KWOK semantics: a node that loses the annotation is no longer simulated.
    if (ann !== KWOK_MANAGED_VALUE && ann !== KWOK_STOPPED_VALUE) forget(name);
  }

  function forget(name: string): void {
    managed.delete(name);
    addresses.release(name);
  }

  // Register the configured pools, then follow users' nodes.
  for (const pool of config.pools) {
    for (const spec of poolMembers(pool, (cidr, n) => addresses.address(cidr, n)))
      await register(spec, pool.cidr);
  }
  const stopWatch = client.watch(GVR.nodes, onNode, { shared: true });

  function mustManage(name: string): Managed {
    const m = managed.get(name);
    if (!m) throw new Error(`node ${name} is not a simulated node of this cluster`);
    return m;
  }

  async function setAnnotation(name: string, value: string): Promise<void> {
    await client.mutate(GVR.nodes, '', name, (cur) => {
      cur.metadata.annotations ??= {};
      const a = cur.metadata.annotations;
      if (a[KWOK_NODE_ANNOTATION] === value) return;
      a[KWOK_NODE_ANNOTATION] = value;
    });
  }

  return {
    names: () => [...managed.keys()],

    async addNode(spec: AddNodeSpec): Promise<KubeObject> {
      const base = config.pools.find((p) => p.name === (spec.pool ?? DEFAULT_POOL_NAME)) ?? config.pools[0];
      const poolName = spec.pool ?? base?.name ?? DEFAULT_POOL_NAME;
      const checked = validateNodeConfig({
        nodeCIDR: config.nodeCIDR,
        pools: [
          {
            name: poolName,
            namePrefix: 'n',
            count: 1,
            capacity: spec.capacity ?? base?.capacity ?? { cpu: '32', memory: '256Gi', pods: '110' },
            ...((spec.allocatable ?? (spec.capacity ? undefined : base?.allocatable))
              ? { allocatable: spec.allocatable ?? base?.allocatable }
              : {}),
            labels: spec.labels ?? base?.labels ?? {},
            annotations: spec.annotations ?? base?.annotations ?? {},
            taints: spec.taints ?? base?.taints ?? [],
            ...(base ? { cidr: base.cidr } : {}),
          },
        ],
      }).pools[0]!;
      const node = await register(
        {
          name: spec.name,
          pool: poolName,
          capacity: checked.capacity,
          allocatable: checked.allocatable,
          labels: checked.labels,
          annotations: checked.annotations,
          taints: checked.taints,
          address: addresses.address(checked.cidr, spec.name),
        },
        checked.cidr,
      );
      return node;
    },

    async removeNode(name: string): Promise<void> {
      forget(name);
      await client.delete(GVR.nodes, '', name);
      await client.delete(GVR.leases, NODE_LEASE_NAMESPACE, name);
    },

    async setReady(name: string, ready: boolean, failure: NodeFailure = 'NotReady'): Promise<void> {
      const m = mustManage(name);
      if (ready) {
        m.mode = 'Ready';
        await renewLease(m);
        m.leaseDue = nextDue();
        await setAnnotation(name, KWOK_MANAGED_VALUE);
        const node = await postConditions(client, name, (prev, now) => kubeletConditions(true, now, prev));
        kubeletEvents?.event(node, 'Normal', 'NodeReady', `Node ${name} status is now: NodeReady`);
        return;
      }
      m.mode = failure;
      await setAnnotation(name, KWOK_STOPPED_VALUE);
      if (failure === 'NotReady') {
        const node = await postConditions(client, name, (prev, now) => kubeletConditions(false, now, prev));
        kubeletEvents?.event(node, 'Normal', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
      } else {
        // What the lifecycle controller writes once the grace period has passed, done at once.
        await postConditions(client, name, unknownConditions);
      }
    },

    async cordon(name: string, unschedulable = true): Promise<void> {
      await client.mutate(GVR.nodes, '', name, (cur) => {
        cur.spec ??= {};
        const spec = cur.spec as { unschedulable?: boolean };
        if (unschedulable) spec.unschedulable = true;
        else delete spec.unschedulable;
      });
    },

    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      stopWatch();
      leaseTimer.cancel();
      await lifecycle?.stop();
      while (inflight.size > 0) await Promise.allSettled([...inflight]);
      await Promise.all([controllerEvents?.stop(), evictionEvents?.stop(), kubeletEvents?.stop()]);
    },
  };
}
