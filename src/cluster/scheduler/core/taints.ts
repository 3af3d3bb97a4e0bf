/** Toleration matching with core/v1 semantics (Toleration.ToleratesTaint). */

import type { TaintLike, TolerationLike } from './types.ts';

export function toleratesTaint(t: TolerationLike, taint: TaintLike): boolean {
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

export function tolerationsTolerate(tolerations: readonly TolerationLike[], taint: TaintLike): boolean {
  for (const t of tolerations) if (toleratesTaint(t, taint)) return true;
  return false;
}

/** The first NoSchedule/NoExecute taint no toleration covers, as TaintToleration's Filter reports it. */
export function firstUntoleratedTaint(
  taints: readonly TaintLike[],
  tolerations: readonly TolerationLike[],
): TaintLike | undefined {
  for (const taint of taints) {
    if (taint.effect !== 'NoSchedule' && taint.effect !== 'NoExecute') continue;
    if (!tolerationsTolerate(tolerations, taint)) return taint;
  }
  return undefined;
}

export const UNSCHEDULABLE_TAINT: TaintLike = {
  key: 'node.kubernetes.io/unschedulable',
  effect: 'NoSchedule',
};
