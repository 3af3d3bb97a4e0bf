/**
 * The PodSequence controller's Prometheus metrics (docs/podsequence.md, "Metrics").
 * Sequences by phase are counted from the cache at scrape time; releases are counted once
 * the API server has accepted them.
 */

import {
  PHASES,
  PODSEQUENCE,
  type PodSequence,
  type Scope,
} from '../../apis/scheduling.example.com/v1alpha1.ts';
import {
  cacheGauge,
  countBy,
  counter,
  histogram,
  type KubeObject,
  type MetricsContext,
} from '../../runtime/index.ts';
import type { Release } from './core.ts';

/** A sequence whose status has no phase yet. */
const NO_PHASE = 'Unknown';

/** Sequences by phase; every phase is reported, zero or not, so a series never vanishes. */
export function sequencesByPhase(sequences: readonly KubeObject[]): [{ phase: string }, number][] {
  return countBy(sequences, 'phase', PHASES, (s) => (s as PodSequence).status?.phase, NO_PHASE);
}

/**
 * How many groups following a satisfied one a batch of releases opens: the first group
 * follows none, so its releases are not a step of the sequence.
 */
export function successorGroups(releases: readonly Release[]): number {
  return new Set(releases.filter((r) => r.group > 0).map((r) => r.group)).size;
}

export interface PodSequenceMetrics {
  /**
   * Releases the API server accepted in one reconcile, `seconds` after it started (by the
   * reconcile's clock); `scope` of the sequence.
   */
  released(scope: Scope, accepted: readonly Release[], seconds: number): void;
}

export function podSequenceMetrics(m: MetricsContext): PodSequenceMetrics {
  cacheGauge(m, {
    name: 'troupe_podsequence_sequences',
    help: 'PodSequences in the cache by status.phase (Unknown: no phase written yet).',
    labelNames: ['phase'],
    kind: PODSEQUENCE,
    samples: sequencesByPhase,
  });
  const pods = counter(m, {
    name: 'troupe_podsequence_pods_released_total',
    help: 'Pods whose scheduling gate was removed (release patches the API server accepted), by sequence scope.',
    labelNames: ['scope'],
  });
  const latency = histogram(m, {
    name: 'troupe_podsequence_release_latency_seconds',
    help:
      'Seconds from the start of the reconcile that found a group satisfied to the API server accepting ' +
      "the release of the next group's pods: one observation per group (not the first) a reconcile releases pods of, " +
      'so a group released over several reconciles (node scope: on several nodes at different times) counts once per reconcile. ' +
      'The time the pod event took to reach the work queue and waited there is not included: see workqueue_queue_duration_seconds.',
    labelNames: ['scope'],
  });
  for (const scope of ['Cluster', 'Node']) {
    pods.inc({ scope }, 0);
    latency.zero({ scope });
  }
  return {
    released(scope, accepted, seconds) {
      if (accepted.length === 0) return;
      pods.inc({ scope }, accepted.length);
      for (let i = successorGroups(accepted); i > 0; i--) latency.observe({ scope }, seconds);
    },
  };
}
