/**
 * Go's fmt for the JSON-shaped values templates see: %v printing (`map[a:1]`, `[x y]`,
 * `<no value>`), Sprint/Sprintln spacing rules and a printf covering the common verbs.
 */

/** Values a template handles: decoded JSON, plus undefined for "no value". */
export type Value = unknown;

export function goTypeName(v: Value): string {
  if (v === undefined || v === null) return 'nil';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float64';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return '[]interface {}';
  if (typeof v === 'function') return 'func';
  return 'map[string]interface {}';
}

function formatNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return String(n);
  // Go's %v for float64 is %g with the shortest representation; exponents keep two digits.
  const s = String(n);
  return s.replace(/e([+-])(\d)$/, 'e$10$2');
}

/** fmt's %v. `top` distinguishes a missing value ("<no value>") from a nil inside a structure. */
export function formatValue(v: Value, top = true): string {
  if (v === undefined) return top ? '<no value>' : '<nil>';
  if (v === null) return '<nil>';
  switch (typeof v) {
    case 'string':
      return v;
    case 'number':
      return formatNumber(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object': {
      if (Array.isArray(v)) return `[${v.map((x) => formatValue(x, false)).join(' ')}]`;
      const o = v as Record<string, Value>;
      const keys = Object.keys(o).sort();
      return `map[${keys.map((k) => `${k}:${formatValue(o[k], false)}`).join(' ')}]`;
    }
    default:
      return String(v);
  }
}

/** fmt.Sprint: operands are separated by a space when neither side is a string. */
export function sprint(args: Value[]): string {
  let out = '';
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (i > 0 && typeof a !== 'string' && typeof args[i - 1] !== 'string') out += ' ';
    out += formatValue(a, false);
  }
  return out;
}

export function sprintln(args: Value[]): string {
  return `${args.map((a) => formatValue(a, false)).join(' ')}\n`;
}

/** strconv.Quote: a double-quoted Go string literal. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

function pad(s: string, width: number | undefined, left: boolean, zero: boolean): string {
  if (width === undefined || s.length >= width) return s;
  if (left) return s + ' '.repeat(width - s.length);
  if (zero) {
    const sign = /^[+-]/.test(s) ? s[0]! : '';
    return sign + '0'.repeat(width - s.length) + s.slice(sign.length);
  }
  return ' '.repeat(width - s.length) + s;
}

function badVerb(verb: string, v: Value): string {
  return `%!${verb}(${goTypeName(v)}=${formatValue(v, false)})`;
}

export function sprintf(format: string, args: Value[]): string {
  let out = '';
  let argi = 0;
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== '%') {
      out += c;
      continue;
    }
    const m = /^([-+# 0]*)(\d+)?(?:\.(\d*))?([a-zA-Z%])/.exec(format.slice(i + 1));
    if (!m) {
      out += '%!(NOVERB)';
      break;
    }
    i += m[0].length;
    const flags = m[1] ?? '';
    const width = m[2] !== undefined ? Number(m[2]) : undefined;
    const prec = m[3] !== undefined ? Number(m[3] || '0') : undefined;
    const verb = m[4]!;
    if (verb === '%') {
      out += '%';
      continue;
    }
    if (argi >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    const v = args[argi++];
    const left = flags.includes('-');
    const zero = flags.includes('0') && !left;
    const plus = flags.includes('+');
    let s: string;
    switch (verb) {
      case 'v':
        s = formatValue(v, false);
        break;
      case 's':
        s = typeof v === 'string' ? v : formatValue(v, false);
        if (prec !== undefined) s = s.slice(0, prec);
        break;
      case 'q':
        s = typeof v === 'string' ? goQuote(v) : badVerb(verb, v);
        break;
      case 'd':
        s =
          typeof v === 'number' && Number.isInteger(v)
            ? (plus && v >= 0 ? '+' : '') + String(v)
            : badVerb(verb, v);
        break;
      case 't':
        s = typeof v === 'boolean' ? String(v) : badVerb(verb, v);
        break;
      case 'f':
      case 'F':
        s = typeof v === 'number' ? (plus && v >= 0 ? '+' : '') + v.toFixed(prec ?? 6) : badVerb(verb, v);
        break;
      case 'e':
        s =
          typeof v === 'number'
            ? v.toExponential(prec ?? 6).replace(/e([+-])(\d)$/, 'e$10$2')
            : badVerb(verb, v);
        break;
      case 'g':
        s = typeof v === 'number' ? formatNumber(v) : badVerb(verb, v);
        break;
      case 'x':
      case 'X': {
        let h: string;
        if (typeof v === 'number' && Number.isInteger(v)) h = v.toString(16);
        else if (typeof v === 'string') h = Buffer.from(v, 'utf8').toString('hex');
        else {
          s = badVerb(verb, v);
          break;
        }
        s = verb === 'X' ? h.toUpperCase() : h;
        break;
      }
      case 'c':
        s = typeof v === 'number' ? String.fromCodePoint(v) : badVerb(verb, v);
        break;
      default:
        s = badVerb(verb, v);
    }
    out += pad(s, width, left, zero && verb !== 's' && verb !== 'v' && verb !== 'q');
  }
  if (argi < args.length) {
    out += `%!(EXTRA ${args
      .slice(argi)
      .map((a) => `${goTypeName(a)}=${formatValue(a, false)}`)
      .join(', ')})`;
  }
  return out;
}
