/**
 * core/v1 Events as a kubelet records them: source.component `kubelet` and source.host the
 * node, reportingComponent/reportingInstance likewise, involvedObject.fieldPath naming the
 * container (`spec.containers{nginx}`), named `<object>.<hex nanoseconds>` in the object's
 * namespace (`default` for cluster-scoped objects). Identical repeats are folded into one
 * Event by bumping `count`, as client-go's correlator does, so a crash loop reads
 * `Back-off restarting failed container ... (x7 over 3m)` in `kubectl describe`.
 *
 * Writes are best effort, as a kubelet's are: they wait while the kubelet has status work to
 * do (`busy`), and like client-go's broadcaster (whose queue drops events when full) at most
 * `maxBacklog` wait; further events are dropped. A burst of 100,000 pod starts thus runs at
 * the speed of its status updates, and its Events are written, as far as they fit, after it.
 */

import type { KubeObject } from '../apiserver/types.ts';
import { type ClusterClient, GVR, isNotFound } from '../client.ts';
import { Fifo } from './fifo.ts';

export type EventType = 'Normal' | 'Warning';

export interface EventTarget {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export interface KubeletEvent {
  target: EventTarget;
  type: string;
  reason: string;
  message: string;
  /** source.host; empty for events about objects that belong to no node (Stages). */
  host: string;
}

const MAX_KEYS = 4096;

export function targetOf(obj: KubeObject, fieldPath?: string): EventTarget {
  const m = obj.metadata;
  const t: EventTarget = {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: m.name ?? '',
    namespace: m.namespace || undefined,
    uid: m.uid,
    resourceVersion: m.resourceVersion,
  };
  if (fieldPath) t.fieldPath = fieldPath;
  return t;
}

export class KubeletEvents {
  private readonly client: ClusterClient;
  private readonly component: string;
  private readonly maxBacklog: number;
  private readonly concurrency: number;
  private readonly queue = new Fifo<{ ev: KubeletEvent; at: Date; nanos: bigint }>();
  private readonly seen = new Map<string, { namespace: string; name: string }>();
  private readonly idle: (() => void)[] = [];
  private active = 0;
  private lastNanos = 0n;
  private stopped = false;
  private stopping = false;
  dropped = 0;
  written = 0;

  private readonly busy: () => boolean;

  constructor(
    client: ClusterClient,
    opts: { component?: string; maxBacklog?: number; concurrency?: number; busy?: () => boolean } = {},
  ) {
    this.client = client;
    this.component = opts.component ?? 'kubelet';
    this.maxBacklog = opts.maxBacklog ?? 10_000;
    this.concurrency = opts.concurrency ?? 4;
    this.busy = opts.busy ?? (() => false);
  }

  record(ev: KubeletEvent): void {
    if (this.stopped) return;
    if (this.queue.length >= this.maxBacklog) {
      this.dropped++;
      return;
    }
    const at = new Date();
    let nanos = BigInt(at.getTime()) * 1_000_000n;
    if (nanos <= this.lastNanos) nanos = this.lastNanos + 1n;
    this.lastNanos = nanos;
    this.queue.push({ ev, at, nanos });
    this.pump();
  }

  /** Resolves once every queued event is written. */
  flush(): Promise<void> {
    if (this.queue.length === 0 && this.active === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.pump();
    await this.flush();
    this.stopped = true;
  }

  /** Writes queued events while the kubelet is not busy (call when it becomes idle). */
  pump(): void {
    while (this.active < this.concurrency && this.queue.length > 0 && (this.stopping || !this.busy())) {
      const item = this.queue.shift()!;
      this.active++;
      this.write(item.ev, item.at, item.nanos)
        .catch(() => {
          // An event that cannot be written is lost, as with a real kubelet.
        })
        .finally(() => {
          this.active--;
          this.pump();
          if (this.active === 0 && this.queue.length === 0) for (const fn of this.idle.splice(0)) fn();
        });
    }
  }

  private async write(ev: KubeletEvent, at: Date, nanos: bigint): Promise<void> {
    const t = ev.target;
    const namespace = t.namespace || 'default';
    const ts = `${at.toISOString().slice(0, 19)}Z`;
    const key = [
      ev.host,
      t.kind,
      namespace,
      t.name,
      t.uid ?? '',
      t.fieldPath ?? '',
      ev.type,
      ev.reason,
      ev.message,
    ].join('\u0000');
    const prior = this.seen.get(key);
    if (prior) {
      try {
        await this.client.mutate(GVR.events, prior.namespace, prior.name, (e) => {
          e.count = ((e.count as number | undefined) ?? 1) + 1;
          e.lastTimestamp = ts;
        });
        this.touch(key, prior);
        this.written++;
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        this.seen.delete(key);
      }
    }
    const name = `${t.name}.${nanos.toString(16)}`;
    const source: Record<string, string> = { component: this.component };
    if (ev.host) source.host = ev.host;
    const involvedObject: Record<string, unknown> = {
      kind: t.kind,
      namespace: t.namespace,
      name: t.name,
      uid: t.uid,
      apiVersion: t.apiVersion,
      resourceVersion: t.resourceVersion,
    };
    if (t.fieldPath) involvedObject.fieldPath = t.fieldPath;
    await this.client.create(GVR.events, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject,
      reason: ev.reason,
      message: ev.message,
      source,
      firstTimestamp: ts,
      lastTimestamp: ts,
      count: 1,
      type: ev.type,
      eventTime: null,
      reportingComponent: this.component,
      reportingInstance: ev.host,
    });
    this.touch(key, { namespace, name });
    this.written++;
  }

  private touch(key: string, v: { namespace: string; name: string }): void {
    this.seen.delete(key);
    this.seen.set(key, v);
    if (this.seen.size > MAX_KEYS) {
      const oldest = this.seen.keys().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
  }
}
