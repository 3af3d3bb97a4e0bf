/**
 * Go's time.ParseDuration, which is what upstream applies to every duration annotation
 * ("90s", "1h30m", "1.5m", "500ms", "0"). Hand-written because the npm duration parsers
 * accept other grammars (spaces, words, "1d") that Go rejects, and an annotation that
 * upstream ignores as malformed must be ignored here too.
 */

const UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const TERM = /^(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;

/** Milliseconds, or undefined when `input` is not a Go duration. */
export function parseGoDuration(input: string): number | undefined {
  let s = input;
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s[0] === '-') sign = -1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') return undefined;
  let total = 0;
  while (s !== '') {
    const m = TERM.exec(s);
    if (!m) return undefined;
    total += Number.parseFloat(m[1]!) * UNITS[m[2]!]!;
    s = s.slice(m[0].length);
  }
  return sign * total;
}

/** Go's Duration.String() for whole milliseconds and up ("1m30s", "7d" is "168h0m0s"). */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return '0s';
  const neg = ms < 0;
  let rest = Math.abs(ms);
  if (rest < 1000) return `${neg ? '-' : ''}${rest}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = rest / 1000;
  let out = '';
  if (h > 0) out += `${h}h`;
  if (h > 0 || m > 0) out += `${m}m`;
  out += `${Number.isInteger(s) ? s : s.toFixed(3).replace(/0+$/, '')}s`;
  return (neg ? '-' : '') + out;
}
