/** Reads a manager's /metrics over HTTP, as Prometheus would, and looks samples up in it. */

import type { Manager } from '../../src/runtime/index.ts';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of the Prometheus text exposition format. */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

export class Scrape {
  readonly samples: Sample[];

  constructor(text: string) {
    this.samples = parseMetrics(text);
  }

  /** The value of the sample with exactly these labels, or undefined when there is none. */
  value(name: string, labels: Record<string, string> = {}): number | undefined {
    const want = Object.entries(labels);
    const hit = this.samples.find(
      (s) =>
        s.name === name &&
        Object.keys(s.labels).length === want.length &&
        want.every(([k, v]) => s.labels[k] === v),
    );
    return hit?.value;
  }

  /** Every sample of a metric. */
  all(name: string): Sample[] {
    return this.samples.filter((s) => s.name === name);
  }
}

/** GET /metrics from the manager's probe server (started with a healthProbeAddress). */
export async function scrape(manager: Manager): Promise<Scrape> {
  const url = manager.healthServer?.url;
  if (!url) throw new Error('the manager serves no /metrics (give it a healthProbeAddress)');
  const res = await fetch(`${url}/metrics`);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}: ${await res.text()}`);
  return new Scrape(await res.text());
}

/**
 * Scrapes until `check` holds for a scrape, and returns that scrape; `check` may also
 * throw (an assertion) to say not yet.
 */
export async function scrapeUntil(
  manager: Manager,
  what: string,
  check: (s: Scrape) => boolean | undefined,
  timeoutMs = 20_000,
): Promise<Scrape> {
  const deadline = Date.now() + timeoutMs;
  let last: Scrape | undefined;
  let lastErr: unknown;
  for (;;) {
    try {
      last = await scrape(manager);
      if (check(last)) return last;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting for ${what}${lastErr ? `: ${String(lastErr)}` : ''}; troupe_ samples: ${JSON.stringify(
          last?.samples.filter((s) => s.name.startsWith('troupe_') && !s.name.startsWith('troupe_informer')),
        )}`,
      );
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}
