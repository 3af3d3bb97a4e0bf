/** Short, human forms of times, durations and money. */

export function age(iso: string | undefined, now: number): string {
  if (!iso) return '';
  const ms = now - Date.parse(iso);
  if (!Number.isFinite(ms)) return '';
  return duration(Math.max(0, ms));
}

export function duration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${m % 60 ? `${m % 60}m` : ''}`;
  return `${Math.floor(h / 24)}d`;
}

/** A duration to a tenth of a second (tier start-up times are seconds, not minutes). */
export function seconds(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '';
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : duration(ms);
}

export function clock(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString([], { hour12: false });
}

export function money(usd: number): string {
  return `$${usd < 10 ? usd.toFixed(3) : usd.toFixed(2)}`;
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
