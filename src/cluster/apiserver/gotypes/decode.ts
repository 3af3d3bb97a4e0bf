/**
 * Whether a JSON value would decode into a built-in kind's Go type, and if not, the error
 * kube-apiserver reports. Two decoders are at work upstream, with different words:
 *  - request bodies of create and update, and the result of a JSON or merge patch, go through
 *    the JSON serializer (sigs.k8s.io/json, case-sensitive encoding/json): the first type
 *    mismatch in document order is `json: cannot unmarshal string into Go struct field
 *    DeploymentSpec.spec.replicas of type int32` (innermost struct, then the JSON field path
 *    without list indexes or map keys);
 *  - a strategic merge patch's result is converted from a map by runtime.DefaultUnstructuredConverter
 *    (k8s.io/apimachinery/pkg/runtime/converter.go): `unrecognized type: int32`,
 *    `cannot restore map from string`, `cannot restore struct from: string`.
 * null decodes into anything (it leaves the field empty); fields the type lacks are the unknown
 * fields of field validation, checked apart.
 */
import { parseQuantity } from '../../../kube/quantity.ts';
import { isObject } from '../../../lib/json.ts';
import { goJsonKind } from '../gofmt.ts';
import type { GoType } from './types.ts';

const INT_RANGE: Record<string, [number, number]> = {
  int8: [-(2 ** 7), 2 ** 7 - 1],
  int16: [-(2 ** 15), 2 ** 15 - 1],
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  uint8: [0, 2 ** 8 - 1],
  uint16: [0, 2 ** 16 - 1],
  uint32: [0, 2 ** 32 - 1],
  uint: [0, Number.MAX_SAFE_INTEGER],
  uint64: [0, Number.MAX_SAFE_INTEGER],
};

/** A Go duration (time.ParseDuration): `1h30m`, `-1.5s`, `0`. */
const GO_DURATION = /^[-+]?(?:0|(?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+)$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

interface JsonContext {
  struct: string;
  path: string[];
}

class DecodeFailure extends Error {}

/** The JSON serializer's error for `value` decoded into `type`, or undefined when it decodes. */
export function jsonDecodeError(type: GoType, value: unknown): string | undefined {
  try {
    jsonWalk(type, value, { struct: '', path: [] });
    return undefined;
  } catch (err) {
    if (err instanceof DecodeFailure) return err.message;
    throw err;
  }
}

/** encoding/json names a wrong JSON kind (`string`) and a number that does not fit (`number 1.5`). */
function typeError(ctx: JsonContext, value: unknown, typeName: string): DecodeFailure {
  return unmarshalError(ctx, `number ${String(value)}`, typeName);
}

function wrongKind(ctx: JsonContext, value: unknown, typeName: string): DecodeFailure {
  return unmarshalError(ctx, goJsonKind(value), typeName);
}

function unmarshalError(ctx: JsonContext, what: string, typeName: string): DecodeFailure {
  const into = ctx.path.length > 0 ? `Go struct field ${ctx.struct}.${ctx.path.join('.')}` : 'Go value';
  return new DecodeFailure(`json: cannot unmarshal ${what} into ${into} of type ${typeName}`);
}

function checkInt(ctx: JsonContext, value: unknown, goKind: string, typeName: string): void {
  if (typeof value !== 'number') throw wrongKind(ctx, value, typeName);
  const [lo, hi] = INT_RANGE[goKind] ?? INT_RANGE.int64!;
  if (!Number.isInteger(value) || value < lo || value > hi) throw typeError(ctx, value, typeName);
}

function jsonWalk(type: GoType, value: unknown, ctx: JsonContext): void {
  if (value === null || value === undefined) return;
  switch (type.kind) {
    case 'any':
      return;
    case 'ptr':
      jsonWalk(type.elem, value, ctx);
      return;
    case 'scalar':
      switch (type.go) {
        case 'string':
          if (typeof value !== 'string') throw wrongKind(ctx, value, type.name);
          return;
        case 'bool':
          if (typeof value !== 'boolean') throw wrongKind(ctx, value, type.name);
          return;
        case 'float':
          if (typeof value !== 'number') throw wrongKind(ctx, value, type.name);
          return;
        default:
          checkInt(ctx, value, type.goKind, type.name);
          return;
      }
    case 'slice':
      if (type.bytes) {
        if (typeof value !== 'string') {
          if (Array.isArray(value)) {
            for (const v of value) checkInt(ctx, v, 'uint8', 'uint8');
            return;
          }
          throw wrongKind(ctx, value, type.name);
        }
        if (!BASE64.test(value) || value.length % 4 !== 0) {
          throw new DecodeFailure(`illegal base64 data at input byte ${base64ErrorIndex(value)}`);
        }
        return;
      }
      if (!Array.isArray(value)) throw wrongKind(ctx, value, type.name);
      for (const v of value) jsonWalk(type.elem, v, ctx);
      return;
    case 'map':
      if (!isObject(value)) throw wrongKind(ctx, value, type.name);
      for (const k in value) jsonWalk(type.elem, value[k], ctx);
      return;
    case 'struct': {
      if (!isObject(value)) throw wrongKind(ctx, value, type.name);
      const fields = type.byJson();
      for (const k in value) {
        const f = fields.get(k);
        if (!f) continue;
        const saved = ctx.struct;
        ctx.struct = f.struct;
        ctx.path.push(k);
        jsonWalk(f.type, value[k], ctx);
        ctx.path.pop();
        ctx.struct = saved;
      }
      return;
    }
    case 'custom':
      jsonCustom(type.custom, value, ctx);
      return;
  }
}

function jsonCustom(custom: string, value: unknown, ctx: JsonContext): void {
  switch (custom) {
    case 'Time':
      // metav1.Time decodes a JSON string and then parses it.
      if (typeof value !== 'string') throw wrongKind(ctx, value, 'string');
      return;
    case 'Duration':
      if (typeof value !== 'string') throw wrongKind(ctx, value, 'string');
      if (!GO_DURATION.test(value)) throw new DecodeFailure(`time: invalid duration "${value}"`);
      return;
    case 'Quantity':
      quantityCheck(value);
      return;
    case 'IntOrString':
      // A JSON string is the string form; anything else is decoded as an int32.
      if (typeof value !== 'string') checkInt(ctx, value, 'int32', 'int32');
      return;
    default:
      return;
  }
}

/** The quantities written most often (`100m`, `1Gi`, `2`, `1e3`): valid without a full parse. */
const PLAIN_QUANTITY = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[numkMGTPE]|[KMGTPE]i|[eE][-+]?\d+)?$/;

/** resource.Quantity's UnmarshalJSON parses a string's content or any other literal as written. */
function quantityCheck(value: unknown): void {
  if (typeof value === 'number' || (typeof value === 'string' && PLAIN_QUANTITY.test(value))) return;
  const text =
    typeof value === 'string' ? value.trim() : typeof value === 'number' ? value : JSON.stringify(value);
  try {
    parseQuantity(text);
  } catch (err) {
    throw new DecodeFailure((err as Error).message);
  }
}

/** Where Go's base64 decoder stops: the first byte outside the alphabet, or the end. */
function base64ErrorIndex(s: string): number {
  const bad = /[^A-Za-z0-9+/=]/.exec(s);
  if (bad) return bad.index;
  const pad = s.indexOf('=');
  if (pad >= 0 && pad < s.length - 2) return pad;
  return s.length - (s.length % 4 === 0 ? 0 : s.length % 4);
}

/**
 * The error DefaultUnstructuredConverter.FromUnstructured reports converting a strategic merge
 * patch's result into `type`, or undefined. Its first error ends the conversion; map entries
 * are visited in Go's random map order upstream, here in document order.
 */
export function unstructuredDecodeError(type: GoType, value: unknown): string | undefined {
  try {
    convertWalk(type, value);
    return undefined;
  } catch (err) {
    if (err instanceof DecodeFailure) return err.message;
    throw err;
  }
}

/** reflect.Kind of a JSON-decoded value as the converter sees it. */
function sourceKind(value: unknown): string {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int64' : 'float64';
  if (Array.isArray(value)) return 'slice';
  return 'map';
}

function convertWalk(type: GoType, value: unknown): void {
  if (value === null || value === undefined) return;
  switch (type.kind) {
    case 'any':
      return;
    case 'ptr':
      convertWalk(type.elem, value);
      return;
    case 'scalar': {
      const st = sourceKind(value);
      const unrecognized = () => new DecodeFailure(`unrecognized type: ${type.goKind}`);
      switch (type.go) {
        case 'string':
          if (st === 'string') return;
          // Go converts an integer to a string type, but the converter refuses it by name.
          if (st === 'int64') throw new DecodeFailure(`cannot convert int64 to ${type.name}`);
          throw unrecognized();
        case 'bool':
          if (st === 'bool') return;
          throw unrecognized();
        case 'float':
          if (st === 'int64' || st === 'float64') return;
          throw unrecognized();
        default:
          if (st === 'int64') return;
          if (st === 'float64') {
            if (Number.isInteger(value)) return;
            throw new DecodeFailure(`cannot convert float64 to ${type.name}`);
          }
          throw unrecognized();
      }
    }
    case 'slice':
      if (type.bytes && typeof value === 'string') {
        if (value.length > 0 && (!BASE64.test(value) || value.length % 4 !== 0)) {
          throw new DecodeFailure(
            `error decoding from json: illegal base64 data at input byte ${base64ErrorIndex(value)}`,
          );
        }
        return;
      }
      if (!Array.isArray(value)) throw new DecodeFailure(`cannot restore slice from ${sourceKind(value)}`);
      for (const v of value) convertWalk(type.elem, v);
      return;
    case 'map':
      if (!isObject(value)) throw new DecodeFailure(`cannot restore map from ${sourceKind(value)}`);
      for (const k in value) convertWalk(type.elem, value[k]);
      return;
    case 'struct': {
      if (!isObject(value)) throw new DecodeFailure(`cannot restore struct from: ${sourceKind(value)}`);
      const fields = type.byJson();
      for (const k in value) {
        const f = fields.get(k);
        if (f) convertWalk(f.type, value[k]);
      }
      return;
    }
    case 'custom':
      // Types with their own UnmarshalJSON get the value re-encoded as JSON: a fresh decode,
      // so an encoding/json error carries no struct context.
      jsonCustom(type.custom, value, { struct: '', path: [] });
      return;
  }
}
