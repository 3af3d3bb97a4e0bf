/**
 * The report of a simulation: per policy figures computed from its Collector, and the same
 * report as a terminal table, as JSON for tooling and as a self-contained HTML page.
 * Everything here is a function of simulated time only, so a deterministic run gives a
 * byte-identical JSON report.
 */

import type { Collector, UtilPoint } from './collector.ts';
import type { Policy, Scenario } from './scenario.ts';

/** A percentile of waits; `atLeast` when a gang that never got there sets it (waited until the end, and longer). */
export interface Percentile {
  seconds: number | null;
  atLeast: boolean;
}

export interface GangResult {
  name: string;
  kind: string;
  size: number;
  gpusPerMember: number;
  arrivalSeconds: number;
  waitSeconds: number | null;
  allRunningSeconds: number | null;
  finishedSeconds: number | null;
  status: string;
  deadlockedSeconds: number;
}

export interface PolicyResult {
  policy: string;
  description: string;
  settings: Omit<Policy, 'name' | 'description'>;
  /** Simulated seconds the run took: the end, or less when every gang was done before it. */
  simulatedSeconds: number;
  gangs: { total: number; started: number; finished: number; failed: number };
  /** Seconds from the start until the last gang with a duration finished; null if one did not. */
  makespanSeconds: number | null;
  /** Arrival until every member is placed on a node. */
  waitSeconds: { p50: Percentile; p95: Percentile; p99: Percentile };
  /** Arrival until every member runs. */
  allRunningSeconds: { p50: Percentile; p95: Percentile; p99: Percentile };
  /** Seconds from the start until the first gang had all its members running. */
  firstAllRunningSeconds: number | null;
  gpu: { capacity: number; meanAllocated: number; meanUseful: number };
  /** GPU utilisation over time: mean fraction of capacity per bucket. */
  gpuSeries: { t: number; allocated: number; useful: number }[];
  deadlockedGangMinutes: number;
  preemptions: number;
  offloadedSpendUsd: number;
  perGang: GangResult[];
}

export interface Report {
  scenario: string;
  description: string;
  seed: number;
  endSeconds: number;
  policies: PolicyResult[];
}

const SERIES_BUCKETS = 120;

const round = (x: number, digits = 3) => {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
};

export function policyResult(
  scenario: Scenario,
  policy: Policy,
  c: Collector,
  stoppedMs = scenario.endMs,
): PolicyResult {
  const end = scenario.endMs;
  const gangs = [...c.gangs.values()];
  const waits: { v: number; censored: boolean }[] = [];
  const runs: { v: number; censored: boolean }[] = [];
  let makespan: number | null = 0;
  let firstAllRunning: number | null = null;
  for (const r of gangs) {
    const arrival = r.arrivedMs ?? r.gang.atMs;
    waits.push(
      r.allScheduledMs !== undefined
        ? { v: r.allScheduledMs - arrival, censored: false }
        : { v: end - arrival, censored: true },
    );
    runs.push(
      r.allRunningMs !== undefined
        ? { v: r.allRunningMs - arrival, censored: false }
        : { v: end - arrival, censored: true },
    );
    if (r.allRunningMs !== undefined && (firstAllRunning === null || r.allRunningMs < firstAllRunning))
      firstAllRunning = r.allRunningMs;
    if (r.gang.durationMs !== undefined || r.gang.fail) {
      if (r.finishedMs === undefined) makespan = null;
      else if (makespan !== null) makespan = Math.max(makespan, r.finishedMs);
    }
  }
  const { mean, series } = utilisation(c.points, end);
  const { name, description, ...settings } = policy;
  return {
    policy: name,
    description,
    settings,
    simulatedSeconds: round(stoppedMs / 1000),
    gangs: {
      total: gangs.length,
      started: gangs.filter((r) => r.allRunningMs !== undefined).length,
      finished: gangs.filter((r) => r.status === 'succeeded').length,
      failed: gangs.filter((r) => r.status === 'failed').length,
    },
    makespanSeconds: makespan === null ? null : round(makespan / 1000),
    waitSeconds: percentiles(waits),
    allRunningSeconds: percentiles(runs),
    firstAllRunningSeconds: firstAllRunning === null ? null : round(firstAllRunning / 1000),
    gpu: {
      capacity: c.points.at(-1)?.capacity ?? 0,
      meanAllocated: round(mean.allocated, 4),
      meanUseful: round(mean.useful, 4),
    },
    gpuSeries: series,
    deadlockedGangMinutes: round(gangs.reduce((n, r) => n + r.deadlockedMs, 0) / 60_000),
    preemptions: c.preemptions(),
    offloadedSpendUsd: round(c.offloadedSpendUsd(), 2),
    perGang: gangs.map((r) => {
      const arrival = r.arrivedMs ?? r.gang.atMs;
      const rel = (t: number | undefined) => (t === undefined ? null : round((t - arrival) / 1000));
      return {
        name: r.gang.name,
        kind: r.gang.kind,
        size: r.gang.size,
        gpusPerMember: r.gang.gpus,
        arrivalSeconds: round(arrival / 1000),
        waitSeconds: rel(r.allScheduledMs),
        allRunningSeconds: rel(r.allRunningMs),
        finishedSeconds: r.finishedMs === undefined ? null : round(r.finishedMs / 1000),
        status: r.status,
        deadlockedSeconds: round(r.deadlockedMs / 1000),
      };
    }),
  };
}

/** Nearest-rank percentiles (the smallest value with at least p% of values at or below it). */
function percentiles(values: { v: number; censored: boolean }[]): PolicyResult['waitSeconds'] {
  const sorted = [...values].sort((a, b) => a.v - b.v || Number(a.censored) - Number(b.censored));
  const at = (p: number): Percentile => {
    if (sorted.length === 0) return { seconds: null, atLeast: false };
    const e = sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
    return { seconds: round(e.v / 1000), atLeast: e.censored };
  };
  return { p50: at(50), p95: at(95), p99: at(99) };
}

/** Time-weighted means of the step function `points` over [0, end], overall and per bucket. */
function utilisation(points: UtilPoint[], end: number) {
  const width = end / SERIES_BUCKETS;
  const acc = Array.from({ length: SERIES_BUCKETS }, () => ({ allocated: 0, useful: 0 }));
  const total = { allocated: 0, useful: 0 };
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    const from = Math.min(p.t, end);
    const to = Math.min(points[i + 1]?.t ?? end, end);
    if (to <= from || p.capacity === 0) continue;
    const a = p.allocated / p.capacity;
    const u = p.useful / p.capacity;
    total.allocated += a * (to - from);
    total.useful += u * (to - from);
    // Spread [from, to) over the buckets it covers.
    for (let b = Math.floor(from / width); b < SERIES_BUCKETS && b * width < to; b++) {
      const overlap = Math.min(to, (b + 1) * width) - Math.max(from, b * width);
      if (overlap <= 0) continue;
      acc[b]!.allocated += a * overlap;
      acc[b]!.useful += u * overlap;
    }
  }
  return {
    mean: { allocated: end > 0 ? total.allocated / end : 0, useful: end > 0 ? total.useful / end : 0 },
    series: acc.map((x, b) => ({
      t: round(((b + 0.5) * width) / 1000, 1),
      allocated: round(x.allocated / width, 4),
      useful: round(x.useful / width, 4),
    })),
  };
}

export function reportJson(report: Report): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}

/** A duration for people: 42s, 12m05s, 3h20m, or the seconds' lower bound as ≥…. */
export function human(seconds: number | null, atLeast = false): string {
  if (seconds === null) return '—';
  const s = Math.round(seconds);
  let out: string;
  if (s < 60) out = `${seconds < 10 && !Number.isInteger(seconds) ? seconds.toFixed(1) : s}s`;
  else if (s < 3600) out = `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  else out = `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return atLeast ? `≥${out}` : out;
}

const pct = (p: Percentile) => human(p.seconds, p.atLeast);

/** The rows of the side-by-side table: a label and one cell per policy. */
export function tableRows(report: Report): [string, ...string[]][] {
  const P = report.policies;
  const end = report.endSeconds;
  return [
    ['policy', ...P.map((p) => p.policy)],
    [
      'gangs finished',
      ...P.map(
        (p) => `${p.gangs.finished}/${p.gangs.total}${p.gangs.failed ? ` (${p.gangs.failed} failed)` : ''}`,
      ),
    ],
    ['makespan', ...P.map((p) => (p.makespanSeconds === null ? `>${human(end)}` : human(p.makespanSeconds)))],
    ['gang wait p50', ...P.map((p) => pct(p.waitSeconds.p50))],
    ['gang wait p95', ...P.map((p) => pct(p.waitSeconds.p95))],
    ['gang wait p99', ...P.map((p) => pct(p.waitSeconds.p99))],
    ['all running p50', ...P.map((p) => pct(p.allRunningSeconds.p50))],
    ['first all running', ...P.map((p) => human(p.firstAllRunningSeconds))],
    ['GPU allocated', ...P.map((p) => `${(p.gpu.meanAllocated * 100).toFixed(1)}%`)],
    ['GPU useful', ...P.map((p) => `${(p.gpu.meanUseful * 100).toFixed(1)}%`)],
    ['deadlocked gang-min', ...P.map((p) => p.deadlockedGangMinutes.toFixed(1))],
    ['preemptions', ...P.map((p) => String(p.preemptions))],
    ['offloaded spend', ...P.map((p) => `$${p.offloadedSpendUsd.toFixed(2)}`)],
  ];
}

export function reportTable(report: Report): string {
  const rows = tableRows(report);
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => [...r[col]!].length)));
  const line = (r: string[]) =>
    r
      .map((cell, col) => (col === 0 ? cell.padEnd(widths[col]!) : cell.padStart(widths[col]!)))
      .join('  ')
      .trimEnd();
  const head = `scenario ${report.scenario} (seed ${report.seed}, ${human(report.endSeconds)} simulated)`;
  return [head, '', line(rows[0]!), ...rows.slice(1).map(line), ''].join('\n');
}
