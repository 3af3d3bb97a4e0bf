/** What every workload controller is built from. */
import type { ClusterClient } from '../client.ts';
import type { EventRecorder } from './events.ts';
import type { InformerFactory } from './informer.ts';
import type { LogFn } from './loop.ts';

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
}

export interface RunningController {
  start(): void;
  stop(): Promise<void>;
}

/** Kubernetes' defaulted int32 field read: a number, else the default. */
export function int(v: unknown, dflt: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : dflt;
}
