/**
 * What playing a stage on an object would do, without doing it: the delay before it fires and
 * the event, finalizer patch, deletion and patches (status and others) it would apply, in the
 * order KWOK applies them. Rendering happens here, so the caller can plan again after the delay
 * to render against the object as it is then.
 */

import { CORE_SCHEMA, load as loadYAML } from 'js-yaml';
import { parseGoDuration } from '../../../kube/duration.ts';
import { random as programRandom } from '../../../lib/random.ts';
import type { FuncMap } from '../gotemplate/index.ts';
import type { CompiledPatch, CompiledStage } from './compile.ts';
import { type KwokFuncOptions, kwokFuncs } from './funcs.ts';
import type { JqQuery } from './jq.ts';
import type { StageObject } from './match.ts';
import { formatRFC3339Nano, parseRFC3339 } from './time.ts';

export interface StageEnv extends KwokFuncOptions {
  /** [0, 1) source for jitter; the program's random source (src/lib/random.ts) by default. */
  random?: () => number;
  /**
   * Hook for behaviour beyond KWOK's (probe delays, run durations): receives the delay KWOK's
   * rules produced and returns the one to use.
   */
  adjustDelay?: (stage: CompiledStage, obj: StageObject, delayMs: number | undefined) => number | undefined;
}

export interface JsonPatchOp {
  op: 'add' | 'remove' | 'replace';
  path: string;
  value?: unknown;
}

export interface PlannedPatch {
  /** '' for the main resource, 'status' for the status subresource. */
  subresource: string;
  type: 'json' | 'merge' | 'strategic';
  /** A merge/strategic patch document, or the list of JSON patch operations. */
  patch: unknown;
  impersonate: string | undefined;
}

export interface StagePlan {
  stage: string;
  /** Milliseconds to wait before playing; undefined when the stage has no delay. */
  delayMs: number | undefined;
  event: { type: string; reason: string; message: string } | undefined;
  /** JSON patch on metadata.finalizers, applied before deletion or the other patches. */
  finalizers: JsonPatchOp[] | undefined;
  delete: boolean;
  /** Empty when the object is deleted. */
  patches: PlannedPatch[];
  immediateNextStage: boolean;
}

export type PlanResult = { ok: true; plan: StagePlan } | { ok: false; error: string };

/** A duration read from the object: a Go duration, or an RFC3339 time meaning "until then". */
function durationFrom(
  q: JqQuery | undefined,
  fallback: number | undefined,
  obj: unknown,
  now: number,
): number | undefined | null {
  if (!q) return fallback;
  const out = q.run(obj);
  if (!out || out.length === 0) return fallback;
  const v = out[0];
  if (typeof v === 'string') {
    // An empty string switches the delay off entirely, as in KWOK.
    if (v === '') return null;
    const t = parseRFC3339(v);
    if (t !== undefined) return t - now;
    const d = parseGoDuration(v);
    if (d !== undefined) return d;
  }
  return fallback;
}

/**
 * The stage's delay for this object: durationMilliseconds (or durationFrom), then a uniform
 * extra up to jitterDurationMilliseconds (or jitterDurationFrom); a jitter bound below the
 * duration caps it instead. Undefined means "no delay".
 */
export function stageDelay(
  stage: CompiledStage,
  obj: StageObject,
  env: Pick<StageEnv, 'now' | 'random'>,
): number | undefined {
  const d = stage.delay;
  if (!d) return undefined;
  const now = env.now();
  const duration = durationFrom(d.durationFrom, d.durationMs, obj, now);
  if (duration === null || duration === undefined) return undefined;
  if (!d.hasJitter) return Math.max(0, duration);
  const jitter = durationFrom(d.jitterFrom, d.jitterMs, obj, now);
  if (jitter === null || jitter === undefined) return Math.max(0, duration);
  if (jitter < duration) return Math.max(0, jitter);
  const random = env.random ?? programRandom;
  return Math.max(0, duration + Math.floor(random() * (jitter - duration)));
}

/** KWOK's finalizer edit as JSON patch operations against the current list. */
export function finalizerOps(
  current: readonly string[],
  f: NonNullable<CompiledStage['finalizers']>,
): JsonPatchOp[] {
  const ops: JsonPatchOp[] = [];
  let empty = f.empty;
  if (!empty && f.remove.length > 0) {
    const removed: JsonPatchOp[] = [];
    for (let i = current.length - 1; i >= 0; i--) {
      if (f.remove.includes(current[i]!)) removed.push({ op: 'remove', path: `/metadata/finalizers/${i}` });
    }
    if (removed.length === current.length) empty = true;
    else ops.push(...removed);
  }
  const addOps = (base: readonly string[]) => {
    if (f.add.length === 0) return;
    if (base.length === 0) ops.push({ op: 'add', path: '/metadata/finalizers', value: [...f.add] });
    else
      for (const v of f.add)
        if (!base.includes(v)) ops.push({ op: 'add', path: '/metadata/finalizers/-', value: v });
  };
  if (!empty) addOps(current);
  else {
    if (current.length > 0) ops.push({ op: 'remove', path: '/metadata/finalizers' });
    addOps([]);
  }
  return ops;
}

function parseYAML(text: string): unknown {
  // js-yaml over `yaml` here: ~10 µs instead of ~170 µs per status, and this runs per pod.
  // The core schema keeps unquoted timestamps as strings, as sigs.k8s.io/yaml does.
  return loadYAML(text, { schema: CORE_SCHEMA });
}

/**
 * Each patch's last few rendered texts with the render's time and addresses replaced by
 * tokens, and their parses. A stage that renders the same status for every object but for
 * those (the node heartbeat, 8,000 a simulated half day; pod-ready, one per pod) is parsed once
 * instead of once per play; a few, as a time's length varies (`.12Z`, `.123Z`) and so does its
 * token's.
 */
const lastParses = new WeakMap<CompiledPatch, Map<string, unknown>>();
const LAST_PARSES = 8;
/** What may be tokenized: an RFC 3339 time or an IPv4 address (digits and `.-:TZ`, no space). */
const VOLATILE = /^(?:\d{4}-\d{2}-\d{2}T[\d:.]+Z|\d{1,3}(?:\.\d{1,3}){3})$/;
/** Letters in no YAML keyword or number form (true, null, .inf, 0x1f, 1e3…). */
const TOKEN_CHARS = ['Q', 'J', 'V', 'W', 'q', 'j', 'v', 'w'];

/**
 * parseYAML(text), reusing a recent parse when the text differs from an earlier one only by
 * the render's time and addresses (`volatile`). Exact: only a text in which each of them only
 * ever appears quoted (`"2026-…Z"`, as Quote and toJson write it) and that has no backslash
 * qualifies. Each becomes a run, as long as it, of its own letter that the text does not
 * contain: quotes, columns and lines stay where they were and no escape can make that letter,
 * so the token is read wherever and however the value would have been (a double-quoted
 * scalar's content, or literal text in a plain or single-quoted scalar, a block scalar or a
 * comment), and putting the values back into the parsed strings and keys gives what parsing
 * the text itself gives.
 */
function parseRendered(p: CompiledPatch, text: string, volatile: readonly string[]): unknown {
  if (text.includes('\\')) return parseYAML(text);
  const letters = TOKEN_CHARS.filter((ch) => !text.includes(ch));
  const swaps: [token: string, value: string][] = [];
  let key = text;
  for (const v of volatile) {
    if (!VOLATILE.test(v) || !text.includes(v)) continue;
    const c = letters[swaps.length];
    if (c === undefined) return parseYAML(text);
    const token = c.repeat(v.length);
    key = key.replaceAll(`"${v}"`, `"${token}"`);
    swaps.push([token, v]);
  }
  if (swaps.length === 0 || swaps.some(([, v]) => key.includes(v))) return parseYAML(text);
  let parses = lastParses.get(p);
  if (!parses) {
    parses = new Map();
    lastParses.set(p, parses);
  }
  // The key holds its tokens (the only runs of their letters), so a hit was parsed with them.
  if (!parses.has(key)) {
    let value: unknown;
    try {
      value = parseYAML(key);
    } catch {
      // The error as the text itself gives it (it names what the template rendered).
      return parseYAML(text);
    }
    if (parses.size >= LAST_PARSES) parses.delete(parses.keys().next().value!);
    parses.set(key, value);
  }
  return withValues(parses.get(key), swaps);
}

function swapped(s: string, swaps: readonly [string, string][]): string {
  let out = s;
  for (const [token, value] of swaps) if (out.includes(token)) out = out.replaceAll(token, value);
  return out;
}

/** A copy of a parsed value with each token replaced by its value in every string and key. */
function withValues(v: unknown, swaps: readonly [string, string][]): unknown {
  if (typeof v === 'string') return swapped(v, swaps);
  if (Array.isArray(v)) return v.map((x) => withValues(x, swaps));
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o)) {
    const key = swapped(k, swaps);
    const value = withValues(o[k], swaps);
    // As js-yaml stores it: an own property, even one named __proto__.
    if (key === '__proto__')
      Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
    else out[key] = value;
  }
  return out;
}

function renderPatch(
  p: CompiledPatch,
  obj: StageObject,
  funcs: FuncMap,
  volatile: readonly string[],
): { ok: true; patch: PlannedPatch } | { ok: false; error: string } {
  const text = p.template.execute(obj, funcs);
  if (!text.ok) return { ok: false, error: text.error };
  let value: unknown;
  try {
    value = parseRendered(p, text.value, volatile);
  } catch (e) {
    return {
      ok: false,
      error: `rendered template is not YAML: ${e instanceof Error ? e.message : String(e)}:\n${text.value}`,
    };
  }
  const podOrNode = obj.kind === 'Pod' || obj.kind === 'Node';
  const type = p.type ?? (podOrNode ? 'strategic' : 'merge');
  let patch: unknown;
  if (type === 'json') {
    if (!Array.isArray(value))
      return { ok: false, error: 'json patch template must render a list of operations' };
    patch = p.root
      ? value.map((op: { path?: string }) => ({ ...op, path: `/${p.root}${op.path ?? ''}` }))
      : value;
  } else {
    patch = p.root ? { [p.root]: value ?? null } : (value ?? {});
  }
  // Pods and Nodes take status changes only through their status subresource.
  const subresource = podOrNode && p.root === 'status' ? 'status' : p.subresource;
  return { ok: true, patch: { subresource, type, patch, impersonate: p.impersonation?.username } };
}

export function planNext(stage: CompiledStage, obj: StageObject, env: StageEnv): PlanResult {
  // What differs from one object's render to the next: the time (Now) and the addresses the
  // template asks for (see parseRendered).
  const volatile: string[] = [];
  const remember = (ip: string) => {
    if (!volatile.includes(ip)) volatile.push(ip);
    return ip;
  };
  const { nodeIPWith, podIPWith } = env;
  const funcs = kwokFuncs(
    {
      ...env,
      nodeIPWith: nodeIPWith && ((n) => remember(nodeIPWith(n))),
      podIPWith: podIPWith && ((...args) => remember(podIPWith(...args))),
    },
    obj,
  );
  let delayMs = stageDelay(stage, obj, env);
  if (env.adjustDelay) delayMs = env.adjustDelay(stage, obj, delayMs);

  let event: StagePlan['event'];
  if (stage.event) {
    let message = stage.event.message;
    if (stage.event.messageTemplate) {
      const r = stage.event.messageTemplate.execute(obj, funcs);
      if (!r.ok) return { ok: false, error: `stage ${stage.name}: event message: ${r.error}` };
      message = r.value;
    }
    event = { type: stage.event.type, reason: stage.event.reason, message };
  }

  let finalizers: JsonPatchOp[] | undefined;
  if (stage.finalizers) {
    const current = (obj.metadata as { finalizers?: string[] } | undefined)?.finalizers ?? [];
    const ops = finalizerOps(current, stage.finalizers);
    if (ops.length > 0) finalizers = ops;
  }

  const patches: PlannedPatch[] = [];
  if (!stage.delete) {
    // What the template's Now renders (the plan's clock stands still while it renders).
    const nowText = formatRFC3339Nano(env.now());
    for (const p of stage.patches) {
      volatile.length = 0;
      volatile.push(nowText);
      const r = renderPatch(p, obj, funcs, volatile);
      if (!r.ok) return { ok: false, error: `stage ${stage.name}: ${r.error}` };
      patches.push(r.patch);
    }
  }
  return {
    ok: true,
    plan: {
      stage: stage.name,
      delayMs,
      event,
      finalizers,
      delete: stage.delete,
      patches,
      immediateNextStage: stage.immediateNextStage,
    },
  };
}
