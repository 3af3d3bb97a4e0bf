/**
 * The one patch that releases a pod: removes this sequence's gate (and only it), records
 * which sequence released the pod, and for node-scoped pods whose node is not known yet
 * narrows their required node affinity to the nodes where the earlier groups are Ready
 * (allowed on gated pods since KEP-3838). The patch carries the resourceVersion the
 * decision was based on, so a pod that changed since (labels, gates) is not released on
 * stale facts: the API server answers 409 and the sequence is reconciled again. Pure.
 */

import { RELEASED_BY_ANNOTATION } from '../../apis/scheduling.example.com/v1alpha1.ts';
import type { NodeSelectorTerm, Pod, Toleration } from './objects.ts';

const HOSTNAME_LABEL = 'kubernetes.io/hostname';

function isEmptyTerm(t: NodeSelectorTerm): boolean {
  return (t.matchExpressions ?? []).length === 0 && (t.matchFields ?? []).length === 0;
}

/**
 * Required node affinity that keeps the pod on `nodes`. Without required terms, one term
 * per node on `metadata.name` (field selectors take a single value). With terms, KEP-3838
 * only lets each term grow, so every term gains `kubernetes.io/hostname In (...)`, which
 * assumes the nodes' hostname label (given by `hostnameOf`) identifies them. Empty terms
 * match no node and must stay as they are.
 */
export function narrowedTerms(
  pod: Pod,
  nodes: string[],
  hostnameOf: (node: string) => string = (n) => n,
): NodeSelectorTerm[] {
  const terms =
    pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  if (terms.length === 0) {
    return nodes.map((n) => ({ matchFields: [{ key: 'metadata.name', operator: 'In', values: [n] }] }));
  }
  const hostnames = [...new Set(nodes.map(hostnameOf))].sort();
  return terms.map((t) =>
    isEmptyTerm(t)
      ? t
      : {
          ...t,
          matchExpressions: [
            ...(t.matchExpressions ?? []),
            { key: HOSTNAME_LABEL, operator: 'In', values: hostnames },
          ],
        },
  );
}

export interface ReleasePatchInput {
  pod: Pod;
  gate: string;
  /** `<namespace>/<name>` of the sequence. */
  releasedBy: string;
  narrowTo?: string[];
  hostnameOf?: (node: string) => string;
  /**
   * Tolerations the pod must have (full mode: the later groups' node taints), added if
   * missing. Kubernetes lets tolerations be added to an existing pod.
   */
  tolerations?: Toleration[];
}

function sameToleration(a: Toleration, b: Toleration): boolean {
  return (
    (a.key ?? '') === (b.key ?? '') &&
    (a.operator ?? 'Equal') === (b.operator ?? 'Equal') &&
    (a.effect ?? '') === (b.effect ?? '') &&
    (a.value ?? '') === (b.value ?? '')
  );
}

/** `current` with the `wanted` tolerations it lacks appended, or undefined when none lacks. */
export function withTolerations(
  current: Toleration[] | undefined,
  wanted: Toleration[],
): Toleration[] | undefined {
  const out = [...(current ?? [])];
  let changed = false;
  for (const t of wanted) {
    if (!out.some((o) => sameToleration(o, t))) {
      out.push(t);
      changed = true;
    }
  }
  return changed ? out : undefined;
}

/** A JSON merge patch (RFC 7386) for the pod. */
export function releasePatch(input: ReleasePatchInput): Record<string, unknown> {
  const { pod, gate } = input;
  const remaining = (pod.spec?.schedulingGates ?? []).filter((g) => g.name !== gate);
  const spec: Record<string, unknown> = { schedulingGates: remaining.length > 0 ? remaining : null };
  const tolerations = input.tolerations
    ? withTolerations(pod.spec?.tolerations, input.tolerations)
    : undefined;
  if (tolerations) spec.tolerations = tolerations;
  if (input.narrowTo) {
    spec.affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: narrowedTerms(pod, input.narrowTo, input.hostnameOf),
        },
      },
    };
  }
  return {
    metadata: {
      resourceVersion: pod.metadata.resourceVersion,
      annotations: { [RELEASED_BY_ANNOTATION]: input.releasedBy },
    },
    spec,
  };
}

export function releasedBy(pod: Pod): string | undefined {
  return pod.metadata.annotations?.[RELEASED_BY_ANNOTATION];
}
