/**
 * core/v1 Events as the simulated control plane components write them: named
 * `<object>.<hex nanoseconds>` in the involved object's namespace (`default` for
 * cluster-scoped objects), with source.component and reportingComponent, and repeats of
 * the same event folded into one object whose `count` and `lastTimestamp` grow, so
 * `kubectl describe` shows `(x3 over 2m)` as on a real cluster.
 *
 * Writes are queued and never fail the caller. Repeats that arrive while an earlier copy
 * is still queued are merged into that queued write, so a pod retried thousands of times
 * costs a handful of writes (the new events API batches its series the same way).
 */
import type { KubeObject } from '../apiserver/types.ts';
import { type ClusterClient, GVR, isNotFound } from '../client.ts';

export type EventType = 'Normal' | 'Warning';

export interface EventSource {
  /** source.component and reportingComponent, e.g. `default-scheduler`. */
  component: string;
  /** reportingInstance (the component's instance, e.g. `default-scheduler-troupe`). */
  instance?: string;
  /** source.host: set by node-local components (kubelet). */
  host?: string;
}

/** Aggregation keys remembered, like client-go's EventCorrelator cache. */
const MAX_KEYS = 4096;

interface PendingWrite {
  key: string;
  involved: Record<string, unknown>;
  namespace: string;
  objectName: string;
  type: EventType;
  reason: string;
  message: string;
  action: string | undefined;
  first: string;
  last: string;
  /** Occurrences folded into this write. */
  count: number;
}

export type EventLog = (msg: string, fields: Record<string, unknown>) => void;

export class EventRecorder {
  readonly source: EventSource;
  private readonly client: ClusterClient;
  private readonly log: EventLog;
  /** Event object written for each aggregation key (LRU by insertion order). */
  private readonly written = new Map<string, { namespace: string; name: string }>();
  /** Writes not yet sent, by key, so repeats can join them. */
  private readonly pending = new Map<string, PendingWrite>();
  private readonly queue: PendingWrite[] = [];
  private head = 0;
  private draining: Promise<void> | undefined;
  private lastNanos = 0n;
  private stopped = false;

  constructor(client: ClusterClient, source: EventSource, log?: EventLog) {
    this.client = client;
    this.source = source;
    this.log = log ?? (() => {});
  }

  event(obj: KubeObject, type: EventType, reason: string, message: string, action?: string): void {
    if (this.stopped) return;
    const m = obj.metadata;
    const ts = secondsTime(new Date());
    const key = `${m.uid ?? ''}\u0000${obj.kind}\u0000${m.namespace ?? ''}\u0000${m.name ?? ''}\u0000${type}\u0000${reason}\u0000${message}`;
    const queued = this.pending.get(key);
    if (queued) {
      queued.count++;
      queued.last = ts;
      return;
    }
    const w: PendingWrite = {
      key,
      involved: {
        kind: obj.kind,
        namespace: m.namespace || undefined,
        name: m.name,
        uid: m.uid,
        apiVersion: obj.apiVersion,
        resourceVersion: m.resourceVersion,
      },
      namespace: m.namespace || 'default',
      objectName: m.name ?? '',
      type,
      reason,
      message,
      action,
      first: ts,
      last: ts,
      count: 1,
    };
    this.pending.set(key, w);
    this.queue.push(w);
    this.draining ??= this.drain();
  }

  /** Resolves once every event recorded so far has been written. */
  async flush(): Promise<void> {
    while (this.draining) await this.draining;
  }

  async stop(): Promise<void> {
    await this.flush();
    this.stopped = true;
  }

  private async drain(): Promise<void> {
    try {
      while (this.head < this.queue.length) {
        const w = this.queue[this.head]!;
        this.queue[this.head] = undefined as unknown as PendingWrite;
        this.head++;
        if (this.head > 1024 && this.head * 2 > this.queue.length) {
          this.queue.splice(0, this.head);
          this.head = 0;
        }
        // Later repeats start a new write once this one is under way.
        this.pending.delete(w.key);
        try {
          await this.write(w);
        } catch (err) {
          this.log('event not recorded', {
            reason: w.reason,
            error: err instanceof Error ? err.message : String(err),
          });
        }
      }
    } finally {
      this.draining = undefined;
    }
  }

  private async write(w: PendingWrite): Promise<void> {
    const prior = this.written.get(w.key);
    if (prior) {
      try {
        await this.client.mutate(GVR.events, prior.namespace, prior.name, (ev) => {
          ev.count = ((ev.count as number | undefined) ?? 1) + w.count;
          ev.lastTimestamp = w.last;
        });
        this.remember(w.key, prior);
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        this.written.delete(w.key);
      }
    }
    const name = `${w.objectName}.${this.uniqueNanos().toString(16)}`;
    const ev: KubeObject = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace: w.namespace },
      involvedObject: w.involved,
      reason: w.reason,
      message: w.message,
      source: this.source.host
        ? { component: this.source.component, host: this.source.host }
        : { component: this.source.component },
      firstTimestamp: w.first,
      lastTimestamp: w.last,
      count: w.count,
      type: w.type,
      eventTime: null,
      reportingComponent: this.source.component,
      reportingInstance: this.source.instance ?? '',
    };
    if (w.action) ev.action = w.action;
    await this.client.create(GVR.events, ev);
    this.remember(w.key, { namespace: w.namespace, name });
  }

  private uniqueNanos(): bigint {
    let n = BigInt(Date.now()) * 1_000_000n;
    if (n <= this.lastNanos) n = this.lastNanos + 1n;
    this.lastNanos = n;
    return n;
  }

  private remember(key: string, v: { namespace: string; name: string }): void {
    this.written.delete(key);
    this.written.set(key, v);
    if (this.written.size > MAX_KEYS) {
      const oldest = this.written.keys().next().value;
      if (oldest !== undefined) this.written.delete(oldest);
    }
  }
}

/** metav1.Time: RFC 3339 with second precision. */
export function secondsTime(d: Date): string {
  return `${d.toISOString().slice(0, 19)}Z`;
}
