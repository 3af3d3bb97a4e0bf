/**
 * Controller-wide configuration (upstream's AppWrapperConfig) and the per-AppWrapper values
 * the fault-tolerance annotations select within its ceilings.
 */

import type { LabelSelectorObject } from '../../kube/labels.ts';
import { type AppWrapper, Annotations } from './api.ts';
import { formatGoDuration, parseGoDuration } from '../../kube/duration.ts';

/** Durations in milliseconds. Upstream's config names are in the comments. */
export interface FaultToleranceOptions {
  /** admissionGracePeriod: how long fewer pods than expected may exist (default 1m). */
  admissionGracePeriodMs: number;
  /** warmupGracePeriod: how long the pods may take to all run (default 5m). */
  warmupGracePeriodMs: number;
  /** failureGracePeriod: how long failed pods are tolerated before a reset (default 1m). */
  failureGracePeriodMs: number;
  /** resetPause: the pause between deleting the components and redeploying them (default 90s). */
  retryPausePeriodMs: number;
  /** retryLimit: resets before the AppWrapper fails (default 3). */
  retryLimit: number;
  /** deletionGracePeriod: how long before deletion turns forceful (default 10m). */
  forcefulDeletionGracePeriodMs: number;
  /** gracePeriodCeiling: the most any annotation may ask for (default 24h). */
  gracePeriodCeilingMs: number;
  /** successTTLCeiling: how long a Succeeded AppWrapper keeps its resources, at most (default 7d). */
  successTTLCeilingMs: number;
}

export interface AppWrapperConfig {
  /** Suspend new AppWrappers for Kueue and default their queue (default true). */
  enableKueueIntegrations: boolean;
  /** Put this `kueue.x-k8s.io/queue-name` on AppWrappers that have none. */
  defaultQueueName: string;
  /** Suspend AppWrappers without a queue name too (Kueue's manageJobsWithoutQueueName; default true). */
  manageJobsWithoutQueueName: boolean;
  /** Namespaces where that applies (default: all but kube-system, kueue-system, appwrapper-system). */
  manageJobsNamespaceSelector: LabelSelectorObject | undefined;
  /** Check with a SubjectAccessReview that the creator may create every wrapped kind (default true). */
  userRBACAdmissionCheck: boolean;
  /** Set on pod templates that name no scheduler. */
  schedulerName: string;
  faultTolerance: FaultToleranceOptions;
}

export type AppWrapperConfigInput = Partial<Omit<AppWrapperConfig, 'faultTolerance'>> & {
  faultTolerance?: Partial<FaultToleranceOptions>;
};

export const DEFAULT_FAULT_TOLERANCE: FaultToleranceOptions = {
  admissionGracePeriodMs: 60_000,
  warmupGracePeriodMs: 5 * 60_000,
  failureGracePeriodMs: 60_000,
  retryPausePeriodMs: 90_000,
  retryLimit: 3,
  forcefulDeletionGracePeriodMs: 10 * 60_000,
  gracePeriodCeilingMs: 24 * 3_600_000,
  successTTLCeilingMs: 7 * 24 * 3_600_000,
};

export const DEFAULT_NAMESPACE_SELECTOR: LabelSelectorObject = {
  matchExpressions: [
    {
      key: 'kubernetes.io/metadata.name',
      operator: 'NotIn',
      values: ['kube-system', 'kueue-system', 'appwrapper-system'],
    },
  ],
};

export function resolveConfig(input: AppWrapperConfigInput = {}): AppWrapperConfig {
  const config: AppWrapperConfig = {
    enableKueueIntegrations: input.enableKueueIntegrations ?? true,
    defaultQueueName: input.defaultQueueName ?? '',
    manageJobsWithoutQueueName: input.manageJobsWithoutQueueName ?? true,
    manageJobsNamespaceSelector:
      'manageJobsNamespaceSelector' in input ? input.manageJobsNamespaceSelector : DEFAULT_NAMESPACE_SELECTOR,
    userRBACAdmissionCheck: input.userRBACAdmissionCheck ?? true,
    schedulerName: input.schedulerName ?? '',
    faultTolerance: { ...DEFAULT_FAULT_TOLERANCE, ...input.faultTolerance },
  };
  const err = validateConfig(config);
  if (err) throw new Error(`invalid AppWrapper configuration: ${err}`);
  return config;
}

/** Upstream's ValidateAppWrapperConfig: every default within the ceiling, admission <= warmup. */
export function validateConfig(config: AppWrapperConfig): string | undefined {
  const ft = config.faultTolerance;
  const ceiling = ft.gracePeriodCeilingMs;
  const checks: [string, number][] = [
    ['deletionGracePeriod', ft.forcefulDeletionGracePeriodMs],
    ['resetPause', ft.retryPausePeriodMs],
    ['failureGracePeriod', ft.failureGracePeriodMs],
    ['admissionGracePeriod', ft.admissionGracePeriodMs],
    ['warmupGracePeriod', ft.warmupGracePeriodMs],
  ];
  for (const [name, v] of checks) {
    if (v > ceiling)
      return `${name} ${formatGoDuration(v)} exceeds gracePeriodCeiling ${formatGoDuration(ceiling)}`;
  }
  if (ft.admissionGracePeriodMs > ft.warmupGracePeriodMs) {
    return `admissionGracePeriod ${formatGoDuration(ft.admissionGracePeriodMs)} exceeds warmupGracePeriod ${formatGoDuration(ft.warmupGracePeriodMs)}`;
  }
  if (ft.successTTLCeilingMs <= 0)
    return `successTTLCeiling ${formatGoDuration(ft.successTTLCeilingMs)} is not positive`;
  if (ft.retryLimit < 0) return `retryLimit ${ft.retryLimit} is negative`;
  return undefined;
}

/**
 * Reads upstream's config file section (`appwrapper:` of the operator ConfigMap), whose
 * durations are Go durations ("1m") or, as Go's JSON encoding of time.Duration, nanoseconds.
 */
export function configFromUpstream(section: Record<string, unknown>): AppWrapperConfigInput {
  const out: AppWrapperConfigInput = {};
  if (typeof section.enableKueueIntegrations === 'boolean')
    out.enableKueueIntegrations = section.enableKueueIntegrations;
  if (typeof section.defaultQueueName === 'string') out.defaultQueueName = section.defaultQueueName;
  if (typeof section.userRBACAdmissionCheck === 'boolean')
    out.userRBACAdmissionCheck = section.userRBACAdmissionCheck;
  if (typeof section.schedulerName === 'string') out.schedulerName = section.schedulerName;
  const kjr = section.kueueJobReconciller as Record<string, unknown> | undefined;
  if (kjr && typeof kjr === 'object') {
    if (typeof kjr.manageJobsWithoutQueueName === 'boolean')
      out.manageJobsWithoutQueueName = kjr.manageJobsWithoutQueueName;
    if ('manageJobsNamespaceSelector' in kjr) {
      out.manageJobsNamespaceSelector = (kjr.manageJobsNamespaceSelector ?? undefined) as
        | LabelSelectorObject
        | undefined;
    }
  }
  const ft = section.faultTolerance as Record<string, unknown> | undefined;
  if (ft && typeof ft === 'object') {
    const d = (key: string): number | undefined => {
      const v = ft[key];
      if (typeof v === 'number') return v / 1e6;
      if (typeof v === 'string') {
        const ms = parseGoDuration(v);
        if (ms === undefined) throw new Error(`faultTolerance.${key}: "${v}" is not a duration`);
        return ms;
      }
      return undefined;
    };
    const f: Partial<FaultToleranceOptions> = {};
    const set = (k: keyof FaultToleranceOptions, v: number | undefined) => {
      if (v !== undefined) f[k] = v;
    };
    set('admissionGracePeriodMs', d('admissionGracePeriod'));
    set('warmupGracePeriodMs', d('warmupGracePeriod'));
    set('failureGracePeriodMs', d('failureGracePeriod'));
    set('retryPausePeriodMs', d('resetPause'));
    set('forcefulDeletionGracePeriodMs', d('deletionGracePeriod'));
    set('gracePeriodCeilingMs', d('gracePeriodCeiling'));
    set('successTTLCeilingMs', d('successTTLCeiling'));
    if (typeof ft.retryLimit === 'number') f.retryLimit = ft.retryLimit;
    out.faultTolerance = f;
  }
  return out;
}

/** A malformed annotation: upstream logs it and uses the default. */
export interface AnnotationProblem {
  annotation: string;
  value: string;
}

/** The fault-tolerance values in force for one AppWrapper (annotations over defaults, capped). */
export interface Effective {
  admissionGraceMs: number;
  warmupGraceMs: number;
  failureGraceMs: number;
  retryPauseMs: number;
  retryLimit: number;
  forcefulDeletionGraceMs: number;
  deletionOnFailureGraceMs: number;
  successTTLMs: number;
  terminalExitCodes: number[];
  retryableExitCodes: number[];
  problems: AnnotationProblem[];
}

function exitCodes(value: string | undefined): number[] {
  if (value === undefined) return [];
  const out: number[] = [];
  for (const part of value.split(',')) {
    // strconv.Atoi: an optional sign and digits, nothing else (no spaces).
    if (/^[+-]?\d+$/.test(part)) out.push(Number.parseInt(part, 10));
  }
  return out;
}

export function effective(aw: AppWrapper, config: AppWrapperConfig): Effective {
  const ann = aw.metadata.annotations ?? {};
  const ft = config.faultTolerance;
  const problems: AnnotationProblem[] = [];
  const limit = (ms: number) => (ms < 0 ? 0 : Math.min(ms, ft.gracePeriodCeilingMs));
  const duration = (key: string, dflt: number): number => {
    const v = ann[key];
    if (v === undefined) return limit(dflt);
    const ms = parseGoDuration(v);
    if (ms === undefined) {
      problems.push({ annotation: key, value: v });
      return limit(dflt);
    }
    return limit(ms);
  };
  let retryLimit = ft.retryLimit;
  const rl = ann[Annotations.retryLimit];
  if (rl !== undefined) {
    if (/^[+-]?\d+$/.test(rl)) retryLimit = Number.parseInt(rl, 10);
    else problems.push({ annotation: Annotations.retryLimit, value: rl });
  }
  // successTTL: only a positive value below the ceiling counts; anything else is the ceiling.
  let successTTLMs = ft.successTTLCeilingMs;
  const ttl = ann[Annotations.successTTLDuration];
  if (ttl !== undefined) {
    const ms = parseGoDuration(ttl);
    if (ms === undefined) problems.push({ annotation: Annotations.successTTLDuration, value: ttl });
    else if (ms > 0 && ms < ft.successTTLCeilingMs) successTTLMs = ms;
  }
  return {
    admissionGraceMs: duration(Annotations.admissionGracePeriodDuration, ft.admissionGracePeriodMs),
    warmupGraceMs: duration(Annotations.warmupGracePeriodDuration, ft.warmupGracePeriodMs),
    failureGraceMs: duration(Annotations.failureGracePeriodDuration, ft.failureGracePeriodMs),
    retryPauseMs: duration(Annotations.retryPausePeriodDuration, ft.retryPausePeriodMs),
    retryLimit,
    forcefulDeletionGraceMs: duration(
      Annotations.forcefulDeletionGracePeriodDuration,
      ft.forcefulDeletionGracePeriodMs,
    ),
    deletionOnFailureGraceMs: duration(Annotations.deletionOnFailureGracePeriodDuration, 0),
    successTTLMs,
    terminalExitCodes: exitCodes(ann[Annotations.terminalExitCodes]),
    retryableExitCodes: exitCodes(ann[Annotations.retryableExitCodes]),
    problems,
  };
}
