/**
 * Small pieces of apimachinery and pkg/controller semantics the workload controllers share:
 * int-or-percent scaling, template hashing, timestamps, slow-start batches.
 */

import { canonicalJson } from '../../lib/json.ts';

/** Kubernetes' intstr.GetScaledValueFromIntOrPercent: `25%` of 10 is 3 rounding up, 2 down. */
export function scaledValue(v: number | string | undefined, total: number, roundUp: boolean): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number') return v;
  const m = /^(-?\d+)%$/.exec(v);
  if (!m) {
    const n = Number(v);
    if (v !== '' && Number.isInteger(n)) return n;
    throw new Error(
      `invalid value for IntOrString: invalid value "${v}": must be an integer or a percentage`,
    );
  }
  const pct = Number(m[1]);
  const exact = (pct * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/** FNV-1a, 32 bits, over bytes. */
function fnv1a32(bytes: Uint8Array, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (const b of bytes) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

const SAFE_ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

/** rand.SafeEncodeString: maps each character to an alphabet without vowels (no accidental words). */
export function safeEncodeString(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) out += SAFE_ALPHANUMS[s.charCodeAt(i) % SAFE_ALPHANUMS.length];
  return out;
}

/**
 * controller.ComputeHash: FNV-32a of the pod template plus the collision count, rendered
 * with SafeEncodeString. Upstream hashes Go's printed struct; we hash canonical JSON, so
 * the values differ from a real cluster's but have the same form and stability.
 */
export function computeHash(template: unknown, collisionCount?: number): string {
  const enc = new TextEncoder();
  let h = fnv1a32(enc.encode(canonicalJson(template ?? {})));
  if (collisionCount !== undefined && collisionCount !== null) {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setUint32(0, collisionCount >>> 0, true);
    h = fnv1a32(b, h);
  }
  return safeEncodeString(String(h));
}

export function parseTime(ts: string | undefined | null): number | undefined {
  if (!ts) return undefined;
  const t = Date.parse(ts);
  return Number.isNaN(t) ? undefined : t;
}

/**
 * controller.slowStartBatch: runs `count` calls in batches of 1, 2, 4... and stops at the
 * first batch with an error, so a quota or validation failure costs one call, not hundreds.
 * Returns how many succeeded and the first error.
 */
export async function slowStartBatch(
  count: number,
  initial: number,
  fn: (i: number) => Promise<void>,
): Promise<{ ok: number; error?: unknown }> {
  let remaining = count;
  let ok = 0;
  let i = 0;
  for (let batch = Math.min(remaining, initial); batch > 0; batch = Math.min(2 * batch, remaining)) {
    const results = await Promise.allSettled(Array.from({ length: batch }, () => fn(i++)));
    let error: unknown;
    for (const r of results) {
      if (r.status === 'fulfilled') ok++;
      else error ??= r.reason;
    }
    if (error !== undefined) return { ok, error };
    remaining -= batch;
  }
  return { ok };
}

export function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
