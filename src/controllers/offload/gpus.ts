/**
 * Choosing where to run (pure): the GPU types from RunPod's catalog that fit a Job, cheapest
 * first, and what each answer to a create call means for the next step, following RunPod's
 * documented semantics for `POST /v2/pods`:
 *
 * | status | meaning                                   | troupe                              |
 * |--------|-------------------------------------------|-------------------------------------|
 * | 201    | placed                                    | done                                |
 * | 400    | a rule broken, or no capacity for this GPU| next candidate                      |
 * | 401    | key missing or invalid                    | stop; Job stays local (Unauthorized)|
 * | 402    | balance spent                             | stop; no candidate can succeed      |
 * | 403    | no access to this GPU pool                | skip this candidate                 |
 * | 422    | body breaks the contract                  | stop, never retried (Rejected)      |
 * | 429    | rate limited                              | wait Retry-After, then resume       |
 * | 5xx    | transient upstream failure                | retry the same candidate, backoff   |
 */
import { realClock } from '../../lib/clock.ts';
import type { CloudType } from './options.ts';

export interface CatalogGpu {
  id: string;
  name?: string;
  manufacturer?: string;
  memory: number;
  secure: boolean;
  community: boolean;
  price: { secure: number; community: number };
  maxCount?: { secure: number; community: number };
}

export interface GpuCandidate {
  id: string;
  memoryGb: number;
  /** USD per hour for the whole pod (unit price × GPU count). */
  podPrice: number;
}

export interface GpuNeeds {
  gpuCount: number;
  gpuMemoryGb: number;
  vendor: 'NVIDIA' | 'AMD';
  cloud: CloudType;
  /** `--max-gpu-price`: the most a pod may cost per hour. */
  maxPrice: number;
  /** What the spending cap leaves (Infinity without a cap). */
  budgetLeft: number;
}

/**
 * GPU types offered in the cloud, from the vendor, with enough memory, that a pod of
 * `gpuCount` of them may have, priced above zero and at most the max price and the budget
 * left; cheapest first (then less memory, then id, so the order is stable).
 */
export function chooseGpuCandidates(catalog: readonly CatalogGpu[], needs: GpuNeeds): GpuCandidate[] {
  const secure = needs.cloud === 'SECURE';
  const out: GpuCandidate[] = [];
  for (const g of catalog) {
    if (!(secure ? g.secure : g.community)) continue;
    if (g.manufacturer && g.manufacturer !== 'UNKNOWN' && g.manufacturer !== needs.vendor) continue;
    if (!(g.memory >= needs.gpuMemoryGb)) continue;
    const max = g.maxCount ? (secure ? g.maxCount.secure : g.maxCount.community) : Number.POSITIVE_INFINITY;
    if (needs.gpuCount > max) continue;
    const unit = secure ? g.price.secure : g.price.community;
    if (!(unit > 0)) continue;
    const podPrice = Math.round(unit * needs.gpuCount * 10000) / 10000;
    if (podPrice > needs.maxPrice || podPrice > needs.budgetLeft) continue;
    out.push({ id: g.id, memoryGb: g.memory, podPrice });
  }
  return out.sort((a, b) => a.podPrice - b.podPrice || a.memoryGb - b.memoryGb || a.id.localeCompare(b.id));
}

export type CreateStep =
  | { step: 'done' }
  | { step: 'next'; why: 'capacity-or-rule' | 'forbidden' }
  | { step: 'stop'; errorClass: 'Unauthorized' | 'Payment' | 'Rejected' }
  | { step: 'wait'; retryAfterMs: number }
  | { step: 'retry' };

/** What a create answer means (the table above). */
export function classifyCreate(status: number, retryAfter?: string | null, now?: number): CreateStep {
  if (status === 201 || status === 200) return { step: 'done' };
  if (status === 400 || status === 404) return { step: 'next', why: 'capacity-or-rule' };
  if (status === 403) return { step: 'next', why: 'forbidden' };
  if (status === 401) return { step: 'stop', errorClass: 'Unauthorized' };
  if (status === 402) return { step: 'stop', errorClass: 'Payment' };
  if (status === 429) return { step: 'wait', retryAfterMs: retryAfterMs(retryAfter, now) };
  if (status >= 500) return { step: 'retry' };
  return { step: 'stop', errorClass: 'Rejected' };
}

/**
 * `Retry-After` in ms: integer seconds (RunPod's form) or an HTTP date, counted from `now`
 * (default the real clock); 1 s when absent or unreadable.
 */
export function retryAfterMs(v: string | null | undefined, now?: number): number {
  if (!v) return 1000;
  const s = Number(v.trim());
  if (Number.isFinite(s) && s >= 0) return Math.max(0, Math.round(s * 1000));
  const d = Date.parse(v);
  return Number.isNaN(d) ? 1000 : Math.max(0, d - (now ?? realClock.now()));
}
