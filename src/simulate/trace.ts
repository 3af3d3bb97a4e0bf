/**
 * A trace of a live cluster, in the scenario file's own shape: `troupe simulate --record`
 * feeds the pods and nodes it watches into a TraceRecorder, which groups pods into gangs (by
 * PodGroup label, else by controlling owner, else one pod alone) and writes what a scenario
 * needs to replay them: node pools, and per gang its arrival, members, GPUs, run time,
 * priority and failure. Pure: the watching is src/simulate/record.ts.
 */

import { formatGoDuration } from '../kube/duration.ts';
import { milliValue, quantityValue, tryParseQuantity } from '../kube/quantity.ts';
import { GPU } from './objects.ts';

type Json = Record<string, unknown>;

interface RecPod {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    creationTimestamp?: string;
    labels?: Record<string, string>;
    ownerReferences?: { kind?: string; name?: string; controller?: boolean }[];
  };
  spec?: {
    priority?: number;
    containers?: { resources?: { requests?: Record<string, string>; limits?: Record<string, string> } }[];
  };
  status?: {
    phase?: string;
    containerStatuses?: {
      state?: {
        running?: { startedAt?: string };
        terminated?: { startedAt?: string; finishedAt?: string; exitCode?: number };
      };
    }[];
  };
}

interface RecNode {
  metadata?: { name?: string; labels?: Record<string, string> };
  status?: { capacity?: Record<string, string> };
}

interface RecGang {
  key: string;
  kind: 'Job' | 'StatefulSet' | 'Pods';
  podGroup: 'troupe' | 'scheduler-plugins' | 'none';
  firstMs: number;
  active: Set<string>;
  maxActive: number;
  /** Pods first seen already finished (they ran before the recording). */
  seen: Set<string>;
  finishedBefore: number;
  gpus: number;
  cpu: string;
  memory: string;
  priority: number;
  runMs: number | undefined;
  fail: { afterMs: number; exitCode: number } | undefined;
}

const POOL_LABELS = ['node.kubernetes.io/instance-type', 'nvidia.com/gpu.product'];

export class TraceRecorder {
  private readonly startMs: number;
  private readonly gangs = new Map<string, RecGang>();
  private readonly nodes = new Map<string, RecNode>();

  constructor(startMs: number) {
    this.startMs = startMs;
  }

  get podGangs(): number {
    return this.gangs.size;
  }

  node(type: string, n: RecNode): void {
    const name = n.metadata?.name ?? '';
    if (n.metadata?.labels?.type === 'virtual-kubelet') return;
    if (type === 'DELETED') this.nodes.delete(name);
    else this.nodes.set(name, n);
  }

  /** A pod event, seen at `seenAt` (epoch ms): a gang arrives when its first pod is seen. */
  pod(type: string, p: RecPod, seenAt: number): void {
    const meta = p.metadata ?? {};
    const owner = meta.ownerReferences?.find((o) => o.controller);
    if (owner?.kind === 'DaemonSet' || owner?.kind === 'Node') return;
    const labels = meta.labels ?? {};
    const ns = meta.namespace ?? 'default';
    const troupeGroup = labels['podgroup.jhwagner.github.io/name'];
    const xGroup = labels['scheduling.x-k8s.io/pod-group'];
    const key = troupeGroup
      ? `${ns}/${troupeGroup}`
      : xGroup
        ? `${ns}/${xGroup}`
        : owner
          ? `${ns}/${owner.name}`
          : `${ns}/${meta.name}`;
    let g = this.gangs.get(key);
    // A pod created a second or more before the recording began (timestamps have whole
    // seconds) was there from the start; any other arrives when first seen.
    const createdAt = Date.parse(meta.creationTimestamp ?? '');
    const created = createdAt + 1000 <= this.startMs ? this.startMs : Math.max(seenAt, this.startMs);
    if (!g) {
      const requests = podRequests(p);
      g = {
        key,
        kind:
          owner?.kind === 'Job'
            ? 'Job'
            : owner?.kind === 'StatefulSet' || owner?.kind === 'ReplicaSet'
              ? 'StatefulSet'
              : 'Pods',
        podGroup: troupeGroup ? 'troupe' : xGroup ? 'scheduler-plugins' : 'none',
        firstMs: created,
        active: new Set(),
        maxActive: 0,
        seen: new Set(),
        finishedBefore: 0,
        gpus: requests.gpus,
        cpu: requests.cpu,
        memory: requests.memory,
        priority: p.spec?.priority ?? 0,
        runMs: undefined,
        fail: undefined,
      };
      this.gangs.set(key, g);
    }
    g.firstMs = Math.min(g.firstMs, created);
    const uid = meta.uid ?? meta.name ?? '';
    const phase = p.status?.phase;
    if (!g.seen.has(uid)) {
      g.seen.add(uid);
      if (phase === 'Succeeded' || phase === 'Failed') g.finishedBefore++;
    }
    if (type === 'DELETED' || phase === 'Succeeded' || phase === 'Failed') g.active.delete(uid);
    else g.active.add(uid);
    g.maxActive = Math.max(g.maxActive, g.active.size);
    for (const cs of p.status?.containerStatuses ?? []) {
      const t = cs.state?.terminated;
      if (!t?.startedAt || !t.finishedAt) continue;
      const ran = Math.max(0, Date.parse(t.finishedAt) - Date.parse(t.startedAt));
      if ((t.exitCode ?? 0) !== 0) {
        if (!g.fail) g.fail = { afterMs: ran, exitCode: Math.min(255, Math.max(1, t.exitCode ?? 1)) };
      } else g.runMs = Math.max(g.runMs ?? 0, ran);
    }
  }

  /** The scenario document (to write as YAML) for a recording that ended at `endMs`. */
  scenario(name: string, endMs: number): Json {
    const elapsed = Math.max(0, endMs - this.startMs);
    const used = new Set<string>();
    const workload = [...this.gangs.values()]
      .filter((g) => members(g) > 0)
      .sort((a, b) => a.firstMs - b.firstMs || (a.key < b.key ? -1 : 1))
      .map((g) => {
        const item: Json = {
          name: uniqueName(g.key, used),
          at: seconds(g.firstMs - this.startMs),
          kind: g.kind,
          size: members(g),
        };
        if (g.podGroup !== (members(g) > 1 ? 'troupe' : 'none')) item.podGroup = g.podGroup;
        if (g.gpus > 0) item.gpus = g.gpus;
        item.cpu = g.cpu;
        item.memory = g.memory;
        if (g.runMs !== undefined) item.duration = seconds(g.runMs);
        if (g.fail) item.fail = { after: seconds(g.fail.afterMs), exitCode: g.fail.exitCode };
        if (g.priority !== 0) item.priority = g.priority;
        return item;
      });
    const longest = Math.max(0, ...[...this.gangs.values()].map((g) => g.runMs ?? 0));
    const end = Math.ceil((elapsed + longest + 60_000) / 60_000);
    return {
      name,
      description: `recorded by troupe simulate --record: ${workload.length} gangs over ${Math.round(elapsed / 1000)}s`,
      seed: 1,
      end: `${end}m`,
      nodes: { pools: this.pools() },
      workload,
      policies: [
        { name: 'default', description: 'the default scheduler' },
        {
          name: 'coscheduling',
          description: 'coscheduling places each gang all or none',
          gangScheduling: true,
        },
      ],
    };
  }

  /** Nodes grouped by capacity and the labels that tell machine types apart. */
  private pools(): Json[] {
    const pools = new Map<
      string,
      { capacity: Record<string, string>; labels: Record<string, string>; count: number }
    >();
    for (const n of [...this.nodes.values()].sort((a, b) =>
      (a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1,
    )) {
      const cap = n.status?.capacity ?? {};
      const capacity: Record<string, string> = {};
      for (const r of ['cpu', 'memory', 'pods', GPU]) if (cap[r] !== undefined) capacity[r] = cap[r];
      const labels: Record<string, string> = {};
      for (const l of POOL_LABELS) if (n.metadata?.labels?.[l]) labels[l] = n.metadata.labels[l];
      const id = JSON.stringify([capacity, labels]);
      const p = pools.get(id);
      if (p) p.count++;
      else pools.set(id, { capacity, labels, count: 1 });
    }
    return [...pools.values()].map((p, i) => ({
      name: `pool-${i}`,
      count: p.count,
      capacity: p.capacity,
      ...(Object.keys(p.labels).length > 0 ? { labels: p.labels } : {}),
    }));
  }
}

/** Members of a gang: the most pods it had at once, or as many as had finished before the recording. */
function members(g: RecGang): number {
  return Math.max(g.maxActive, g.finishedBefore);
}

function seconds(ms: number): string {
  return formatGoDuration(Math.max(0, Math.round(ms)));
}

/** A DNS label from `namespace/name`, unique among the trace's gangs. */
function uniqueName(key: string, used: Set<string>): string {
  const base =
    key
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 34)
      .replace(/-+$/, '') || 'gang';
  let name = base;
  for (let i = 2; used.has(name); i++) name = `${base}-${i}`;
  used.add(name);
  return name;
}

function podRequests(p: RecPod): { gpus: number; cpu: string; memory: string } {
  let gpus = 0;
  let cpuMilli = 0;
  let memMi = 0;
  for (const c of p.spec?.containers ?? []) {
    const req = { ...(c.resources?.limits ?? {}), ...(c.resources?.requests ?? {}) };
    gpus += Number(req[GPU] ?? 0) || 0;
    cpuMilli += milli(req.cpu);
    memMi += mebi(req.memory);
  }
  return { gpus, cpu: cpuMilli > 0 ? `${cpuMilli}m` : '100m', memory: memMi > 0 ? `${memMi}Mi` : '128Mi' };
}

function milli(v: string | undefined): number {
  const q = v === undefined ? undefined : tryParseQuantity(v);
  return q ? Number(milliValue(q)) : 0;
}

function mebi(v: string | undefined): number {
  const q = v === undefined ? undefined : tryParseQuantity(v);
  return q ? Math.ceil(Number(quantityValue(q)) / 2 ** 20) : 0;
}
