import { randomUUID } from 'node:crypto';
import type { KubeObject } from './types.ts';

/** RFC 3339 with second precision, as metav1.Time serializes. */
export function nowRfc3339(d: Date = new Date()): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

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
  for (let i = 0; i < n; i++) s += ALPHANUMS[Math.floor(Math.random() * ALPHANUMS.length)];
  return s;
}

/** Everything but metadata and status: a change here bumps metadata.generation. */
export function specJson(obj: KubeObject): string {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = obj;
  return JSON.stringify(rest);
}

export function deepEqualJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
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
