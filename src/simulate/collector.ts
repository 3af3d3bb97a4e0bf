/**
 * What one policy's run did, from the watch streams of pods and nodes: each event is fed in
 * with the (simulated) time it was seen, and the collector keeps per-gang milestones and the
 * time integrals the report needs (GPUs allocated, GPUs doing useful work, gangs deadlocked,
 * offloaded spend). Pure: no I/O, no clock of its own.
 */

import { GANG_LABEL, GPU } from './objects.ts';
import type { Gang } from './scenario.ts';

type Json = Record<string, unknown>;

export interface PodLike {
  metadata?: {
    uid?: string;
    name?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: { nodeName?: string; containers?: { resources?: { requests?: Record<string, string> } }[] };
  status?: { phase?: string; conditions?: { type?: string; status?: string; reason?: string }[] };
}

export interface JobLike {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  status?: { conditions?: { type?: string; status?: string }[] };
}

export interface NodeLike {
  metadata?: { name?: string; labels?: Record<string, string> };
  status?: { allocatable?: Record<string, string> };
}

interface PodState {
  gang: string;
  gpus: number;
  node: string;
  bound: boolean;
  running: boolean;
  unschedulable: boolean;
  succeeded: boolean;
  failed: boolean;
  offloaded: boolean;
  costPerHr: number;
}

export interface GangRecord {
  gang: Gang;
  arrivedMs: number | undefined;
  allScheduledMs: number | undefined;
  allRunningMs: number | undefined;
  finishedMs: number | undefined;
  status: 'pending' | 'running' | 'succeeded' | 'failed' | 'unfinished';
  deadlockedMs: number;
  /** Since when the gang has been partly placed with members unschedulable. */
  stuckSince: number | undefined;
  pods: Set<string>;
  succeeded: number;
  /** GPUs of the gang's running members while all of them run (else 0). */
  usefulGpus: number;
  /** The offloaded Job's price (its runpod.io/cost-per-hr), for members that carry none. */
  jobCostPerHr: number;
}

export interface UtilPoint {
  t: number;
  capacity: number;
  allocated: number;
  useful: number;
}

/** Label of the offload controller's virtual node (src/controllers/offload/virtual.ts). */
const VIRTUAL_NODE_TYPE = 'virtual-kubelet';
const COST_PER_HR = 'runpod.io/cost-per-hr';

export class Collector {
  readonly gangs = new Map<string, GangRecord>();
  private readonly pods = new Map<string, PodState>();
  private readonly nodeGpus = new Map<string, number>();
  private readonly virtualNodes = new Set<string>();
  private readonly preempted = new Set<string>();
  readonly points: UtilPoint[] = [];
  private spendUsd = 0;
  private capacity = 0;
  private allocated = 0;
  private useful = 0;
  /** USD per hour of the offloaded members running now. */
  private spendPerHr = 0;
  private lastT = 0;
  /** Called once per gang, the first time all its members run. */
  onAllRunning: ((name: string, t: number) => void) | undefined;

  constructor(gangs: Gang[]) {
    for (const g of gangs) {
      this.gangs.set(g.name, {
        gang: g,
        arrivedMs: undefined,
        allScheduledMs: undefined,
        allRunningMs: undefined,
        finishedMs: undefined,
        status: 'pending',
        deadlockedMs: 0,
        stuckSince: undefined,
        pods: new Set(),
        succeeded: 0,
        usefulGpus: 0,
        jobCostPerHr: 0,
      });
    }
  }

  arrived(name: string, t: number): void {
    this.advance(t);
    const r = this.gangs.get(name);
    if (r && r.arrivedMs === undefined) r.arrivedMs = t;
  }

  /** The harness ended a gang that runs until deleted (a StatefulSet after its duration). */
  ended(name: string, t: number): void {
    this.advance(t);
    const r = this.gangs.get(name);
    if (r && r.finishedMs === undefined) {
      r.finishedMs = t;
      r.status = 'succeeded';
    }
  }

  /** A Job that ends Failed ends its gang (its members may be gone: deleted, not Failed). */
  job(type: string, job: JobLike, t: number): void {
    this.advance(t);
    const r = this.gangs.get(job.metadata?.labels?.[GANG_LABEL] ?? '');
    if (!r || type === 'DELETED') return;
    const cost = Number(job.metadata?.annotations?.[COST_PER_HR] ?? 0) || 0;
    if (cost !== r.jobCostPerHr) {
      // Members running remotely without a price of their own now cost the Job's.
      for (const uid of r.pods) {
        const p = this.pods.get(uid);
        if (!p || p.costPerHr > 0) continue;
        if (p.offloaded && p.running) this.spendPerHr += cost - r.jobCostPerHr;
      }
      r.jobCostPerHr = cost;
    }
    if (r.finishedMs !== undefined) return;
    const failed = job.status?.conditions?.some((c) => c.type === 'Failed' && c.status === 'True');
    if (failed) {
      r.finishedMs = t;
      r.status = 'failed';
    }
  }

  node(type: string, node: NodeLike, t: number): void {
    this.advance(t);
    const name = node.metadata?.name ?? '';
    if (node.metadata?.labels?.type === VIRTUAL_NODE_TYPE) {
      this.virtualNodes.add(name);
      return;
    }
    this.capacity -= this.nodeGpus.get(name) ?? 0;
    if (type === 'DELETED') this.nodeGpus.delete(name);
    else this.nodeGpus.set(name, intQuantity(node.status?.allocatable?.[GPU]));
    this.capacity += this.nodeGpus.get(name) ?? 0;
    this.sample(t);
  }

  pod(type: string, pod: PodLike, t: number): void {
    this.advance(t);
    const uid = pod.metadata?.uid ?? '';
    const gangName = pod.metadata?.labels?.[GANG_LABEL];
    const r = gangName ? this.gangs.get(gangName) : undefined;
    if (!r || !uid) return;
    const conds = pod.status?.conditions ?? [];
    if (
      conds.some(
        (c) => c.type === 'DisruptionTarget' && c.status === 'True' && c.reason?.startsWith('Preemption'),
      )
    ) {
      this.preempted.add(uid);
    }
    const prev = this.pods.get(uid);
    const phase = pod.status?.phase ?? 'Pending';
    const deleted = type === 'DELETED';
    const node = pod.spec?.nodeName ?? '';
    const s: PodState = {
      gang: r.gang.name,
      gpus: podGpus(pod),
      node,
      bound: !deleted && node !== '' && phase !== 'Succeeded' && phase !== 'Failed',
      running: !deleted && phase === 'Running',
      unschedulable:
        !deleted &&
        node === '' &&
        conds.some((c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable'),
      succeeded: phase === 'Succeeded',
      failed: phase === 'Failed',
      offloaded: this.virtualNodes.has(node),
      costPerHr: Number(pod.metadata?.annotations?.[COST_PER_HR] ?? 0) || 0,
    };
    if (s.succeeded && !prev?.succeeded) r.succeeded++;
    this.allocated += allocatedGpus(s) - (prev ? allocatedGpus(prev) : 0);
    this.spendPerHr += spendRate(s, r) - (prev ? spendRate(prev, r) : 0);
    if (deleted) this.pods.delete(uid);
    else this.pods.set(uid, s);
    r.pods.add(uid);
    if (deleted) r.pods.delete(uid);
    this.update(r, t, s.failed && !prev?.failed);
    this.sample(t);
  }

  /** Closes the integrals at the end of the run. */
  finish(t: number): void {
    this.advance(t);
    for (const r of this.gangs.values()) {
      if (r.stuckSince !== undefined) {
        r.deadlockedMs += deadlocked(t - r.stuckSince);
        r.stuckSince = undefined;
      }
      // A gang with no end of its own (a service) that runs is fine; any other is unfinished.
      const endless = r.gang.durationMs === undefined && !r.gang.fail;
      if (r.finishedMs === undefined && r.status !== 'pending') r.status = endless ? 'running' : 'unfinished';
    }
    this.sample(t, true);
  }

  preemptions(): number {
    return this.preempted.size;
  }

  offloadedSpendUsd(): number {
    return this.spendUsd;
  }

  private update(r: GangRecord, t: number, newlyFailed: boolean): void {
    let bound = 0;
    let running = 0;
    let unschedulable = false;
    let active = 0;
    for (const uid of r.pods) {
      const p = this.pods.get(uid);
      if (!p) continue;
      if (p.bound) bound++;
      if (p.running) running++;
      if (p.unschedulable) unschedulable = true;
      if (!p.succeeded && !p.failed) active++;
    }
    const size = r.gang.size;
    let useful = 0;
    if (running >= size)
      for (const uid of r.pods) {
        const p = this.pods.get(uid);
        if (p?.running && !p.offloaded) useful += p.gpus;
      }
    this.useful += useful - r.usefulGpus;
    r.usefulGpus = useful;
    if (r.allScheduledMs === undefined && bound >= size) r.allScheduledMs = t;
    if (r.allRunningMs === undefined && running >= size) {
      r.allRunningMs = t;
      if (r.status === 'pending') r.status = 'running';
      this.onAllRunning?.(r.gang.name, t);
    }
    const stuck = bound > 0 && bound < size && unschedulable;
    if (stuck && r.stuckSince === undefined) r.stuckSince = t;
    if (!stuck && r.stuckSince !== undefined) {
      r.deadlockedMs += deadlocked(t - r.stuckSince);
      r.stuckSince = undefined;
    }
    if (r.finishedMs === undefined) {
      if (r.succeeded >= size) {
        r.finishedMs = t;
        r.status = 'succeeded';
      } else if (newlyFailed || (active === 0 && [...r.pods].some((u) => this.pods.get(u)?.failed))) {
        if (active === 0) {
          r.finishedMs = t;
          r.status = 'failed';
        }
      }
    }
  }

  /** Moves the integrals that depend on time alone (spend) up to `t`. */
  private advance(t: number): void {
    if (t <= this.lastT) return;
    const dt = t - this.lastT;
    this.spendUsd += (this.spendPerHr * dt) / 3_600_000;
    this.lastT = t;
  }

  private sample(t: number, force = false): void {
    const { capacity, allocated, useful } = this;
    const last = this.points.at(-1);
    if (
      !force &&
      last &&
      last.capacity === capacity &&
      last.allocated === allocated &&
      last.useful === useful
    )
      return;
    if (last && last.t === t) this.points.pop();
    this.points.push({ t, capacity, allocated, useful });
  }
}

/**
 * A gang partly placed while a member is unschedulable is deadlocked once that lasts
 * DEADLOCK_GRACE_MS (then for the whole stretch): shorter stretches are the scheduler's retry
 * after a neighbour finished, not a gang holding resources it cannot use.
 */
export const DEADLOCK_GRACE_MS = 60_000;

function deadlocked(ms: number): number {
  return ms >= DEADLOCK_GRACE_MS ? ms : 0;
}

function spendRate(p: PodState, r: GangRecord): number {
  return p.offloaded && p.running ? p.costPerHr || r.jobCostPerHr : 0;
}

function allocatedGpus(p: PodState): number {
  return p.bound && !p.offloaded ? p.gpus : 0;
}

function intQuantity(v: string | undefined): number {
  if (v === undefined) return 0;
  const n = Number(v);
  return Number.isFinite(n) ? n : 0;
}

function podGpus(pod: PodLike): number {
  let n = 0;
  for (const c of pod.spec?.containers ?? [])
    n += intQuantity((c.resources?.requests as Json | undefined)?.[GPU] as string);
  return n;
}
