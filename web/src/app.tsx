import type { Snapshot } from '../../src/dashboard/view-model.ts';
import { clock } from './format.ts';
import { type Connection, useLiveSnapshot, useNow } from './live.ts';
import { Nodes } from './sections/nodes.tsx';
import { OffloadsSection } from './sections/offloads.tsx';
import { PodGroups } from './sections/podgroups.tsx';
import { Pods } from './sections/pods.tsx';
import { AppWrappers, Queues } from './sections/queues.tsx';
import { Sequences } from './sections/sequences.tsx';
import { Table } from './sections/tables.tsx';

const CONNECTION_TEXT: Record<Connection, string> = {
  connecting: 'connecting…',
  live: 'live',
  reconnecting: 'reconnecting…',
  closed: 'disconnected: reload with the URL troupe printed',
};

/** Sections in page order, each present only when its kinds are installed. */
function sections(s: Snapshot): { id: string; title: string }[] {
  const out: { id: string; title: string }[] = [];
  if (s.sequences) out.push({ id: 'sequences', title: 'Sequences' });
  if (s.podGroups) out.push({ id: 'podgroups', title: 'Pod groups' });
  if (s.appWrappers) out.push({ id: 'appwrappers', title: 'AppWrappers' });
  if (s.queues) out.push({ id: 'queues', title: 'Queues' });
  if (showOffloads(s)) out.push({ id: 'offloads', title: 'Offloads' });
  for (const t of s.tables ?? []) out.push({ id: `table-${t.key}`, title: t.title });
  if (s.nodes) out.push({ id: 'nodes', title: 'Nodes' });
  if (s.pods) out.push({ id: 'pods', title: 'Pods' });
  return out;
}

function showOffloads(s: Snapshot): boolean {
  return !!s.offloads && (s.offloads.items.length > 0 || !!s.nodes?.items.some((n) => n.virtual));
}

export function App() {
  const { snapshot: s, connection, skewMs } = useLiveSnapshot();
  const now = useNow(skewMs);
  return (
    <>
      <header class="top">
        <div class="brand">
          troupe <span>dashboard</span>
        </div>
        <nav aria-label="sections">
          {s
            ? sections(s).map((x) => (
                <a key={x.id} href={`#${x.id}`}>
                  {x.title}
                </a>
              ))
            : null}
        </nav>
        <div class={`conn conn-${connection}`} data-connection={connection} role="status">
          <i class="conn-dot" />
          {CONNECTION_TEXT[connection]}
          {s ? <span class="updated"> · updated {clock(s.generatedAt)}</span> : null}
          {s?.namespace ? <span class="updated"> · namespace {s.namespace}</span> : null}
        </div>
      </header>
      <main>
        {!s ? <p class="empty">Waiting for the first snapshot…</p> : null}
        {s?.sequences ? <Sequences data={s.sequences} now={now} /> : null}
        {s?.podGroups ? <PodGroups data={s.podGroups} /> : null}
        {s?.appWrappers ? <AppWrappers data={s.appWrappers} /> : null}
        {s?.queues ? <Queues data={s.queues} /> : null}
        {s && showOffloads(s) && s.offloads ? (
          <OffloadsSection data={s.offloads} generatedAt={s.generatedAt} now={now} />
        ) : null}
        {(s?.tables ?? []).map((t) => (
          <Table key={t.key} data={t} />
        ))}
        {s?.nodes ? <Nodes data={s.nodes} /> : null}
        {s?.pods ? <Pods data={s.pods} now={now} /> : null}
        {s ? (
          <footer class="kinds">
            {s.kinds
              .filter((k) => k.status !== 'shown')
              .map((k) => (
                <span
                  key={k.kind}
                  class={`kind kind-${k.status}`}
                  data-kind={k.kind}
                  data-kind-status={k.status}
                >
                  {k.kind}: {k.status.replace('-', ' ')}
                </span>
              ))}
          </footer>
        ) : null}
      </main>
    </>
  );
}
