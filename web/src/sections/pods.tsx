import type { PodSummary } from '../../../src/dashboard/view-model.ts';
import { Section, StateBar } from '../components.tsx';
import { age } from '../format.ts';

export function Pods(props: { data: PodSummary; now: number }) {
  const { total, byState, byNamespace, stuck } = props.data;
  return (
    <Section id="pods" title="Pods" count={String(total)}>
      <StateBar counts={byState} total={total} />
      {byNamespace.length > 1 ? (
        <table class="table compact-table">
          <tbody>
            {byNamespace.map((ns) => (
              <tr key={ns.namespace} data-namespace={ns.namespace}>
                <th scope="row">{ns.namespace}</th>
                <td>{ns.total}</td>
                <td class="bar-cell">
                  <StateBar counts={ns.byState} total={ns.total} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {stuck.length > 0 ? (
        <>
          <h3 class="subhead">Waiting or failed</h3>
          <table class="table">
            <tbody>
              {stuck.map((p) => (
                <tr key={`${p.namespace}/${p.name}`} data-stuck={`${p.namespace}/${p.name}`}>
                  <td>
                    <span class={`dot state-${p.state}`} />
                    <span class="ns">{p.namespace}/</span>
                    {p.name}
                  </td>
                  <td>{p.reason}</td>
                  <td class="wrap">{p.message}</td>
                  <td>{p.since ? age(p.since, props.now) : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
    </Section>
  );
}
