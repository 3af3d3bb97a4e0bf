/**
 * The Event recorder of the node controllers (node lifecycle, taint eviction, the node
 * simulator's kubelet NodeReady/NodeNotReady): core/v1 Events written through the cluster's
 * EventWriter (../events.ts), repeats folded into one Event, as client-go's record package
 * (which pkg/controller/nodelifecycle and pkg/controller/tainteviction use) does.
 *
 * Writes are queued and never fail the caller. Repeats that arrive while an earlier copy
 * is still queued are merged into that queued write.
 */
import { rfc3339 } from '../../kube/conditions.ts';
import { type Clock, realClock } from '../../lib/clock.ts';
import type { KubeObject } from '../apiserver/types.ts';
import type { ClusterClient } from '../client.ts';
import {
  aggregationKey,
  type EventOccurrences,
  type EventSource,
  type EventType,
  EventWriter,
  objectReference,
  WriteQueue,
} from '../events.ts';

export type { EventSource, EventType } from '../events.ts';

interface PendingWrite {
  key: string;
  /** Occurrences folded into this write so far. */
  e: EventOccurrences;
}

export type EventLog = (msg: string, fields: Record<string, unknown>) => void;

export class EventRecorder {
  readonly source: EventSource;
  private readonly writer: EventWriter;
  private readonly log: EventLog;
  /** Writes not yet sent, by key, so repeats can join them. */
  private readonly pending = new Map<string, PendingWrite>();
  private readonly queue: WriteQueue<PendingWrite>;
  private stopped = false;
  private readonly clock: Clock;

  constructor(client: ClusterClient, source: EventSource, log?: EventLog, clock: Clock = realClock) {
    this.clock = clock;
    this.writer = new EventWriter(client, clock);
    this.source = source;
    this.log = log ?? (() => {});
    this.queue = new WriteQueue(
      (w) => {
        // Later repeats start a new write once this one is under way.
        this.pending.delete(w.key);
        return this.writer.write(w.key, w.e);
      },
      (w, err) =>
        this.log('event not recorded', {
          reason: w.e.reason,
          error: err instanceof Error ? err.message : String(err),
        }),
    );
  }

  event(obj: KubeObject, type: EventType, reason: string, message: string): void {
    if (this.stopped) return;
    const ts = rfc3339(new Date(this.clock.now()));
    const e: EventOccurrences = {
      involved: objectReference(obj),
      source: this.source,
      type,
      reason,
      message,
      first: ts,
      last: ts,
      count: 1,
    };
    const key = aggregationKey(e);
    const queued = this.pending.get(key);
    if (queued) {
      queued.e.count++;
      queued.e.last = ts;
      return;
    }
    const w: PendingWrite = { key, e };
    this.pending.set(key, w);
    this.queue.push(w);
  }

  /** Resolves once every event recorded so far has been written. */
  async flush(): Promise<void> {
    await this.queue.flush();
  }

  async stop(): Promise<void> {
    await this.flush();
    this.stopped = true;
  }
}
