/**
 * Coscheduling in the embedded scheduler (opt-in, `--gang-scheduling`): the
 * scheduler-plugins coscheduling plugin's PreFilter, Permit, PostFilter and Unreserve, as a
 * hook the scheduler loop calls around its own decisions. A gang is the pods of one
 * PodGroup (scheduler-plugins' `scheduling.x-k8s.io` or troupe's
 * `scheduling.incubator.k8s.io`). Members that fit are assumed on their node and held
 * (not bound) until `minMember` of the gang are placed; then all bind. A member that fits
 * nowhere rejects the gang's held members (their room returns to the cluster) and the gang
 * backs off as a unit; held members are released the same way after
 * `scheduleTimeoutSeconds`. Times come from the scheduler's Clock.
 */

import type { Clock, TimerHandle } from '../../../lib/clock.ts';
import type { KubeObject } from '../../apiserver/types.ts';
import type { ClusterClient, Gvr } from '../../client.ts';
import type { ClusterState, PodEntry } from '../core/index.ts';
import type { QueuedPod } from '../queue.ts';
import {
  compareSortKeys,
  type GangRef,
  type GangSpec,
  gangMessage,
  gangOf,
  gangSpec,
  memberVerdict,
  resourceGap,
  type SortKey,
} from './core.ts';

export { compareSortKeys, type SortKey };

const PODS: Gvr = { group: '', version: 'v1', resource: 'pods' };
const POD_GROUPS: Record<GangRef['api'], Gvr> = {
  'scheduling.x-k8s.io': { group: 'scheduling.x-k8s.io', version: 'v1alpha1', resource: 'podgroups' },
  'scheduling.incubator.k8s.io': {
    group: 'scheduling.incubator.k8s.io',
    version: 'v1alpha1',
    resource: 'podgroups',
  },
};

/** podGroupRejectPercentage's default, 10%, as a fraction. */
const REJECT_FRACTION = 0.1;

export interface CoschedulingOptions {
  clock: Clock;
  /** permitWaitingTimeSeconds of the plugin's args, in ms (default 60 s), before time scaling. */
  permitWaitingMs?: number;
  /**
   * podGroupBackoffSeconds, in ms: how long a gang rejected in PostFilter is not tried
   * (default 1 s; the plugin's default is 0, no group backoff).
   */
  podGroupBackoffMs?: number;
  timeScale?: number;
}

/** What the scheduler lends the hook: binding a held pod, and giving one back to the queue. */
export interface SchedulerSide {
  state: ClusterState;
  bind(qp: QueuedPod, nodeName: string): void;
  /** Forgets the assumption and queues the pod again with `message` as its verdict. */
  unreserve(qp: QueuedPod, message: string): void;
  /** Moves these pods, if they wait in the backoff or unschedulable queue, to the active queue. */
  activate(uids: string[]): void;
}

export type PermitVerdict = { status: 'allow' } | { status: 'wait' } | { status: 'reject'; message: string };

interface Waiting {
  qp: QueuedPod;
  nodeName: string;
}

export class Coscheduling {
  private readonly client: ClusterClient;
  private readonly opts: CoschedulingOptions;
  private readonly scale: number;
  /** Held members per gang key. */
  private readonly waiting = new Map<string, Map<string, Waiting>>();
  private readonly timers = new Map<string, TimerHandle>();
  /** Gang key → end of its backoff. */
  private readonly backedOff = new Map<string, number>();
  /** Gang key → last failure: the queue sorts a failed gang behind others (no head-of-line blocking). */
  private readonly lastFailure = new Map<string, number>();
  private side: SchedulerSide | undefined;

  constructor(client: ClusterClient, opts: CoschedulingOptions) {
    this.client = client;
    this.opts = opts;
    this.scale = opts.timeScale && opts.timeScale > 0 ? opts.timeScale : 1;
  }

  attach(side: SchedulerSide): void {
    this.side = side;
  }

  /** The PodGroup of a gang; 'missing' when its API is served and it does not exist. */
  private podGroup(g: GangRef): GangSpec | 'missing' | undefined {
    const gvr = POD_GROUPS[g.api];
    // Without the API (troupe's CRDs not installed, say) the label names no gang at all.
    if (!this.client.served(gvr)) return undefined;
    const pg = this.client.get(gvr, g.namespace, g.name);
    return pg ? gangSpec(pg) : 'missing';
  }

  /** The gang of a pod and its PodGroup, for the steps that skip pods whose PodGroup is missing. */
  private gang(pod: Pick<KubeObject, 'metadata'>): { g: GangRef; spec: GangSpec } | undefined {
    const g = gangOf(pod);
    const spec = g && this.podGroup(g);
    return g && spec && spec !== 'missing' ? { g, spec } : undefined;
  }

  /** The gang's pods that still count (not deleted, not finished). */
  private members(g: GangRef): KubeObject[] {
    return this.client.list(PODS, g.namespace, { labelSelector: `${g.label}=${g.name}` }).filter((p) => {
      const phase = (p.status as { phase?: string } | undefined)?.phase;
      return !p.metadata.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed';
    });
  }

  /** Members assumed or bound: the scheduler's state accounts them on a node. */
  private assignedCount(members: KubeObject[]): number {
    let n = 0;
    for (const p of members) if (this.side?.state.getPod(p.metadata.uid ?? '')) n++;
    return n;
  }

  /** Coscheduling.Less after priority: gangs by PodGroup time, others by first attempt. */
  sortKey(pod: KubeObject, firstAttempt: number): SortKey {
    const gang = this.gang(pod);
    if (!gang) return { time: firstAttempt, key: `${pod.metadata.namespace}/${pod.metadata.name}` };
    const { g, spec } = gang;
    return { time: this.lastFailure.get(g.key) ?? spec.created, key: `${g.namespace}/${g.name}` };
  }

  /** PreFilter: undefined lets the pod through; a message rejects it (no preemption for it). */
  preFilter(pod: Pick<KubeObject, 'metadata'>): string | undefined {
    const gang = this.gang(pod);
    if (!gang) return undefined;
    const { g, spec } = gang;
    const until = this.backedOff.get(g.key);
    if (until !== undefined) {
      if (until > this.opts.clock.now()) return `podGroup ${g.namespace}/${g.name} failed recently`;
      this.backedOff.delete(g.key);
    }
    const members = this.members(g);
    const verdict = memberVerdict(
      pod.metadata.name ?? '',
      spec.minMember,
      members.map((p) => ({
        gated: ((p.spec as { schedulingGates?: unknown[] })?.schedulingGates?.length ?? 0) > 0,
      })),
    );
    if (verdict) return verdict;
    if (!spec.minResources || !this.side) return undefined;
    const uids = new Set(members.map((p) => p.metadata.uid));
    const gap = resourceGap(this.side.state.nodes, spec.minResources, spec.minMember, (uid) => uids.has(uid));
    return gap ? `resource gap: ${JSON.stringify(gap)}` : undefined;
  }

  /** Permit, after the pod was assumed on `nodeName`. */
  permit(qp: QueuedPod, nodeName: string): PermitVerdict {
    const g = gangOf(qp.pod);
    if (!g) return { status: 'allow' };
    const spec = this.podGroup(g);
    if (!spec) return { status: 'allow' };
    // As the plugin: a pod naming a PodGroup that does not exist is not bound.
    if (spec === 'missing') return { status: 'reject', message: 'PodGroup not found' };
    const members = this.members(g);
    if (this.assignedCount(members) >= spec.minMember) {
      this.lastFailure.delete(g.key);
      this.allowAll(g.key, qp.uid);
      return { status: 'allow' };
    }
    let held = this.waiting.get(g.key);
    if (!held) {
      held = new Map();
      this.waiting.set(g.key, held);
    }
    held.set(qp.uid, { qp, nodeName });
    // ActivateSiblings: the first held member brings its siblings out of their backoff, so
    // the gang is tried together rather than one backoff at a time.
    if (held.size === 1) {
      this.side?.activate(members.map((p) => p.metadata.uid ?? '').filter((uid) => uid !== qp.uid));
    }
    if (!this.timers.has(g.key)) {
      const ms = (spec.scheduleTimeoutSeconds ?? (this.opts.permitWaitingMs ?? 60_000) / 1000) * 1000;
      this.timers.set(
        g.key,
        this.opts.clock.setTimer(() => {
          this.timers.delete(g.key);
          const n = this.waiting.get(g.key)?.size ?? 0;
          this.rejectGang(
            g,
            gangMessage(
              spec.minMember - n,
              spec.minMember,
              g.name,
              `rejected due to timeout after waiting ${ms / 1000}s`,
            ),
            false,
          );
        }, ms / this.scale),
      );
    }
    return { status: 'wait' };
  }

  /**
   * PostFilter for a member no node fits: unless the gang already has its quorum (or
   * nearly), reject its held members and back the gang off. Returns the gang's verdict
   * to report instead of the pod's own message.
   */
  postFilter(pod: Pick<KubeObject, 'metadata'>, reason: string): string | undefined {
    const gang = this.gang(pod);
    if (!gang) return undefined;
    const { g, spec } = gang;
    const members = this.members(g);
    const assigned = this.assignedCount(members);
    if (assigned >= spec.minMember) return undefined;
    // podGroupRejectPercentage (default 10): a gang this close to its quorum keeps its held
    // members, later members may still complete it.
    if ((spec.minMember - assigned) / spec.minMember <= REJECT_FRACTION) return undefined;
    const message = gangMessage(spec.minMember - assigned, spec.minMember, g.name, reason);
    this.rejectGang(g, message, members.length >= spec.minMember, pod.metadata.uid);
    return message;
  }

  /** A gang member (held or not) went away. */
  forget(uid: string): void {
    for (const [key, held] of this.waiting) {
      if (held.delete(uid) && held.size === 0) this.clear(key);
    }
  }

  /** Preemption must not take a gang below its quorum: false vetoes these victims. */
  victimsAllowed(victims: readonly PodEntry[]): boolean {
    const byGang = new Map<string, { g: GangRef; n: number }>();
    for (const v of victims) {
      const g = gangOf({ metadata: { namespace: v.namespace, labels: { ...v.labels } } });
      if (!g) continue;
      const e = byGang.get(g.key) ?? { g, n: 0 };
      e.n++;
      byGang.set(g.key, e);
    }
    for (const { g, n } of byGang.values()) {
      const spec = this.podGroup(g);
      if (!spec || spec === 'missing') continue;
      if (this.assignedCount(this.members(g)) - n < spec.minMember) return false;
    }
    return true;
  }

  stop(): void {
    for (const t of this.timers.values()) t.cancel();
    this.timers.clear();
  }

  private allowAll(key: string, except: string): void {
    const held = this.waiting.get(key);
    this.clear(key);
    if (!held || !this.side) return;
    for (const w of held.values()) if (w.qp.uid !== except) this.side.bind(w.qp, w.nodeName);
  }

  private rejectGang(g: GangRef, message: string, backOff: boolean, except?: string): void {
    const held = this.waiting.get(g.key);
    this.clear(g.key);
    const now = this.opts.clock.now();
    this.lastFailure.set(g.key, now);
    const backoff = (this.opts.podGroupBackoffMs ?? 1000) / this.scale;
    if (backOff && backoff > 0) this.backedOff.set(g.key, now + backoff);
    if (!held || !this.side) return;
    for (const w of held.values()) if (w.qp.uid !== except) this.side.unreserve(w.qp, message);
  }

  private clear(key: string): void {
    this.waiting.delete(key);
    this.timers.get(key)?.cancel();
    this.timers.delete(key);
  }
}
