/**
 * Controller-wide configuration (upstream's AppWrapperConfig) and the per-AppWrapper values
 * the fault-tolerance annotations select within its ceilings.
 */

import { parse as parseYaml } from 'yaml';
import { Annotations, type AppWrapper } from '../../apis/workload.codeflare.dev/v1beta2.ts';
import { formatGoDuration, parseGoDuration } from '../../kube/duration.ts';
import type { LabelSelectorObject } from '../../kube/labels.ts';

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

/** A node label Autopilot sets for a resource, and what it means (upstream's v1.Taint). */
export interface ResourceTaint {
  key: string;
  value: string;
  effect: 'NoExecute' | 'NoSchedule' | 'PreferNoSchedule';
}

/** Upstream's AutopilotConfig: node health from Autopilot's labels. */
export interface AutopilotOptions {
  /** Add node anti-affinity for unhealthy nodes to pod templates requesting the resource (default true). */
  injectAntiAffinities: boolean;
  /** Reset AppWrappers whose running pods use a NoExecute-labelled resource (default true). */
  monitorNodes: boolean;
  /** By resource name, the node labels that mark it unhealthy. */
  resourceTaints: Record<string, ResourceTaint[]>;
  /** Weight of the preferred anti-affinity for PreferNoSchedule labels (default 50). */
  preferNoScheduleWeight: number;
}

/** Upstream's defaults (pkg/config/config.go NewAppWrapperConfig, v1.2.1). */
export const DEFAULT_AUTOPILOT: AutopilotOptions = {
  injectAntiAffinities: true,
  monitorNodes: true,
  resourceTaints: {
    'nvidia.com/gpu': [
      { key: 'autopilot.ibm.com/gpuhealth', value: 'WARN', effect: 'PreferNoSchedule' },
      { key: 'autopilot.ibm.com/gpuhealth', value: 'TESTING', effect: 'NoSchedule' },
      { key: 'autopilot.ibm.com/gpuhealth', value: 'EVICT', effect: 'NoExecute' },
    ],
  },
  preferNoScheduleWeight: 50,
};

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
  autopilot: AutopilotOptions;
}

export type AppWrapperConfigInput = Partial<Omit<AppWrapperConfig, 'faultTolerance' | 'autopilot'>> & {
  faultTolerance?: Partial<FaultToleranceOptions>;
  autopilot?: Partial<AutopilotOptions>;
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
    autopilot: { ...DEFAULT_AUTOPILOT, ...input.autopilot },
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

/** Names upstream's AppWrapperConfig had until v1.0 and removed in v1.1.0, and why. */
const REMOVED_IN_1_1: Record<string, string> = {
  enableKueueIntegrations: "Kueue's own configuration now decides which AppWrappers it manages",
  kueueJobReconciller: "Kueue's own configuration now decides which AppWrappers it manages",
  slackQueueName: 'upstream dropped its slack ClusterQueue monitor',
};

/**
 * The fields of upstream v1.2.1's AppWrapperConfig, AutopilotConfig and FaultToleranceConfig.
 * Upstream's loader ignores any other (sigs.k8s.io/yaml is not strict); troupe refuses it,
 * so that a misspelt field is not silently left at its default.
 */
const FIELDS = {
  appwrapper: ['autopilot', 'userRBACAdmissionCheck', 'faultTolerance', 'schedulerName', 'defaultQueueName'],
  'appwrapper.autopilot': [
    'injectAntiAffinities',
    'monitorNodes',
    'resourceTaints',
    'preferNoScheduleWeight',
  ],
  'appwrapper.faultTolerance': [
    'admissionGracePeriod',
    'warmupGracePeriod',
    'failureGracePeriod',
    'resetPause',
    'retryLimit',
    'deletionGracePeriod',
    'gracePeriodCeiling',
    'successTTLCeiling',
  ],
};

/**
 * `obj` with its keys under upstream's field names. Upstream decodes with encoding/json, which
 * takes a key that matches a field name case-insensitively (`RetryLimit` sets retryLimit,
 * and of two such keys the later wins); any other key is refused (see FIELDS).
 */
function upstreamFields(obj: Record<string, unknown>, path: keyof typeof FIELDS): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    const field =
      FIELDS[path].find((f) => f === k) ?? FIELDS[path].find((f) => f.toLowerCase() === k.toLowerCase());
    if (!field)
      throw new Error(`unknown field ${path}.${k} (upstream's fields there: ${FIELDS[path].join(', ')})`);
    out[field] = v;
  }
  return out;
}

const EFFECTS = new Set(['NoExecute', 'NoSchedule', 'PreferNoSchedule']);

/**
 * Reads upstream's `appwrapper:` section of the operator configuration (v1.2.1
 * pkg/config/config.go AppWrapperConfig). Durations are Go's JSON encoding of time.Duration
 * (nanoseconds) or, more readably, Go duration strings ("1m"). Throws on a value of the
 * wrong shape, naming the field.
 *
 * Upstream (cmd/main.go loadIntoOrCreate) unmarshals the user's YAML over
 * NewAppWrapperConfig()'s defaults with encoding/json, and this keeps its semantics: a field
 * left out keeps its default, and so does a scalar set to null (json leaves a bool, string or
 * number alone on null); `autopilot.resourceTaints` is a Go map, which json fills key by key,
 * so a resource the file names replaces that resource's list and the other default resources
 * stay (adding `amd.com/gpu` keeps `nvidia.com/gpu`); null empties what is a Go pointer, map
 * or slice: `autopilot: null` turns injection and monitoring off, `resourceTaints: null`
 * drops every resource, a resource's list null drops its taints, and
 * `preferNoScheduleWeight: null` means weight 1 (upstream's ptr.Deref default).
 */
export function configFromUpstream(given: Record<string, unknown>): AppWrapperConfigInput {
  const out: AppWrapperConfigInput = {};
  for (const [old, why] of Object.entries(REMOVED_IN_1_1)) {
    const key = Object.keys(given).find((k) => k.toLowerCase() === old.toLowerCase());
    if (key) throw new Error(`appwrapper.${key} was removed in AppWrapper v1.1.0 (${why}); remove it`);
  }
  const section = upstreamFields(given, 'appwrapper');
  const bool = (obj: Record<string, unknown>, key: string, path: string): boolean | undefined => {
    const v = obj[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean')
      throw new Error(`${path}.${key}: expected true or false, got ${JSON.stringify(v)}`);
    return v;
  };
  const str = (obj: Record<string, unknown>, key: string, path: string): string | undefined => {
    const v = obj[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') throw new Error(`${path}.${key}: expected a string, got ${JSON.stringify(v)}`);
    return v;
  };
  const rbac = bool(section, 'userRBACAdmissionCheck', 'appwrapper');
  if (rbac !== undefined) out.userRBACAdmissionCheck = rbac;
  const scheduler = str(section, 'schedulerName', 'appwrapper');
  if (scheduler !== undefined) out.schedulerName = scheduler;
  const queue = str(section, 'defaultQueueName', 'appwrapper');
  if (queue !== undefined) out.defaultQueueName = queue;
  const givenFt = section.faultTolerance as Record<string, unknown> | undefined;
  if (givenFt !== undefined && (givenFt === null || typeof givenFt !== 'object' || Array.isArray(givenFt)))
    throw new Error('appwrapper.faultTolerance: expected a mapping');
  if (givenFt) {
    const ft = upstreamFields(givenFt, 'appwrapper.faultTolerance');
    const d = (key: string): number | undefined => {
      const v = ft[key];
      if (v === undefined || v === null) return undefined;
      if (typeof v === 'number') return v / 1e6;
      if (typeof v === 'string') {
        const ms = parseGoDuration(v);
        if (ms !== undefined) return ms;
      }
      throw new Error(
        `appwrapper.faultTolerance.${key}: ${JSON.stringify(v)} is not a duration (nanoseconds, or a Go duration such as "90s")`,
      );
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
    if (ft.retryLimit !== undefined && ft.retryLimit !== null) {
      if (!Number.isInteger(ft.retryLimit))
        throw new Error(
          `appwrapper.faultTolerance.retryLimit: expected an integer, got ${JSON.stringify(ft.retryLimit)}`,
        );
      f.retryLimit = ft.retryLimit as number;
    }
    out.faultTolerance = f;
  }
  const givenAp = section.autopilot as Record<string, unknown> | null | undefined;
  if (givenAp !== undefined && givenAp !== null && (typeof givenAp !== 'object' || Array.isArray(givenAp)))
    throw new Error('appwrapper.autopilot: expected a mapping');
  // Upstream checks `Autopilot != nil` before injecting or monitoring.
  if (givenAp === null)
    out.autopilot = { injectAntiAffinities: false, monitorNodes: false, resourceTaints: {} };
  if (givenAp) {
    const ap = upstreamFields(givenAp, 'appwrapper.autopilot');
    const a: Partial<AutopilotOptions> = {};
    const inject = bool(ap, 'injectAntiAffinities', 'appwrapper.autopilot');
    if (inject !== undefined) a.injectAntiAffinities = inject;
    const monitor = bool(ap, 'monitorNodes', 'appwrapper.autopilot');
    if (monitor !== undefined) a.monitorNodes = monitor;
    if (ap.preferNoScheduleWeight === null) a.preferNoScheduleWeight = 1;
    else if (ap.preferNoScheduleWeight !== undefined) {
      const w = ap.preferNoScheduleWeight;
      if (!Number.isInteger(w) || (w as number) < 1 || (w as number) > 100)
        throw new Error(
          `appwrapper.autopilot.preferNoScheduleWeight: expected an integer from 1 to 100, got ${JSON.stringify(w)}`,
        );
      a.preferNoScheduleWeight = w as number;
    }
    if (ap.resourceTaints === null) a.resourceTaints = {};
    else if (ap.resourceTaints !== undefined) {
      const rt = ap.resourceTaints;
      if (typeof rt !== 'object' || Array.isArray(rt))
        throw new Error(
          'appwrapper.autopilot.resourceTaints: expected a mapping of resource names to lists of taints',
        );
      const taints: Record<string, ResourceTaint[]> = { ...DEFAULT_AUTOPILOT.resourceTaints };
      for (const [res, list] of Object.entries(rt as Record<string, unknown>)) {
        if (list === null) {
          taints[res] = [];
          continue;
        }
        if (!Array.isArray(list))
          throw new Error(`appwrapper.autopilot.resourceTaints.${res}: expected a list of taints`);
        taints[res] = list.map((t, i) => {
          const at = `appwrapper.autopilot.resourceTaints.${res}[${i}]`;
          const o = (t ?? {}) as Record<string, unknown>;
          if (typeof o.key !== 'string' || !o.key) throw new Error(`${at}.key: required`);
          if (typeof o.effect !== 'string' || !EFFECTS.has(o.effect))
            throw new Error(
              `${at}.effect: expected NoExecute, NoSchedule or PreferNoSchedule, got ${JSON.stringify(o.effect)}`,
            );
          if (o.value !== undefined && o.value !== null && typeof o.value !== 'string')
            throw new Error(`${at}.value: expected a string, got ${JSON.stringify(o.value)}`);
          return {
            key: o.key,
            value: typeof o.value === 'string' ? o.value : '',
            effect: o.effect as ResourceTaint['effect'],
          };
        });
      }
      a.resourceTaints = taints;
    }
    out.autopilot = a;
  }
  return out;
}

/**
 * Upstream's operator configuration as a file: the `config.yaml` document
 * (`appwrapper:`, `certManagement:`, `controllerManager:`, `webhooksEnabled:`) or the
 * ConfigMap that holds it (config/default/config.yaml; one data key, as upstream requires).
 * Only the `appwrapper:` section concerns the controller; troupe's own flags cover the others.
 */
export function configFromOperatorFile(doc: unknown): AppWrapperConfigInput {
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new Error('expected a mapping');
  let operator = doc as Record<string, unknown>;
  if (operator.kind === 'ConfigMap') {
    const data = (operator.data ?? {}) as Record<string, unknown>;
    const values = Object.values(data);
    if (values.length !== 1 || typeof values[0] !== 'string')
      throw new Error(
        `cannot resolve config from ConfigMap ${(operator.metadata as { name?: string } | undefined)?.name ?? ''}: it must hold exactly one data key (config.yaml)`,
      );
    operator = (parseYaml(values[0]) ?? {}) as Record<string, unknown>;
    if (typeof operator !== 'object' || Array.isArray(operator))
      throw new Error('config.yaml: expected a mapping');
  }
  const known = ['appwrapper', 'certManagement', 'controllerManager', 'webhooksEnabled'];
  for (const k of Object.keys(operator)) {
    if (!known.includes(k))
      throw new Error(`unknown section "${k}" (upstream's sections: ${known.join(', ')})`);
  }
  const section = operator.appwrapper;
  if (section === undefined) return {};
  if (section === null || typeof section !== 'object' || Array.isArray(section))
    throw new Error('appwrapper: expected a mapping');
  return configFromUpstream(section as Record<string, unknown>);
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
