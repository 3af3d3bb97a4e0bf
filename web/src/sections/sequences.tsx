import type { SequenceView, TierView } from '../../../src/dashboard/view-model.ts';
import { Badge, Cells, Conditions, Empty, Legend, Omitted, Reasons, Section } from '../components.tsx';
import { age, clock, seconds } from '../format.ts';

function Tier(props: { tier: TierView }) {
  const { tier } = props;
  return (
    <div class={`tier tier-${tier.state}`} data-tier={tier.index} data-tier-state={tier.state}>
      <div class="tier-head">
        <span class="tier-index">{tier.index + 1}</span>
        <span class="tier-name">{tier.name}</span>
        <span class="tier-ready">
          {tier.ready}/{tier.total} ready
        </span>
      </div>
      {tier.startedAt ? (
        <p class="tier-times" data-tier-times={tier.index}>
          started {clock(tier.startedAt)}
          {tier.readyAt
            ? ` · ready ${clock(tier.readyAt)} (${seconds(Date.parse(tier.readyAt) - Date.parse(tier.startedAt))})`
            : ''}
        </p>
      ) : null}
      {tier.pods.length > 0 ? <Cells cells={tier.pods} /> : <p class="empty">no pods match</p>}
      <Reasons cells={tier.pods} />
    </div>
  );
}

function NodeProgress(props: { seq: SequenceView }) {
  const nodes = props.seq.nodes ?? [];
  if (nodes.length === 0) return null;
  return (
    <table class="node-progress">
      <thead>
        <tr>
          <th>node</th>
          {props.seq.tiers.map((t) => (
            <th key={t.index}>{t.name}</th>
          ))}
          <th>progress</th>
        </tr>
      </thead>
      <tbody>
        {nodes.map((n) => (
          <tr key={n.node} data-node={n.node}>
            <th scope="row">{n.node}</th>
            {n.tiers.map((cells, k) => (
              <td key={k} class={n.phase !== 'Completed' && k === n.currentIndex ? 'current' : undefined}>
                <Cells cells={cells} compact />
              </td>
            ))}
            <td>
              <Badge value={n.phase} />
              {n.phase === 'Completed' ? null : (
                <span class="sub">
                  tier {Math.min(n.currentIndex + 1, props.seq.totalGroups)} of {props.seq.totalGroups}
                </span>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Sequence(props: { seq: SequenceView; now: number }) {
  const { seq } = props;
  const done = seq.phase === 'Completed' ? seq.totalGroups : Math.min(seq.currentIndex, seq.totalGroups);
  return (
    <article class="card" data-sequence={`${seq.namespace}/${seq.name}`} data-phase={seq.phase}>
      <header class="card-head">
        <h3>
          <span class="ns">{seq.namespace}/</span>
          {seq.name}
        </h3>
        <Badge value={seq.phase} />
        <Badge value={`${seq.scope} scope`} kind="scope" />
        <span class="progress-text" data-progress={`${done}/${seq.totalGroups}`}>
          {done}/{seq.totalGroups} tiers ready
        </span>
      </header>
      {seq.message ? <p class="message">{seq.message}</p> : null}
      <div
        class="tiers"
        style={{ gridTemplateColumns: `repeat(${Math.max(1, seq.tiers.length)}, minmax(9rem, 1fr))` }}
      >
        {seq.tiers.map((t) => (
          <Tier key={t.index} tier={t} />
        ))}
      </div>
      {seq.waitingFor.length > 0 ? (
        <div class="waiting">
          <strong>Waiting for</strong>
          <ul>
            {seq.waitingFor.map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        </div>
      ) : null}
      <NodeProgress seq={seq} />
      <Conditions conditions={seq.conditions} />
      {seq.timeline.length > 0 ? (
        <details class="timeline" open>
          <summary>Timeline ({seq.timeline.length})</summary>
          <ol>
            {seq.timeline.map((e, i) => (
              <li key={i} class={`event event-${e.type.toLowerCase()}`} data-reason={e.reason}>
                <time dateTime={e.time} title={`${age(e.time, props.now)} ago`}>
                  {clock(e.time)}
                </time>
                <span class="event-reason">{e.reason}</span>
                <span class="event-message">{e.message}</span>
                {e.count > 1 ? <span class="event-count">×{e.count}</span> : null}
              </li>
            ))}
          </ol>
        </details>
      ) : null}
    </article>
  );
}

export function Sequences(props: { data: { items: SequenceView[]; omitted: number }; now: number }) {
  const { items, omitted } = props.data;
  return (
    <Section id="sequences" title="Pod sequences" count={String(items.length + omitted)}>
      <Legend />
      {items.length === 0 ? (
        <Empty>No PodSequence yet. Try: kubectl apply -f config/samples/podgroups-example.yaml</Empty>
      ) : (
        items.map((s) => <Sequence key={`${s.namespace}/${s.name}`} seq={s} now={props.now} />)
      )}
      <Omitted n={omitted} what="sequences" />
    </Section>
  );
}
