/**
 * core/v1 Events as client-go's record.EventRecorder writes them: named
 * `<object>.<hex nanoseconds>`, in the involved object's namespace (`default` for
 * cluster-scoped objects), with source.component/reportingComponent, and repeated
 * events aggregated into one object by bumping `count` and `lastTimestamp`, so
 * `kubectl describe` shows `x3 over 2m` exactly as on a real cluster.
 *
 * Writes are fire-and-forget (a failed event never fails a sync) but ordered, and
 * `flush()` waits for them.
 */
import { type ClusterClient, GVR, isNotFound } from '../client.ts';
import type { KubeObject } from '../apiserver/types.ts';
import type { LogFn } from './loop.ts';

export type EventType = 'Normal' | 'Warning';

/** Aggregation keys kept, like client-go's EventCorrelator LRU. */
const MAX_KEYS = 4096;

export class EventRecorder {
  readonly component: string;
  private readonly client: ClusterClient;
  private readonly log: LogFn;
  private readonly seen = new Map<string, { namespace: string; name: string }>();
  private chain: Promise<void> = Promise.resolve();
  private lastNanos = 0n;
  private stopped = false;

  constructor(client: ClusterClient, component: string, log?: LogFn) {
    this.client = client;
    this.component = component;
    this.log = log ?? (() => {});
  }

  event(obj: KubeObject, type: EventType, reason: string, message: string): void {
    if (this.stopped) return;
    const now = new Date();
    const nanos = this.uniqueNanos(now);
    this.chain = this.chain
      .then(() => this.write(obj, type, reason, message, now, nanos))
      .catch((err: unknown) => {
        this.log('debug', `${this.component}: event not recorded`, {
          reason,
          error: err instanceof Error ? err.message : String(err),
        });
      });
  }

  /** Waits for queued event writes. */
  flush(): Promise<void> {
    return this.chain;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.chain;
  }

  private uniqueNanos(now: Date): bigint {
    let n = BigInt(now.getTime()) * 1_000_000n;
    if (n <= this.lastNanos) n = this.lastNanos + 1n;
    this.lastNanos = n;
    return n;
  }

  private async write(
    obj: KubeObject,
    type: EventType,
    reason: string,
    message: string,
    now: Date,
    nanos: bigint,
  ): Promise<void> {
    const m = obj.metadata;
    const namespace = m.namespace || 'default';
    const ts = `${now.toISOString().slice(0, 19)}Z`;
    const aggKey = [this.component, m.uid ?? '', obj.kind, namespace, m.name, type, reason, message].join(
      '\u0000',
    );
    const prior = this.seen.get(aggKey);
    if (prior) {
      try {
        await this.client.mutate(GVR.events, prior.namespace, prior.name, (ev) => {
          ev.count = ((ev.count as number | undefined) ?? 1) + 1;
          ev.lastTimestamp = ts;
        });
        this.touch(aggKey, prior);
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        this.seen.delete(aggKey);
      }
    }
    const name = `${m.name}.${nanos.toString(16)}`;
    const ev: KubeObject = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: {
        kind: obj.kind,
        namespace: m.namespace || undefined,
        name: m.name,
        uid: m.uid,
        apiVersion: obj.apiVersion,
        resourceVersion: m.resourceVersion,
      },
      reason,
      message,
      source: { component: this.component },
      firstTimestamp: ts,
      lastTimestamp: ts,
      count: 1,
      type,
      eventTime: null,
      reportingComponent: this.component,
      reportingInstance: '',
    };
    await this.client.create(GVR.events, ev);
    this.touch(aggKey, { namespace, name });
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
