/**
 * core/v1 Events as a kubelet records them, written by the cluster's EventWriter (../events.ts):
 * source.component `kubelet` and source.host the
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

import { rfc3339 } from '../../kube/conditions.ts';
import { type Clock, realClock } from '../../lib/clock.ts';
import type { ClusterClient } from '../client.ts';
import { aggregationKey, type EventOccurrences, EventWriter, type ObjectReference } from '../events.ts';
import { Fifo } from './fifo.ts';

export { objectReference as targetOf } from '../events.ts';

export interface KubeletEvent {
  target: ObjectReference;
  type: string;
  reason: string;
  message: string;
  /** source.host; empty for events about objects that belong to no node (Stages). */
  host: string;
}

export class KubeletEvents {
  private readonly clock: Clock;
  private readonly writer: EventWriter;
  private readonly component: string;
  private readonly maxBacklog: number;
  private readonly concurrency: number;
  private readonly queue = new Fifo<{ ev: KubeletEvent; at: Date; nanos: bigint }>();
  private readonly idle: (() => void)[] = [];
  private active = 0;
  private stopped = false;
  private stopping = false;
  dropped = 0;
  written = 0;

  private readonly busy: () => boolean;

  constructor(
    client: ClusterClient,
    opts: {
      component?: string;
      maxBacklog?: number;
      concurrency?: number;
      busy?: () => boolean;
      clock?: Clock;
    } = {},
  ) {
    this.clock = opts.clock ?? realClock;
    this.writer = new EventWriter(client, this.clock);
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
    const at = new Date(this.clock.now());
    this.queue.push({ ev, at, nanos: this.writer.stamp(at) });
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
    const ts = rfc3339(at);
    const e: EventOccurrences = {
      involved: ev.target,
      source: { component: this.component, host: ev.host, instance: ev.host },
      type: ev.type,
      reason: ev.reason,
      message: ev.message,
      first: ts,
      last: ts,
      count: 1,
    };
    await this.writer.write(aggregationKey(e), e, nanos);
    this.written++;
  }
}
