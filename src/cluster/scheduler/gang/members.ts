/**
 * Gang membership, indexed from the scheduler's own pod watch: which pods count as members of
 * each gang (not being deleted, not finished) and how many of them carry scheduling gates.
 * PreFilter, Permit, PostFilter and the preemption veto read counts here instead of listing
 * pods by label on every attempt (upstream reads its pod informer's cache the same way).
 */
import type { KubeObject } from '../../apiserver/types.ts';
import { type GangRef, gangOf } from './core.ts';

interface Member {
  gated: boolean;
}

interface Gang {
  ref: GangRef;
  members: Map<string, Member>;
  gated: number;
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
    if (before !== undefined && before !== g?.key) this.remove(before, uid);
    if (!g) return undefined;
    let gang = this.gangs.get(g.key);
    if (!gang) {
      gang = { ref: g, members: new Map(), gated: 0 };
      this.gangs.set(g.key, gang);
    }
    const gated =
      ((pod.spec as { schedulingGates?: unknown[] } | undefined)?.schedulingGates?.length ?? 0) > 0;
    const prev = gang.members.get(uid);
    gang.members.set(uid, { gated });
    this.byUid.set(uid, g.key);
    gang.gated += (gated ? 1 : 0) - (prev?.gated ? 1 : 0);
    return !prev || (prev.gated && !gated) ? g : undefined;
  }

  /** How many pods count in the gang, and how many of them are gated. */
  count(key: string): { total: number; gated: number } {
    const gang = this.gangs.get(key);
    return gang ? { total: gang.members.size, gated: gang.gated } : { total: 0, gated: 0 };
  }

  /** The gang a pod counts in (a victim's, for the preemption veto). */
  gangOfUid(uid: string): GangRef | undefined {
    const key = this.byUid.get(uid);
    return key === undefined ? undefined : this.gangs.get(key)?.ref;
  }

  uids(key: string): IterableIterator<string> | readonly string[] {
    return this.gangs.get(key)?.members.keys() ?? [];
  }

  private remove(key: string, uid: string): void {
    this.byUid.delete(uid);
    const gang = this.gangs.get(key);
    if (!gang) return;
    if (gang.members.get(uid)?.gated) gang.gated--;
    gang.members.delete(uid);
    if (gang.members.size === 0) this.gangs.delete(key);
  }
}
