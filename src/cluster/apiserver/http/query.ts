/**
 * Query parameters decoded as kube-apiserver's parameter codec decodes them into ListOptions,
 * CreateOptions, PatchOptions, DeleteOptions…: the generated `Convert_url_Values_To_v1_*`
 * functions take the first value of a present key and convert it with apimachinery's string
 * conversions (`apimachinery/pkg/runtime/conversion.go`):
 *  - bool: only `0` and `false` in any case are false; any other value, the empty one
 *    included (`?watch=`), is true; an absent key is false (nil for `*bool` fields);
 *  - int64: Go's `strconv.ParseInt(s, 10, 64)`, whose error text is the 400's message;
 *  - string: the first value as is.
 * Every handler reads its parameters through here, so a client's `watch=True` or
 * `timeoutSeconds=abc` is answered the same on every path.
 */
import { errors } from '../errors.ts';
import { goQuote } from '../gofmt.ts';

/** The first value of a present key (`?x=` gives ""), or undefined when absent. */
export function queryString(q: URLSearchParams, name: string): string | undefined {
  return q.get(name) ?? undefined;
}

/** A `bool` field: absent is false. */
export function queryBool(q: URLSearchParams, name: string): boolean {
  return queryOptionalBool(q, name) ?? false;
}

/** A `*bool` field: absent is undefined. */
export function queryOptionalBool(q: URLSearchParams, name: string): boolean | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  return !(v === '0' || v.toLowerCase() === 'false');
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** An `int64` / `*int64` field: absent is undefined; not an integer is a 400 with strconv's text. */
export function queryInt64(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  return parseInt64(v);
}

/** strconv.ParseInt(s, 10, 64): an optional sign, then decimal digits; errors as Go words them. */
export function parseInt64(s: string): number {
  const fail = (why: string) => errors.badRequest(`strconv.ParseInt: parsing ${goQuote(s)}: ${why}`);
  if (!/^[+-]?[0-9]+$/.test(s)) throw fail('invalid syntax');
  const n = BigInt(s);
  if (n < INT64_MIN || n > INT64_MAX) throw fail('value out of range');
  return Number(n);
}
