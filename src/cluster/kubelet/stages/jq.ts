/**
 * JQ queries as KWOK evaluates them (gojq): a list of outputs, and any runtime error reads as
 * "no output". Plain paths and `select(path == literal)` steps, which is what stages use, are
 * compiled natively here: they run without allocation-heavy generators and give jq's null
 * semantics (`null["k"]` is null). Anything else goes to @michaelhomer/jqjs, a pure-JS jq.
 */

import jqjs from '@michaelhomer/jqjs';
import { jsonEqual } from '../../../lib/json.ts';

export type JqResult = unknown[] | undefined;

export interface JqQuery {
  readonly source: string;
  /** Outputs of the program, or undefined when it raised an error (KWOK treats both alike). */
  run(input: unknown): JqResult;
}

type Step =
  | { k: 'key'; name: string }
  | { k: 'index'; i: number }
  | { k: 'iter' }
  | { k: 'select'; path: Step[]; op: '==' | '!='; value: unknown };

const FAIL = Symbol('jq-error');

function applyPath(inputs: unknown[], steps: readonly Step[]): unknown[] | typeof FAIL {
  let cur = inputs;
  for (const s of steps) {
    const next: unknown[] = [];
    for (const v of cur) {
      switch (s.k) {
        case 'key':
          if (v === null || v === undefined) next.push(null);
          else if (typeof v === 'object' && !Array.isArray(v)) {
            const o = v as Record<string, unknown>;
            next.push(Object.hasOwn(o, s.name) ? o[s.name] : null);
          } else return FAIL;
          break;
        case 'index':
          if (v === null || v === undefined) next.push(null);
          else if (Array.isArray(v)) next.push(v[s.i < 0 ? v.length + s.i : s.i] ?? null);
          else return FAIL;
          break;
        case 'iter':
          if (Array.isArray(v)) next.push(...v);
          else if (v !== null && typeof v === 'object') next.push(...Object.values(v));
          else return FAIL;
          break;
        case 'select': {
          const got = applyPath([v], s.path);
          if (got === FAIL) return FAIL;
          for (const g of got) {
            const eq = jsonEqual(g, s.value);
            if (s.op === '==' ? eq : !eq) next.push(v);
          }
          break;
        }
      }
    }
    cur = next;
  }
  return cur;
}

/** applyPath for steps that are all keys and indexes (one output): no array per step. */
function walkPlain(input: unknown, steps: readonly Step[]): unknown[] | typeof FAIL {
  let v = input;
  for (const s of steps) {
    if (v === null || v === undefined) v = null;
    else if (s.k === 'key') {
      if (typeof v !== 'object' || Array.isArray(v)) return FAIL;
      const o = v as Record<string, unknown>;
      v = Object.hasOwn(o, s.name) ? o[s.name] : null;
    } else if (s.k === 'index') {
      if (!Array.isArray(v)) return FAIL;
      v = v[s.i < 0 ? v.length + s.i : s.i] ?? null;
    } else return FAIL;
  }
  return [v];
}

/** Parses `.a.b["c"].[] | select(.x == "y") | .z` into steps; undefined when it is anything richer. */
function parseSimple(src: string): Step[] | undefined {
  const steps: Step[] = [];
  const stages = splitPipes(src);
  if (!stages) return undefined;
  for (const raw of stages) {
    const stage = raw.trim();
    const sel = /^select\s*\(\s*(.+?)\s*(==|!=)\s*(.+?)\s*\)$/.exec(stage);
    if (sel) {
      const path = parsePath(sel[1]!);
      let value: unknown;
      try {
        value = JSON.parse(sel[3]!);
      } catch {
        return undefined;
      }
      if (!path) return undefined;
      steps.push({ k: 'select', path, op: sel[2] as '==' | '!=', value });
      continue;
    }
    const path = parsePath(stage);
    if (!path) return undefined;
    steps.push(...path);
  }
  return steps;
}

function splitPipes(src: string): string[] | undefined {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === '"') {
      const end = src.indexOf('"', i + 1);
      if (end < 0) return undefined;
      cur += src.slice(i, end + 1);
      i = end;
      continue;
    }
    if (c === '(' || c === '[') depth++;
    if (c === ')' || c === ']') depth--;
    if (c === '|' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  out.push(cur);
  return out;
}

function parsePath(src: string): Step[] | undefined {
  const s = src.trim();
  if (s === '.') return [];
  if (!s.startsWith('.')) return undefined;
  const steps: Step[] = [];
  let i = 0;
  while (i < s.length) {
    if (s[i] === '.') i++;
    const rest = s.slice(i);
    const key = /^([A-Za-z_][A-Za-z0-9_]*)/.exec(rest);
    const quoted = key ? null : /^\[\s*"((?:[^"\\]|\\.)*)"\s*\]/.exec(rest);
    const index = key || quoted ? null : /^\[\s*(-?\d+)\s*\]/.exec(rest);
    const iter = key || quoted || index ? null : /^\[\s*\]/.exec(rest);
    const m = key ?? quoted ?? index ?? iter;
    if (!m) return undefined;
    if (key) steps.push({ k: 'key', name: key[1]! });
    else if (quoted) steps.push({ k: 'key', name: JSON.parse(`"${quoted[1]}"`) as string });
    else if (index) steps.push({ k: 'index', i: Number(index[1]) });
    else steps.push({ k: 'iter' });
    i += m[0].length;
    if (i < s.length && s[i] !== '.' && s[i] !== '[') return undefined;
  }
  return steps;
}

interface JqjsModule {
  compile(program: string): (input: unknown) => Iterable<unknown>;
}

/** Compiles a jq program; the error string says why it cannot be used. */
export function compileJq(source: string): { ok: true; query: JqQuery } | { ok: false; error: string } {
  const simple = parseSimple(source);
  if (simple) {
    // Most selectors are plain paths (`.status.podIP`): walked without the general machinery.
    const plain = simple.every((s) => s.k === 'key' || s.k === 'index');
    return {
      ok: true,
      query: {
        source,
        run(input) {
          const r = plain ? walkPlain(input ?? null, simple) : applyPath([input ?? null], simple);
          return r === FAIL ? undefined : r;
        },
      },
    };
  }
  let fn: (input: unknown) => Iterable<unknown>;
  try {
    fn = (jqjs as unknown as JqjsModule).compile(source);
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
  // jqjs resolves function names lazily; one run on null surfaces unknown functions now.
  try {
    for (const _ of fn(null)) break;
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    if (/no such function/.test(msg)) return { ok: false, error: msg };
  }
  return {
    ok: true,
    query: {
      source,
      run(input) {
        try {
          return [...fn(input ?? null)];
        } catch {
          return undefined;
        }
      },
    },
  };
}
