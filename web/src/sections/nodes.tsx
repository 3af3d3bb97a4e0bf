import type { NodeView } from '../../../src/dashboard/view-model.ts';
import { Badge, Omitted, Section, Usage } from '../components.tsx';

const LABELS: Record<string, string> = { cpu: 'CPU', memory: 'memory', pods: 'pods' };

function NodeCard(props: { node: NodeView }) {
  const n = props.node;
  return (
    <article class="card node" data-node={n.name} data-ready={String(n.ready)}>
      <header class="card-head">
        <h3>{n.name}</h3>
        <Badge value={n.ready ? 'Ready' : 'NotReady'} />
        {n.unschedulable ? <Badge value="cordoned" kind="reason" /> : null}
        {n.virtual ? <Badge value="virtual" kind="scope" title="stands for a remote provider" /> : null}
        {n.gpus ? <Badge value={`${n.gpus.total} GPU`} kind="gpu" /> : null}
      </header>
      {n.resources.map((r) => (
        <Usage
          key={r.resource}
          label={LABELS[r.resource] ?? r.resource}
          used={r.used}
          total={r.total}
          text={r.text}
        />
      ))}
      {n.taints.length > 0 ? (
        <ul class="taints">
          {n.taints.map((t) => (
            <li key={t}>{t}</li>
          ))}
        </ul>
      ) : null}
    </article>
  );
}

export function Nodes(props: { data: { items: NodeView[]; omitted: number } }) {
  const { items, omitted } = props.data;
  const ready = items.filter((n) => n.ready).length;
  return (
    <Section id="nodes" title="Nodes" count={`${ready}/${items.length + omitted} ready`}>
      <div class="grid grid-nodes">
        {items.map((n) => (
          <NodeCard key={n.name} node={n} />
        ))}
      </div>
      <Omitted n={omitted} what="nodes" />
    </Section>
  );
}
