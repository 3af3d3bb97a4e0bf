/**
 * Gang membership, indexed from the scheduler's own pod watch: which pods count as members of
 * each gang (not being deleted, not finished), how many of them carry scheduling gates, and
 * how many are assigned (bound, or assumed by the scheduler). PreFilter, Permit, PostFilter
 * and preemption (which members a gang can lose) read counts here instead of listing pods
 * by label or walking a gang's members on every attempt: upstream's PodGroupManager keeps
 * its assigned pods per group the same way (assignedPodsByPG of
 * pkg/coscheduling/core/core.go: added in Permit and for pods seen bound, removed in
 * Unreserve and when they go).
 */
import type { KubeObject } from '../../apiserver/types.ts';
import { type GangRef, gangOf } from './core.ts';

interface Member {
  gated: boolean;
  /** Seen bound (spec.nodeName) by the watch. */
  bound: boolean;
  /** Assumed on a node by the scheduler (Permit) and not unreserved since. */
  assumed: boolean;
}

const isAssigned = (m: Member | undefined) => m !== undefined && (m.bound || m.assumed);

interface Gang {
  ref: GangRef;
  members: Map<string, Member>;
  gated: number;
  assigned: number;
}

export class GangMembers {
  private readonly gangs = new Map<string, Gang>();
  /** uid → the key of the gang the pod counts in. */
  private readonly byUid = new Map<string, string>();

  /**
   * Applies a pod event. Returns the pod's gang when the pod joined it (a new member, or a
   * member whose gates were lifted): the sibling event that may let the gang through.
   */
  observe(type: string, pod: KubeObject): GangRef | undefined {
    const uid = pod.metadata.uid ?? '';
    const phase = (pod.status as { phase?: string } | undefined)?.phase;
    const counts =
      type !== 'DELETED' && !pod.metadata.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed';
    const g = counts ? gangOf(pod) : undefined;
    const before = this.byUid.get(uid);
    // A pod relabelled into another gang stays assumed there (the scheduler still accounts it).
    const moved = before !== undefined && before !== g?.key ? this.remove(before, uid) : undefined;
    if (!g) return undefined;
    let gang = this.gangs.get(g.key);
    if (!gang) {
      gang = { ref: g, members: new Map(), gated: 0, assigned: 0 };
      this.gangs.set(g.key, gang);
    }
    const spec = pod.spec as { schedulingGates?: unknown[]; nodeName?: string } | undefined;
    const gated = (spec?.schedulingGates?.length ?? 0) > 0;
    const prev = gang.members.get(uid);
    const next: Member = {
      gated,
      bound: Boolean(spec?.nodeName),
      assumed: (prev ?? moved)?.assumed ?? false,
    };
    gang.members.set(uid, next);
    this.byUid.set(uid, g.key);
    gang.gated += (gated ? 1 : 0) - (prev?.gated ? 1 : 0);
    gang.assigned += (isAssigned(next) ? 1 : 0) - (isAssigned(prev) ? 1 : 0);
    return !prev || (prev.gated && !gated) ? g : undefined;
  }

  /** How many pods count in the gang, and how many of them are gated. */
  count(key: string): { total: number; gated: number } {
    const gang = this.gangs.get(key);
    return gang ? { total: gang.members.size, gated: gang.gated } : { total: 0, gated: 0 };
  }

  /** How many members are bound or assumed: the scheduler accounts them on a node. */
  assigned(key: string): number {
    return this.gangs.get(key)?.assigned ?? 0;
  }

  /**
   * The scheduler assumed (`true`: Permit) or forgot (`false`: unreserved, binding failed)
   * the pod on a node. A pod that counts in no gang is ignored.
   */
  setAssumed(uid: string, assumed: boolean): void {
    const key = this.byUid.get(uid);
    const gang = key === undefined ? undefined : this.gangs.get(key);
    const m = gang?.members.get(uid);
    if (!gang || !m || m.assumed === assumed) return;
    const was = isAssigned(m);
    m.assumed = assumed;
    gang.assigned += (isAssigned(m) ? 1 : 0) - (was ? 1 : 0);
  }

  /** The gang a pod counts in (a potential victim's, for preemption). */
  gangOfUid(uid: string): GangRef | undefined {
    const key = this.byUid.get(uid);
    return key === undefined ? undefined : this.gangs.get(key)?.ref;
  }

  uids(key: string): IterableIterator<string> | readonly string[] {
    return this.gangs.get(key)?.members.keys() ?? [];
  }

  /** Drops a member; returns what it was. */
  private remove(key: string, uid: string): Member | undefined {
    this.byUid.delete(uid);
    const gang = this.gangs.get(key);
    const m = gang?.members.get(uid);
    if (!gang || !m) return undefined;
    if (m.gated) gang.gated--;
    if (isAssigned(m)) gang.assigned--;
    gang.members.delete(uid);
    if (gang.members.size === 0) this.gangs.delete(key);
    return m;
  }
}
