/**
 * The whole view model from what the cache holds. Pure: the same objects and time give the
 * same snapshot. A section is present only when the kinds it needs are shown (installed
 * and readable); the page hides the others.
 */

import type { KubeObject } from '../runtime/index.ts';
import {
  APP_WRAPPER,
  CLUSTER_QUEUE,
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
import type { KindStatus, Snapshot } from './view-model.ts';
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
export function kindId(k: WatchedKind): string {
  return `${k.apiVersion}/${k.kind}${k.fieldSelector ? `?${k.fieldSelector}` : ''}`;
}

const WORKLOAD_LIMIT = 300;

export function buildSnapshot(observed: Observed, now: Date): Snapshot {
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
  return snap;
}
