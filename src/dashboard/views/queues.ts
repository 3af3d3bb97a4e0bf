/**
 * Kueue queues and AppWrappers: ClusterQueues with quota used against nominal quota,
 * LocalQueues, Workloads with their state and position in their ClusterQueue, and
 * AppWrappers with their phase, conditions and the Workload Kueue made for them.
 *
 * Positions are computed the way Kueue orders a ClusterQueue's heap (higher priority first,
 * then older first); Kueue's visibility API is the authority on a real cluster, and its
 * requeue back-off can reorder workloads that were evicted.
 */

import { tryParseQuantity } from '../../kube/quantity.ts';
import type { KubeObject } from '../../runtime/index.ts';
import { QUEUE_NAME_LABEL } from '../kinds.ts';
import type {
  AppWrapperView,
  ClusterQueueView,
  LocalQueueView,
  QueuesView,
  QuotaView,
  WorkloadState,
  WorkloadView,
} from '../view-model.ts';
import { conditionViews, str } from './conditions.ts';
import { displayValue, useText } from './nodes.ts';

type Conditions = { type: string; status: string; reason?: string; message?: string }[];

export interface ClusterQueueObject extends KubeObject {
  spec?: {
    resourceGroups?: {
      flavors?: { name: string; resources?: { name: string; nominalQuota?: string | number }[] }[];
    }[];
    queueingStrategy?: string;
    cohortName?: string;
    cohort?: string;
  };
  status?: {
    pendingWorkloads?: number;
    admittedWorkloads?: number;
    flavorsReservation?: { name: string; resources?: { name: string; total?: string | number }[] }[];
  };
}

export interface LocalQueueObject extends KubeObject {
  spec?: { clusterQueue?: string };
  status?: { pendingWorkloads?: number; admittedWorkloads?: number };
}

export interface WorkloadObject extends KubeObject {
  spec?: { queueName?: string; priority?: number; active?: boolean };
  status?: {
    conditions?: Conditions;
    admission?: {
      clusterQueue?: string;
      podSetAssignments?: {
        flavors?: Record<string, string>;
        resourceUsage?: Record<string, string | number>;
      }[];
    } | null;
  };
}

export interface AppWrapperObject extends KubeObject {
  spec?: { suspend?: boolean; components?: unknown[] };
  status?: { phase?: string; resettingCount?: number; conditions?: Conditions };
}

const LIMIT = 300;

function isTrue(conds: Conditions | undefined, type: string): boolean {
  return conds?.some((c) => c.type === type && c.status === 'True') ?? false;
}

export function workloadState(w: WorkloadObject): WorkloadState {
  const c = w.status?.conditions;
  if (isTrue(c, 'Finished')) return 'finished';
  if (isTrue(c, 'Admitted')) return 'admitted';
  if (isTrue(c, 'QuotaReserved')) return 'quota-reserved';
  if (isTrue(c, 'Evicted')) return 'evicted';
  if (w.spec?.active === false) return 'inactive';
  return 'pending';
}

function milli(raw: unknown): bigint {
  const q = tryParseQuantity(raw);
  return q ? q.nanos / 1_000_000n : 0n;
}

function key(o: KubeObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
}

function ownerOf(o: KubeObject): { kind: string; name: string } | undefined {
  const refs = o.metadata.ownerReferences ?? [];
  const ref = refs.find((r) => r.controller) ?? refs[0];
  return ref ? { kind: ref.kind, name: ref.name } : undefined;
}

export function queuesView(
  clusterQueues: readonly ClusterQueueObject[],
  localQueues: readonly LocalQueueObject[],
  workloads: readonly WorkloadObject[],
): QueuesView {
  const lqTarget = new Map(localQueues.map((lq) => [key(lq), lq.spec?.clusterQueue ?? '']));
  const clusterQueueOf = (w: WorkloadObject): string | undefined =>
    w.status?.admission?.clusterQueue ||
    (w.spec?.queueName ? lqTarget.get(`${w.metadata.namespace ?? ''}/${w.spec.queueName}`) : undefined) ||
    undefined;

  const views: WorkloadView[] = workloads.map((w) => {
    const state = workloadState(w);
    const v: WorkloadView = {
      namespace: w.metadata.namespace ?? '',
      name: w.metadata.name ?? '',
      state,
      priority: w.spec?.priority ?? 0,
    };
    const q = str(w.spec?.queueName);
    if (q) v.queue = q;
    const cq = clusterQueueOf(w);
    if (cq) v.clusterQueue = cq;
    const owner = ownerOf(w);
    if (owner) v.owner = `${owner.kind}/${owner.name}`;
    const last = [...(w.status?.conditions ?? [])].reverse().find((c) => c.status === 'True' || c.message);
    if (last?.message) v.message = last.message;
    return v;
  });

  // Position among the pending workloads of each ClusterQueue.
  const created = new Map(workloads.map((w) => [key(w), w.metadata.creationTimestamp ?? '']));
  const pendingByCq = new Map<string, WorkloadView[]>();
  for (const v of views) {
    if ((v.state !== 'pending' && v.state !== 'evicted') || !v.clusterQueue) continue;
    const list = pendingByCq.get(v.clusterQueue) ?? [];
    list.push(v);
    pendingByCq.set(v.clusterQueue, list);
  }
  for (const list of pendingByCq.values()) {
    list.sort(
      (a, b) =>
        b.priority - a.priority ||
        (created.get(`${a.namespace}/${a.name}`) ?? '').localeCompare(
          created.get(`${b.namespace}/${b.name}`) ?? '',
        ),
    );
    list.forEach((v, i) => {
      v.position = i + 1;
    });
  }

  const cqViews: ClusterQueueView[] = clusterQueues.map((cq) => {
    const name = cq.metadata.name ?? '';
    const mine = views.filter((v) => v.clusterQueue === name);
    const usedComputed = new Map<string, bigint>();
    for (const w of workloads) {
      if (w.status?.admission?.clusterQueue !== name) continue;
      const st = workloadState(w);
      if (st !== 'admitted' && st !== 'quota-reserved') continue;
      for (const psa of w.status.admission.podSetAssignments ?? []) {
        for (const [res, q] of Object.entries(psa.resourceUsage ?? {})) {
          const flavor = psa.flavors?.[res] ?? '';
          const k = `${flavor}\u0000${res}`;
          usedComputed.set(k, (usedComputed.get(k) ?? 0n) + milli(q));
        }
      }
    }
    const reported = new Map<string, bigint>();
    for (const f of cq.status?.flavorsReservation ?? []) {
      for (const r of f.resources ?? []) reported.set(`${f.name}\u0000${r.name}`, milli(r.total));
    }
    const quotas: QuotaView[] = [];
    for (const group of cq.spec?.resourceGroups ?? []) {
      for (const flavor of group.flavors ?? []) {
        for (const r of flavor.resources ?? []) {
          const k = `${flavor.name}\u0000${r.name}`;
          const used = displayValue(r.name, reported.get(k) ?? usedComputed.get(k) ?? 0n);
          const nominal = displayValue(r.name, milli(r.nominalQuota));
          quotas.push({
            flavor: flavor.name,
            resource: r.name,
            used,
            nominal,
            text: useText(r.name, used, nominal),
          });
        }
      }
    }
    const v: ClusterQueueView = {
      name,
      strategy: cq.spec?.queueingStrategy ?? 'BestEffortFIFO',
      quotas,
      pending: cq.status?.pendingWorkloads ?? mine.filter((w) => w.position !== undefined).length,
      admitted: cq.status?.admittedWorkloads ?? mine.filter((w) => w.state === 'admitted').length,
    };
    const cohort = cq.spec?.cohortName ?? cq.spec?.cohort;
    if (cohort) v.cohort = cohort;
    return v;
  });

  const lqViews: LocalQueueView[] = localQueues.map((lq) => {
    const mine = views.filter((v) => v.namespace === lq.metadata.namespace && v.queue === lq.metadata.name);
    return {
      namespace: lq.metadata.namespace ?? '',
      name: lq.metadata.name ?? '',
      clusterQueue: lq.spec?.clusterQueue ?? '',
      pending: lq.status?.pendingWorkloads ?? mine.filter((w) => w.position !== undefined).length,
      admitted: lq.status?.admittedWorkloads ?? mine.filter((w) => w.state === 'admitted').length,
    };
  });

  const byName = (a: { name: string; namespace?: string }, b: { name: string; namespace?: string }) =>
    (a.namespace ?? '').localeCompare(b.namespace ?? '') || a.name.localeCompare(b.name);
  return {
    clusterQueues: cqViews.sort(byName).slice(0, LIMIT),
    localQueues: lqViews.sort(byName).slice(0, LIMIT),
    // Not limited here: AppWrappers look their Workload up in the full list.
    workloads: views.sort(byName),
  };
}

export function appWrappersView(
  wrappers: readonly AppWrapperObject[],
  workloads: readonly WorkloadView[],
): { items: AppWrapperView[]; omitted: number } {
  const byOwner = new Map<string, WorkloadView>();
  for (const w of workloads)
    if (w.owner?.startsWith('AppWrapper/')) byOwner.set(`${w.namespace}/${w.owner.slice(11)}`, w);
  const items = wrappers.map((aw): AppWrapperView => {
    const v: AppWrapperView = {
      namespace: aw.metadata.namespace ?? '',
      name: aw.metadata.name ?? '',
      phase: aw.status?.phase || 'Empty',
      suspended: aw.spec?.suspend === true,
      components: aw.spec?.components?.length ?? 0,
      conditions: conditionViews(aw.status?.conditions),
      retries: aw.status?.resettingCount ?? 0,
    };
    const q = aw.metadata.labels?.[QUEUE_NAME_LABEL];
    if (q) v.queue = q;
    const w = byOwner.get(key(aw));
    if (w) {
      v.workload = { name: w.name, state: w.state };
      if (w.position !== undefined) v.workload.position = w.position;
      if (w.clusterQueue) v.workload.clusterQueue = w.clusterQueue;
    }
    return v;
  });
  items.sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  return { items: items.slice(0, LIMIT), omitted: Math.max(0, items.length - LIMIT) };
}
