/**
 * PodTopologySpread's constraints: a pod's own, split by whenUnsatisfiable, or the system
 * defaults kube-scheduler applies to a pod without any, and the rules for which nodes and
 * pods a constraint counts.
 */

import type { Pod } from '../../../kube/builtin.ts';
import type { NodeInfo } from './cluster-state.ts';
import type { PreparedPod } from './filters.ts';
import { compileSelector, type Selector, withPodLabelKeys } from './label-selectors.ts';
import { firstUntoleratedTaint } from './taints.ts';

export const LABEL_HOSTNAME = 'kubernetes.io/hostname';
export const LABEL_ZONE = 'topology.kubernetes.io/zone';

export interface SpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  /** undefined for a null labelSelector (matches no pod). */
  selector: Selector | undefined;
  minDomains: number;
  /** nodeAffinityPolicy Honor (the default): only nodes the pod's node affinity allows count. */
  honorNodeAffinity: boolean;
  /** nodeTaintsPolicy Honor (default Ignore): nodes with taints the pod does not tolerate do not count. */
  honorNodeTaints: boolean;
}

export interface PodSpreadConstraints {
  /** whenUnsatisfiable: DoNotSchedule, enforced by the filter. */
  hard: SpreadConstraint[];
  /** whenUnsatisfiable: ScheduleAnyway, scored. */
  soft: SpreadConstraint[];
  /** The pod lists constraints of its own, so the system defaults do not apply. */
  own: boolean;
}

export function compileSpreadConstraints(pod: Pod): PodSpreadConstraints {
  const list = pod.spec?.topologySpreadConstraints ?? [];
  const out: PodSpreadConstraints = { hard: [], soft: [], own: list.length > 0 };
  const labels = pod.metadata?.labels ?? {};
  for (const c of list) {
    let selector = compileSelector(c.labelSelector);
    if (selector) selector = withPodLabelKeys(selector, c.matchLabelKeys, labels, 'In');
    const sc: SpreadConstraint = {
      maxSkew: c.maxSkew,
      topologyKey: c.topologyKey,
      selector,
      minDomains: c.minDomains ?? 1,
      honorNodeAffinity: c.nodeAffinityPolicy !== 'Ignore',
      honorNodeTaints: c.nodeTaintsPolicy === 'Honor',
    };
    if (c.whenUnsatisfiable === 'DoNotSchedule') out.hard.push(sc);
    else if (c.whenUnsatisfiable === 'ScheduleAnyway') out.soft.push(sc);
  }
  return out;
}

/** kube-scheduler's default: spread over hostnames (maxSkew 3) and zones (maxSkew 5), ScheduleAnyway. */
export function systemDefaultConstraints(selector: Selector): SpreadConstraint[] {
  const c = (topologyKey: string, maxSkew: number): SpreadConstraint => ({
    maxSkew,
    topologyKey,
    selector,
    minDomains: 1,
    honorNodeAffinity: true,
    honorNodeTaints: false,
  });
  return [c(LABEL_HOSTNAME, 3), c(LABEL_ZONE, 5)];
}

export function hasAllTopologyKeys(
  labels: Readonly<Record<string, string>>,
  constraints: readonly SpreadConstraint[],
): boolean {
  for (const c of constraints) if (labels[c.topologyKey] === undefined) return false;
  return true;
}

/** Whether the node's domain counts for the constraint, under its node inclusion policies. */
export function nodeIncluded(c: SpreadConstraint, p: PreparedPod, ni: NodeInfo): boolean {
  const required = p.affinity.required;
  if (c.honorNodeAffinity && required && !required(ni.labels, ni.name)) return false;
  if (c.honorNodeTaints && firstUntoleratedTaint(ni.scheduleTaints, p.tolerations)) return false;
  return true;
}

/**
 * The selector countPodsMatchSelector applies, or undefined when the constraint counts no
 * pod at all (a null or an empty selector). Terminating pods are never counted either.
 */
export function countingSelector(c: SpreadConstraint): Selector | undefined {
  return c.selector && !c.selector.empty ? c.selector : undefined;
}
