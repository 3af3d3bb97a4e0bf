/**
 * Status conditions helpers (apimachinery's meta.SetStatusCondition family), usable on any
 * kind's conditions list: metav1.Condition, PodCondition, JobCondition, NodeCondition...
 */

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string | null;
  observedGeneration?: number;
  [key: string]: unknown;
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** RFC 3339 with second precision, the way metav1.Time serializes. */
export function rfc3339(now: Date = new Date()): string {
  return `${now.toISOString().slice(0, 19)}Z`;
}

/** metav1.MicroTime (Events' eventTime, Leases' renewTime): RFC 3339 with six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export function findCondition<T extends Condition>(
  conditions: readonly T[] | undefined | null,
  type: string,
): T | undefined {
  return conditions?.find((c) => c.type === type);
}

/**
 * Whether the conditions of `type` in `a` and `b` say the same (status, reason, message);
 * both absent is the same. Times are not compared: setting one onto the other changes nothing else.
 */
export function sameCondition(
  a: readonly Condition[] | undefined | null,
  b: readonly Condition[] | undefined | null,
  type: string,
): boolean {
  const x = findCondition(a, type);
  const y = findCondition(b, type);
  return x?.status === y?.status && x?.reason === y?.reason && x?.message === y?.message;
}

export function isConditionTrue(conditions: readonly Condition[] | undefined | null, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

export function isConditionFalse(conditions: readonly Condition[] | undefined | null, type: string): boolean {
  return findCondition(conditions, type)?.status === 'False';
}

/**
 * Sets `condition` in `conditions` (in place) and reports whether anything changed.
 * lastTransitionTime moves only when the status changes (or the condition is new and has
 * none); reason, message and observedGeneration are always taken from `condition`.
 * Extra fields (lastProbeTime, lastUpdateTime, lastHeartbeatTime) are copied when given.
 */
export function setCondition<T extends Condition>(
  conditions: T[],
  condition: T,
  now: Date = new Date(),
): boolean {
  const existing = conditions.find((c) => c.type === condition.type);
  if (!existing) {
    const added = { ...condition };
    if (!added.lastTransitionTime) added.lastTransitionTime = rfc3339(now);
    conditions.push(added);
    return true;
  }
  let changed = false;
  if (existing.status !== condition.status) {
    existing.status = condition.status;
    existing.lastTransitionTime = condition.lastTransitionTime || rfc3339(now);
    changed = true;
  }
  for (const [key, value] of Object.entries(condition)) {
    if (key === 'type' || key === 'status' || key === 'lastTransitionTime' || value === undefined) continue;
    if (existing[key] !== value) {
      (existing as Record<string, unknown>)[key] = value;
      changed = true;
    }
  }
  return changed;
}

/** Pure variant: returns a new list with the condition set, and whether it changed. */
export function withCondition<T extends Condition>(
  conditions: readonly T[] | undefined | null,
  condition: T,
  now: Date = new Date(),
): { conditions: T[]; changed: boolean } {
  const copy = (conditions ?? []).map((c) => ({ ...c }));
  const changed = setCondition(copy, condition, now);
  return { conditions: copy, changed };
}

/** Removes the condition of that type (in place); reports whether one was removed. */
export function removeCondition(conditions: Condition[], type: string): boolean {
  const i = conditions.findIndex((c) => c.type === type);
  if (i < 0) return false;
  conditions.splice(i, 1);
  return true;
}
