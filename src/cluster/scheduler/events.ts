/**
 * The scheduler's Event recorder: events.k8s.io/v1 Events with series, as kube-scheduler
 * writes them through client-go's tools/events (event_broadcaster.go, event_recorder.go;
 * cmd/kube-scheduler builds it with NewEventBroadcasterAdapter).
 *
 * An occurrence is the same Event as one remembered when its type, action, reason and the
 * regarding and related references (resourceVersion and fieldPath included) are equal; the
 * note is not compared. The first occurrence creates the Event; the second puts
 * `series: {count: 2, lastObservedTime}` on it with a patch (creating it again when it is
 * gone); later ones only count in memory. Every 30 minutes every remembered series is
 * written; every 6 minutes a series not observed for 6 minutes is written a last time and
 * forgotten, and so is a single Event older than 6 minutes. A pod retried a thousand times
 * while nothing changes costs three writes; the scheduler's own PodScheduled condition
 * update changes the pod's resourceVersion, so a new verdict starts a new Event.
 *
 * Writes are queued and run one at a time, never failing the caller. Time is the injected
 * Clock's; the two periodic passes keep upstream's cadence (multiples of their period since
 * the recorder started) but are only armed while something is remembered, so an idle
 * simulation has no timer of theirs to jump to.
 */
import { microTime } from '../../kube/conditions.ts';
import { type Clock, realClock, type TimerHandle } from '../../lib/clock.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { type ClusterClient, GVR, isNotFound } from '../client.ts';
import {
  type EventType,
  EventWriter,
  eventName,
  objectReference,
  referenceKey,
  WriteQueue,
} from '../events.ts';

export type { EventType } from '../events.ts';

/** A series not observed for this long is finished (client-go's finishTime). */
export const FINISH_MS = 6 * 60_000;
/** Every remembered series is written this often (client-go's refreshTime). */
export const REFRESH_MS = 30 * 60_000;

export type EventLog = (msg: string, fields: Record<string, unknown>) => void;

export interface SeriesRecorderOptions {
  /** reportingController, e.g. `default-scheduler`. */
  controller: string;
  /** reportingInstance; client-go's is `<controller>-<hostname>`. */
  instance: string;
  log?: EventLog;
  clock?: Clock;
}

interface Remembered {
  /** The Event as created (events.k8s.io/v1), without its series. */
  body: KubeObject;
  /** The object the name is made of, and the nanoseconds the Event's name carries. */
  objectName: string;
  nanos: bigint;
  eventTime: number;
  series?: { count: number; lastObserved: number };
}

interface Write {
  e: Remembered;
  /** Absent: create the Event; present: write this series (create the Event if it is gone). */
  series?: { count: number; lastObservedTime: string };
}

export class SeriesEventRecorder {
  private readonly client: ClusterClient;
  private readonly writer: EventWriter;
  private readonly opts: SeriesRecorderOptions;
  private readonly clock: Clock;
  private readonly log: EventLog;
  /** client-go's eventCache, by getKey; insertion order keeps the passes deterministic. */
  private readonly cache = new Map<string, Remembered>();
  /** Per regarding object, its occurrences' keys (see keyOf). */
  private readonly keys = new WeakMap<KubeObject, Map<string, string>>();
  private seriesCount = 0;
  private readonly queue: WriteQueue<Write>;
  private readonly started: number;
  /** The two periodic passes' timers, armed only while they have work. */
  private readonly timers: { finish?: TimerHandle; refresh?: TimerHandle } = {};
  private stopped = false;

  constructor(client: ClusterClient, opts: SeriesRecorderOptions) {
    this.client = client;
    this.opts = opts;
    this.clock = opts.clock ?? realClock;
    this.writer = new EventWriter(client, this.clock);
    this.log = opts.log ?? (() => {});
    this.started = this.clock.now();
    this.queue = new WriteQueue(
      (w) => this.record(w),
      (w, err) =>
        this.log('event not recorded', {
          reason: w.e.body.reason,
          error: err instanceof Error ? err.message : String(err),
        }),
    );
  }

  /** Events remembered (for tests and stats). */
  get remembered(): number {
    return this.cache.size;
  }

  /** Eventf(regarding, related, type, reason, action, note). */
  event(
    regarding: KubeObject,
    related: KubeObject | undefined,
    type: EventType,
    reason: string,
    action: string,
    note: string,
  ): void {
    if (this.stopped) return;
    const now = this.clock.now();
    const key = this.keyOf(regarding, related, type, reason, action);
    const known = this.cache.get(key);
    if (known?.series) {
      known.series.count++;
      known.series.lastObserved = now;
      return;
    }
    if (known) {
      known.series = { count: 2, lastObserved: now };
      this.seriesCount++;
      this.queue.push({ e: known, series: seriesOf(known) });
      this.arm();
      return;
    }
    const ref = objectReference(regarding);
    const rel = related ? objectReference(related) : undefined;
    const body: KubeObject = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { namespace: ref.namespace || 'default' },
      eventTime: microTime(now),
      reportingController: this.opts.controller,
      reportingInstance: this.opts.instance,
      action,
      reason,
      regarding: ref,
      note,
      type,
    };
    if (rel) body.related = rel;
    const e: Remembered = {
      body,
      objectName: ref.name,
      nanos: this.writer.stamp(new Date(now)),
      eventTime: now,
    };
    this.cache.set(key, e);
    this.queue.push({ e });
    this.arm();
  }

  /**
   * The occurrence's key: type, action, reason and both references (getKey). Kept per
   * regarding object (a pod version, as queued): a gang retried all day looks up the same
   * string, whose hash V8 keeps, rather than a new one of 150 characters each time.
   */
  private keyOf(
    regarding: KubeObject,
    related: KubeObject | undefined,
    type: EventType,
    reason: string,
    action: string,
  ): string {
    const short = `${type}\0${action}\0${reason}\0${related ? referenceKey(related) : ''}`;
    let keys = this.keys.get(regarding);
    if (!keys) {
      keys = new Map();
      this.keys.set(regarding, keys);
    }
    let key = keys.get(short);
    if (key === undefined) {
      key = `${short}\0${referenceKey(regarding)}`;
      keys.set(short, key);
    }
    return key;
  }

  /** Resolves once every write queued so far is done. */
  async flush(): Promise<void> {
    await this.queue.flush();
  }

  /** Stops the periodic passes, writes what is queued and records nothing more. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.arm();
    await this.flush();
  }

  /** finishSeries: a series over writes its last count; a single Event over is forgotten. */
  private finish(): void {
    const before = this.clock.now() - FINISH_MS;
    for (const [key, e] of this.cache) {
      if (e.series) {
        if (e.series.lastObserved < before) {
          this.queue.push({ e, series: seriesOf(e) });
          this.cache.delete(key);
          this.seriesCount--;
        }
      } else if (e.eventTime < before) {
        this.cache.delete(key);
      }
    }
  }

  /** refreshExistingEventSeries: every series' count, written again. */
  private refresh(): void {
    for (const e of this.cache.values()) if (e.series) this.queue.push({ e, series: seriesOf(e) });
  }

  /**
   * Arms each pass at its next multiple of its period since the start while it has work, and
   * disarms it when it has none.
   */
  private arm(): void {
    this.keepArmed('finish', !this.stopped && this.cache.size > 0, FINISH_MS, () => this.finish());
    this.keepArmed('refresh', !this.stopped && this.seriesCount > 0, REFRESH_MS, () => this.refresh());
  }

  /** The pass's timer, set when wanted and absent, cancelled when no longer wanted. */
  private keepArmed(pass: keyof typeof this.timers, wanted: boolean, period: number, run: () => void): void {
    const timer = this.timers[pass];
    if (wanted && !timer) {
      this.timers[pass] = this.clock.setTimer(() => {
        this.timers[pass] = undefined;
        run();
        this.arm();
      }, this.untilNext(period));
    } else if (!wanted && timer) {
      timer.cancel();
      this.timers[pass] = undefined;
    }
  }

  private untilNext(period: number): number {
    const since = this.clock.now() - this.started;
    return (Math.floor(since / period) + 1) * period - since;
  }

  /** recordEvent: a series is patched onto the Event, which is created when it is gone. */
  private async record(w: Write): Promise<void> {
    const { e, series } = w;
    const namespace = (e.body.metadata as { namespace: string }).namespace;
    if (series) {
      try {
        await this.client.patch(GVR.eventsV1, namespace, eventName(e.objectName, e.nanos), 'strategic', {
          series,
        });
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    const body = series ? { ...e.body, series } : e.body;
    const made = await this.writer.create(GVR.eventsV1, body, e.objectName, e.nanos);
    e.nanos = made.nanos;
  }
}

function seriesOf(e: Remembered): { count: number; lastObservedTime: string } {
  const s = e.series!;
  return { count: s.count, lastObservedTime: microTime(s.lastObserved) };
}
