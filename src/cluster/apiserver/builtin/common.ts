/**
 * Pieces shared by the per-kind strategies: the status split between the main endpoint and
 * `/status`, generation on create, and small typed accessors over loose JSON objects.
 */

import { arrayOf, clone, isObject, recordOf, stringOf as str } from '../../../lib/json.ts';
import type { KubeObject, ObjectMeta, RequestContext, TableColumn } from '../types.ts';

export type Json = Record<string, unknown>;

/** The object's field as a record, created when absent (for defaulting). */
export function ensureRecord(obj: Json, key: string): Json {
  const cur = obj[key];
  if (isObject(cur)) return cur;
  const fresh: Json = {};
  obj[key] = fresh;
  return fresh;
}

// The shelf's readers of loosely typed objects, under the names this folder uses.
export { arrayOf, recordOf, str };

export function num(v: unknown, fallback = 0): number {
  return typeof v === 'number' ? v : fallback;
}

export function setGenerationOnCreate(obj: KubeObject): void {
  obj.metadata ??= {};
  obj.metadata.generation = 1;
}

/** Main endpoint update: the client cannot change status. */
export function keepOldStatus(obj: KubeObject, old: KubeObject): void {
  if (old.status === undefined) delete obj.status;
  else obj.status = clone(old.status);
}

/** Which metadata a `/status` write may not touch (varies by kind, as in kube-apiserver). */
export type StatusMetaReset = 'none' | 'labels' | 'pod' | 'all';

const TOP_LEVEL_KEEP = new Set(['apiVersion', 'kind', 'metadata', 'status']);

/**
 * `/status` update: every top-level field but status (and apiVersion/kind/metadata) comes
 * from the stored object; `reset` picks the metadata fields restored as well
 * ('all' is metav1.ResetObjectMetaForStatus).
 */
export function keepAllButStatus(obj: KubeObject, old: KubeObject, reset: StatusMetaReset): void {
  for (const k of Object.keys(obj)) if (!TOP_LEVEL_KEEP.has(k) && !(k in old)) delete obj[k];
  for (const [k, v] of Object.entries(old)) if (!TOP_LEVEL_KEEP.has(k)) obj[k] = clone(v);
  obj.metadata ??= {};
  const m = obj.metadata;
  const o = old.metadata ?? {};
  const restore = (field: keyof ObjectMeta) => {
    if (o[field] === undefined) delete m[field];
    else m[field] = clone(o[field]);
  };
  switch (reset) {
    case 'none':
      break;
    case 'labels':
      restore('labels');
      break;
    case 'pod':
      restore('ownerReferences');
      restore('deletionTimestamp');
      break;
    case 'all':
      for (const f of [
        'deletionTimestamp',
        'generation',
        'labels',
        'annotations',
        'finalizers',
        'ownerReferences',
      ] as const) {
        restore(f);
      }
      break;
  }
}

/**
 * The usual split: the main endpoint (and `/scale`) keeps the old status, `/status` keeps
 * everything else. Other subresources are written by the server itself and left alone.
 */
export function splitStatusUpdate(
  obj: KubeObject,
  old: KubeObject,
  ctx: RequestContext,
  reset: StatusMetaReset,
): void {
  if (ctx.subresource === 'status') keepAllButStatus(obj, old, reset);
  else if (ctx.subresource === '' || ctx.subresource === 'scale') keepOldStatus(obj, old);
}

// ---- table columns ----

export function column(
  name: string,
  type: TableColumn['type'] = 'string',
  extra: { priority?: number; format?: string; description?: string } = {},
): TableColumn {
  const c: TableColumn = { name, type };
  if (extra.format) c.format = extra.format;
  if (extra.description) c.description = extra.description;
  if (extra.priority) c.priority = extra.priority;
  return c;
}

export const NAME_COLUMN = column('Name', 'string', {
  format: 'name',
  description:
    'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
});

/** The wide (`-o wide`) columns every pod-template workload prints after AGE. */
export const TEMPLATE_WIDE_COLUMNS = [
  column('Containers', 'string', { priority: 1, description: 'Names of each container in the template.' }),
  column('Images', 'string', {
    priority: 1,
    description: 'Images referenced by each container in the template.',
  }),
  column('Selector', 'string', { priority: 1 }),
];

export const AGE_COLUMN = column('Age', 'string', {
  description:
    'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
});

/** The columns kube-apiserver serves for kinds without a printer (default table convertor). */
export const DEFAULT_TABLE_COLUMNS: TableColumn[] = [
  NAME_COLUMN,
  column('Created At', 'date', { description: AGE_COLUMN.description ?? '' }),
];

export function defaultTableCells(obj: KubeObject): unknown[] {
  return [obj.metadata?.name ?? '', obj.metadata?.creationTimestamp ?? ''];
}

/** Containers and Images cells of the wide columns (layoutContainerCells). */
export function containerCells(containers: unknown): [string, string] {
  const list = arrayOf(containers);
  return [list.map((c) => str(c.name)).join(','), list.map((c) => str(c.image)).join(',')];
}
