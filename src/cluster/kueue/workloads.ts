/**
 * Workload objects as Kueue's job framework makes and changes them: the deterministic name,
 * the object created for a job, the PodSetInfos an admission yields, and the condition
 * changes of admission, eviction, requeueing and finishing.
 */

import { createHash } from 'node:crypto';
import { setCondition } from '../../kube/conditions.ts';
import type { KubeObject } from '../apiserver/types.ts';
import {
  type Admission,
  JOB_UID_LABEL,
  KUEUE_API_VERSION,
  PODSET_LABEL,
  type PodSet,
  type PodSetInfo,
  RESOURCE_IN_USE_FINALIZER,
  type ResourceFlavor,
  type Workload,
  WorkloadConditions,
} from './api.ts';

/** jobframework.GetWorkloadNameForOwnerWithGVK: `<kind>-<name>-<5 hex of sha1(kind, group, name, uid)>`. */
export function workloadName(kind: string, group: string, name: string, uid: string): string {
  const hash = createHash('sha1').update(`${kind}\n${group}\n${name}\n${uid}`).digest('hex').slice(0, 5);
  const prefix = `${kind.toLowerCase()}-${name}`.slice(0, 252 - 5);
  return `${prefix}-${hash}`;
}

export function newWorkload(
  job: KubeObject,
  kind: string,
  group: string,
  queueName: string,
  podSets: PodSet[],
  priority: { priority: number; priorityClassRef?: { group: string; kind: string; name: string } } = {
    priority: 0,
  },
): Workload {
  const uid = job.metadata.uid ?? '';
  return {
    apiVersion: KUEUE_API_VERSION,
    kind: 'Workload',
    metadata: {
      name: workloadName(kind, group, job.metadata.name ?? '', uid),
      namespace: job.metadata.namespace,
      labels: { [JOB_UID_LABEL]: uid },
      finalizers: [RESOURCE_IN_USE_FINALIZER],
      ownerReferences: [
        {
          apiVersion: job.apiVersion,
          kind,
          name: job.metadata.name ?? '',
          uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      podSets,
      queueName,
      ...(priority.priorityClassRef ? { priorityClassRef: priority.priorityClassRef } : {}),
      priority: priority.priority,
      active: true,
    },
  };
}

/** podset.FromAssignment: flavor node labels and tolerations, plus the pod-set label. */
export function podSetInfos(wl: Workload, flavors: Map<string, ResourceFlavor>): PodSetInfo[] {
  const admission = wl.status?.admission;
  if (!admission) return [];
  return admission.podSetAssignments.map((psa, i) => {
    const info: PodSetInfo = {
      name: psa.name,
      count: psa.count ?? wl.spec.podSets[i]?.count ?? 1,
      labels: { [PODSET_LABEL]: psa.name },
      annotations: {},
      nodeSelector: {},
      tolerations: [],
      schedulingGates: [],
    };
    const seen = new Set<string>();
    for (const f of Object.values(psa.flavors ?? {})) {
      if (seen.has(f)) continue;
      seen.add(f);
      const flavor = flavors.get(f);
      Object.assign(info.nodeSelector, flavor?.spec?.nodeLabels ?? {});
      info.tolerations.push(...(flavor?.spec?.tolerations ?? []));
    }
    return info;
  });
}

type Status = NonNullable<Workload['status']>;

function conds(status: Status) {
  status.conditions ??= [];
  return status.conditions;
}

function set(
  status: Status,
  type: string,
  s: 'True' | 'False',
  reason: string,
  message: string,
  now: Date,
): void {
  setCondition(conds(status), { type, status: s, reason, message, lastTransitionTime: '' }, now);
}

/** The scheduler's write: quota reserved and (no admission checks) admitted. */
export function admit(wl: Workload, admission: Admission, now: Date): void {
  wl.status ??= {};
  wl.status.admission = admission;
  set(
    wl.status,
    WorkloadConditions.QuotaReserved,
    'True',
    'QuotaReserved',
    `Quota reserved in ClusterQueue ${admission.clusterQueue}`,
    now,
  );
  set(wl.status, WorkloadConditions.Admitted, 'True', 'Admitted', 'The workload is admitted', now);
  // resetActiveCondition: an eviction or preemption that held is now history.
  for (const type of [WorkloadConditions.Evicted, WorkloadConditions.Preempted]) {
    const prev = wl.status.conditions?.find((c) => c.type === type);
    if (prev?.status === 'True')
      set(wl.status, type, 'False', 'QuotaReserved', `Previously: ${prev.message}`, now);
  }
}

/**
 * The scheduler's QuotaReserved and Admitted events (scheduler.go
 * recordWorkloadAdmissionMetrics): the wait since the workload was queued, its creation or its
 * last Requeued transition (workload.QueuedWaitTime), in whole seconds as Go's %.0f prints
 * them (ties to even), and the flavors tried that did not simply fit. No admission checks,
 * so admission follows reservation at once.
 */
export function admissionEvents(
  wl: Workload,
  now: Date,
  flavorsConsidered = '',
): { quotaReserved: string; admitted: string } {
  const requeued = wl.status?.conditions?.find((c) => c.type === WorkloadConditions.Requeued);
  const queuedAt = Date.parse(requeued?.lastTransitionTime ?? wl.metadata.creationTimestamp ?? '');
  const seconds = Number.isNaN(queuedAt) ? 0 : (now.getTime() - queuedAt) / 1000;
  const cq = wl.status?.admission?.clusterQueue ?? '';
  return {
    quotaReserved: `Quota reserved in ClusterQueue ${cq}, wait time since queued was ${goRoundEven(seconds)}s${flavorsConsidered ? `; Flavors considered: ${flavorsConsidered}` : ''}`,
    admitted: `Admitted by ClusterQueue ${cq}, wait time since reservation was 0s`,
  };
}

/** Rounds to the nearest integer, ties to even, as Go's %.0f does. */
function goRoundEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** QuotaReserved=False with the reason the scheduler could not admit it. */
export function markPending(wl: Workload, reason: string, message: string, now: Date): void {
  wl.status ??= {};
  set(wl.status, WorkloadConditions.QuotaReserved, 'False', reason, message, now);
}

export function evict(wl: Workload, reason: string, message: string, now: Date): void {
  wl.status ??= {};
  set(wl.status, WorkloadConditions.Evicted, 'True', reason, message, now);
}

/** The preemption's eviction: Evicted=True `Preempted` and Preempted=True with the finer reason. */
export function preempt(wl: Workload, reason: string, message: string, now: Date): void {
  evict(wl, 'Preempted', message, now);
  set(wl.status!, WorkloadConditions.Preempted, 'True', reason, message, now);
}

/** After an evicted job stopped: quota released, requeued unless the eviction holds it back. */
export function unsetQuota(wl: Workload, evictedReason: string, message: string, now: Date): void {
  wl.status ??= {};
  wl.status.admission = null;
  set(wl.status, WorkloadConditions.QuotaReserved, 'False', 'Pending', message, now);
  set(
    wl.status,
    WorkloadConditions.Admitted,
    'False',
    'NoReservation',
    'The workload has no reservation',
    now,
  );
  const requeue = evictedReason === 'Preempted';
  set(wl.status, WorkloadConditions.Requeued, requeue ? 'True' : 'False', evictedReason, message, now);
}

export function requeue(wl: Workload, reason: string, message: string, now: Date): void {
  wl.status ??= {};
  set(wl.status, WorkloadConditions.Requeued, 'True', reason, message, now);
}

export function finish(wl: Workload, reason: string, message: string, now: Date): void {
  wl.status ??= {};
  set(wl.status, WorkloadConditions.Finished, 'True', reason, message, now);
}
