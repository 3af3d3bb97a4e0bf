/**
 * A new Workload's priority, as Kueue's job framework finds it (kueue v0.19
 * pkg/controller/jobframework/reconciler.go ExtractPriority, pkg/util/priority/priority.go):
 * the WorkloadPriorityClass named by the job's `kueue.x-k8s.io/priority-class` label, else
 * the Pod PriorityClass named by the first pod set that names one, else the cluster's
 * globalDefault PriorityClass (the lowest if several), else 0 with no reference. A class
 * that is named but missing is an error: the Workload is not created until it exists.
 */

import type { KubeObject } from '../apiserver/types.ts';
import type { ClusterClient, Gvr } from '../client.ts';
import { KUEUE_GROUP, type PodSet } from './api.ts';

export const WORKLOAD_PRIORITY_CLASS_LABEL = 'kueue.x-k8s.io/priority-class';

export const PRIORITY_CLASSES: Gvr = {
  group: 'scheduling.k8s.io',
  version: 'v1',
  resource: 'priorityclasses',
};

export interface PriorityClassRef {
  group: string;
  kind: string;
  name: string;
}

export interface WorkloadPriority {
  priority: number;
  priorityClassRef?: PriorityClassRef;
}

export class PriorityClassNotFound extends Error {}

interface ValueObject extends KubeObject {
  value?: number;
  globalDefault?: boolean;
}

export function workloadPriority(
  client: ClusterClient,
  workloadPriorityClasses: Gvr,
  job: KubeObject,
  podSets: PodSet[],
): WorkloadPriority {
  const wpc = job.metadata.labels?.[WORKLOAD_PRIORITY_CLASS_LABEL];
  if (wpc) {
    const obj = client.served(workloadPriorityClasses)
      ? client.get<ValueObject>(workloadPriorityClasses, '', wpc)
      : undefined;
    if (!obj) throw new PriorityClassNotFound(`workloadpriorityclasses.${KUEUE_GROUP} "${wpc}" not found`);
    return {
      priority: obj.value ?? 0,
      priorityClassRef: { group: KUEUE_GROUP, kind: 'WorkloadPriorityClass', name: wpc },
    };
  }
  // Until the API server serves PriorityClass, pods name classes nothing can resolve: 0.
  if (!client.served(PRIORITY_CLASSES)) return { priority: 0 };
  const named = podSets
    .map((ps) => (ps.template?.spec as { priorityClassName?: string } | undefined)?.priorityClassName)
    .find((n) => n);
  if (named) {
    const pc = client.get<ValueObject>(PRIORITY_CLASSES, '', named);
    if (!pc) throw new PriorityClassNotFound(`priorityclasses.scheduling.k8s.io "${named}" not found`);
    return { priority: pc.value ?? 0, priorityClassRef: podPriorityClassRef(named) };
  }
  let def: ValueObject | undefined;
  for (const pc of client.list<ValueObject>(PRIORITY_CLASSES)) {
    if (pc.globalDefault && (!def || (pc.value ?? 0) < (def.value ?? 0))) def = pc;
  }
  if (def)
    return { priority: def.value ?? 0, priorityClassRef: podPriorityClassRef(def.metadata.name ?? '') };
  return { priority: 0 };
}

function podPriorityClassRef(name: string): PriorityClassRef {
  return { group: 'scheduling.k8s.io', kind: 'PriorityClass', name };
}
