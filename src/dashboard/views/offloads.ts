/**
 * Offloads: Jobs annotated `runpod.io/managed`, where each stands (still local, launching,
 * running remotely, finished), the remote pod, its price and what it has cost so far. The
 * spend is the price per hour times the time the remote pod has run: from its first start
 * (or the virtual pod's creation) until the Job finished, or until now.
 */

import type { KubeObject } from '../../runtime/index.ts';
import { Offload } from '../kinds.ts';
import type { OffloadView } from '../view-model.ts';
import { str } from './conditions.ts';
import { type Pod, podState } from './pods.ts';

export interface JobObject extends KubeObject {
  status?: {
    completionTime?: string;
    conditions?: { type: string; status: string; lastTransitionTime?: string }[];
  };
}

const LIMIT = 300;

function finishTime(job: JobObject): string | undefined {
  if (job.status?.completionTime) return job.status.completionTime;
  const done = job.status?.conditions?.find(
    (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
  return done?.lastTransitionTime;
}

export function offloadsView(
  jobs: readonly JobObject[],
  pods: readonly Pod[],
  now: Date,
): { items: OffloadView[]; omitted: number; totalSpend: number; hourlyCost: number } {
  const virtualPods = new Map<string, Pod>();
  for (const p of pods) {
    const job = p.metadata.labels?.[Offload.jobNameLabel];
    if (job) virtualPods.set(`${p.metadata.namespace ?? ''}/${job}`, p);
  }
  let totalSpend = 0;
  let hourlyCost = 0;
  const items: OffloadView[] = [];
  for (const job of jobs) {
    const ann = job.metadata.annotations ?? {};
    if (ann[Offload.managed] !== 'true') continue;
    const ns = job.metadata.namespace ?? '';
    const name = job.metadata.name ?? '';
    const vpod = virtualPods.get(`${ns}/${name}`);
    const remotePodId = str(ann[Offload.podId]) ?? str(vpod?.metadata.annotations?.[Offload.podId]);
    const finishedAt = finishTime(job);
    const view: OffloadView = {
      namespace: ns,
      job: name,
      state: str(ann[Offload.state]) ?? (remotePodId ? 'Offloaded' : finishedAt ? 'Local' : 'Watching'),
    };
    const set = <K extends keyof OffloadView>(k: K, v: OffloadView[K] | undefined) => {
      if (v !== undefined) view[k] = v;
    };
    set('reason', str(ann[Offload.reason]));
    set('provider', str(ann[Offload.provider]) ?? (remotePodId ? 'runpod' : undefined));
    set('remotePodId', remotePodId);
    set('gpuType', str(ann[Offload.gpuType]) ?? str(vpod?.metadata.annotations?.[Offload.gpuType]));
    set('error', str(ann[Offload.error]));
    set('exitCode', str(ann[Offload.exitCode]) ?? str(vpod?.metadata.annotations?.[Offload.exitCode]));
    const rawCost = str(ann[Offload.costPerHr]) ?? str(vpod?.metadata.annotations?.[Offload.costPerHr]);
    const cost = rawCost === undefined ? Number.NaN : Number(rawCost);
    if (Number.isFinite(cost) && cost >= 0) view.costPerHour = cost;
    if (vpod) view.virtualPod = { name: vpod.metadata.name ?? '', state: podState(vpod) };
    if (remotePodId) {
      const startedAt =
        str(vpod?.metadata.annotations?.[Offload.remoteStartedAt]) ?? vpod?.metadata.creationTimestamp;
      set('startedAt', startedAt);
      set('finishedAt', finishedAt);
      if (startedAt && view.costPerHour !== undefined) {
        const end = finishedAt ? Date.parse(finishedAt) : now.getTime();
        const hours = Math.max(0, end - Date.parse(startedAt)) / 3_600_000;
        view.spend = view.costPerHour * hours;
        totalSpend += view.spend;
        if (!finishedAt) hourlyCost += view.costPerHour;
      }
    }
    items.push(view);
  }
  items.sort((a, b) => a.namespace.localeCompare(b.namespace) || a.job.localeCompare(b.job));
  return { items: items.slice(0, LIMIT), omitted: Math.max(0, items.length - LIMIT), totalSpend, hourlyCost };
}
