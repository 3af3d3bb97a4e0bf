import type { Snapshot } from '../../../src/dashboard/view-model.ts';
import { Badge, Omitted, Section } from '../components.tsx';
import { age, money } from '../format.ts';

type Offloads = NonNullable<Snapshot['offloads']>;

export function OffloadsSection(props: { data: Offloads; generatedAt: string; now: number }) {
  const { items, omitted, totalSpend, hourlyCost } = props.data;
  // Spend keeps growing between pushes: extrapolate from the snapshot's time.
  const sinceMs = Math.max(0, props.now - Date.parse(props.generatedAt));
  const live = (spend: number | undefined, running: boolean, cost: number | undefined) =>
    spend === undefined ? undefined : spend + (running && cost ? (cost * sinceMs) / 3_600_000 : 0);
  return (
    <Section id="offloads" title="Offloads" count={String(items.length + omitted)}>
      <p class="summary-line">
        Total spend <strong data-total-spend>{money(totalSpend + (hourlyCost * sinceMs) / 3_600_000)}</strong>{' '}
        · running now {money(hourlyCost)}/h
      </p>
      <table class="table">
        <thead>
          <tr>
            <th>job</th>
            <th>state</th>
            <th>remote pod</th>
            <th>GPU</th>
            <th>$/h</th>
            <th>running for</th>
            <th>spend</th>
            <th>virtual pod</th>
            <th>notes</th>
          </tr>
        </thead>
        <tbody>
          {items.map((o) => {
            const running = !o.finishedAt && o.startedAt !== undefined;
            const spend = live(o.spend, running, o.costPerHour);
            return (
              <tr key={`${o.namespace}/${o.job}`} data-offload={`${o.namespace}/${o.job}`}>
                <td>
                  <span class="ns">{o.namespace}/</span>
                  {o.job}
                </td>
                <td>
                  <Badge value={o.state} />
                  {o.reason ? <span class="sub">{o.reason}</span> : null}
                </td>
                <td>
                  {o.remotePodId ?? ''}
                  {o.provider && o.remotePodId ? <span class="sub">{o.provider}</span> : null}
                </td>
                <td>{o.gpuType ?? ''}</td>
                <td>{o.costPerHour !== undefined ? money(o.costPerHour) : ''}</td>
                <td>{o.startedAt ? (running ? age(o.startedAt, props.now) : 'finished') : ''}</td>
                <td>{spend !== undefined ? money(spend) : ''}</td>
                <td>
                  {o.virtualPod ? (
                    <span class={`chip state-${o.virtualPod.state}`}>{o.virtualPod.name}</span>
                  ) : (
                    ''
                  )}
                </td>
                <td class="wrap" data-offload-notes>
                  {[o.error, o.exitCode !== undefined ? `exit code ${o.exitCode}` : undefined]
                    .filter(Boolean)
                    .join(' · ')}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <Omitted n={omitted} what="offloads" />
    </Section>
  );
}
