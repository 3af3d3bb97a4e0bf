/**
 * The report as one self-contained HTML page: the side-by-side table, GPU utilisation over
 * time per policy and gang waits as inline SVG. Hand-written on purpose: the charts are a few
 * polylines and rectangles, and the page must open offline (no CDN, no script).
 */

import { human, type PolicyResult, type Report, tableRows } from './report.ts';

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const W = 720;
const H = 220;
const PAD = { l: 48, r: 24, t: 24, b: 28 };

function axes(endSeconds: number, yLabel: string, yMax: number, yFmt: (v: number) => string): string {
  const x0 = PAD.l;
  const y0 = H - PAD.b;
  const parts = [
    `<line x1="${x0}" y1="${PAD.t}" x2="${x0}" y2="${y0}" stroke="#888"/>`,
    `<line x1="${x0}" y1="${y0}" x2="${W - PAD.r}" y2="${y0}" stroke="#888"/>`,
  ];
  for (let i = 0; i <= 4; i++) {
    const y = y0 - ((y0 - PAD.t) * i) / 4;
    parts.push(
      `<line x1="${x0}" y1="${y}" x2="${W - PAD.r}" y2="${y}" stroke="#eee"/>`,
      `<text x="${x0 - 4}" y="${y + 4}" text-anchor="end">${esc(yFmt((yMax * i) / 4))}</text>`,
    );
  }
  for (let i = 0; i <= 6; i++) {
    const x = x0 + ((W - PAD.r - x0) * i) / 6;
    const anchor = i === 0 ? 'start' : i === 6 ? 'end' : 'middle';
    parts.push(
      `<text x="${x}" y="${H - 8}" text-anchor="${anchor}">${esc(human((endSeconds * i) / 6))}</text>`,
    );
  }
  parts.push(`<text x="${x0}" y="${PAD.t - 10}">${esc(yLabel)}</text>`);
  return parts.join('');
}

function utilisationChart(report: Report, key: 'allocated' | 'useful'): string {
  const end = report.endSeconds;
  const sx = (t: number) => PAD.l + ((W - PAD.l - PAD.r) * t) / end;
  const sy = (v: number) => H - PAD.b - (H - PAD.b - PAD.t) * v;
  const lines = report.policies.map((p, i) => {
    const pts = p.gpuSeries.map((s) => `${sx(s.t).toFixed(1)},${sy(s[key]).toFixed(1)}`).join(' ');
    return `<polyline fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="1.5" points="${pts}"><title>${esc(p.policy)}</title></polyline>`;
  });
  return `<svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="GPU ${key} over time">${axes(
    end,
    `GPUs ${key} (% of capacity)`,
    1,
    (v) => `${Math.round(v * 100)}%`,
  )}${lines.join('')}</svg>`;
}

function waitChart(report: Report): string {
  const keys = ['p50', 'p95', 'p99'] as const;
  const vals = report.policies.flatMap((p) => keys.map((k) => p.waitSeconds[k].seconds ?? 0));
  const max = Math.max(1, ...vals);
  const groupW = (W - PAD.l - PAD.r) / Math.max(1, report.policies.length);
  const barW = Math.min(40, (groupW - 16) / keys.length);
  const sy = (v: number) => H - PAD.b - ((H - PAD.b - PAD.t) * v) / max;
  const bars: string[] = [];
  report.policies.forEach((p, i) => {
    const gx = PAD.l + groupW * i + 8;
    keys.forEach((k, j) => {
      const w = p.waitSeconds[k];
      const v = w.seconds ?? 0;
      const x = gx + j * barW;
      bars.push(
        `<rect x="${x.toFixed(1)}" y="${sy(v).toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${(H - PAD.b - sy(v)).toFixed(1)}" fill="${COLORS[i % COLORS.length]}" opacity="${0.5 + j * 0.25}"><title>${esc(`${p.policy} ${k}: ${human(w.seconds, w.atLeast)}`)}</title></rect>`,
        `<text x="${(x + barW / 2).toFixed(1)}" y="${(sy(v) - 3).toFixed(1)}" text-anchor="middle">${k}</text>`,
      );
    });
    bars.push(
      `<text x="${(gx + (barW * keys.length) / 2).toFixed(1)}" y="${H - 8}" text-anchor="middle">${esc(p.policy)}</text>`,
    );
  });
  const grid = [0, 1, 2, 3, 4]
    .map((i) => {
      const v = (max * i) / 4;
      return `<line x1="${PAD.l}" y1="${sy(v)}" x2="${W - PAD.r}" y2="${sy(v)}" stroke="#eee"/><text x="${PAD.l - 4}" y="${sy(v) + 4}" text-anchor="end">${esc(human(v))}</text>`;
    })
    .join('');
  return `<svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="gang wait percentiles">${grid}${bars.join('')}</svg>`;
}

function legend(policies: PolicyResult[]): string {
  return policies
    .map(
      (p, i) =>
        `<span class="key"><span class="swatch" style="background:${COLORS[i % COLORS.length]}"></span>${esc(p.policy)}</span>`,
    )
    .join(' ');
}

export function reportHtml(report: Report): string {
  const rows = tableRows(report);
  const table = `<table><thead><tr>${rows[0]!.map((c) => `<th>${esc(c)}</th>`).join('')}</tr></thead><tbody>${rows
    .slice(1)
    .map(
      (r) => `<tr>${r.map((c, i) => (i === 0 ? `<th>${esc(c)}</th>` : `<td>${esc(c)}</td>`)).join('')}</tr>`,
    )
    .join('')}</tbody></table>`;
  const policies = report.policies
    .map((p) => `<li><b>${esc(p.policy)}</b>: ${esc(p.description || JSON.stringify(p.settings))}</li>`)
    .join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>troupe simulate: ${esc(report.scenario)}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; max-width: 960px; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 10px; text-align: right; }
thead th, tbody th { text-align: left; }
svg { font-size: 11px; display: block; margin: 0.5em 0 1.5em; }
.key { margin-right: 1em; white-space: nowrap; }
.swatch { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: middle; }
</style>
</head>
<body>
<h1>troupe simulate: ${esc(report.scenario)}</h1>
<p>${esc(report.description)}</p>
<p>Seed ${report.seed}, ${esc(human(report.endSeconds))} of simulated time.</p>
<ul>${policies}</ul>
<h2>Side by side</h2>
${table}
<h2>GPU utilisation over time</h2>
<p>${legend(report.policies)}</p>
<h3>Allocated (bound to a running or starting member)</h3>
${utilisationChart(report, 'allocated')}
<h3>Useful (held by gangs whose every member runs)</h3>
${utilisationChart(report, 'useful')}
<h2>Gang wait (arrival until every member is placed)</h2>
${waitChart(report)}
</body>
</html>
`;
}
