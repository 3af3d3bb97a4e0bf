/**
 * The AppWrapper controller's Prometheus metrics (docs/appwrapper.md, "Metrics").
 * AppWrappers by phase are counted from the cache at scrape time; resets and failures are
 * counted when the status write that enters Resetting or Failed is accepted, so each
 * transition counts once however many reconciles look at it.
 */

import {
  type AppWrapper,
  type AppWrapperStatus,
  AW_KIND,
  Conditions,
  Phases,
} from '../../apis/workload.codeflare.dev/v1beta2.ts';
import { cacheGauge, countBy, counter, type KubeObject, type MetricsContext } from '../../runtime/index.ts';

/** Why an AppWrapper became unhealthy: the Unhealthy condition's reasons the controller writes. */
const UNHEALTHY_REASONS = [
  'AutopilotNoExecute',
  'CreateFailed',
  'MissingComponent',
  'FailedComponent',
  'FoundFailedPods',
  'InsufficientPodsReady',
] as const;
/** A reset or failure without one of those reasons (another writer's, or none). */
const OTHER = 'Other';

/** The phase label of a status: upstream's empty phase is shown as Empty. */
function phaseLabel(phase: string | undefined): string {
  return phase ? phase : 'Empty';
}

/** AppWrappers by phase; every phase is reported, zero or not, so a series never vanishes. */
export function appWrappersByPhase(objects: readonly KubeObject[]): [{ phase: string }, number][] {
  const known = Object.values(Phases).map(phaseLabel);
  return countBy(objects, 'phase', known, (o) => phaseLabel((o as AppWrapper).status?.phase));
}

export interface Setback {
  kind: 'reset' | 'failure';
  /** The Unhealthy condition's reason when the AppWrapper entered Resetting or Failed. */
  reason: string;
}

/** A reset or failure that a written status enters, compared with the status it replaced. */
export function setbackOf(
  before: AppWrapperStatus | undefined,
  after: AppWrapperStatus,
): Setback | undefined {
  const to = after.phase;
  if (to === before?.phase || (to !== Phases.Resetting && to !== Phases.Failed)) return undefined;
  const unhealthy = after.conditions?.find((c) => c.type === Conditions.Unhealthy && c.status === 'True');
  const reason = (UNHEALTHY_REASONS as readonly string[]).includes(unhealthy?.reason ?? '')
    ? unhealthy!.reason
    : OTHER;
  return { kind: to === Phases.Resetting ? 'reset' : 'failure', reason };
}

export interface AppWrapperMetrics {
  /** A status write was accepted: `before` is the status it replaced. */
  statusWritten(before: AppWrapperStatus | undefined, after: AppWrapperStatus, namespace: string): void;
}

export function appWrapperMetrics(m: MetricsContext): AppWrapperMetrics {
  cacheGauge(m, {
    name: 'troupe_appwrapper_appwrappers',
    help: 'AppWrappers in the cache by status.phase (Empty: not seen by the controller yet).',
    labelNames: ['phase'],
    kind: AW_KIND,
    samples: appWrappersByPhase,
  });
  const counters = {
    reset: counter(m, {
      name: 'troupe_appwrapper_resets_total',
      help: 'AppWrappers that entered Resetting (to be redeployed after a failure, retries left), by the Unhealthy reason.',
      labelNames: ['reason'],
    }),
    failure: counter(m, {
      name: 'troupe_appwrapper_failures_total',
      help: 'AppWrappers that entered Failed, by the Unhealthy reason (Other: not one the controller writes).',
      labelNames: ['reason'],
    }),
  };
  for (const reason of [...UNHEALTHY_REASONS, OTHER]) {
    counters.reset.inc({ reason }, 0);
    counters.failure.inc({ reason }, 0);
  }
  // Upstream's own metric (internal/metrics/metrics.go), counted as its transitionToPhase does.
  const phases = counter(m, {
    name: 'appwrapper_phase_total',
    help: 'The total number of times an appwrapper transitioned to a given phase per namespace.',
    labelNames: ['namespace', 'phase'],
  });
  return {
    statusWritten(before, after, namespace) {
      const s = setbackOf(before, after);
      if (s) counters[s.kind].inc({ reason: s.reason });
      if (after.phase !== undefined && after.phase !== (before?.phase ?? ''))
        phases.inc({ namespace, phase: after.phase });
    },
  };
}
