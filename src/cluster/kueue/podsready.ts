/**
 * Kueue's waitForPodsReady (configuration apis/config/v1beta2 WaitForPodsReady): the job
 * reconciler keeps a PodsReady condition on each Workload (jobframework
 * generatePodsReadyCondition), and the workload controller evicts an admitted Workload whose
 * pods are not ready within the timeout (core/workload_controller.go reconcileNotReadyTimeout),
 * requeueing it after an exponential backoff (workload.UpdateRequeueState) or, past
 * backoffLimitCount, deactivating it. Pure functions here; the stand-in applies them.
 */

import { findCondition } from '../../kube/conditions.ts';
import { parseGoDuration } from '../../kube/duration.ts';
import { backoffDelay } from '../../lib/backoff.ts';
import { random as programRandom } from '../../lib/random.ts';
import type { Workload } from './api.ts';
import { WorkloadConditions } from './api.ts';

/** Kueue's configuration section, as written in its config file. */
export interface WaitForPodsReadyConfig {
  /** Go duration; Kueue v0.19's default (config v1beta2) is 30m (v1beta1's was 5m). */
  timeout?: string;
  blockAdmission?: boolean;
  /** Go duration; defaults to the timeout, "0s" disables it. */
  recoveryTimeout?: string;
  requeuingStrategy?: {
    timestamp?: 'Eviction' | 'Creation';
    /** Re-queueings before the workload is deactivated (unset: no limit). */
    backoffLimitCount?: number;
    backoffBaseSeconds?: number;
    backoffMaxSeconds?: number;
  };
}

export interface PodsReadySettings {
  timeoutMs: number;
  recoveryTimeoutMs?: number;
  blockAdmission: boolean;
  timestamp: 'Eviction' | 'Creation';
  backoffLimitCount?: number;
  backoffBaseSeconds: number;
  backoffMaxSeconds: number;
  /** The embedded cluster's --time-scale: every duration above runs this many times faster. */
  timeScale: number;
}

/**
 * Kueue's defaults (apis/config/v1beta2/defaults.go: DefaultWaitForPodsReadyTimeout 30m,
 * recoveryTimeout = timeout, blockAdmission false, timestamp Eviction, backoff 60 s / 3600 s);
 * a malformed duration is an error naming the field.
 */
export function podsReadySettings(cfg: WaitForPodsReadyConfig, timeScale = 1): PodsReadySettings {
  const duration = (field: string, v: string | undefined, dflt: number): number => {
    if (v === undefined) return dflt;
    const ms = parseGoDuration(v);
    if (ms === undefined || ms < 0)
      throw new Error(
        `waitForPodsReady.${field}: invalid duration "${v}" (use a Go duration such as 5m or 90s)`,
      );
    return ms;
  };
  // A zero timeout is an unset one (defaults.go: Timeout.Duration == 0 gets the default).
  const timeoutMs = duration('timeout', cfg.timeout, 0) || 30 * 60_000;
  const recovery = duration('recoveryTimeout', cfg.recoveryTimeout, timeoutMs);
  const rs = cfg.requeuingStrategy ?? {};
  const out: PodsReadySettings = {
    timeoutMs,
    blockAdmission: cfg.blockAdmission ?? false,
    timestamp: rs.timestamp ?? 'Eviction',
    backoffBaseSeconds: rs.backoffBaseSeconds ?? 60,
    backoffMaxSeconds: rs.backoffMaxSeconds ?? 3600,
    timeScale,
  };
  if (recovery > 0) out.recoveryTimeoutMs = recovery;
  if (rs.backoffLimitCount !== undefined) out.backoffLimitCount = rs.backoffLimitCount;
  return out;
}

/**
 * The n-th re-queueing delay: base·2^(n−1) capped at max, plus Kueue's 0.01% jitter
 * (wait.NewBackoff(base, max, 2, 0.0001).WaitTime(n)).
 */
export function requeueBackoffMs(
  n: number,
  baseSeconds: number,
  maxSeconds: number,
  random: () => number = programRandom,
): number {
  const d = backoffDelay(n - 1, baseSeconds * 1000, maxSeconds * 1000);
  return d + d * 0.0001 * random();
}

const NOT_READY = 'Not all pods are ready or succeeded';
const RECOVERING = 'At least one pod has failed, waiting for recovery';
const READY = 'All pods reached readiness and the workload is running';

/** generatePodsReadyCondition: the PodsReady condition a Workload should carry. */
export function podsReadyCondition(
  wl: Workload,
  admitted: boolean,
  podsReady: boolean,
): { status: 'True' | 'False'; reason: string; message: string } {
  if (!admitted) return { status: 'False', reason: 'WaitForStart', message: NOT_READY };
  const cur = findCondition(wl.status?.conditions, WorkloadConditions.PodsReady);
  if (podsReady) {
    const recovered = cur && (cur.reason === 'WaitForRecovery' || cur.reason === 'Recovered');
    return { status: 'True', reason: recovered ? 'Recovered' : 'Started', message: READY };
  }
  if (cur?.status === 'True' || cur?.reason === 'WaitForRecovery')
    return { status: 'False', reason: 'WaitForRecovery', message: RECOVERING };
  return { status: 'False', reason: 'WaitForStart', message: NOT_READY };
}

/**
 * admittedNotReadyWorkload: for an admitted Workload whose pods are not ready, which timeout
 * runs (WaitForStart since admission, WaitForRecovery since the pods stopped being ready)
 * and how long is left; undefined when none runs.
 */
export function notReadyTimeout(
  wl: Workload,
  s: PodsReadySettings,
  now: number,
): { cause: 'WaitForStart' | 'WaitForRecovery'; remainingMs: number } | undefined {
  const pr = findCondition(wl.status?.conditions, WorkloadConditions.PodsReady);
  if (pr?.status === 'True') return undefined;
  if (!pr || pr.reason === 'WaitForStart' || pr.reason === 'PodsReady') {
    const admitted = findCondition(wl.status?.conditions, WorkloadConditions.Admitted);
    const since = Date.parse(admitted?.lastTransitionTime ?? '') || now;
    return { cause: 'WaitForStart', remainingMs: Math.max(s.timeoutMs / s.timeScale - (now - since), 0) };
  }
  if (pr.reason === 'WaitForRecovery' && s.recoveryTimeoutMs !== undefined) {
    const since = Date.parse(pr.lastTransitionTime) || now;
    return {
      cause: 'WaitForRecovery',
      remainingMs: Math.max(s.recoveryTimeoutMs / s.timeScale - (now - since), 0),
    };
  }
  return undefined;
}
