/**
 * The whole view model from what the cache holds. Pure: the same objects and time give the
 * same snapshot. A section is present only when the kinds it needs are shown (installed
 * and readable); the page hides the others.
 */

import type { KindRef, KubeObject } from '../runtime/index.ts';
import {
  APP_WRAPPER,
  CLUSTER_QUEUE,
  type DashboardTable,
  GROUP_ANNOTATION,
  GROUP_LABEL,
  JOB,
  LOCAL_QUEUE,
  NODE,
  POD,
  POD_GROUP,
  POD_SEQUENCE,
  SEQUENCE_EVENT,
  type WatchedKind,
  WORKLOAD,
} from './kinds.ts';
import type { KindStatus, Snapshot, TableView } from './view-model.ts';
import { type Node, nodesView } from './views/nodes.ts';
import { type JobObject, offloadsView } from './views/offloads.ts';
import { type PodGroupObject, podGroupsView } from './views/podgroups.ts';
import { type Pod, podSummary } from './views/pods.ts';
import {
  type AppWrapperObject,
  appWrappersView,
  type ClusterQueueObject,
  type LocalQueueObject,
  queuesView,
  type WorkloadObject,
} from './views/queues.ts';
import { type EventObject, type SequenceObject, sequencesView } from './views/sequences.ts';

export interface Observed {
  kinds: KindStatus[];
  /** Cached objects of each shown kind, by `kindId`. */
  objects: Map<string, readonly KubeObject[]>;
  namespace?: string;
}

/** Identifies a watched kind (the Event kind is watched for PodSequences only). */
export function kindId(k: KindRef & { fieldSelector?: string }): string {
  return `${k.apiVersion}/${k.kind}${k.fieldSelector ? `?${k.fieldSelector}` : ''}`;
}

const WORKLOAD_LIMIT = 300;

/** The sections the page draws itself; a capability's table with one of these keys is left to it. */
const OWN_SECTIONS: ReadonlySet<string> = new Set<keyof Snapshot>([
  'nodes',
  'pods',
  'podGroups',
  'sequences',
  'queues',
  'appWrappers',
  'offloads',
]);

const TABLE_LIMIT = 300;

/** A capability's table over the objects of its kind, sorted by namespace and name. */
function tableView(t: DashboardTable, objects: readonly KubeObject[]): TableView {
  const rows = objects
    .filter((o) => !t.select || t.select(o))
    .map((o) => {
      const row = { namespace: o.metadata.namespace ?? '', name: o.metadata.name ?? '', ...t.row(o) };
      return { namespace: row.namespace, name: row.name, cells: t.columns.map((c) => c.cell(row)) };
    })
    .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  return {
    key: t.key,
    title: t.title,
    columns: t.columns.map((c) => (c.phase ? { header: c.header, phase: true } : { header: c.header })),
    rows: rows.slice(0, TABLE_LIMIT),
    omitted: Math.max(0, rows.length - TABLE_LIMIT),
  };
}

export function buildSnapshot(
  observed: Observed,
  now: Date,
  tables: readonly DashboardTable[] = [],
): Snapshot {
  const shown = (k: WatchedKind) => observed.objects.has(kindId(k));
  const list = <T>(k: WatchedKind) => (observed.objects.get(kindId(k)) ?? []) as unknown as readonly T[];
  const pods = list<Pod>(POD);
  const snap: Snapshot = { generatedAt: now.toISOString(), kinds: observed.kinds };
  if (observed.namespace) snap.namespace = observed.namespace;

  if (shown(NODE)) snap.nodes = nodesView(list<Node>(NODE), pods);
  if (shown(POD)) snap.pods = podSummary(pods);
  const labelledGroups = pods.some(
    (p) => p.metadata.labels?.[GROUP_LABEL] || p.metadata.annotations?.[GROUP_ANNOTATION],
  );
  if (shown(POD) && (shown(POD_GROUP) || labelledGroups)) {
    snap.podGroups = podGroupsView(list<PodGroupObject>(POD_GROUP), pods);
  }
  if (shown(POD_SEQUENCE) && shown(POD)) {
    snap.sequences = sequencesView(
      list<SequenceObject>(POD_SEQUENCE),
      pods,
      list<EventObject>(SEQUENCE_EVENT),
    );
  }
  const kueue = shown(CLUSTER_QUEUE) || shown(LOCAL_QUEUE) || shown(WORKLOAD);
  const queues = kueue
    ? queuesView(
        list<ClusterQueueObject>(CLUSTER_QUEUE),
        list<LocalQueueObject>(LOCAL_QUEUE),
        list<WorkloadObject>(WORKLOAD),
      )
    : undefined;
  if (queues) snap.queues = { ...queues, workloads: queues.workloads.slice(0, WORKLOAD_LIMIT) };
  if (shown(APP_WRAPPER))
    snap.appWrappers = appWrappersView(list<AppWrapperObject>(APP_WRAPPER), queues?.workloads ?? []);
  if (shown(JOB) && shown(POD)) snap.offloads = offloadsView(list<JobObject>(JOB), pods, now);
  const own = tables.filter((t) => !OWN_SECTIONS.has(t.key) && observed.objects.has(kindId(t.kind)));
  if (own.length > 0) snap.tables = own.map((t) => tableView(t, observed.objects.get(kindId(t.kind)) ?? []));
  return snap;
}
