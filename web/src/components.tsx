/** Small building blocks shared by the sections. Text is always rendered as text (escaped). */
import type { ComponentChildren } from 'preact';
import type { ConditionView, PodCell, PodState, StateCounts } from '../../src/dashboard/view-model.ts';

export const STATE_ORDER: PodState[] = [
  'ready',
  'running',
  'pending',
  'gated',
  'succeeded',
  'failed',
  'terminating',
  'missing',
];

export function Section(props: { id: string; title: string; count?: string; children: ComponentChildren }) {
  return (
    <section id={props.id} class="section" aria-labelledby={`${props.id}-title`}>
      <h2 id={`${props.id}-title`}>
        {props.title}
        {props.count ? <span class="count">{props.count}</span> : null}
      </h2>
      {props.children}
    </section>
  );
}

export function Empty(props: { children: ComponentChildren }) {
  return <p class="empty">{props.children}</p>;
}

export function Badge(props: { value: string; kind?: string; title?: string }) {
  const tone = props.kind ?? props.value.toLowerCase().replace(/[^a-z]+/g, '-');
  return (
    <span class={`badge badge-${tone}`} title={props.title} data-badge={props.value}>
      {props.value}
    </span>
  );
}

/** A pod as a coloured cell; the title tells the state and why. */
export function Cell(props: { cell: PodCell; label?: string }) {
  const { cell } = props;
  const title = [cell.name, cell.state, cell.node ? `on ${cell.node}` : '', cell.detail ?? '']
    .filter(Boolean)
    .join(' · ');
  return (
    <li class={`cell state-${cell.state}`} data-pod={cell.name} data-state={cell.state} title={title}>
      <span class="cell-name">{props.label ?? cell.name}</span>
    </li>
  );
}

const SETTLED: readonly string[] = ['ready', 'running', 'succeeded'];

/** Why pods are not further along, on the page rather than only in tooltips. */
export function Reasons(props: { cells: PodCell[] }) {
  const stuck = props.cells.filter((c) => c.detail && !SETTLED.includes(c.state));
  if (stuck.length === 0) return null;
  return (
    <ul class="reasons">
      {stuck.map((c) => (
        <li key={c.name} class={`reason state-${c.state}`} data-reason-pod={c.name}>
          <strong>{c.name}</strong> {c.state}: {c.detail}
        </li>
      ))}
    </ul>
  );
}

export function Cells(props: { cells: PodCell[]; compact?: boolean }) {
  return (
    <ul class={props.compact ? 'cells compact' : 'cells'}>
      {props.cells.map((c) => (
        <Cell key={c.name} cell={c} />
      ))}
    </ul>
  );
}

/** Counts per state as a stacked bar with a legend. */
export function StateBar(props: { counts: StateCounts; total?: number }) {
  const total = props.total ?? Object.values(props.counts).reduce((a, b) => a + (b ?? 0), 0);
  return (
    <div class="statebar-wrap">
      <div
        class="statebar"
        role="img"
        aria-label={STATE_ORDER.filter((s) => props.counts[s])
          .map((s) => `${props.counts[s]} ${s}`)
          .join(', ')}
      >
        {STATE_ORDER.map((s) => {
          const n = props.counts[s] ?? 0;
          return n > 0 && total > 0 ? (
            <span key={s} class={`seg state-${s}`} style={{ flexGrow: n }} />
          ) : null;
        })}
      </div>
      <ul class="legend">
        {STATE_ORDER.filter((s) => (props.counts[s] ?? 0) > 0).map((s) => (
          <li key={s} data-count-state={s}>
            <i class={`dot state-${s}`} />
            {props.counts[s]} {s}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Used against available, as a meter. */
export function Usage(props: { label: string; used: number; total: number; text: string }) {
  const ratio = props.total > 0 ? Math.min(1, props.used / props.total) : props.used > 0 ? 1 : 0;
  const tone = ratio >= 0.95 ? 'full' : ratio >= 0.75 ? 'high' : 'ok';
  return (
    <div class="usage" title={`${props.label}: ${props.text}`}>
      <span class="usage-label">{props.label}</span>
      <span class="usage-track">
        <span class={`usage-fill usage-${tone}`} style={{ width: `${(ratio * 100).toFixed(1)}%` }} />
      </span>
      <span class="usage-text">{props.text}</span>
    </div>
  );
}

export function Conditions(props: { conditions: ConditionView[] }) {
  if (props.conditions.length === 0) return null;
  return (
    <ul class="conditions">
      {props.conditions.map((c) => (
        <li
          key={c.type}
          class={`condition condition-${c.status.toLowerCase()}`}
          title={[c.reason, c.message].filter(Boolean).join(': ')}
        >
          <span class="condition-status">{c.status === 'True' ? '✓' : c.status === 'False' ? '✗' : '?'}</span>
          {c.type}
          {c.reason ? <span class="condition-reason">{c.reason}</span> : null}
          {c.status !== 'True' && c.message ? <span class="condition-message">{c.message}</span> : null}
        </li>
      ))}
    </ul>
  );
}

/** What each pod colour means. */
export function Legend() {
  return (
    <ul class="legend legend-states" aria-label="pod states">
      {STATE_ORDER.map((s) => (
        <li key={s}>
          <i class={`dot state-${s}`} />
          {s}
        </li>
      ))}
    </ul>
  );
}

export function Omitted(props: { n: number; what: string }) {
  return props.n > 0 ? (
    <p class="omitted">
      and {props.n} more {props.what} not shown
    </p>
  ) : null;
}
