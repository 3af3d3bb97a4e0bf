/** Go's time formats as KWOK uses them: RFC3339Nano output, RFC3339 parsing (durations: src/kube/duration.ts). */

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** time.Parse(time.RFC3339Nano, s) as epoch milliseconds; undefined when not a timestamp. */
export function parseRFC3339(s: string): number | undefined {
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, sec, frac, zone] = m;
  let ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec));
  if (frac) ms += Number(`0${frac}`) * 1000;
  if (zone && zone !== 'Z' && zone !== 'z') {
    const sign = zone[0] === '-' ? -1 : 1;
    ms -= sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60_000;
  }
  return Number.isFinite(ms) ? ms : undefined;
}

/** The last instant formatted and its text. */
const last = { ms: Number.NaN, text: '' };

/** time.Format(time.RFC3339Nano) in UTC: fractional seconds only when non-zero, trailing zeros dropped. */
export function formatRFC3339Nano(epochMs: number): string {
  // One render formats its one instant several times (Now, the plan, container statuses).
  if (epochMs === last.ms) return last.text;
  // toISOString always ends in `.sssZ`: trim the fraction's trailing zeros by index, not by
  // regex and callback (this runs for every stage render).
  const iso = new Date(epochMs).toISOString();
  let end = iso.length - 1;
  while (iso.charCodeAt(end - 1) === 48 /* 0 */) end--;
  if (iso.charCodeAt(end - 1) === 46 /* . */) end--;
  last.ms = epochMs;
  last.text = `${iso.slice(0, end)}Z`;
  return last.text;
}
