/**
 * String formats kube-openapi's default registry checks on CRD fields. Unknown formats (and
 * numeric ones such as int32/int64, which are range checks) are not string formats and pass
 * here. Hand-written: the checks must accept exactly what Go's strfmt accepts (e.g. its
 * lenient duration syntax and lower-cased date-time parsing), which no JS format library does.
 */

import { parseGoDuration } from '../../../kube/duration.ts';

const dateRe = /^(\d{4})-(\d{2})-(\d{2})$/;
const timeRe = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/;

export function isDate(s: string): boolean {
  const m = dateRe.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1) return false;
  const days = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  return d <= days;
}

export function isDateTime(s: string): boolean {
  if (s.length < 4) return false;
  const parts = s.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0]!)) return false;
  const m = timeRe.exec(parts[1]!);
  if (!m) return false;
  return m[1]! <= '23' && m[2]! <= '59' && m[3]! <= '59';
}

/** Parses a date-time (or date) to epoch milliseconds and nanos, or undefined. */
export function parseDateTime(s: string): { ms: number; nanos: number } | undefined {
  if (isDate(s)) return { ms: Date.parse(`${s}T00:00:00Z`), nanos: 0 };
  if (!isDateTime(s)) return undefined;
  const frac = /\.(\d+)/.exec(s)?.[1] ?? '';
  const ms = Date.parse(s.replace(/\.\d+/, '').toUpperCase());
  if (Number.isNaN(ms)) return undefined;
  return { ms, nanos: Number(frac.padEnd(9, '0').slice(0, 9)) };
}

const longUnits: [string[], number][] = [
  [['ns', 'nanosecond'], 1e-6],
  [['us', 'µs', 'microsecond'], 1e-3],
  [['ms', 'millisecond'], 1],
  [['s', 'sec', 'second'], 1000],
  [['m', 'min', 'minute'], 60_000],
  [['h', 'hr', 'hour'], 3_600_000],
  [['d', 'day'], 86_400_000],
  [['w', 'wk', 'week'], 604_800_000],
];

/** strfmt.ParseDuration: Go syntax first, then "<n> <unit>" pairs with long unit names. */
export function parseDuration(s: string): number | undefined {
  const go = parseGoDuration(s);
  if (go !== undefined) return go;
  let total = 0;
  let ok = false;
  for (const match of s.matchAll(/(\d+)\s*([A-Za-zµ]+)/g)) {
    const factor = Number(match[1]);
    const unit = match[2]!.toLowerCase();
    for (const [variants, mult] of longUnits) {
      const last = variants.length - 1;
      if (variants.some((v, i) => (i === last && unit.startsWith(v)) || v === unit)) {
        ok = true;
        total += factor * mult;
      }
    }
  }
  return ok ? total : undefined;
}

function isIPv4(s: string): boolean {
  const parts = s.split('.');
  return parts.length === 4 && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255);
}

function isIPv6(s: string): boolean {
  if (!s.includes(':')) return false;
  const lastColon = s.lastIndexOf(':');
  let head = s;
  let groupsFromV4 = 0;
  if (s.slice(lastColon + 1).includes('.')) {
    if (!isIPv4(s.slice(lastColon + 1))) return false;
    head = `${s.slice(0, lastColon + 1)}0`;
    groupsFromV4 = 1;
  }
  const halves = head.split('::');
  if (halves.length > 2) return false;
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const all = halves.flatMap(groups);
  if (!all.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return false;
  const count = all.length + groupsFromV4;
  return halves.length === 2 ? count < 8 : count === 8;
}

function isIP(s: string): boolean {
  return isIPv4(s) || isIPv6(s);
}

function isCIDR(s: string): boolean {
  const [ip, bits, extra] = s.split('/');
  if (extra !== undefined || ip === undefined || bits === undefined || !/^\d+$/.test(bits)) return false;
  if (isIPv4(ip)) return Number(bits) <= 32;
  return isIPv6(ip) && Number(bits) <= 128;
}

function isMAC(s: string): boolean {
  return /^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{2}[:-]){7}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{2}[:-]){19}[0-9a-fA-F]{2}$|^([0-9a-fA-F]{4}\.){2}[0-9a-fA-F]{4}$/.test(
    s,
  );
}

function isBase64(s: string): boolean {
  return s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s);
}

function isHostname(s: string): boolean {
  if (s.length > 255) return false;
  return /^([\p{L}\p{S}a-zA-Z0-9]((-?[\p{L}\p{S}a-zA-Z0-9]{0,62})?)|([\p{L}\p{S}a-zA-Z0-9](([\p{L}\p{S}a-zA-Z0-9-]{0,61}[\p{L}\p{S}a-zA-Z0-9])?)(\.)){1,}([\p{L}a-zA-Z]){2,63})$/u.test(
    s,
  );
}

const uuidRe = (v: string) =>
  new RegExp(`^[0-9a-f]{8}-[0-9a-f]{4}-${v}[0-9a-f]{3}-[89ab]?[0-9a-f]{3,4}-[0-9a-f]{12}$`, 'i');

const checkers: Record<string, (s: string) => boolean> = {
  date: isDate,
  datetime: isDateTime,
  duration: (s) => parseDuration(s) !== undefined,
  byte: isBase64,
  uri: (s) => !/\p{Cc}|\s/u.test(s),
  email: (s) => /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(s),
  hostname: isHostname,
  ipv4: (s) => isIP(s) && s.includes('.') && !s.includes(':'),
  ipv6: (s) => isIP(s) && s.includes(':'),
  cidr: isCIDR,
  mac: isMAC,
  uuid: (s) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s),
  uuid3: (s) => uuidRe('3').test(s),
  uuid4: (s) => uuidRe('4').test(s),
  uuid5: (s) => uuidRe('5').test(s),
  bsonobjectid: (s) => /^[0-9a-fA-F]{24}$/.test(s),
  hexcolor: (s) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s),
  rgbcolor: (s) =>
    /^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$/.test(
      s,
    ),
  password: () => true,
  ssn: (s) => /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(s),
  isbn10: (s) => /^(?:[0-9]{9}X|[0-9]{10})$/.test(s.replace(/[\s-]/g, '')),
  isbn13: (s) => /^(?:[0-9]{13})$/.test(s.replace(/[\s-]/g, '')),
  isbn: (s) => /^(?:[0-9]{9}X|[0-9]{10}|[0-9]{13})$/.test(s.replace(/[\s-]/g, '')),
  creditcard: (s) => /^\d{12,19}$/.test(s.replace(/[\s-]/g, '')),
};

function normalize(format: string): string {
  return format.toLowerCase().replace(/[-_]/g, '');
}

/** Whether kube-openapi knows this string format (only known formats are checked). */
export function isKnownFormat(format: string): boolean {
  return normalize(format) in checkers;
}

export function checkFormat(format: string, value: string): boolean {
  const check = checkers[normalize(format)];
  return check ? check(value) : true;
}
