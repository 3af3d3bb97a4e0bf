/**
 * Duration rendering as apimachinery's util/duration does it, so AGE and DURATION cells
 * read exactly like kube-apiserver's Table output (`5s`, `3m2s`, `2d`).
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
