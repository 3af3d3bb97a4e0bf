/**
 * meta.k8s.io/v1 Table responses, which `kubectl get` asks for so the server decides
 * the columns (and so CRD printer columns work).
 */
import type { KubeObject, ResourceType, TableColumn, TablePrinter } from '../types.ts';

export type IncludeObject = 'None' | 'Object' | 'PartialObjectMetadata';

const DEFAULT_PRINTER: TablePrinter = {
  columns: [
    { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.' },
    {
      name: 'Created At',
      type: 'date',
      description:
        'CreationTimestamp is a timestamp representing the server time when this object was created.',
    },
  ],
  cells: (obj) => [obj.metadata.name, obj.metadata.creationTimestamp],
};

export function wantsTable(accept: string | undefined): boolean {
  return !!accept && /as=Table/.test(accept) && /g=meta\.k8s\.io/.test(accept);
}

export function tableVersion(accept: string): 'v1' | 'v1beta1' {
  const first = accept.split(',').find((p) => p.includes('as=Table')) ?? '';
  return first.includes('v=v1beta1') ? 'v1beta1' : 'v1';
}

function rowObject(obj: KubeObject, include: IncludeObject): unknown {
  if (include === 'None') return undefined;
  if (include === 'Object') return obj;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
}

export function toTable(
  rt: ResourceType,
  objects: KubeObject[],
  opts: {
    resourceVersion?: string;
    continue?: string;
    remainingItemCount?: number;
    include: IncludeObject;
    noHeaders?: boolean;
    version?: 'v1' | 'v1beta1';
  },
): Record<string, unknown> {
  const printer = rt.strategy.table ?? DEFAULT_PRINTER;
  const now = new Date();
  const rows = objects.map((obj) => {
    let cells: unknown[];
    try {
      cells = printer.cells(obj, now);
    } catch {
      // A printer must never fail a read: show what we can.
      cells = printer.columns.map((_, i) => (i === 0 ? obj.metadata.name : '<error>'));
    }
    const row: Record<string, unknown> = { cells };
    const o = rowObject(obj, opts.include);
    if (o !== undefined) row.object = o;
    return row;
  });
  const metadata: Record<string, unknown> = {};
  if (opts.resourceVersion) metadata.resourceVersion = opts.resourceVersion;
  if (opts.continue) metadata.continue = opts.continue;
  if (opts.remainingItemCount !== undefined) metadata.remainingItemCount = opts.remainingItemCount;
  const table: Record<string, unknown> = {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${opts.version ?? 'v1'}`,
    metadata,
    rows,
  };
  if (!opts.noHeaders) table.columnDefinitions = printer.columns.map(columnDef);
  return table;
}

function columnDef(c: TableColumn): Record<string, unknown> {
  return {
    name: c.name,
    type: c.type,
    format: c.format ?? '',
    description: c.description ?? '',
    priority: c.priority ?? 0,
  };
}
