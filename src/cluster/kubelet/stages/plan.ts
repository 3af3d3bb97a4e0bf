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
 * Each patch's last few rendered texts with the render's time replaced by a token, and their
 * parses. A stage that renders the same status for every object but for the time (the node
 * heartbeat, 8,000 a simulated half day) is parsed once instead of once per play; a few, as
 * the time's length varies (`.12Z` and `.123Z`), and so does the token's.
 */
const lastParses = new WeakMap<CompiledPatch, Map<string, unknown>>();
const LAST_PARSES = 8;
const NOW_TEXT = /^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/;
/** Letters in no YAML keyword or number form (true, null, .inf, 0x1f, 1e3…). */
const TOKEN_CHARS = ['Q', 'J', 'V', 'W', 'q', 'j', 'v', 'w'];

/**
 * parseYAML(text), reusing the patch's last parse when the text differs from the last one only
 * by the render's time. Exact: only a text whose every time is quoted (`"2026-…Z"`, as Quote
 * and toJson write it) and that has no backslash qualifies. The time (digits, `-:.TZ`) becomes
 * a run of one letter of the same length that the text does not contain: quotes, columns and
 * lines stay where they were and no escape can make that letter, so the token is read wherever
 * and however the time would have been (a double-quoted scalar's content, or literal text in
 * a plain or single-quoted scalar, a block scalar or a comment), and putting the time back
 * into the parsed strings and keys gives what parsing the text itself gives.
 */
function parseRendered(p: CompiledPatch, text: string, nowText: string): unknown {
  const c =
    NOW_TEXT.test(nowText) && !text.includes('\\') && text.includes(nowText)
      ? TOKEN_CHARS.find((ch) => !text.includes(ch))
      : undefined;
  if (c === undefined) return parseYAML(text);
  const token = c.repeat(nowText.length);
  const key = text.replaceAll(`"${nowText}"`, `"${token}"`);
  if (key.includes(nowText)) return parseYAML(text);
  let parses = lastParses.get(p);
  if (!parses) {
    parses = new Map();
    lastParses.set(p, parses);
  }
  // The key holds its token (the only run of that letter), so a hit's value was parsed with it.
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
  return withText(parses.get(key), token, nowText);
}

/** A copy of a parsed value with `token` replaced by `text` in every string and key. */
function withText(v: unknown, token: string, text: string): unknown {
  if (typeof v === 'string') return v.includes(token) ? v.replaceAll(token, text) : v;
  if (Array.isArray(v)) return v.map((x) => withText(x, token, text));
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o)) {
    const key = k.includes(token) ? k.replaceAll(token, text) : k;
    const value = withText(o[k], token, text);
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
  nowText: string,
): { ok: true; patch: PlannedPatch } | { ok: false; error: string } {
  const text = p.template.execute(obj, funcs);
  if (!text.ok) return { ok: false, error: text.error };
  let value: unknown;
  try {
    value = parseRendered(p, text.value, nowText);
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
  const funcs = kwokFuncs(env, obj);
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
      const r = renderPatch(p, obj, funcs, nowText);
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
