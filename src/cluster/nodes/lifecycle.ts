/**
 * A minimal node lifecycle controller (kube-controller-manager's nodelifecycle, taint
 * eviction and pod GC, for every Node in the cluster):
 * - health: a node whose Lease and Ready heartbeat have not moved for the grace period gets
 *   all conditions Unknown ("Kubelet stopped posting node status.") and its pods Ready=False;
 * - taints by condition: Ready=False → node.kubernetes.io/not-ready, Ready=Unknown →
 *   node.kubernetes.io/unreachable (NoSchedule and NoExecute), spec.unschedulable →
 *   node.kubernetes.io/unschedulable:NoSchedule; removed again when the condition clears;
 * - NoExecute eviction (taint-eviction.ts);
 * - pods bound to a deleted node are force-deleted after a quarantine.
 * All durations are divided by the time scale.
 */
import { rfc3339 } from '../../kube/conditions.ts';
import { type Clock, setRepeating, type TimerHandle } from '../../lib/clock.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { type ClusterClient, GVR, isNotFound } from '../client.ts';
import type { Taint } from './config.ts';
import type { EventRecorder } from './events.ts';
import {
  NODE_LEASE_NAMESPACE,
  nodeTaints,
  postConditions,
  readyCondition,
  TAINT_NOT_READY,
  TAINT_UNREACHABLE,
  TAINT_UNSCHEDULABLE,
  unknownConditions,
} from './node-object.ts';
import { type NodesLog, setDisruptionTarget, TaintEviction } from './taint-eviction.ts';

export interface LifecycleOptions {
  timeScale: number;
  /** node-monitor-grace-period (50 s since 1.32). */
  gracePeriodMs: number;
  /** node-monitor-period (5 s). */
  monitorPeriodMs: number;
  /** Pod GC's quarantine before deleting pods of a vanished node (40 s). */
  podGCQuarantineMs: number;
  recorder?: EventRecorder;
  evictionRecorder?: EventRecorder;
  log: NodesLog;
  clock: Clock;
}

interface Health {
  /** When a sign of life was last observed (ms, local clock). */
  probe: number;
  leaseRenew: string | undefined;
  heartbeat: string | undefined;
  ready: string | undefined;
}

const LIFECYCLE_TAINT_KEYS = new Set([TAINT_NOT_READY, TAINT_UNREACHABLE, TAINT_UNSCHEDULABLE]);

export class NodeLifecycle {
  private readonly client: ClusterClient;
  private readonly opts: LifecycleOptions;
  private readonly health = new Map<string, Health>();
  private readonly eviction: TaintEviction;
  private readonly stopWatches: (() => void)[] = [];
  private readonly timer: TimerHandle;
  private readonly gcTimers = new Set<TimerHandle>();
  private readonly inflight = new Set<Promise<void>>();
  private stopped = false;

  constructor(client: ClusterClient, opts: LifecycleOptions) {
    this.client = client;
    this.opts = opts;
    this.eviction = new TaintEviction(client, {
      timeScale: opts.timeScale,
      recorder: opts.evictionRecorder,
      log: opts.log,
      clock: opts.clock,
    });
    this.stopWatches.push(client.watch(GVR.nodes, (type, node) => this.onNode(type, node), { shared: true }));
    this.stopWatches.push(
      client.watch(GVR.leases, (type, lease) => this.onLease(type, lease), {
        namespace: NODE_LEASE_NAMESPACE,
        shared: true,
      }),
    );
    this.timer = setRepeating(
      opts.clock,
      () => this.monitor(),
      Math.max(1, opts.monitorPeriodMs / opts.timeScale),
    );
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const s of this.stopWatches) s();
    this.timer.cancel();
    for (const t of this.gcTimers) t.cancel();
    await this.eviction.stop();
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  private run(work: () => Promise<void>): void {
    if (this.stopped) return;
    const p = (async () => {
      // Handlers run inside another writer's commit: write only after it returns.
      await null;
      try {
        await work();
      } catch (err) {
        if (!isNotFound(err)) this.opts.log('warn', 'node lifecycle write failed', { error: String(err) });
      }
    })();
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }

  private onLease(type: string, lease: KubeObject): void {
    if (type === 'DELETED') return;
    const name = lease.metadata.name ?? '';
    const renew = (lease.spec as { renewTime?: string } | undefined)?.renewTime;
    const h = this.health.get(name);
    if (!h) return;
    if (renew !== h.leaseRenew) {
      h.leaseRenew = renew;
      h.probe = this.opts.clock.now();
    }
  }

  private onNode(type: string, node: KubeObject): void {
    const name = node.metadata.name ?? '';
    if (type === 'DELETED') {
      this.health.delete(name);
      this.eviction.nodeDeleted(name);
      this.schedulePodGC(name);
      return;
    }
    const ready = readyCondition(node);
    let h = this.health.get(name);
    if (!h) {
      h = {
        probe: this.opts.clock.now(),
        leaseRenew: undefined,
        heartbeat: ready?.lastHeartbeatTime ?? undefined,
        ready: ready?.status,
      };
      this.health.set(name, h);
      const lease = this.client.get(GVR.leases, NODE_LEASE_NAMESPACE, name);
      h.leaseRenew = (lease?.spec as { renewTime?: string } | undefined)?.renewTime;
    } else {
      const hb = ready?.lastHeartbeatTime ?? undefined;
      if (hb !== h.heartbeat) {
        h.heartbeat = hb;
        h.probe = this.opts.clock.now();
      }
      if (ready?.status === 'Unknown' && h.ready !== 'Unknown') this.onUnreachable(node);
      else if (ready?.status === 'False' && h.ready !== 'False') this.recordStatus(node, 'NodeNotReady');
      h.ready = ready?.status;
    }
    this.syncTaints(node);
    this.eviction.nodeChanged(node);
  }

  /** Grace period passed without a lease renewal or a heartbeat: the kubelet is gone. */
  private monitor(): void {
    const now = this.opts.clock.now();
    const grace = this.opts.gracePeriodMs / this.opts.timeScale;
    for (const [name, h] of this.health) {
      if (h.ready === 'Unknown' || now - h.probe <= grace) continue;
      h.probe = now;
      this.run(async () => {
        await postConditions(this.client, name, unknownConditions);
      });
    }
  }

  private onUnreachable(node: KubeObject): void {
    this.recordStatus(node, 'NodeNotReady');
    const name = node.metadata.name ?? '';
    // MarkPodsNotReady: nobody reports on these pods any more.
    this.run(async () => {
      for (const pod of this.client.list(GVR.pods, undefined, { fieldSelector: `spec.nodeName=${name}` })) {
        const conds =
          (pod.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
        if (!conds.some((c) => c.type === 'Ready' && c.status !== 'False')) continue;
        await this.client
          .mutate(
            GVR.pods,
            pod.metadata.namespace ?? '',
            pod.metadata.name ?? '',
            (cur) => {
              if (cur.metadata.uid !== pod.metadata.uid) return;
              const cs =
                (cur.status as { conditions?: Record<string, unknown>[] } | undefined)?.conditions ?? [];
              for (const c of cs) {
                if (c.type === 'Ready' && c.status !== 'False') {
                  c.status = 'False';
                  c.lastTransitionTime = rfc3339();
                }
              }
            },
            'status',
          )
          .catch((err: unknown) => {
            if (!isNotFound(err)) throw err;
          });
      }
    });
  }

  private recordStatus(node: KubeObject, reason: string): void {
    this.opts.recorder?.event(node, 'Normal', reason, `Node ${node.metadata.name} status is now: ${reason}`);
  }

  private syncTaints(node: KubeObject): void {
    const name = node.metadata.name ?? '';
    const want = desiredLifecycleTaints(node);
    const have = nodeTaints(node).filter(
      (t) => LIFECYCLE_TAINT_KEYS.has(t.key) && t.effect !== 'PreferNoSchedule',
    );
    if (sameTaints(want, have)) return;
    this.run(async () => {
      await this.client.mutate(GVR.nodes, '', name, (cur) => {
        const target = desiredLifecycleTaints(cur);
        const existing = nodeTaints(cur);
        const kept = existing.filter(
          (t) => !LIFECYCLE_TAINT_KEYS.has(t.key) || t.effect === 'PreferNoSchedule',
        );
        const now = rfc3339();
        const added = target.map((t) => {
          const prior = existing.find((e) => e.key === t.key && e.effect === t.effect);
          if (prior) return prior;
          return t.effect === 'NoExecute' ? { ...t, timeAdded: now } : t;
        });
        const taints = [...kept, ...added];
        cur.spec ??= {};
        const spec = cur.spec as { taints?: unknown[] };
        if (taints.length > 0) spec.taints = taints;
        else delete spec.taints;
      });
    });
  }

  private schedulePodGC(name: string): void {
    if (this.stopped) return;
    const t = this.opts.clock.setTimer(() => {
      this.gcTimers.delete(t);
      if (this.client.get(GVR.nodes, '', name)) return;
      this.run(async () => {
        for (const pod of this.client.list(GVR.pods, undefined, { fieldSelector: `spec.nodeName=${name}` })) {
          const ns = pod.metadata.namespace ?? '';
          const podName = pod.metadata.name ?? '';
          try {
            await this.client.mutate(
              GVR.pods,
              ns,
              podName,
              (cur) => {
                if (cur.metadata.uid !== pod.metadata.uid) return;
                setDisruptionTarget(cur, 'DeletionByPodGC', 'PodGC: node no longer exists');
              },
              'status',
            );
            await this.client.delete(GVR.pods, ns, podName, {
              gracePeriodSeconds: 0,
              preconditions: { uid: pod.metadata.uid },
            });
          } catch (err) {
            if (!isNotFound(err)) throw err;
          }
        }
      });
    }, this.opts.podGCQuarantineMs / this.opts.timeScale);
    this.gcTimers.add(t);
  }
}

function desiredLifecycleTaints(node: KubeObject): Taint[] {
  const out: Taint[] = [];
  const ready = readyCondition(node)?.status;
  if (ready === 'False') {
    out.push({ key: TAINT_NOT_READY, effect: 'NoSchedule' }, { key: TAINT_NOT_READY, effect: 'NoExecute' });
  } else if (ready === 'Unknown') {
    out.push(
      { key: TAINT_UNREACHABLE, effect: 'NoSchedule' },
      { key: TAINT_UNREACHABLE, effect: 'NoExecute' },
    );
  }
  if ((node.spec as { unschedulable?: boolean } | undefined)?.unschedulable === true) {
    out.push({ key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule' });
  }
  return out;
}

function sameTaints(a: Taint[], b: Taint[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((t) => b.some((u) => u.key === t.key && u.effect === t.effect));
}
