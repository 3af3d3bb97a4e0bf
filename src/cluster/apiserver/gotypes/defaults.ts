/**
 * Defaulting by Go type, as defaulter-gen's generated SetObjectDefaults_* functions do it:
 * wherever a type occurs in an object, its SetDefaults_* function (builtin/go-defaults.ts) and
 * then the `// +default=` markers on its fields. A pointer field gets its marker's default when
 * nil, a value field when it holds its zero value (`""`, `0`, `false`). Only the paths that can
 * reach a function or a marker are walked.
 */
import { SET_DEFAULTS } from '../builtin/go-defaults.ts';
import type { GoField, GoType } from './types.ts';

type Obj = Record<string, unknown>;

interface Plan {
  /** The type's SetDefaults_* function. */
  setDefaults: ((o: Obj) => void) | undefined;
  /** Marked fields of this struct. */
  marked: GoField[];
  /** Fields whose values can hold marked fields further down, with how to walk them. */
  inner: Array<{ json: string; walk: (v: unknown) => void }>;
}

const plans = new WeakMap<GoType, Plan | null>();
const reaches = new WeakMap<GoType, boolean>();

function reachesDefault(t: GoType): boolean {
  const known = reaches.get(t);
  if (known !== undefined) return known;
  // Provisionally false: a recursive type reaches a marker through its other fields.
  reaches.set(t, false);
  let out: boolean;
  switch (t.kind) {
    case 'struct':
      out =
        SET_DEFAULTS[t.qualified] !== undefined ||
        t.fields().some((f) => f.defaultValue !== undefined || reachesDefault(f.type));
      break;
    case 'ptr':
    case 'slice':
    case 'map':
      out = reachesDefault(t.elem);
      break;
    default:
      out = false;
  }
  reaches.set(t, out);
  return out;
}

function walker(t: GoType): ((v: unknown) => void) | undefined {
  if (!reachesDefault(t)) return undefined;
  switch (t.kind) {
    case 'struct':
      return (v) => {
        if (isObject(v)) defaultStruct(t, v);
      };
    case 'ptr':
      return walker(t.elem);
    case 'slice': {
      let each: ((v: unknown) => void) | undefined;
      return (v) => {
        if (!Array.isArray(v)) return;
        // Built on first use: the element type may be this type itself (recursive types).
        each ??= walker(t.elem)!;
        for (const item of v) each(item);
      };
    }
    case 'map': {
      let each: ((v: unknown) => void) | undefined;
      return (v) => {
        if (!isObject(v)) return;
        each ??= walker(t.elem)!;
        for (const k in v) each(v[k]);
      };
    }
    default:
      return undefined;
  }
}

function planOf(t: GoType & { kind: 'struct' }): Plan | null {
  let plan = plans.get(t);
  if (plan !== undefined) return plan;
  plans.set(t, null);
  const marked = t.fields().filter((f) => f.defaultValue !== undefined);
  const inner: Plan['inner'] = [];
  for (const f of t.fields()) {
    const walk = walker(f.type);
    if (walk) inner.push({ json: f.json, walk });
  }
  const setDefaults = SET_DEFAULTS[t.qualified];
  plan = marked.length === 0 && inner.length === 0 && !setDefaults ? null : { setDefaults, marked, inner };
  plans.set(t, plan);
  return plan;
}

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isZero(v: unknown): boolean {
  return v === undefined || v === null || v === '' || v === 0 || v === false;
}

function defaultStruct(t: GoType & { kind: 'struct' }, obj: Obj): void {
  const plan = planOf(t);
  if (!plan) return;
  plan.setDefaults?.(obj);
  for (const f of plan.marked) {
    const v = obj[f.json];
    if (f.type.kind === 'ptr' ? v === undefined || v === null : isZero(v)) obj[f.json] = f.defaultValue;
  }
  for (const { json, walk } of plan.inner) {
    const v = obj[json];
    if (v !== undefined && v !== null) walk(v);
  }
}

/** Applies the `+default=` markers of `type` (a struct) to `obj`, in place. */
export function applyMarkerDefaults(type: GoType, obj: Obj): void {
  if (type.kind === 'struct') defaultStruct(type, obj);
}
