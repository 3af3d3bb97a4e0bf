/**
 * Table output for custom resources (what `kubectl get` shows): a Name column, then the
 * version's additionalPrinterColumns, or an Age column when none are declared, as
 * kube-apiserver serves them. Cells are evaluated with kubectl-style JSONPath through
 * jsonpath-plus and typed like apiextensions' table convertor (integer, number, boolean,
 * string printed with Go's %v, date as a human-readable age).
 */

import { JSONPath } from 'jsonpath-plus';
import { humanDuration } from '../../../kube/duration.ts';
import { goV } from '../gofmt.ts';
import type { KubeObject, TableColumn, TablePrinter } from '../types.ts';
import type { CustomResourceColumnDefinition } from './types.ts';

const NAME_DESCRIPTION =
  'Name of the object, unique within its namespace (or cluster for cluster-scoped kinds). Set when creating; cannot be changed.';
const AGE_DESCRIPTION =
  'Time elapsed since metadata.creationTimestamp, the server time the object was created.';

/** The columns served when a version declares no additionalPrinterColumns. */
export const DEFAULT_COLUMNS: CustomResourceColumnDefinition[] = [
  { name: 'Age', type: 'date', description: AGE_DESCRIPTION, jsonPath: '.metadata.creationTimestamp' },
];

/**
 * kubectl JSONPath (`.status.conditions[?(@.type=="Ready")].status`, `{.spec.x}`,
 * `.metadata.labels.app\.kubernetes\.io/name`) to jsonpath-plus syntax (`$...`).
 */
export function toJSONPathPlus(path: string): string {
  let p = path.trim();
  if (p.startsWith('{') && p.endsWith('}')) p = p.slice(1, -1);
  if (p.startsWith('$')) p = p.slice(1);
  let out = '$';
  let i = 0;
  while (i < p.length) {
    const c = p[i]!;
    if (c === '[') {
      let depth = 0;
      let j = i;
      let quote: string | undefined;
      for (; j < p.length; j++) {
        const d = p[j]!;
        if (quote) {
          if (d === quote && p[j - 1] !== '\\') quote = undefined;
        } else if (d === "'" || d === '"') quote = d;
        else if (d === '[') depth++;
        else if (d === ']' && --depth === 0) break;
      }
      out += p.slice(i, j + 1);
      i = j + 1;
    } else if (c === '.') {
      if (p[i + 1] === '.') {
        out += '..';
        i += 2;
        continue;
      }
      i++;
      let name = '';
      while (i < p.length && p[i] !== '.' && p[i] !== '[') {
        if (p[i] === '\\' && i + 1 < p.length) {
          name += p[i + 1];
          i += 2;
        } else name += p[i++];
      }
      if (name === '') continue;
      out += name === '*' || /^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
    } else {
      // A bare leading name (`spec.x`).
      let name = '';
      while (i < p.length && p[i] !== '.' && p[i] !== '[') name += p[i++];
      out += `.${name}`;
    }
  }
  return out;
}

/** First value the path finds in `obj`, or undefined. */
export function findFirst(obj: unknown, path: string): unknown {
  const results = JSONPath({ path: toJSONPathPlus(path), json: obj as object, wrap: true }) as unknown[];
  return results.length > 0 ? results[0] : undefined;
}

function cell(type: string, value: unknown, now: Date): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'string':
      return goV(value);
    case 'date': {
      if (typeof value !== 'string') return null;
      if (value === '') return '<unknown>';
      const t = Date.parse(value);
      if (Number.isNaN(t)) return '<invalid>';
      return humanDuration(now.getTime() - t);
    }
    default:
      return null;
  }
}

const COLUMN_TYPES = new Set(['string', 'integer', 'number', 'boolean', 'date']);

/** The table printer for one CRD version's printer columns (defaults to Age when empty). */
export function tableForColumns(declared: CustomResourceColumnDefinition[] | undefined): TablePrinter {
  const defs = declared && declared.length > 0 ? declared : DEFAULT_COLUMNS;
  const columns: TableColumn[] = [
    { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION },
  ];
  for (const d of defs) {
    const col: TableColumn = {
      name: d.name ?? '',
      type: (COLUMN_TYPES.has(d.type ?? '') ? d.type : 'string') as TableColumn['type'],
      description: d.description ?? '',
      priority: d.priority ?? 0,
    };
    if (d.format) col.format = d.format;
    columns.push(col);
  }
  return {
    columns,
    cells(obj: KubeObject, now: Date): unknown[] {
      const out: unknown[] = [obj.metadata?.name ?? ''];
      for (const d of defs) {
        let value: unknown;
        try {
          value = findFirst(obj, d.jsonPath ?? '');
        } catch {
          value = undefined;
        }
        out.push(cell(d.type ?? 'string', value, now));
      }
      return out;
    },
  };
}
