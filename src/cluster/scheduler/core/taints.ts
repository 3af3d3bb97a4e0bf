/** Toleration matching with core/v1 semantics (Toleration.ToleratesTaint). */

import type { Taint, Toleration } from '../../../kube/builtin.ts';

export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  switch (t.operator ?? '') {
    case '':
    case 'Equal':
      return (t.value ?? '') === (taint.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

export function tolerationsTolerate(tolerations: readonly Toleration[], taint: Taint): boolean {
  for (const t of tolerations) if (toleratesTaint(t, taint)) return true;
  return false;
}

/** The first NoSchedule/NoExecute taint no toleration covers, as TaintToleration's Filter reports it. */
export function firstUntoleratedTaint(
  taints: readonly Taint[],
  tolerations: readonly Toleration[],
): Taint | undefined {
  for (const taint of taints) {
    if (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') continue;
    if (!tolerationsTolerate(tolerations, taint)) return taint;
  }
  return undefined;
}

export const UNSCHEDULABLE_TAINT: Taint = {
  key: 'node.kubernetes.io/unschedulable',
  effect: 'NoSchedule',
};
