/**
 * Transforms applied to every object before it enters a cache. Controllers never read
 * managedFields or kubectl's last-applied annotation, and together they are often more
 * than half of an object's size, so dropping them is the cheapest memory win with
 * 100k cached pods. Transforms mutate in place: the object was just decoded and nobody
 * else holds it.
 */

import type { KubeObject } from './types.ts';

export type Transform = (obj: KubeObject) => KubeObject;

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

export function stripForCache(obj: KubeObject): KubeObject {
  const meta = obj.metadata;
  if (meta) {
    // Rebuild rather than `delete`: deleting a property moves a V8 object to slow
    // dictionary storage, which costs ~400 B per cached pod.
    const { managedFields: _mf, annotations, ...rest } = meta;
    const next: KubeObject['metadata'] = rest;
    if (annotations && LAST_APPLIED_ANNOTATION in annotations) {
      const { [LAST_APPLIED_ANNOTATION]: _la, ...kept } = annotations;
      if (Object.keys(kept).length > 0) next.annotations = kept;
    } else if (annotations) next.annotations = annotations;
    obj.metadata = next;
  }
  internStrings(obj, 0);
  return obj;
}

/**
 * Cached objects repeat the same short strings (images, toleration keys, scheduler and
 * condition messages) once per object; sharing one copy saves tens of MB at 100k pods.
 * The pool is bounded, so unbounded distinct values (names, uids) cannot grow it: once
 * full, it only shares what it already holds.
 */
const POOL_LIMIT = 50_000;
// V8's JSON.parse already shares (internalizes) every string of up to 10 characters:
// pooling them saves nothing.
const MIN_POOLED = 10;
const pool = new Map<string, string>();
const UNIQUE_KEYS = new Set([
  'name',
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'generateName',
  'podIP',
  'ip',
  'startTime',
  'lastTransitionTime',
  'lastProbeTime',
  'startedAt',
  'finishedAt',
  'containerID',
  'imageID',
]);

function internStrings(v: unknown, depth: number): void {
  if (depth > 32 || v === null || typeof v !== 'object') return;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (typeof x === 'string') {
        if (x.length > MIN_POOLED) v[i] = intern(x);
      } else internStrings(x, depth + 1);
    }
    return;
  }
  const o = v as Record<string, unknown>;
  for (const k in o) {
    const x = o[k];
    if (typeof x === 'string') {
      if (x.length > MIN_POOLED && !UNIQUE_KEYS.has(k)) o[k] = intern(x);
    } else if (x !== null && typeof x === 'object') internStrings(x, depth + 1);
  }
}

function intern(s: string): string {
  if (s.length > 256) return s;
  const hit = pool.get(s);
  if (hit !== undefined) return hit;
  if (pool.size < POOL_LIMIT) pool.set(s, s);
  return s;
}

/** Runs transforms left to right. */
export function composeTransforms(...fns: (Transform | undefined)[]): Transform {
  const list = fns.filter((f): f is Transform => f !== undefined);
  return (obj) => list.reduce((o, f) => f(o), obj);
}
