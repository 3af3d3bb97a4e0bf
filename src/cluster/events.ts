/**
 * Events as the components of the embedded cluster write them. Most write core/v1 Events
 * through client-go's legacy record package upstream, and so here: the recorders
 * (workloads/events.ts for kube-controller-manager and Kueue, nodes/events.ts for the node
 * controllers, kubelet/events.ts for the kubelet) differ only in how they queue writes; what
 * lands in the API is made here. The scheduler writes events.k8s.io/v1 Events with series
 * (scheduler/events.ts), as kube-scheduler does; it names and creates them here too.
 *
 * An Event is named `<object>.<hex nanoseconds>` in the involved object's namespace (`default`
 * for cluster-scoped objects), with source.component (and source.host for node-local
 * components) and reportingComponent/reportingInstance. Repeats of one event are folded into
 * the Event first written for it by bumping `count` and `lastTimestamp`, as client-go's
 * EventCorrelator does, so `kubectl describe` shows `(x3 over 2m)` as on a real cluster.
 */

import { type Clock, realClock } from '../lib/clock.ts';
import type { KubeObject } from './apiserver/types.ts';
import { type ClusterClient, GVR, type Gvr, isConflict, isNotFound } from './client.ts';

export type EventType = 'Normal' | 'Warning';

export interface EventSource {
  /** source.component and reportingComponent, e.g. `default-scheduler`. */
  component: string;
  /** reportingInstance (the component's instance, e.g. `default-scheduler-troupe`). */
  instance?: string;
  /** source.host: set by node-local components (kubelet). */
  host?: string;
}

/** An Event's involvedObject (core/v1 ObjectReference). */
export interface ObjectReference {
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
  apiVersion: string;
  resourceVersion?: string;
  /** The part of the object the event is about, e.g. `spec.containers{nginx}`. */
  fieldPath?: string;
}

export function objectReference(obj: KubeObject, fieldPath?: string): ObjectReference {
  const m = obj.metadata;
  const ref: ObjectReference = {
    kind: obj.kind,
    namespace: m.namespace || undefined,
    name: m.name ?? '',
    uid: m.uid,
    apiVersion: obj.apiVersion,
    resourceVersion: m.resourceVersion,
  };
  if (fieldPath) ref.fieldPath = fieldPath;
  return ref;
}

/**
 * objectReference(obj)'s fields as one string, for keying occurrences without building the
 * reference (a scheduler retrying a gang all day looks its Event up each time).
 * NUL-separated: kinds, names, uids and versions cannot hold one.
 */
export function referenceKey(obj: KubeObject): string {
  const m = obj.metadata;
  return `${obj.kind}\0${m.namespace ?? ''}\0${m.name ?? ''}\0${m.uid ?? ''}\0${obj.apiVersion}\0${m.resourceVersion ?? ''}`;
}

/** `count` occurrences of one event, the first and last at the given metav1.Times. */
export interface EventOccurrences {
  involved: ObjectReference;
  source: EventSource;
  type: string;
  reason: string;
  message: string;
  first: string;
  last: string;
  count: number;
}

/** What makes two events the same one, whose repeats are folded into one Event. */
export function aggregationKey(e: EventOccurrences): string {
  const o = e.involved;
  return [
    e.source.host ?? '',
    o.kind,
    o.namespace ?? '',
    o.name,
    o.uid ?? '',
    o.fieldPath ?? '',
    e.type,
    e.reason,
    e.message,
  ].join('\u0000');
}

/** `<object>.<hex nanoseconds>`, as client-go names Events. */
export function eventName(objectName: string, nanos: bigint): string {
  return `${objectName}.${nanos.toString(16)}`;
}

/** Aggregation keys remembered, like client-go's EventCorrelator cache. */
const MAX_KEYS = 4096;
/** Names tried for one Event before the write fails (see write). */
const NAME_ATTEMPTS = 5;

/** Writes Events for one recorder, remembering which Event each aggregation key went to. */
export class EventWriter {
  private readonly client: ClusterClient;
  /** Event written for each aggregation key (LRU by insertion order). */
  private readonly written = new Map<string, { namespace: string; name: string }>();
  private lastNanos = 0n;
  private readonly clock: Clock;

  constructor(client: ClusterClient, clock: Clock = realClock) {
    this.client = client;
    this.clock = clock;
  }

  /** A nanosecond time for an Event's name, after every one this writer gave before. */
  stamp(at: Date = new Date(this.clock.now())): bigint {
    let n = BigInt(at.getTime()) * 1_000_000n;
    if (n <= this.lastNanos) n = this.lastNanos + 1n;
    this.lastNanos = n;
    return n;
  }

  /**
   * Adds `e` to the Event written before under `key`, or creates one (named with `stamp`,
   * else the time of writing) when there is none or it was deleted.
   */
  async write(key: string, e: EventOccurrences, stamp?: bigint): Promise<void> {
    const prior = this.written.get(key);
    if (prior) {
      try {
        await this.client.mutate(GVR.events, prior.namespace, prior.name, (ev) => {
          ev.count = ((ev.count as number | undefined) ?? 1) + e.count;
          ev.lastTimestamp = e.last;
        });
        this.remember(key, prior);
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        this.written.delete(key);
      }
    }
    const namespace = e.involved.namespace || 'default';
    const ev: KubeObject = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { namespace },
      involvedObject: e.involved,
      reason: e.reason,
      message: e.message,
      source: e.source.host
        ? { component: e.source.component, host: e.source.host }
        : { component: e.source.component },
      firstTimestamp: e.first,
      lastTimestamp: e.last,
      count: e.count,
      type: e.type,
      eventTime: null,
      reportingComponent: e.source.component,
      reportingInstance: e.source.instance ?? '',
    };
    const { name } = await this.create(GVR.events, ev, e.involved.name, stamp);
    this.remember(key, { namespace, name });
  }

  /**
   * Creates the Event `ev` (core/v1 or events.k8s.io/v1, by `gvr`) named `<objectName>.<hex
   * nanos>`, and says which name and nanoseconds it got. client-go's nanoseconds make names
   * unique; a clock that reads milliseconds (a virtual one above all, where every component
   * acts at the same instant) can give another writer's Event the same name: take the next
   * free one rather than drop this Event.
   */
  async create(
    gvr: Gvr,
    ev: KubeObject,
    objectName: string,
    nanos: bigint = this.stamp(),
  ): Promise<{ name: string; nanos: bigint }> {
    const metadata = ev.metadata as { name?: string };
    for (let attempt = 1; ; attempt++) {
      const name = eventName(objectName, nanos);
      metadata.name = name;
      try {
        await this.client.create(gvr, ev);
        return { name, nanos };
      } catch (err) {
        if (!isConflict(err) || attempt === NAME_ATTEMPTS) throw err;
        nanos = this.stamp(new Date(Number(nanos / 1_000_000n)));
      }
    }
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

/**
 * A recorder's writes, run one at a time in the order queued; a write that fails goes to
 * `onError`, never to whoever queued it. An array with a moving head (compacted now and then),
 * not a promise chain, so `flush` knows when the queue is empty.
 */
export class WriteQueue<T> {
  private readonly items: T[] = [];
  private head = 0;
  private draining: Promise<void> | undefined;
  private readonly run: (item: T) => Promise<void>;
  private readonly onError: (item: T, err: unknown) => void;

  constructor(run: (item: T) => Promise<void>, onError: (item: T, err: unknown) => void) {
    this.run = run;
    this.onError = onError;
  }

  push(item: T): void {
    this.items.push(item);
    this.draining ??= this.drain();
  }

  /** Resolves once every write queued so far is done. */
  async flush(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    try {
      while (this.head < this.items.length) {
        const item = this.items[this.head]!;
        this.items[this.head] = undefined as T;
        this.head++;
        if (this.head > 1024 && this.head * 2 > this.items.length) {
          this.items.splice(0, this.head);
          this.head = 0;
        }
        try {
          await this.run(item);
        } catch (err) {
          this.onError(item, err);
        }
      }
    } finally {
      this.draining = undefined;
    }
  }
}
