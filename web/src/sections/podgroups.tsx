import type { PodGroupView } from '../../../src/dashboard/view-model.ts';
import { Badge, Cells, Conditions, Empty, Omitted, Reasons, Section, StateBar } from '../components.tsx';

function Group(props: { group: PodGroupView }) {
  const g = props.group;
  const running = (g.counts.running ?? 0) + (g.counts.ready ?? 0);
  const done = g.counts.succeeded ?? 0;
  const of = g.minMember ?? g.members.length;
  // A finished gang is not "running": say how many finished.
  const progress =
    done > 0 && running === 0
      ? `${done}/${of} completed`
      : `${running}/${of} running${done ? ` · ${done} completed` : ''}`;
  return (
    <article class="card" data-podgroup={`${g.namespace}/${g.name}`} data-phase={g.phase}>
      <header class="card-head">
        <h3>
          <span class="ns">{g.namespace}/</span>
          {g.name}
        </h3>
        <Badge value={g.phase} />
        {g.reason ? <Badge value={g.reason} kind="reason" /> : null}
        {g.gangReady ? (
          <Badge
            value="gang ready"
            kind="ready"
            title="members carry podgroup.jhwagner.github.io/ready=true"
          />
        ) : null}
        {g.source === 'label' ? (
          <Badge value="label only" kind="scope" title="pods grouped by label; no PodGroup object" />
        ) : null}
        <span class="progress-text" data-progress={progress}>
          {progress}
          {g.restarts ? ` · ${g.restarts} restarts` : ''}
        </span>
      </header>
      {g.message ? <p class="message">{g.message}</p> : null}
      <StateBar counts={g.counts} />
      <Cells cells={g.members} />
      <Reasons cells={g.members} />
      <Conditions conditions={g.conditions} />
    </article>
  );
}

export function PodGroups(props: { data: { items: PodGroupView[]; omitted: number } }) {
  const { items, omitted } = props.data;
  return (
    <Section id="podgroups" title="Pod groups" count={String(items.length + omitted)}>
      {items.length === 0 ? (
        <Empty>No pod group yet. Try: kubectl apply -f config/samples/podgroup/</Empty>
      ) : (
        <div class="grid">
          {items.map((g) => (
            <Group key={`${g.namespace}/${g.name}`} group={g} />
          ))}
        </div>
      )}
      <Omitted n={omitted} what="groups" />
    </Section>
  );
}
