/** JSON values compared as JSON compares them. */

/**
 * JSON text with object keys sorted and undefined members dropped: equal for two values
 * exactly when their JSON encodings are equal up to key order (`isDeepStrictEqual` tells
 * `{ a: undefined }` from `{}`, which JSON does not).
 */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_k, value) => {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const obj = value as Record<string, unknown>;
      return Object.fromEntries(
        Object.keys(obj)
          .sort()
          .filter((k) => obj[k] !== undefined)
          .map((k) => [k, obj[k]]),
      );
    }
    return value;
  });
}
