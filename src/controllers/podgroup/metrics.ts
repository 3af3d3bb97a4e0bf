/**
 * The podgroup controller's Prometheus metrics (docs/podgroup.md, "Metrics"). PodGroups by
 * phase are counted from the cache at scrape time; the counters count what the API server
 * accepted (a ready label, a status write), so a failed or repeated attempt is not counted.
 */

import {
  PODGROUP_KIND,
  type PodGroup,
  type PodGroupPhase,
  type PodGroupStatus,
} from '../../apis/scheduling.incubator.k8s.io/v1alpha1.ts';
import { cacheGauge, countBy, counter, type KubeObject, type MetricsContext } from '../../runtime/index.ts';

const PHASES: readonly PodGroupPhase[] = ['Pending', 'Running', 'Recovering', 'Unschedulable', 'Completed'];
/** A PodGroup whose status has no phase yet (troupe has not written one). */
const NO_PHASE = 'Unknown';
/** `from` of the first phase a PodGroup is given. */
const FIRST = 'None';

/** PodGroups by phase; every phase is reported, zero or not, so a series never vanishes. */
export function groupsByPhase(groups: readonly KubeObject[]): [{ phase: string }, number][] {
  return countBy(groups, 'phase', PHASES, (g) => (g as PodGroup).status?.state?.phase, NO_PHASE);
}

export interface StatusChange {
  transition?: { from: string; to: string };
  /** The deadlock policy restarted the group. */
  restarted: boolean;
}

/** What a written status changed, compared with the status it replaced. */
export function statusChange(before: PodGroupStatus | undefined, after: PodGroupStatus): StatusChange {
  const from = before?.state?.phase;
  const to = after.state?.phase;
  return {
    transition: to && to !== from ? { from: from ?? FIRST, to } : undefined,
    restarted: (after.restarts ?? 0) > (before?.restarts ?? 0),
  };
}

export interface PodGroupMetrics {
  /** A pod's ready label was accepted by the API server. */
  labelled(): void;
  /** A status write was accepted: `before` is the status it replaced. */
  statusWritten(before: PodGroupStatus | undefined, after: PodGroupStatus): void;
}

export function podGroupMetrics(m: MetricsContext): PodGroupMetrics {
  cacheGauge(m, {
    name: 'troupe_podgroup_groups',
    help: 'PodGroups in the cache by status.state.phase (Unknown: no phase written yet).',
    labelNames: ['phase'],
    kind: PODGROUP_KIND,
    samples: groupsByPhase,
  });
  const labels = counter(m, {
    name: 'troupe_podgroup_ready_labels_total',
    help: 'Pods given the ready label (podgroup.jhwagner.github.io/ready=true) because their gang was complete.',
  });
  const transitions = counter(m, {
    name: 'troupe_podgroup_phase_transitions_total',
    help: 'PodGroup phase changes written by this manager, by previous phase (None for the first) and new phase; to="Running" is a gang becoming ready.',
    labelNames: ['from', 'to'],
  });
  const restarts = counter(m, {
    name: 'troupe_podgroup_deadlock_restarts_total',
    help: 'Unschedulable PodGroups restarted by their deadlock policy (Restart).',
  });
  return {
    labelled: () => labels.inc(),
    statusWritten(before, after) {
      const change = statusChange(before, after);
      if (change.transition) transitions.inc(change.transition);
      if (change.restarted) restarts.inc();
    },
  };
}
