/** What every workload controller is built from. */

import type { Clock } from '../../lib/clock.ts';
import type { ClusterClient } from '../client.ts';
import type { EventRecorder } from './events.ts';
import type { InformerFactory } from './informer.ts';
import { type LogFn, Loop } from './loop.ts';

export interface ControllerContext {
  /** A client acting as this controller's service account. */
  client: ClusterClient;
  informers: InformerFactory;
  recorder: EventRecorder;
  log: LogFn;
  workers: number;
  /**
   * Delay that batches syncs triggered by pod events (upstream's Job controller waits 1 s).
   * Every controller shares one thread with the API server here, so without it a controller
   * would rescan its pods after every single pod write.
   */
  batchMs: number;
  /** The time syncs decide by (deadlines, backoffs, timestamps). */
  clock: Clock;
}

export interface RunningController {
  start(): void;
  stop(): Promise<void>;
}

/**
 * A workload controller: one work loop syncing keys, fed by informer subscriptions that
 * end when it stops. Subclasses subscribe in their constructor and implement `sync`.
 */
export abstract class LoopController implements RunningController {
  protected readonly ctx: ControllerContext;
  protected readonly loop: Loop;
  private readonly subscriptions: (() => void)[] = [];

  constructor(ctx: ControllerContext, name: string) {
    this.ctx = ctx;
    this.loop = new Loop({
      name,
      workers: ctx.workers,
      log: ctx.log,
      clock: ctx.clock,
      sync: (k) => this.sync(k),
    });
  }

  protected abstract sync(key: string): Promise<void>;

  /** Keeps a subscription's unsubscribe function, called when the controller stops. */
  protected unsubscribeOnStop(unsubscribe: () => void): void {
    this.subscriptions.push(unsubscribe);
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    for (const u of this.subscriptions.splice(0)) u();
    await this.loop.stop();
  }
}

/** Kubernetes' defaulted int32 field read: a number, else the default. */
export function int(v: unknown, dflt: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : dflt;
}
