/**
 * Durations as Kubernetes reads and prints them: apimachinery's util/duration rendering, so
 * AGE and DURATION cells read exactly like kube-apiserver's Table output (`5s`, `3m2s`, `2d`),
 * and Go's time.ParseDuration / Duration.String, the syntax of duration fields and annotations.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Go's int(d.Seconds()) and friends truncate toward zero; Math.trunc keeps that for negatives. */
function whole(ms: number, unit: number): number {
  return Math.trunc(ms / unit);
}

/** ~2-3 significant figures (`90s`, `3m2s`, `5h10m`, `3d4h`, `2y30d`): duration.HumanDuration. */
export function humanDuration(ms: number): string {
  const seconds = whole(ms, SECOND);
  // Up to 2s of clock skew reads as "now" rather than as an error.
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = whole(ms, MINUTE);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = whole(ms, HOUR);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    const y = Math.trunc(hours / 24 / 365);
    return dy === 0 ? `${y}y` : `${y}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** One unit only (`45s`, `3m`, `5h`, `12d`, `2y`): duration.ShortHumanDuration. */
export function shortHumanDuration(ms: number): string {
  const seconds = whole(ms, SECOND);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60) return `${seconds}s`;
  const minutes = whole(ms, MINUTE);
  if (minutes < 60) return `${minutes}m`;
  const hours = whole(ms, HOUR);
  if (hours < 24) return `${hours}h`;
  if (hours < 24 * 365) return `${Math.trunc(hours / 24)}d`;
  return `${Math.trunc(ms / HOUR / 24 / 365)}y`;
}

/**
 * The AGE cell for a timestamp (printers' translateTimestampSince): `<unknown>` when the
 * timestamp is missing or unparsable.
 */
export function translateTimestampSince(timestamp: string | undefined | null, now: Date): string {
  if (!timestamp) return '<unknown>';
  const t = Date.parse(timestamp);
  if (Number.isNaN(t)) return '<unknown>';
  return humanDuration(now.getTime() - t);
}

const GO_UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3, // U+00B5 micro sign
  μs: 1e-3, // U+03BC Greek mu
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const GO_TERM = /^(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;

/**
 * Go's time.ParseDuration in milliseconds ("90s", "1h30m", "1.5m", "-2s", "0"); undefined when
 * Go would return an error. Hand-written because the npm duration parsers accept other grammars
 * (spaces, words, "1d") that Go rejects, and a value Go refuses must be refused here too.
 */
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
    const m = GO_TERM.exec(s);
    if (!m) return undefined;
    total += Number(m[1]) * GO_UNIT_MS[m[2]!]!;
    s = s.slice(m[0].length);
  }
  return sign * total;
}

/** Go's Duration.String() for whole milliseconds and up ("1m30s"; 7 days is "168h0m0s"). */
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
