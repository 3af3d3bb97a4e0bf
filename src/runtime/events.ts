/**
 * An events.k8s.io/v1 recorder that aggregates repeats into a series, as client-go's
 * tools/events does: the first occurrence creates an Event; an identical one within
 * six minutes bumps `series.count` / `series.lastObservedTime` on that Event instead of
 * creating another. Series patches are coalesced (at most one per `seriesUpdateMs` per
 * Event, the first repeat at once) so a hot loop cannot flood the API server.
 *
 * Identity of a repeat: client-go's key (reporting controller, regarding, related,
 * action, reason) plus type and note, so a series never hides a different message.
 *
 * Recording is fire-and-forget and best-effort: a failure is logged, never thrown.
 */

import { hostname } from 'node:os';
import { type Clock, realClock, type TimerHandle } from '../lib/clock.ts';
import type { Client } from './client.ts';
import { isAlreadyExists, isNotFound } from './errors.ts';
import { type Logger, silentLogger } from './log.ts';
import type { KubeObject } from './types.ts';

export type EventType = 'Normal' | 'Warning';

export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export interface EventRecorderOptions {
  /** Must be a qualified name, e.g. `troupe/podgroup`. */
  reportingController: string;
  /** This process, e.g. `<hostname>_<id>`; defaults to the hostname. */
  reportingInstance?: string;
  logger?: Logger;
  /** A repeat after this long starts a new Event (client-go: 6 min). */
  seriesWindowMs?: number;
  /** Minimum spacing of series patches to one Event. */
  seriesUpdateMs?: number;
  /** Bound of remembered Events. */
  maxTracked?: number;
  /** Outcome counter hook. */
  onRecorded?(type: EventType, outcome: 'created' | 'series' | 'dropped'): void;
  /** Event times and series spacing; default the real clock. */
  clock?: Clock;
}

interface Tracked {
  name: string | undefined;
  namespace: string;
  created: Promise<boolean>;
  count: number;
  lastObserved: number;
  lastPatched: number;
  timer: TimerHandle | undefined;
  body: Record<string, unknown>;
}

const NOTE_LIMIT = 1024;
/** Names tried for one Event before it is dropped (see createNamed). */
const NAME_ATTEMPTS = 5;

export class EventRecorder {
  private readonly client: Client;
  private readonly opts: Required<Omit<EventRecorderOptions, 'logger' | 'onRecorded' | 'clock'>>;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly onRecorded: EventRecorderOptions['onRecorded'];
  private readonly tracked = new Map<string, Tracked>();
  private readonly pending = new Set<Promise<unknown>>();
  private seq = 0;
  private stopped = false;

  constructor(client: Client, opts: EventRecorderOptions) {
    this.client = client;
    this.opts = {
      reportingController: opts.reportingController,
      reportingInstance: (opts.reportingInstance ?? hostname()).slice(0, 128),
      seriesWindowMs: opts.seriesWindowMs ?? 6 * 60_000,
      seriesUpdateMs: opts.seriesUpdateMs ?? 30_000,
      maxTracked: opts.maxTracked ?? 4096,
    };
    this.log = opts.logger ?? silentLogger();
    this.onRecorded = opts.onRecorded;
    this.clock = opts.clock ?? realClock;
  }

  /**
   * Records that `action` happened to `regarding` because of `reason`.
   * `note` is a human-readable message (truncated to 1 kB).
   */
  event(
    regarding: KubeObject | ObjectReference,
    type: EventType,
    reason: string,
    action: string,
    note: string,
    related?: KubeObject | ObjectReference,
  ): void {
    if (this.stopped) return;
    const ref = toReference(regarding);
    const rel = related ? toReference(related) : undefined;
    const trimmed = note.length > NOTE_LIMIT ? `${note.slice(0, NOTE_LIMIT - 3)}...` : note;
    const key = JSON.stringify([
      this.opts.reportingController,
      ref.apiVersion,
      ref.kind,
      ref.namespace,
      ref.name,
      ref.uid,
      rel?.kind,
      rel?.namespace,
      rel?.name,
      rel?.uid,
      action,
      reason,
      type,
      trimmed,
    ]);
    const now = this.clock.now();
    const existing = this.tracked.get(key);
    if (existing && now - existing.lastObserved < this.opts.seriesWindowMs) {
      existing.count++;
      existing.lastObserved = now;
      // Map order is recency order: re-insert to keep it last.
      this.tracked.delete(key);
      this.tracked.set(key, existing);
      this.scheduleSeries(existing, type);
      return;
    }
    if (existing?.timer) existing.timer.cancel();
    const namespace = ref.namespace || 'default';
    const body: Record<string, unknown> = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: this.eventName(ref.name ?? 'object', now), namespace },
      eventTime: microTime(now),
      reportingController: this.opts.reportingController,
      reportingInstance: this.opts.reportingInstance,
      action,
      reason,
      note: trimmed,
      type,
      regarding: ref,
    };
    if (rel) body.related = rel;
    const entry: Tracked = {
      name: undefined,
      namespace,
      created: Promise.resolve(false),
      count: 1,
      lastObserved: now,
      lastPatched: now,
      timer: undefined,
      body,
    };
    entry.created = this.track(this.create(entry, type));
    this.tracked.set(key, entry);
    while (this.tracked.size > this.opts.maxTracked) {
      const oldest = this.tracked.keys().next().value as string;
      const t = this.tracked.get(oldest);
      if (t?.timer) t.timer.cancel();
      this.tracked.delete(oldest);
    }
  }

  normal(regarding: KubeObject | ObjectReference, reason: string, action: string, note: string): void {
    this.event(regarding, 'Normal', reason, action, note);
  }

  warning(regarding: KubeObject | ObjectReference, reason: string, action: string, note: string): void {
    this.event(regarding, 'Warning', reason, action, note);
  }

  /** Writes pending series updates now and waits for every write in flight. */
  async flush(): Promise<void> {
    for (const entry of this.tracked.values()) {
      if (entry.timer) {
        entry.timer.cancel();
        entry.timer = undefined;
        this.track(this.patchSeries(entry, entry.body.type as EventType));
      }
    }
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Flushes and stops accepting events. */
  async stop(): Promise<void> {
    await this.flush();
    this.stopped = true;
  }

  private eventName(name: string, now: number): string {
    // client-go names events <object>.<unix nanos in hex>; a sequence keeps same-ms events distinct.
    const nanos = BigInt(now) * 1_000_000n + BigInt(this.seq++ % 1_000_000);
    return `${name}.${nanos.toString(16)}`.slice(0, 253);
  }

  private scheduleSeries(entry: Tracked, type: EventType): void {
    if (entry.timer) return;
    const wait =
      entry.count === 2 ? 0 : Math.max(0, entry.lastPatched + this.opts.seriesUpdateMs - this.clock.now());
    entry.timer = this.clock.setTimer(() => {
      entry.timer = undefined;
      this.track(this.patchSeries(entry, type));
    }, wait);
  }

  private async create(entry: Tracked, type: EventType): Promise<boolean> {
    try {
      const created = await this.createNamed(entry);
      entry.name = created.metadata.name;
      this.onRecorded?.(type, 'created');
      return true;
    } catch (err) {
      this.onRecorded?.(type, 'dropped');
      this.log.debug({ err, reason: entry.body.reason }, 'could not record event');
      return false;
    }
  }

  /**
   * Creates the Event, renaming it when its name is taken. client-go's names are unique by
   * their nanoseconds; a clock that reads milliseconds (a virtual clock above all, where every
   * component acts at the same instant) gives another recorder the same name, which would
   * drop the Event.
   */
  private async createNamed(entry: Tracked): Promise<KubeObject> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.client.create(entry.body as KubeObject);
      } catch (err) {
        if (!isAlreadyExists(err) || attempt === NAME_ATTEMPTS) throw err;
        const metadata = { ...(entry.body.metadata as Record<string, unknown>) };
        metadata.name = this.eventName(
          (entry.body.regarding as ObjectReference).name ?? 'object',
          this.clock.now(),
        );
        entry.body = { ...entry.body, metadata };
      }
    }
  }

  private async patchSeries(entry: Tracked, type: EventType): Promise<void> {
    if (!(await entry.created) || !entry.name) return;
    entry.lastPatched = this.clock.now();
    const series = { count: entry.count, lastObservedTime: microTime(entry.lastObserved) };
    try {
      await this.client.mergePatch(
        {
          apiVersion: 'events.k8s.io/v1',
          kind: 'Event',
          metadata: { name: entry.name, namespace: entry.namespace },
        },
        { series },
      );
      this.onRecorded?.(type, 'series');
    } catch (err) {
      if (isNotFound(err)) {
        // The Event expired (events have a TTL): start over with the series carried along.
        const metadata = { ...(entry.body.metadata as Record<string, unknown>) };
        metadata.name = this.eventName(
          (entry.body.regarding as ObjectReference).name ?? 'object',
          this.clock.now(),
        );
        entry.body = { ...entry.body, metadata, series };
        entry.created = this.track(this.create(entry, type));
        return;
      }
      this.onRecorded?.(type, 'dropped');
      this.log.debug({ err }, 'could not update event series');
    }
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.pending.add(p);
    p.finally(() => this.pending.delete(p)).catch(() => {});
    return p;
  }
}

function toReference(o: KubeObject | ObjectReference): ObjectReference {
  if ('metadata' in o && o.metadata && typeof o.metadata === 'object') {
    const obj = o as KubeObject;
    const ref: ObjectReference = { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name };
    if (obj.metadata.namespace) ref.namespace = obj.metadata.namespace;
    if (obj.metadata.uid) ref.uid = obj.metadata.uid;
    if (obj.metadata.resourceVersion) ref.resourceVersion = obj.metadata.resourceVersion;
    return ref;
  }
  return { ...(o as ObjectReference) };
}

/** metav1.MicroTime: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
