import type { AppWrapperView, QueuesView, WorkloadView } from '../../../src/dashboard/view-model.ts';
import { Badge, Conditions, Empty, Omitted, Section, Usage } from '../components.tsx';

function position(w: { position?: number }): string {
  return w.position !== undefined ? `#${w.position} in queue` : '';
}

export function Queues(props: { data: QueuesView }) {
  const { clusterQueues, localQueues, workloads } = props.data;
  return (
    <Section id="queues" title="Queues" count={String(clusterQueues.length)}>
      {clusterQueues.length === 0 ? <Empty>No ClusterQueue.</Empty> : null}
      <div class="grid">
        {clusterQueues.map((cq) => (
          <article key={cq.name} class="card" data-clusterqueue={cq.name}>
            <header class="card-head">
              <h3>{cq.name}</h3>
              <Badge value={cq.strategy} kind="scope" />
              {cq.cohort ? <Badge value={`cohort ${cq.cohort}`} kind="scope" /> : null}
              <span class="progress-text">
                {cq.admitted} admitted · {cq.pending} pending
              </span>
            </header>
            {cq.quotas.map((q) => (
              <Usage
                key={`${q.flavor}/${q.resource}`}
                label={`${q.flavor} ${q.resource}`}
                used={q.used}
                total={q.nominal}
                text={q.text}
              />
            ))}
            <ul class="plain">
              {localQueues
                .filter((lq) => lq.clusterQueue === cq.name)
                .map((lq) => (
                  <li key={`${lq.namespace}/${lq.name}`}>
                    LocalQueue {lq.namespace}/{lq.name}: {lq.admitted} admitted, {lq.pending} pending
                  </li>
                ))}
            </ul>
          </article>
        ))}
      </div>
      {workloads.length > 0 ? <WorkloadTable workloads={workloads} /> : null}
    </Section>
  );
}

function WorkloadTable(props: { workloads: WorkloadView[] }) {
  return (
    <table class="table">
      <thead>
        <tr>
          <th>workload</th>
          <th>owner</th>
          <th>queue</th>
          <th>state</th>
          <th>position</th>
          <th>priority</th>
          <th>message</th>
        </tr>
      </thead>
      <tbody>
        {props.workloads.map((w) => (
          <tr key={`${w.namespace}/${w.name}`} data-workload={`${w.namespace}/${w.name}`}>
            <td>
              <span class="ns">{w.namespace}/</span>
              {w.name}
            </td>
            <td>{w.owner ?? ''}</td>
            <td>
              {w.queue ?? ''}
              {w.clusterQueue ? ` → ${w.clusterQueue}` : ''}
            </td>
            <td>
              <Badge value={w.state} />
            </td>
            <td>{position(w)}</td>
            <td>{w.priority}</td>
            <td class="wrap">{w.message ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function AppWrappers(props: { data: { items: AppWrapperView[]; omitted: number } }) {
  const { items, omitted } = props.data;
  return (
    <Section id="appwrappers" title="AppWrappers" count={String(items.length + omitted)}>
      {items.length === 0 ? <Empty>No AppWrapper yet.</Empty> : null}
      <div class="grid">
        {items.map((aw) => (
          <article
            key={`${aw.namespace}/${aw.name}`}
            class="card"
            data-appwrapper={`${aw.namespace}/${aw.name}`}
            data-phase={aw.phase}
          >
            <header class="card-head">
              <h3>
                <span class="ns">{aw.namespace}/</span>
                {aw.name}
              </h3>
              <Badge value={aw.phase} />
              {aw.suspended ? <Badge value="suspended" kind="scope" /> : null}
              <span class="progress-text">
                {aw.components} components{aw.retries ? ` · ${aw.retries} resets` : ''}
              </span>
            </header>
            <p class="message">
              {aw.queue ? `queue ${aw.queue}` : 'no queue label'}
              {aw.workload
                ? ` · workload ${aw.workload.name}: ${aw.workload.state}${aw.workload.position ? `, ${position(aw.workload)}` : ''}${aw.workload.clusterQueue ? ` in ${aw.workload.clusterQueue}` : ''}`
                : ''}
            </p>
            <Conditions conditions={aw.conditions} />
          </article>
        ))}
      </div>
      <Omitted n={omitted} what="AppWrappers" />
    </Section>
  );
}
