/**
 * The shape encoding/json gives a built-in object, applied in place to the stored form: what a
 * Go struct always has is present even when no one set it.
 *  - A field whose `json` tag has no `omitempty` is always encoded: a zero string `""`, number
 *    `0`, bool `false`, and `null` for a nil slice, map or pointer (`imageID: ""`,
 *    `numberReady: 0`, an EndpointSlice's `endpoints: null`).
 *  - A non-pointer struct field is always encoded, `omitempty` or not (`status: {}`, a
 *    Service's `status.loadBalancer: {}`, a template's `metadata.creationTimestamp: null`, a
 *    core Event's `eventTime: null`): encoding/json never finds a struct empty.
 *  - `null` sent for an `omitempty` field decodes to the zero value, which is then omitted.
 * Types with their own encoders have their own zero: metav1.Time `null`, Duration `"0s"`,
 * Quantity `"0"`, IntOrString `0`.
 */

import { isObject } from '../../../lib/json.ts';
import type { GoField, GoType } from './types.ts';

type Obj = Record<string, unknown>;

interface Plan {
  byJson: Map<string, FieldPlan>;
  /** Fields that must be present: without `omitempty`, or of a non-pointer struct type. */
  always: FieldPlan[];
}

interface FieldPlan {
  field: GoField;
  /** The value an absent field is encoded with (a fresh `{}` is built for structs). */
  zero: () => unknown;
  /** How to shape a present value, or undefined when nothing inside it can need shaping. */
  inner: ((v: unknown) => void) | undefined;
  /** Whether a null decodes into a value that is then encoded (a string's `""`, a struct's `{}`). */
  nullBecomesZero: boolean;
}

const plans = new WeakMap<GoType, Plan>();

function zeroOf(t: GoType): (() => unknown) | undefined {
  switch (t.kind) {
    case 'scalar':
      return t.go === 'string' ? () => '' : t.go === 'bool' ? () => false : () => 0;
    case 'struct':
      return () => {
        const o: Obj = {};
        shapeStruct(t, o);
        return o;
      };
    case 'custom':
      switch (t.custom) {
        case 'Duration':
          return () => '0s';
        case 'Quantity':
          return () => '0';
        case 'IntOrString':
          return () => 0;
        default:
          return () => null;
      }
    default:
      return () => null;
  }
}

/** Whether a value of type `t` can hold something to shape (a struct, somewhere inside). */
const shapeable = new WeakMap<GoType, boolean>();
function holdsStruct(t: GoType, seen = new Set<GoType>()): boolean {
  const known = shapeable.get(t);
  if (known !== undefined) return known;
  if (seen.has(t)) return true;
  seen.add(t);
  let out: boolean;
  switch (t.kind) {
    case 'struct':
      out = true;
      break;
    case 'ptr':
    case 'slice':
    case 'map':
      out = holdsStruct(t.elem, seen);
      break;
    default:
      out = false;
  }
  shapeable.set(t, out);
  return out;
}

function innerOf(t: GoType): ((v: unknown) => void) | undefined {
  if (!holdsStruct(t)) return undefined;
  switch (t.kind) {
    case 'struct':
      return (v) => {
        if (isObject(v)) shapeStruct(t, v);
      };
    case 'ptr':
      return innerOf(t.elem);
    case 'slice': {
      let each: ((v: unknown) => void) | undefined;
      return (v) => {
        if (!Array.isArray(v)) return;
        // Built on first use: the element type may be this type itself (recursive types).
        each ??= innerOf(t.elem)!;
        for (const item of v) each(item);
      };
    }
    case 'map': {
      let each: ((v: unknown) => void) | undefined;
      return (v) => {
        if (!isObject(v)) return;
        each ??= innerOf(t.elem)!;
        for (const k in v) each(v[k]);
      };
    }
    default:
      return undefined;
  }
}

function planOf(t: GoType & { kind: 'struct' }): Plan {
  let plan = plans.get(t);
  if (plan) return plan;
  const byJson = new Map<string, FieldPlan>();
  const always: FieldPlan[] = [];
  plan = { byJson, always };
  plans.set(t, plan);
  for (const field of t.fields()) {
    const ft = field.type;
    const fp: FieldPlan = {
      field,
      zero: zeroOf(ft)!,
      inner: innerOf(ft),
      nullBecomesZero:
        ft.kind === 'struct' || ft.kind === 'custom' || (!field.omitempty && ft.kind === 'scalar'),
    };
    byJson.set(field.json, fp);
    if (!field.omitempty || ft.kind === 'struct' || ft.kind === 'custom') always.push(fp);
  }
  return plan;
}

function shapeStruct(t: GoType & { kind: 'struct' }, obj: Obj): void {
  const plan = planOf(t);
  for (const k in obj) {
    const fp = plan.byJson.get(k);
    if (!fp) continue;
    const v = obj[k];
    if (v === null) {
      if (fp.nullBecomesZero) obj[k] = fp.zero();
      else if (fp.field.omitempty) delete obj[k];
      continue;
    }
    fp.inner?.(v);
  }
  for (const fp of plan.always) {
    if (!(fp.field.json in obj)) obj[fp.field.json] = fp.zero();
  }
}

/** Gives `obj` (an object of the struct `type`) the fields its Go type always encodes. */
export function shapeAsGo(type: GoType, obj: Obj): void {
  if (type.kind === 'struct') shapeStruct(type, obj);
}
