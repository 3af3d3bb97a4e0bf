/**
 * Go's fmt verbs for the values the server handles, for messages that must read as
 * kube-apiserver's: %v, %q, %#v and %T of JSON-decoded values as apimachinery's unstructured
 * decoding types them (integers int64, other numbers float64, objects map[string]interface {}).
 */

/** A Go struct value (for %#v): printed as `typeName{Field:value, ...}`. */
export class GoStruct {
  readonly typeName: string;
  readonly fields: [string, unknown][];
  constructor(typeName: string, fields: [string, unknown][]) {
    this.typeName = typeName;
    this.fields = fields;
  }
}

/** Text printed verbatim inside a %#v dump (e.g. a typed nil pointer). */
export class GoRaw {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** A float64 that happens to be integral (e.g. a schema bound), printed as Go prints a float. */
export class GoFloat {
  readonly value: number;
  constructor(value: number) {
    this.value = value;
  }
}

/** Go's strconv.FormatFloat(v, 'g', -1, 64), which is what %v prints for a float64. */
export function formatGoFloat(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  const [mantissa, expPart] = v.toExponential().split('e') as [string, string];
  const exp = Number(expPart);
  // Shortest-representation %g switches to exponent form outside [1e-4, 1e6).
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? '-' : '+';
    const digits = String(Math.abs(exp)).padStart(2, '0');
    return `${mantissa}e${sign}${digits}`;
  }
  return String(v);
}

/** Go's %q for a string (close to JSON string syntax for everything Kubernetes emits). */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Go's %v for the scalar kinds a JSON value decodes to (int64, float64, string, bool). */
export function goScalar(v: unknown): string {
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : formatGoFloat(v);
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof GoFloat) return formatGoFloat(v.value);
  return String(v);
}

/** Go's %#v for JSON-decoded values (map[string]interface {}, []interface {}) and GoStruct. */
export function goSharpV(v: unknown, nested = false): string {
  if (v === null || v === undefined) return nested ? 'interface {}(nil)' : '<nil>';
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean' || v instanceof GoFloat) {
    return goScalar(v);
  }
  if (v instanceof GoRaw) return v.text;
  if (v instanceof GoStruct) {
    return `${v.typeName}{${v.fields.map(([k, fv]) => `${k}:${goSharpV(fv, true)}`).join(', ')}}`;
  }
  if (Array.isArray(v)) {
    if (v.every((x) => x instanceof GoStruct) && v.length > 0) {
      return `[]${(v[0] as GoStruct).typeName}{${v.map((x) => goSharpV(x, true)).join(', ')}}`;
    }
    if (v.every((x) => typeof x === 'string')) {
      return `[]string{${v.map((x) => goQuote(x as string)).join(', ')}}`;
    }
    return `[]interface {}{${v.map((x) => goSharpV(x, true)).join(', ')}}`;
  }
  if (typeof v === 'object') {
    const keys = Object.keys(v as object).sort();
    const body = keys.map((k) => `${goQuote(k)}:${goSharpV((v as Record<string, unknown>)[k], true)}`);
    return `map[string]interface {}{${body.join(', ')}}`;
  }
  return String(v);
}

/** Go's %v: `map[k:v]` with sorted keys, `[a b]` for slices, `<nil>` for nil. */
export function goV(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'number') return goScalar(v);
  if (Array.isArray(v)) return `[${v.map(goV).join(' ')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).sort();
    return `map[${keys.map((k) => `${k}:${goV(o[k])}`).join(' ')}]`;
  }
  return String(v);
}

/** Go's %T. */
export function goTypeName(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  if (Array.isArray(v)) return '[]interface {}';
  if (v === null) return '<nil>';
  return 'map[string]interface {}';
}

/** Go's %s of reflect.TypeOf(v), as apimachinery's ErrBadArgType prints it: nil has no type. */
export function goReflectType(v: unknown): string {
  return v === null || v === undefined ? '%!s(<nil>)' : goTypeName(v);
}

/** Go's %s: strings as they are, any other value as fmt reports a wrong verb, element by element. */
export function goS(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '%!s(<nil>)';
  if (Array.isArray(v)) return `[${v.map(goS).join(' ')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `map[${Object.keys(o)
      .sort()
      .map((k) => `${k}:${goS(o[k])}`)
      .join(' ')}]`;
  }
  return `%!s(${goTypeName(v)}=${goScalar(v)})`;
}

/**
 * How encoding/json's UnmarshalTypeError names a JSON value it cannot store (null never
 * fails: it leaves the target empty).
 */
export function goJsonKind(v: unknown): 'object' | 'array' | 'string' | 'number' | 'bool' {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'string') return 'string';
  return 'object';
}
