import type { ConditionView } from '../view-model.ts';

/** Conditions reduced to the fields the page shows (unknown extra fields are dropped). */
export function conditionViews(conditions: readonly unknown[] | undefined | null): ConditionView[] {
  const out: ConditionView[] = [];
  for (const raw of conditions ?? []) {
    if (!raw || typeof raw !== 'object') continue;
    const c = raw as Record<string, unknown>;
    if (typeof c.type !== 'string') continue;
    const view: ConditionView = { type: c.type, status: typeof c.status === 'string' ? c.status : 'Unknown' };
    if (typeof c.reason === 'string' && c.reason) view.reason = c.reason;
    if (typeof c.message === 'string' && c.message) view.message = c.message;
    if (typeof c.lastTransitionTime === 'string') view.lastTransitionTime = c.lastTransitionTime;
    out.push(view);
  }
  return out;
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}
