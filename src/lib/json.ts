/**
 * JSON values and the three equalities the program needs, each named for what it means:
 *
 * - `jsonEqual`: equal as JSON documents: object key order does not matter and members
 *   whose value is `undefined` are absent (JSON has no undefined); `null` is a value.
 * - `semanticEqual`: equal as Go sees two decoded API objects (apiequality.Semantic):
 *   an absent field, `null`, an empty map and an empty list are all the zero value.
 * - `canonicalJson`: the JSON text with keys sorted, equal for two values exactly when
 *   `jsonEqual` holds; for hashing and for keys of maps.
 *
 * (`isDeepStrictEqual` tells `{ a: undefined }` from `{}`, which JSON does not.)
 */

export type JsonObject = Record<string, unknown>;

/** A JSON object: not null, not an array. */
export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Readers of loosely typed objects (unstructured JSON), field by field: the value when it has
 * the expected JSON type, else the empty one, as Go's unstructured.Nested* helpers read.
 */
export function recordOf(v: unknown): JsonObject {
  return isObject(v) ? v : {};
}

export function arrayOf<T = JsonObject>(v: unknown): T[] {
  return Array.isArray(v) ? (v as T[]) : [];
}

export function stringOf(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** JSON text with object keys sorted and undefined members dropped (`null` for undefined). */
export function canonicalJson(v: unknown): string {
  return (
    JSON.stringify(v, (_k, value) => {
      if (isObject(value)) {
        return Object.fromEntries(
          Object.keys(value)
            .sort()
            .filter((k) => value[k] !== undefined)
            .map((k) => [k, value[k]]),
        );
      }
      return value;
    }) ?? 'null'
  );
}

/** Equal as JSON documents (see the top of this file). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  // JSON encodes an undefined array element or top-level value as null.
  if (a == null || b == null) return a == null && b == null;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    let n = 0;
    for (const k in a) {
      const av = a[k];
      if (av === undefined) continue;
      n++;
      const bv = b[k];
      if (bv === undefined || !jsonEqual(av, bv)) return false;
    }
    for (const k in b) if (b[k] !== undefined) n--;
    return n === 0;
  }
  return false;
}

/**
 * Equal as Go's apiequality.Semantic.DeepEqual sees two decoded objects: absent, null,
 * empty maps and empty lists are alike.
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  if (isZero(a) && isZero(b)) return true;
  if (a === b) return true;
  if (typeof a !== typeof b) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => semanticEqual(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!semanticEqual(a[k], b[k])) return false;
    return true;
  }
  return false;
}

function isZero(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.keys(v).length === 0;
  return false;
}

/**
 * A deep copy of a JSON value (undefined members dropped, as JSON drops them). A JSON round
 * trip copies plain data faster than structuredClone.
 */
export function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}
