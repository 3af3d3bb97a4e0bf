/** Options of the PodSequence controllers, with their defaults. */

import { DEFAULT_GATE } from '../../apis/scheduling.example.com/v1alpha1.ts';

export type PodSequenceMode = 'lite' | 'full';

export interface PodSequenceOptions {
  /**
   * `lite` (default): scheduling gates only, no node access, no webhook; node scope works
   * through the pods (DaemonSet pins, and required node affinity narrowed before release).
   * `full`: also per-node taints for node-scoped sequences and the mutating webhook that
   * injects tolerations (and gates) into the pods a sequence selects.
   */
  mode?: PodSequenceMode;
  /** Gate managed when a sequence sets no `schedulingGateName`. */
  defaultGateName?: string;
  /** How long an explicitly named pod may be missing before the sequence is Failed. */
  missingPodGracePeriodMs?: number;
  maxConcurrentReconciles?: number;
  /** Release patches sent at once for one sequence. */
  releaseConcurrency?: number;
  /** Longest pod-name lists written to status (currentGroupPods, processedPods). */
  maxListedPods?: number;
  /**
   * Least time between two status writes of one sequence that only report progress
   * (ready counts, the current group, per-node steps). Writes that change the phase, the
   * observed generation or a condition's status go at once. Releases never wait for it.
   * As the Job controller batches pod updates (1 s), so that a tier of 100 pods turning
   * Ready costs one status write, not 100, and a node-scoped status of 1,000 nodes is not
   * rewritten per node step. 0: write every change at once.
   */
  statusUpdateIntervalMs?: number;
}

export type ResolvedOptions = Required<PodSequenceOptions>;

export const DEFAULT_OPTIONS: ResolvedOptions = {
  mode: 'lite',
  defaultGateName: DEFAULT_GATE,
  missingPodGracePeriodMs: 30_000,
  maxConcurrentReconciles: 4,
  releaseConcurrency: 16,
  maxListedPods: 1000,
  statusUpdateIntervalMs: 1000,
};

export function resolveOptions(opts: PodSequenceOptions = {}): ResolvedOptions {
  const out = { ...DEFAULT_OPTIONS };
  for (const [k, v] of Object.entries(opts)) {
    if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  }
  if (out.mode !== 'lite' && out.mode !== 'full') {
    throw new Error(`podsequence mode must be "lite" or "full", not "${String(out.mode)}"`);
  }
  return out;
}
