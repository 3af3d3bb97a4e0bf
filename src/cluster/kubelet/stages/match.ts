/** Which stage applies to an object now: selector matching and KWOK's weighted random choice. */

import { random as programRandom } from '../../../lib/random.ts';
import type { CompiledRequirement, CompiledStage } from './compile.ts';
import type { JqResult } from './jq.ts';

export interface StageObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string>; [k: string]: unknown };
  [k: string]: unknown;
}

/** `v1` or `apps/v1` as written in resourceRef.apiGroup; a bare group (`apps`) matches any version. */
export function refersTo(stage: CompiledStage, obj: StageObject): boolean {
  if (stage.kind !== obj.kind) return false;
  const av = obj.apiVersion ?? 'v1';
  if (stage.apiGroup === av) return true;
  const slash = av.indexOf('/');
  return slash > 0 && stage.apiGroup === av.slice(0, slash);
}

/** KWOK compares string, bool and integer outputs with the requirement's values as text. */
function hasValue(outputs: readonly unknown[], values: ReadonlySet<string>): boolean {
  for (const d of outputs) {
    if (typeof d === 'string') {
      if (values.has(d)) return true;
    } else if (typeof d === 'boolean' || typeof d === 'number') {
      if (values.has(String(d))) return true;
    }
  }
  return false;
}

function exists(outputs: readonly unknown[]): boolean {
  for (const d of outputs) if (d !== null && d !== undefined) return true;
  return false;
}

/**
 * Query outputs by query source, for one object: stages often ask the same question (both node
 * stages select the Ready condition), so one evaluation of an object asks it once.
 */
export type QueryMemo = Map<string, JqResult>;

function runQuery(r: CompiledRequirement, obj: unknown, memo: QueryMemo | undefined): JqResult {
  if (!memo) return r.query.run(obj);
  const src = r.query.source;
  if (memo.has(src)) return memo.get(src);
  const out = r.query.run(obj);
  memo.set(src, out);
  return out;
}

/** `memo`, if given, must only ever have seen this same, unchanged object. */
export function requirementMatches(r: CompiledRequirement, obj: unknown, memo?: QueryMemo): boolean {
  // A query that errors reads as no output, which only NotIn and DoesNotExist accept.
  const out = runQuery(r, obj, memo) ?? [];
  switch (r.operator) {
    case 'In':
      return hasValue(out, r.values);
    case 'NotIn':
      return !hasValue(out, r.values);
    case 'Exists':
      return exists(out);
    case 'DoesNotExist':
      return !exists(out);
  }
}

export function stageMatches(stage: CompiledStage, obj: StageObject, memo?: QueryMemo): boolean {
  if (!stage.selectable || !refersTo(stage, obj)) return false;
  if (stage.matchLabels.length > 0) {
    const labels = obj.metadata?.labels ?? {};
    for (const [k, v] of stage.matchLabels) if (labels[k] !== v) return false;
  }
  if (stage.matchAnnotations.length > 0) {
    const ann = obj.metadata?.annotations ?? {};
    for (const [k, v] of stage.matchAnnotations) if (ann[k] !== v) return false;
  }
  for (const r of stage.matchExpressions) if (!requirementMatches(r, obj, memo)) return false;
  return true;
}

/** Go's strconv.ParseInt(s, 0, 64) prefixes: 0x, 0o, 0b and a leading 0 for octal. */
function parseGoInt(s: string): number | undefined {
  const m = /^([+-]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9]\d*)$/.exec(s);
  if (!m) return undefined;
  const body = m[2]!;
  let n: number;
  if (/^0[0-7]+$/.test(body)) n = Number.parseInt(body.slice(1), 8);
  else n = Number(body);
  return m[1] === '-' ? -n : n;
}

/** The stage's weight for this object: weightFrom's value when it yields one, else spec.weight. */
export function stageWeight(stage: CompiledStage, obj: unknown): number {
  if (stage.weightFrom) {
    const out = stage.weightFrom.run(obj);
    const v = out?.[0];
    if (typeof v === 'string' && v !== '') {
      const n = parseGoInt(v);
      if (n !== undefined) return Math.max(0, n);
    } else if (typeof v === 'number') return Math.max(0, Math.trunc(v));
  }
  return stage.weight;
}

/**
 * The stage to play next for `obj`, or undefined. Several matches are drawn by weight; when all
 * weights are zero each is equally likely. `random` returns [0, 1) and makes the draw repeatable.
 */
export function matchStages(
  stages: readonly CompiledStage[],
  obj: StageObject,
  random: () => number = programRandom,
): CompiledStage | undefined {
  const matching: CompiledStage[] = [];
  for (const s of stages) if (stageMatches(s, obj)) matching.push(s);
  if (matching.length <= 1) return matching[0];
  const weights = matching.map((s) => stageWeight(s, obj));
  const total = weights.reduce((a, b) => a + b, 0);
  if (total === 0) return matching[Math.floor(random() * matching.length)];
  let off = Math.floor(random() * total);
  for (let i = 0; i < matching.length; i++) {
    const w = weights[i]!;
    if (w === 0) continue;
    off -= w;
    if (off < 0) return matching[i];
  }
  return matching[matching.length - 1];
}
