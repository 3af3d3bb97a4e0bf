import type { TableView } from '../../../src/dashboard/view-model.ts';
import { Badge, Empty, Omitted, Section } from '../components.tsx';

/** A capability's `troupe status` section, for a capability the page has no section of its own for. */
export function Table(props: { data: TableView }) {
  const { key, title, columns, rows, omitted } = props.data;
  return (
    <Section id={`table-${key}`} title={title} count={String(rows.length + omitted)}>
      {rows.length === 0 ? (
        <Empty>None yet.</Empty>
      ) : (
        <table class="table" data-table={key}>
          <thead>
            <tr>
              <th>name</th>
              {columns.map((c) => (
                <th key={c.header}>{c.header.toLowerCase()}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={`${r.namespace}/${r.name}`} data-row={`${r.namespace}/${r.name}`}>
                <td>
                  {r.namespace ? <span class="ns">{r.namespace}/</span> : null}
                  {r.name}
                </td>
                {r.cells.map((cell, i) => (
                  <td key={columns[i]?.header ?? i}>{columns[i]?.phase ? <Badge value={cell} /> : cell}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Omitted n={omitted} what="objects" />
    </Section>
  );
}
