/**
 * The Event recorder of the simulated kube-controller-manager (and Kueue), as client-go's
 * record.EventRecorder: Events written through the cluster's EventWriter (../events.ts) under
 * the controller's component, repeats folded into one Event.
 *
 * Writes are fire-and-forget (a failed event never fails a sync) but ordered, and
 * `flush()` waits for them.
 */
import { rfc3339 } from '../../kube/conditions.ts';
import { type Clock, realClock } from '../../lib/clock.ts';
import type { KubeObject } from '../apiserver/types.ts';
import type { ClusterClient } from '../client.ts';
import {
  aggregationKey,
  type EventOccurrences,
  type EventType,
  EventWriter,
  objectReference,
} from '../events.ts';
import type { LogFn } from './loop.ts';

export class EventRecorder {
  readonly component: string;
  private readonly writer: EventWriter;
  private readonly log: LogFn;
  private chain: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly clock: Clock;

  constructor(client: ClusterClient, component: string, log?: LogFn, clock: Clock = realClock) {
    this.clock = clock;
    this.writer = new EventWriter(client, clock);
    this.component = component;
    this.log = log ?? (() => {});
  }

  event(obj: KubeObject, type: EventType, reason: string, message: string): void {
    if (this.stopped) return;
    const now = new Date(this.clock.now());
    const stamp = this.writer.stamp(now);
    const ts = rfc3339(now);
    const e: EventOccurrences = {
      involved: objectReference(obj),
      source: { component: this.component },
      type,
      reason,
      message,
      first: ts,
      last: ts,
      count: 1,
    };
    this.chain = this.chain
      .then(() => this.writer.write(aggregationKey(e), e, stamp))
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
}
