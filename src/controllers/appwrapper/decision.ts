/**
 * What the AppWrapper core answers with (the Decision), what it reads (CoreInput), and the
 * pieces every phase writes its answer with: a draft of the status, requeues, Unhealthy.
 */

import {
  type AppWrapper,
  type AppWrapperPhase,
  type AppWrapperStatus,
  type AwCondition,
  Conditions,
  Phases,
  type PodObject,
} from '../../apis/workload.codeflare.dev/v1beta2.ts';
import { setCondition } from '../../kube/conditions.ts';
import { jsonEqual } from '../../lib/json.ts';
import type { KubeObject } from '../../runtime/index.ts';
import type { AppWrapperConfig, Effective } from './config.ts';

/** Upstream's fixed intervals. */
export const DELETION_POLL_MS = 5000;
export const CREATE_RETRY_MS = 1000;
export const WARMUP_POLL_MS = 5000;
export const READY_RECHECK_MS = 60_000;

export interface CoreInput {
  aw: AppWrapper;
  now: Date;
  config: AppWrapperConfig;
  /** The live components, aligned with status.componentStatus (undefined: absent). */
  components?: (KubeObject | undefined)[];
  /** Pods labelled with the AppWrapper. */
  pods?: PodObject[];
  /** Labels of the AppWrapper's namespace (phase Empty without webhook only). */
  namespaceLabels?: Record<string, string>;
  /**
   * Autopilot's node health (upstream's NodeHealthMonitor): by node name, the resources its
   * labels mark NoExecute. Read by the Running phase when autopilot.monitorNodes is on.
   */
  noExecuteNodes?: ReadonlyMap<string, ReadonlySet<string>>;
}

export interface DeleteAction {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  /** Preconditions: only this incarnation. */
  uid?: string;
  /** 0 for forceful deletion. */
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Background';
  /** Set for components (not for pods). */
  componentIndex?: number;
}

export interface EventSpec {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface DeployItem {
  index: number;
  obj: KubeObject;
}

export interface Decision {
  /** Metadata/spec changes written (merge patch) before the status. */
  update?: { finalizers?: string[]; labels?: Record<string, string>; suspend?: boolean };
  /** The whole new status, when it differs from the observed one. */
  status?: AppWrapperStatus;
  /** A failed status write is not an error (upstream's best-effort Terminating patch). */
  statusBestEffort?: boolean;
  /** Phase Resuming: objects to create, in order, once `status` is written. */
  deploy?: DeployItem[];
  deletes: DeleteAction[];
  /** Drop the finalizer once the rest is done. */
  removeFinalizer?: boolean;
  events: EventSpec[];
  requeueAfterMs?: number;
  /** Malformed annotations, for the log. */
  problems: { annotation: string; value: string }[];
}

export type DeployResult =
  | { index: number; outcome: 'created'; name: string }
  | { index: number; outcome: 'exists'; controlledByUs: boolean }
  | { index: number; outcome: 'failed'; message: string; fatal: boolean };

// ---- helpers ---------------------------------------------------------------

export function findCond(conds: AwCondition[] | undefined, type: string): AwCondition | undefined {
  return conds?.find((c) => c.type === type);
}

export function isTrue(conds: AwCondition[] | undefined, type: string): boolean {
  return findCond(conds, type)?.status === 'True';
}

export function ltt(conds: AwCondition[] | undefined, type: string): number {
  const t = Date.parse(findCond(conds, type)?.lastTransitionTime ?? '');
  return Number.isFinite(t) ? t : 0;
}

export class Draft {
  readonly status: AppWrapperStatus;
  private readonly now: Date;

  constructor(observed: AppWrapperStatus | undefined, now: Date) {
    this.status = structuredClone(observed ?? {});
    this.now = now;
  }

  get conditions(): AwCondition[] {
    this.status.conditions ??= [];
    return this.status.conditions;
  }

  set(type: string, status: AwCondition['status'], reason: string, message = ''): void {
    setCondition(this.conditions, { type, status, reason, message, lastTransitionTime: '' }, this.now);
  }

  /** Upstream's clearCondition: only a True condition turns False. */
  clear(type: string, reason: string, message = ''): void {
    if (isTrue(this.status.conditions, type)) this.set(type, 'False', reason, message);
  }

  isTrue(type: string): boolean {
    return isTrue(this.status.conditions, type);
  }

  since(type: string): number {
    return ltt(this.status.conditions, type);
  }

  get phase(): AppWrapperPhase {
    return this.status.phase ?? '';
  }

  set phase(p: AppWrapperPhase) {
    this.status.phase = p;
  }
}

export function finish(d: Decision, draft: Draft, observed: AppWrapperStatus | undefined): Decision {
  if (!jsonEqual(normalize(draft.status), normalize(observed ?? {}))) d.status = draft.status;
  return d;
}

/** resettingCount 0 is omitted, as Go's omitempty does. */
function normalize(s: AppWrapperStatus): AppWrapperStatus {
  const out = { ...s };
  if (!out.resettingCount) delete out.resettingCount;
  return out;
}

export function requeue(d: Decision, ms: number): void {
  const v = Math.max(1, Math.ceil(ms));
  d.requeueAfterMs = d.requeueAfterMs === undefined ? v : Math.min(d.requeueAfterMs, v);
}

export function newDecision(eff: Effective): Decision {
  return { deletes: [], events: [], problems: eff.problems };
}

export function resetOrFail(draft: Draft, eff: Effective, terminal: boolean, increment: number): void {
  const count = draft.status.resettingCount ?? 0;
  if (!terminal && count < eff.retryLimit) {
    draft.status.resettingCount = count + increment;
    draft.phase = Phases.Resetting;
  } else {
    draft.phase = Phases.Failed;
  }
}

export function unhealthy(
  draft: Draft,
  d: Decision,
  reason: string,
  message: string,
  eventMessage?: string,
): void {
  draft.set(Conditions.Unhealthy, 'True', reason, message);
  d.events.push({
    type: 'Normal',
    reason: Conditions.Unhealthy,
    message: eventMessage ?? `${reason}: ${message}`,
  });
}

/**
 * Kueue (or a user) suspended a deployed or deploying AppWrapper: go to Suspending with
 * upstream's event ("Externally suspended while in the Running phase").
 */
export function externallySuspended(draft: Draft, d: Decision, phase: string): void {
  d.events.push({
    type: 'Normal',
    reason: 'Suspending',
    message: `Externally suspended while in the ${phase} phase`,
  });
  draft.phase = Phases.Suspending;
}
