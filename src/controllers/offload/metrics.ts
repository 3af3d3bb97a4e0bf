/**
 * Burst offloading's Prometheus metrics (docs/offload.md, "Metrics"). Remote pods and what
 * they cost are read from the virtual pods in the cache at scrape time (each remote pod
 * has one, annotated with its id and price); the counters count writes the API server
 * accepted.
 */

import { cacheGauge, countBy, counter, type KubeObject, type MetricsContext } from '../../runtime/index.ts';
import { POD } from './context.ts';
import { isVirtualPod } from './core.ts';
import * as K from './keys.ts';
import type { Pod } from './types.ts';

/** Why a Job was offloaded (`runpod.io/offload-reason`). */
const REASONS = ['Requested', 'PendingTooLong', 'TooManyPending'] as const;
/** Why a launch was refused (`runpod.io/offload-error-class`). */
const ERROR_CLASSES = [
  'Invalid',
  'Unexpressible',
  'Unresolved',
  'Unauthorized',
  'Rejected',
  'Payment',
  'NoCapacity',
  'Budget',
] as const;
/** A value outside those lists (a newer troupe's, or another writer's). */
const OTHER = 'Other';

const STATES = ['Launching', 'Pending', 'Running', 'Terminating'] as const;
type RemoteState = (typeof STATES)[number];

function bounded(value: string | undefined, known: readonly string[]): string {
  return value !== undefined && known.includes(value) ? value : OTHER;
}

/**
 * Where a virtual pod's remote pod stands: Launching (claimed, the remote pod not created or
 * not linked yet), Pending or Running (as mirrored on the virtual pod), Terminating (finished
 * or deleted, the remote pod not terminated yet); undefined once it is terminated.
 */
export function remoteState(vpod: Pod): RemoteState | undefined {
  const a = vpod.metadata.annotations ?? {};
  if (a[K.REMOTE_TERMINATED] === 'true') return undefined;
  if (!a[K.POD_ID]) return 'Launching';
  const phase = vpod.status?.phase;
  if (vpod.metadata.deletionTimestamp || phase === 'Succeeded' || phase === 'Failed') return 'Terminating';
  return phase === 'Running' ? 'Running' : 'Pending';
}

/**
 * What the remote pods not terminated yet cost, in USD per hour: a finished Job's remote
 * pod bills until it is terminated, which is when an operator most needs to see it.
 */
export function billingSpend(vpods: readonly Pod[]): number {
  let sum = 0;
  for (const p of vpods) {
    if (remoteState(p) === undefined) continue;
    const c = Number(p.metadata.annotations?.[K.COST_PER_HR]);
    if (Number.isFinite(c)) sum += c;
  }
  return Math.round(sum * 1000) / 1000;
}

function virtualPods(pods: readonly KubeObject[]): Pod[] {
  return (pods as readonly Pod[]).filter(isVirtualPod);
}

/** Remote pods by state; every state is reported, zero or not, so a series never vanishes. */
export function remotePodsByState(pods: readonly KubeObject[]): [{ state: string }, number][] {
  return countBy(virtualPods(pods), 'state', STATES, (p) => remoteState(p as Pod));
}

export interface OffloadMetrics {
  /**
   * A Job's offload was written (`offload-state: Offloaded`), with its offload reason.
   * Counted once per Job by this process: the write is repeated while the cache still shows
   * the Job Launching, and an interrupted launch is finished by the follow step.
   */
  offloaded(jobUid: string, reason: string): void;
  /** The Job's offload is over (its finalizer removed): its uid need not be remembered. */
  forget(jobUid: string): void;
  /** A launch was refused and the Job stays local (an `Offload<class>` Warning). */
  launchFailed(errorClass: string): void;
}

export function offloadMetrics(m: MetricsContext): OffloadMetrics {
  cacheGauge(m, {
    name: 'troupe_offload_remote_pods',
    help: 'Remote pods by state, from the virtual pods in the cache (Launching: claimed, not linked to a remote pod yet; Terminating: finished or deleted, not terminated yet).',
    labelNames: ['state'],
    kind: POD,
    samples: remotePodsByState,
  });
  cacheGauge(m, {
    name: 'troupe_offload_spend_usd_per_hour',
    help: 'What the remote pods troupe launched cost now, in USD per hour: runpod.io/cost-per-hr summed over virtual pods whose remote pod is not terminated yet (finished ones included until it is).',
    labelNames: [],
    kind: POD,
    samples: (pods) => [[{}, billingSpend(virtualPods(pods))]],
  });
  const offloaded = counter(m, {
    name: 'troupe_offload_jobs_offloaded_total',
    help: 'Jobs offloaded to a remote pod, by reason (Requested, PendingTooLong, TooManyPending).',
    labelNames: ['reason'],
  });
  const failures = counter(m, {
    name: 'troupe_offload_launch_failures_total',
    help: 'Launches refused, the Job left local, by error class (runpod.io/offload-error-class): one per remote create refused, and one per refusal before any create (an invalid Job) until its message changes.',
    labelNames: ['error_class'],
  });
  for (const reason of [...REASONS, OTHER]) offloaded.inc({ reason }, 0);
  for (const errorClass of [...ERROR_CLASSES, OTHER]) failures.inc({ error_class: errorClass }, 0);
  const counted = new Set<string>();
  return {
    offloaded: (jobUid, reason) => {
      if (counted.has(jobUid)) return;
      counted.add(jobUid);
      offloaded.inc({ reason: bounded(reason, REASONS) });
    },
    forget: (jobUid) => counted.delete(jobUid),
    launchFailed: (errorClass) => failures.inc({ error_class: bounded(errorClass, ERROR_CLASSES) }),
  };
}
