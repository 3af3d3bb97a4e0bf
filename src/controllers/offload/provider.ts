/**
 * What burst offloading needs from a place to run Jobs: RunPod (REST v2) or another
 * Kubernetes cluster. Providers keep no state that matters: every remote pod carries tags
 * (cluster, namespace, Job, Job uid) so it can be found again after a restart.
 */
import type { Client } from '../../runtime/index.ts';
import type { RemotePod } from './types.ts';
import type { LaunchRequest } from './workload.ts';

export type LaunchOutcome =
  | { kind: 'launched'; pod: RemotePod; gpuTypeId?: string; costPerHr: number }
  /** Nothing placed now (no fitting or free GPU type, or the budget is spent); try again later. */
  | { kind: 'unavailable'; errorClass: 'NoCapacity' | 'Budget'; message: string }
  /** The provider refused for good: the Job stays local (Payment is retried at the resync). */
  | { kind: 'failed'; errorClass: 'Unauthorized' | 'Payment' | 'Rejected'; message: string }
  | { kind: 'rateLimited'; retryAfterMs: number; message: string };

export interface LaunchHooks {
  /**
   * Awaited before every create request is sent. The controller records the moment on the
   * Job: a create that times out (or whose caller dies) may still land later, and a retry
   * must not launch a second pod before such a create has had time to show up.
   */
  beforeCreate?(): Promise<void>;
}

export interface LaunchLimits {
  /** USD per hour a pod may cost. */
  maxPrice: number;
  /** USD per hour the spending cap still allows (Infinity without a cap). */
  budgetLeft: number;
}

/** A failure worth retrying (5xx, timeouts, connection errors) or a rate limit. */
export class ProviderError extends Error {
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(message: string, opts: { status?: number; retryAfterMs?: number; cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
    this.name = 'ProviderError';
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

export interface OffloadProvider {
  /** `runpod` or `cluster/<name>`: written on offloaded Jobs. */
  readonly name: string;
  /** Whether credentials are configured at all. */
  configured(): boolean;
  /** Resolves when the provider answers with the configured credentials; rejects otherwise. */
  ping(signal?: AbortSignal): Promise<void>;
  launch(
    req: LaunchRequest,
    limits: LaunchLimits,
    signal?: AbortSignal,
    hooks?: LaunchHooks,
  ): Promise<LaunchOutcome>;
  /** The remote pod, or undefined when it no longer exists. */
  get(id: string, signal?: AbortSignal): Promise<RemotePod | undefined>;
  /** Every remote pod tagged with this cluster's name. */
  list(signal?: AbortSignal): Promise<RemotePod[]>;
  /** Terminates a remote pod; succeeds when it is already gone. */
  terminate(id: string, signal?: AbortSignal): Promise<void>;
  /**
   * Watches the pod's log stream for the exit marker of a wrapped command and calls
   * `onExit` once; keeps reconnecting (resuming where it stopped) until `signal` aborts or
   * the returned function is called. Providers that report exit codes themselves omit it.
   */
  watchExit?(pod: RemotePod, onExit: (code: number) => void, signal: AbortSignal): () => void;
  /** Hands the provider the local cluster's client (called before each use; a provider reading its credentials from a Secret needs it). */
  attach?(local: Client): void;
  /** Releases connections (called when the controllers stop). */
  close?(): Promise<void>;
}
