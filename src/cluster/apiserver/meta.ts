import { random, randomUUID } from '../../lib/random.ts';
import type { KubeObject, ObjectMeta } from './types.ts';

/** RFC 3339 with second precision, as metav1.Time serializes. */
export function nowRfc3339(d: Date = new Date()): string {
  const second = Math.floor(d.getTime() / 1000);
  // Objects are written many to a second: format each second once.
  if (second !== lastSecond.at) lastSecond = { at: second, text: d.toISOString().replace(/\.\d{3}Z$/, 'Z') };
  return lastSecond.text;
}

let lastSecond = { at: Number.NaN, text: '' };

/** RFC 3339 with microseconds, as metav1.MicroTime serializes (events, leases). */
export function nowMicro(d: Date = new Date()): string {
  return d.toISOString().replace(/Z$/, '000Z');
}

export function newUid(): string {
  return randomUUID();
}

// Same alphabet as apimachinery's rand.String: no vowels (no accidental words), no confusable 0/1/3.
const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

export function generateNameSuffix(n = 5): string {
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHANUMS[Math.floor(random() * ALPHANUMS.length)];
  return s;
}

/** Everything but metadata and status: a change here bumps metadata.generation. */
export function specOf(obj: KubeObject): Record<string, unknown> {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = obj;
  return rest;
}

/** ObjectMeta's JSON fields in its Go struct's order. */
export const OBJECT_META_FIELDS: readonly string[] = [
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
];

/** ObjectMeta with keys in kube-apiserver's (Go struct) order, so output reads as usual. */
export function orderedMeta(m: ObjectMeta): ObjectMeta {
  const out: ObjectMeta = {};
  for (const k of OBJECT_META_FIELDS) if (m[k] !== undefined) out[k] = m[k];
  for (const k of Object.keys(m)) if (!(k in out) && m[k] !== undefined) out[k] = m[k];
  return out;
}

/** Reads a dotted path (`spec.replicas`, `.status.selector`) from an object. */
export function getPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.replace(/^\./, '').split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

export function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.replace(/^\./, '').split('.');
  let cur: Record<string, unknown> = obj;
  for (const part of parts.slice(0, -1)) {
    const next = cur[part];
    if (next === null || typeof next !== 'object') cur[part] = {};
    cur = cur[part] as Record<string, unknown>;
  }
  cur[parts.at(-1)!] = value;
}

const FRACTIONAL_TIME = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.\d+(Z|[+-]\d\d:\d\d)$/;
/** metav1.MicroTime fields of built-in kinds; every other timestamp is a metav1.Time. */
const MICRO_TIME_FIELDS = new Set(['acquireTime', 'renewTime', 'eventTime', 'lastObservedTime']);

/**
 * kube-apiserver decodes built-in kinds into Go structs and encodes them back, so a
 * timestamp sent as `…:07.000Z` (client-node serializes Dates that way) is stored as
 * `…:07Z` (metav1.Time has second precision) and emptied optional lists disappear.
 * Built-in kinds get that normalisation everywhere; custom resources only in metadata,
 * since the rest of a custom object is stored as given.
 */
export function normalizeTimes(obj: KubeObject, allFields: boolean): void {
  const m = obj.metadata;
  if (m) {
    for (const k of ['labels', 'annotations'] as const) {
      if (m[k] && Object.keys(m[k]).length === 0) delete m[k];
    }
    for (const k of ['creationTimestamp', 'deletionTimestamp'] as const) {
      if (typeof m[k] === 'string') m[k] = truncate(m[k]);
    }
    for (const mf of m.managedFields ?? []) if (typeof mf.time === 'string') mf.time = truncate(mf.time);
  }
  if (allFields) walk(obj, 0);
}

function truncate(v: string): string {
  const r = FRACTIONAL_TIME.exec(v);
  return r ? `${r[1]}${r[2]}` : v;
}

/** Names of metav1.Time fields: `lastTransitionTime`, `creationTimestamp`, `startedAt`… */
const TIME_FIELD = /(Time|Timestamp|At)$/;
/** Maps of user keys and values, never normalised. */
const USER_MAPS = new Set([
  'metadata',
  'labels',
  'annotations',
  'data',
  'stringData',
  'binaryData',
  'nodeSelector',
  'matchLabels',
]);

/** Lists Go serializes even when empty (no `omitempty` on their JSON tag). */
const KEEP_EMPTY_LISTS = new Set(['containers', 'rules']);

function walk(v: unknown, depth: number): void {
  if (depth > 64 || v === null || typeof v !== 'object') return;
  if (Array.isArray(v)) {
    for (const x of v) walk(x, depth + 1);
    return;
  }
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    const x = o[k];
    if (typeof x === 'string') {
      if (x.length >= 20 && TIME_FIELD.test(k) && !MICRO_TIME_FIELDS.has(k)) o[k] = truncate(x);
    } else if (USER_MAPS.has(k)) {
      // Free-form user data (annotations, ConfigMap data, …) is stored as given.
    } else if (Array.isArray(x) && x.length === 0 && !KEEP_EMPTY_LISTS.has(k)) {
      // Built-in kinds' optional lists are `omitempty`: an emptied list disappears.
      delete o[k];
    } else if (x !== null && typeof x === 'object') walk(x, depth + 1);
  }
}
