/**
 * Events expire, as kube-apiserver stores them in etcd under a lease of `--event-ttl` (one hour
 * by default; pkg/registry/core/event/storage: TTLFunc), renewed by every write of the Event.
 * After a restart, each stored Event expires one TTL after the latest time it carries (its
 * last write is not stored apart), so Events keep their TTL across restarts.
 */
import { type Clock, realClock } from '../../../lib/clock.ts';
import { type QueuedTimer, TimerQueue } from '../../../lib/timer-queue.ts';
import type { Api } from '../api.ts';
import { ApiError } from '../errors.ts';
import { storageKey } from '../registry.ts';
import type { KubeObject, ResourceType } from '../types.ts';

export const DEFAULT_EVENT_TTL_MS = 60 * 60 * 1000;

export class EventTtl {
  private readonly api: Api;
  private readonly ttlMs: number;
  private readonly clock: Clock;
  private readonly timers: TimerQueue;
  private readonly pending = new Map<string, QueuedTimer>();
  private stopped = false;

  constructor(api: Api, ttlMs = DEFAULT_EVENT_TTL_MS, clock: Clock = realClock) {
    this.api = api;
    this.ttlMs = ttlMs;
    this.clock = clock;
    this.timers = new TimerQueue({ clock });
  }

  onWrite(rt: ResourceType, type: string, obj: KubeObject): void {
    if (!isEvent(rt)) return;
    const key = `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
    this.timers.cancel(this.pending.get(key));
    this.pending.delete(key);
    if (type === 'DELETED') return;
    this.expireAt(key, this.clock.now() + this.ttlMs);
  }

  /**
   * Schedules the Events loaded from the data directory, a few thousand per turn once the
   * server serves: a restart must not wait on parsing every Event it kept.
   */
  restore(): void {
    const rt = this.api.registry.get('', 'v1', 'events');
    if (!rt) return;
    const records = [...this.api.store.table(storageKey(rt)).values()];
    const step = (from: number) => {
      if (this.stopped) return;
      for (const rec of records.slice(from, from + 5000)) {
        const key = `${rec.namespace}/${rec.name}`;
        // Written again since the start: already scheduled from that write.
        if (this.pending.has(key) || this.api.store.get(storageKey(rt), rec.key) !== rec) continue;
        const obj = JSON.parse(rec.json) as KubeObject;
        this.expireAt(key, (lastWritten(obj) ?? this.clock.now()) + this.ttlMs);
      }
      if (from + 5000 < records.length) setImmediate(() => step(from + 5000));
    };
    setImmediate(() => step(0));
  }

  stop(): void {
    this.stopped = true;
    this.timers.stop();
    this.pending.clear();
  }

  private expireAt(key: string, at: number): void {
    this.pending.set(
      key,
      this.timers.schedule(at, () => {
        this.pending.delete(key);
        // One that fails (the server closing) is still stored, and the next start schedules it.
        this.expire(key).catch(() => {});
      }),
    );
  }

  private async expire(key: string): Promise<void> {
    const rt = this.api.registry.get('', 'v1', 'events');
    if (!rt) return;
    const [namespace, name] = key.split('/') as [string, string];
    try {
      await this.api.delete(rt, namespace, name, { user: 'system:apiserver' });
    } catch (err) {
      // Deleted meanwhile, or its namespace went: nothing left to expire.
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
  }
}

function isEvent(rt: ResourceType): boolean {
  const s = rt.sharedStorage ?? rt;
  return s.group === '' && s.resource === 'events';
}

/** The latest time an Event carries: when it was last written, as closely as it tells. */
function lastWritten(obj: KubeObject): number | undefined {
  const o = obj as KubeObject & {
    lastTimestamp?: string;
    eventTime?: string;
    series?: { lastObservedTime?: string };
  };
  const times = [
    obj.metadata.creationTimestamp,
    o.lastTimestamp,
    o.eventTime,
    o.series?.lastObservedTime,
    ...(obj.metadata.managedFields ?? []).map((f) => (f as { time?: string }).time),
  ]
    .map((t) => (t ? Date.parse(t) : Number.NaN))
    .filter((t) => Number.isFinite(t));
  return times.length > 0 ? Math.max(...times) : undefined;
}
