/**
 * Node heartbeats through Leases, as a kubelet sends them: `kube-node-lease/<node>` held by
 * the node, owned by the Node object, `leaseDurationSeconds: 40`, renewed every 10 s (divided
 * by the time scale, never more often than once a second per node), with a little jitter so
 * 1,000 nodes do not renew in lock-step. Renewals stop when the node stops being managed,
 * which is how a dead kubelet looks to the node lifecycle controller. A Lease someone else
 * keeps fresh (the embedded cluster's node simulator renews its own nodes' Leases) is left
 * to them, so the two never double the writes.
 */

import { microTime } from '../../kube/conditions.ts';
import { type Clock, realClock } from '../../lib/clock.ts';
import { random } from '../../lib/random.ts';
import type { QueuedTimer, TimerQueue } from '../../lib/timer-queue.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { type ClusterClient, GVR, isConflict, isNotFound } from '../client.ts';
import type { LogFn } from './engine.ts';

export const LEASE_NAMESPACE = 'kube-node-lease';
export const LEASE_DURATION_SECONDS = 40;
const RENEW_MS = 10_000;
const MIN_RENEW_MS = 1000;

export { microTime };

export class NodeLeases {
  private readonly clock: Clock;
  private readonly client: ClusterClient;
  private readonly timers: TimerQueue;
  private readonly intervalMs: number;
  private readonly log: LogFn;
  private readonly nodes = new Map<
    string,
    { uid: string; timer: QueuedTimer | undefined; busy: boolean; wrote: string | undefined }
  >();
  private stopped = false;
  renewals = 0;

  constructor(
    client: ClusterClient,
    timers: TimerQueue,
    opts: { timeScale: number; log?: LogFn; clock?: Clock },
  ) {
    this.client = client;
    this.clock = opts.clock ?? realClock;
    this.timers = timers;
    this.intervalMs = Math.min(RENEW_MS, Math.max(MIN_RENEW_MS, RENEW_MS / opts.timeScale));
    this.log = opts.log ?? (() => {});
  }

  start(node: string, uid: string): void {
    if (this.stopped || this.nodes.has(node)) return;
    const n = {
      uid,
      timer: undefined as QueuedTimer | undefined,
      busy: false,
      wrote: undefined as string | undefined,
    };
    this.nodes.set(node, n);
    n.timer = this.timers.schedule(this.clock.now(), () => void this.renew(node));
  }

  stop(node: string): void {
    const n = this.nodes.get(node);
    if (!n) return;
    this.timers.cancel(n.timer);
    this.nodes.delete(node);
  }

  stopAll(): void {
    this.stopped = true;
    for (const name of [...this.nodes.keys()]) this.stop(name);
  }

  private async renew(node: string): Promise<void> {
    const n = this.nodes.get(node);
    if (!n || n.busy) return;
    n.busy = true;
    try {
      const cur = this.client.get(GVR.leases, LEASE_NAMESPACE, node);
      const renewed = (cur?.spec as { renewTime?: string } | undefined)?.renewTime;
      const othersFresh =
        renewed !== undefined &&
        renewed !== n.wrote &&
        this.clock.now() - Date.parse(renewed) < this.intervalMs;
      if (!othersFresh) {
        n.wrote = await this.write(node, n.uid);
        this.renewals++;
      }
    } catch (err) {
      if (!isConflict(err)) {
        this.log('debug', 'kubelet: lease renewal failed', {
          node,
          error: err instanceof Error ? err.message : String(err),
        });
      }
    } finally {
      n.busy = false;
      if (this.nodes.get(node) === n) {
        const jitter = 1 + (random() - 0.5) * 0.2;
        n.timer = this.timers.schedule(
          this.clock.now() + this.intervalMs * jitter,
          () => void this.renew(node),
        );
      }
    }
  }

  private async write(node: string, uid: string): Promise<string> {
    const now = microTime(this.clock.now());
    await writeNodeLease(this.client, node, uid, LEASE_DURATION_SECONDS, now);
    return now;
  }
}

/** Renews a node's Lease as its kubelet holds it, creating it (owned by the Node) when missing. */
export async function writeNodeLease(
  client: ClusterClient,
  node: string,
  uid: string,
  durationSeconds: number,
  renewTime: string,
): Promise<void> {
  try {
    await client.mutate(GVR.leases, LEASE_NAMESPACE, node, (lease) => {
      lease.spec = {
        ...(lease.spec as object),
        holderIdentity: node,
        leaseDurationSeconds: durationSeconds,
        renewTime,
      };
    });
  } catch (err) {
    if (!isNotFound(err)) throw err;
    const lease: KubeObject = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: node,
        namespace: LEASE_NAMESPACE,
        ownerReferences: uid ? [{ apiVersion: 'v1', kind: 'Node', name: node, uid }] : undefined,
      },
      spec: { holderIdentity: node, leaseDurationSeconds: durationSeconds, renewTime },
    };
    await client.create(GVR.leases, lease);
  }
}
