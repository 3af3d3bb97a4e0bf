/**
 * Which pods belong to which group of a sequence: explicit names, label selectors, pods
 * claimed twice (by two groups, or by two sequences managing the same gate), and named
 * pods that do not exist. Pure.
 *
 * `MembershipTracker` keeps the answer current pod event by pod event, so that a
 * reconcile of a sequence over 10,000 pods does not re-derive 10,000 memberships when one
 * pod became Ready: only the groups a change touched are rebuilt, and the groups nothing
 * touched keep their `GroupMembers` object (the decision memoizes per-group facts on that
 * identity, see core.ts). `resolveMembership` is the same tracker fed every pod at once,
 * so there is one implementation of the rules.
 */

import type { Pod } from './objects.ts';
import { hasGate, isFailed, podNode } from './pods.ts';
import { groupSelects, type ResolvedGroup, type ResolvedSpec } from './spec.ts';

export interface GroupMembers {
  readonly index: number;
  /** Pods counted in the group, by name (selector groups leave failed pods out while others match). */
  readonly members: readonly Pod[];
  /** Explicit names with no pod in the namespace. */
  readonly missing: readonly string[];
  /** Failed pods a selector matched and that are left out (their controller replaces them). */
  readonly ignoredFailed: readonly Pod[];
}

export interface Membership {
  groups: readonly GroupMembers[];
  /** Group index of each member pod, by name. */
  groupOf: ReadonlyMap<string, number>;
  /** Pods this sequence must not release, with why. */
  conflicts: ReadonlyMap<string, string>;
}

/**
 * Node scope: a node's member pods by group (each list by name), as the tracker last
 * built them; the same object until one of them changes.
 */
export interface NodePlacement {
  readonly node: string;
  readonly byGroup: readonly (readonly Pod[])[];
}

/** Node scope: where the members are. */
export interface Placement {
  /** Nodes with member pods placed on or pinned to them. */
  nodes: ReadonlyMap<string, NodePlacement>;
  /** Members without a node yet, by group (each list by name). */
  unplaced: readonly (readonly Pod[])[];
  /** The nodes whose placement was rebuilt (or dropped) since the previous call. */
  changed: readonly string[];
  /** Counts the calls, so that a caller can tell whether it saw every `changed` list. */
  serial: number;
}

/**
 * Node scope: what the decision needs of the groups as a whole, kept by counting rather
 * than by building the groups, which costs a sort of the group per pod event.
 */
export interface GroupTotals {
  /** Member pods in all groups. */
  members: number;
  /** Some member pod carries no gate (it was released, or never gated). */
  anyUngated: boolean;
  /** Per group, the explicit names with no pod in the namespace. */
  missing: readonly (readonly string[])[];
  conflicts: ReadonlyMap<string, string>;
}

/** Per group, counts over the matched pods, kept as pods come, change and go. */
interface Tally {
  matched: number;
  failed: number;
  /** Matched pods without the gate, and those of them not Failed. */
  ungated: number;
  ungatedLive: number;
}

export interface OtherSequence {
  key: string;
  generation?: number;
  spec: ResolvedSpec;
}

/**
 * The indexes of the selector groups matching a set of labels, ascending. Each group is
 * filed under one of its equality requirements (key → value → groups), so a pod costs one
 * lookup per indexed key rather than one selector match per group: a sequence of 100
 * selector tiers over 10,000 pods would otherwise match a million selectors per rebuild.
 * A group can only match labels that carry its filed key=value, so the lookup misses
 * nothing; groups without an equality requirement are matched against every pod.
 */
function selectorMatcher(groups: ResolvedGroup[]): (labels: Record<string, string> | undefined) => number[] {
  const byKey = new Map<string, Map<string, ResolvedGroup[]>>();
  const always: ResolvedGroup[] = [];
  for (const g of groups) {
    const eq = g.selector!.equalities()[0];
    if (!eq) {
      always.push(g);
      continue;
    }
    let byValue = byKey.get(eq[0]);
    if (!byValue) {
      byValue = new Map();
      byKey.set(eq[0], byValue);
    }
    byValue.set(eq[1], [...(byValue.get(eq[1]) ?? []), g]);
  }
  return (labels) => {
    const hits: number[] = [];
    for (const g of always) if (g.selector!.matches(labels)) hits.push(g.index);
    if (labels) {
      for (const [key, byValue] of byKey) {
        if (!Object.hasOwn(labels, key)) continue;
        for (const g of byValue.get(labels[key]!) ?? []) if (g.selector!.matches(labels)) hits.push(g.index);
      }
    }
    return hits.length > 1 ? hits.sort((a, b) => a - b) : hits;
  };
}

const NO_CONFLICTS: ReadonlyMap<string, string> = new Map();

const byName = (a: Pod, b: Pod): number => {
  const x = a.metadata.name ?? '';
  const y = b.metadata.name ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
};

/** Membership of one sequence's pods, kept current as pods come, change and go. */
export class MembershipTracker {
  readonly spec: ResolvedSpec;
  private readonly explicit = new Map<string, number>();
  private readonly selectorHits: (labels: Record<string, string> | undefined) => number[];
  private readonly rivals: OtherSequence[];
  /** Per group, the pods counted there (their earliest matching group), by name. */
  private readonly matched: Map<string, Pod>[];
  private readonly groupOf = new Map<string, number>();
  private readonly conflicts = new Map<string, string>();
  /** Built groups; undefined where a change since the last build touched the group. */
  private readonly built: (GroupMembers | undefined)[];
  /** Placement is kept for node-scoped sequences only (the cluster scope never asks). */
  private readonly nodeScoped: boolean;
  /** Node scope: the node of each matched pod (undefined: none yet), and the pods per node. */
  private readonly nodeOf = new Map<string, string | undefined>();
  private readonly onNode = new Map<string, Set<string>>();
  private readonly placed = new Map<string, NodePlacement>();
  private readonly dirtyNodes = new Set<string>();
  private readonly unplacedNames = new Set<string>();
  /**
   * Per group, whether every matched pod failed: a selector group then counts its failed
   * pods as members (see `build`). Kept from the tallies as pods change.
   */
  private readonly failedOnly: boolean[];
  private readonly tally: Tally[];
  /** Per group, the missing explicit names, until a change touches the group. */
  private readonly missingOf: (readonly string[] | undefined)[];
  private serial = 0;

  constructor(spec: ResolvedSpec, others: OtherSequence[] = [], pods: Iterable<Pod> = []) {
    this.spec = spec;
    this.nodeScoped = spec.scope === 'Node';
    this.selectorHits = selectorMatcher(spec.groups.filter((g) => g.selector));
    for (const g of spec.groups)
      for (const n of g.pods ?? []) if (!this.explicit.has(n)) this.explicit.set(n, g.index);
    // Two sequences removing the same gate from one pod would each undo the other's ordering.
    this.rivals = others.filter(
      (o) => o.spec.errors.length === 0 && o.spec.gate === spec.gate && o.spec.namespace === spec.namespace,
    );
    this.matched = spec.groups.map(() => new Map());
    this.built = spec.groups.map(() => undefined);
    this.missingOf = spec.groups.map(() => undefined);
    // An empty group has no pod that did not fail.
    this.failedOnly = spec.groups.map(() => true);
    this.tally = spec.groups.map(() => ({ matched: 0, failed: 0, ungated: 0, ungatedLive: 0 }));
    for (const pod of pods) this.upsert(pod);
  }

  /** Group k's built members and missing names are out of date. */
  private touch(k: number): void {
    this.built[k] = undefined;
    this.missingOf[k] = undefined;
  }

  /** Adds (sign 1) or takes away (sign -1) a matched pod of group k in the tallies. */
  private count(k: number, pod: Pod, sign: 1 | -1): void {
    const t = this.tally[k]!;
    const failed = isFailed(pod);
    const ungated = !hasGate(pod, this.spec.gate);
    t.matched += sign;
    if (failed) t.failed += sign;
    if (ungated) t.ungated += sign;
    if (ungated && !failed) t.ungatedLive += sign;
  }

  /**
   * Settles whether group k's matches all failed; when that flips, which of its failed
   * pods are members flips too, on every node they are on.
   */
  private settle(k: number): void {
    const t = this.tally[k]!;
    const failedOnly = t.matched === t.failed;
    if (failedOnly === this.failedOnly[k]) return;
    this.failedOnly[k] = failedOnly;
    if (!this.nodeScoped || !this.spec.groups[k]!.selector) return;
    for (const name of this.matched[k]!.keys()) {
      const node = this.nodeOf.get(name);
      if (node !== undefined) this.dirtyNodes.add(node);
    }
  }

  /** A pod of the sequence's namespace was added or changed. */
  upsert(pod: Pod): void {
    const name = pod.metadata.name;
    if (!name) return;
    const before = this.groupOf.get(name);
    const hits: number[] = [];
    const e = this.explicit.get(name);
    if (e !== undefined) hits.push(e);
    hits.push(...this.selectorHits(pod.metadata.labels));
    if (e !== undefined && hits.length > 1) hits.sort((a, b) => a - b);
    if (before !== undefined && (hits.length === 0 || before !== hits[0])) this.drop(name, before);
    // Its explicit group lists it as missing or not, wherever the pod is counted.
    if (e !== undefined) this.touch(e);
    if (hits.length === 0) return;
    // Counted in its earliest group, so that a group never looks complete without it.
    const k = hits[0]!;
    this.groupOf.set(name, k);
    const old = this.matched[k]!.get(name);
    if (old) this.count(k, old, -1);
    this.matched[k]!.set(name, pod);
    this.count(k, pod, 1);
    this.touch(k);
    if (this.nodeScoped) this.place(name, podNode(pod));
    this.settle(k);
    const conflict = this.conflictOf(name, pod, hits);
    if (conflict) this.conflicts.set(name, conflict);
    else this.conflicts.delete(name);
  }

  /** A pod of the sequence's namespace was deleted. */
  remove(name: string | undefined): void {
    if (!name) return;
    const k = this.groupOf.get(name);
    if (k !== undefined) this.drop(name, k);
  }

  private drop(name: string, k: number): void {
    const e = this.explicit.get(name);
    if (e !== undefined) this.touch(e);
    const old = this.matched[k]!.get(name);
    if (old) this.count(k, old, -1);
    this.matched[k]!.delete(name);
    this.groupOf.delete(name);
    this.conflicts.delete(name);
    this.touch(k);
    if (this.nodeScoped) {
      this.place(name, undefined);
      this.nodeOf.delete(name);
      this.unplacedNames.delete(name);
    }
    this.settle(k);
  }

  /** Files `name` under `node` (undefined: no node), marking the nodes it leaves and joins. */
  private place(name: string, node: string | undefined): void {
    const was = this.nodeOf.get(name);
    if (was !== undefined) {
      this.dirtyNodes.add(was);
      if (was !== node) {
        const set = this.onNode.get(was);
        set?.delete(name);
        if (set && set.size === 0) this.onNode.delete(was);
      }
    }
    this.nodeOf.set(name, node);
    if (node === undefined) {
      this.unplacedNames.add(name);
      return;
    }
    this.unplacedNames.delete(name);
    this.dirtyNodes.add(node);
    let set = this.onNode.get(node);
    if (!set) {
      set = new Set();
      this.onNode.set(node, set);
    }
    set.add(name);
  }

  /**
   * Node scope: the members by node, and those without one. Nodes no change touched since
   * the last call keep their NodePlacement object.
   */
  placement(): Placement {
    if (!this.nodeScoped) throw new Error('placement is kept for node-scoped sequences only');
    const changed = [...this.dirtyNodes];
    for (const node of changed) {
      const names = this.onNode.get(node);
      if (!names) {
        this.placed.delete(node);
        continue;
      }
      const byGroup: Pod[][] = this.spec.groups.map(() => []);
      for (const name of names) {
        const k = this.groupOf.get(name)!;
        const pod = this.matched[k]!.get(name)!;
        if (this.isMember(k, pod)) byGroup[k]!.push(pod);
      }
      for (const list of byGroup) list.sort(byName);
      this.placed.set(node, { node, byGroup });
    }
    this.dirtyNodes.clear();
    const unplaced: Pod[][] = this.spec.groups.map(() => []);
    for (const name of this.unplacedNames) {
      const k = this.groupOf.get(name)!;
      const pod = this.matched[k]!.get(name)!;
      if (this.isMember(k, pod)) unplaced[k]!.push(pod);
    }
    for (const list of unplaced) if (list.length > 1) list.sort(byName);
    return { nodes: this.placed, unplaced, changed, serial: ++this.serial };
  }

  /** Node scope: the group totals the decision needs, without building the groups. */
  totals(): GroupTotals {
    let members = 0;
    let anyUngated = false;
    const missing = this.spec.groups.map((g) => {
      const t = this.tally[g.index]!;
      const all = !g.selector || this.failedOnly[g.index]!;
      members += all ? t.matched : t.matched - t.failed;
      if ((all ? t.ungated : t.ungatedLive) > 0) anyUngated = true;
      return this.missingNames(g);
    });
    // A copy: the totals outlive this call (the report is derived after the releases went
    // out, while pod events keep coming).
    const conflicts = this.conflicts.size === 0 ? NO_CONFLICTS : new Map(this.conflicts);
    return { members, anyUngated, missing, conflicts };
  }

  /** Whether a matched pod of group k counts as a member (see `build`). */
  private isMember(k: number, pod: Pod): boolean {
    return !this.spec.groups[k]!.selector || this.failedOnly[k]! || !isFailed(pod);
  }

  private conflictOf(name: string, pod: Pod, hits: number[]): string | undefined {
    if (this.rivals.length > 0 && hasGate(pod, this.spec.gate)) {
      const rival = this.rivals.find((o) =>
        o.spec.groups.some((og) => groupSelects(og, name, pod.metadata.labels)),
      );
      if (rival) return `also sequenced by PodSequence ${rival.key} with the same gate ${this.spec.gate}`;
    }
    if (hits.length > 1) {
      return `selected by ${hits.length} groups (${hits.map((i) => `'${this.spec.groups[i]!.name}'`).join(', ')})`;
    }
    return undefined;
  }

  /** The membership now. Groups no change touched since the last call are the same objects. */
  membership(): Membership {
    const groups = this.spec.groups.map((g) => {
      let built = this.built[g.index];
      if (!built) {
        built = this.build(g);
        this.built[g.index] = built;
      }
      return built;
    });
    return { groups, groupOf: this.groupOf, conflicts: this.conflicts };
  }

  /** The group's explicit names with no pod, kept until a change touches the group. */
  private missingNames(g: ResolvedGroup): readonly string[] {
    let m = this.missingOf[g.index];
    if (!m) {
      m = (g.pods ?? []).filter((n) => !this.groupOf.has(n));
      this.missingOf[g.index] = m;
    }
    return m;
  }

  private build(g: ResolvedGroup): GroupMembers {
    const pods = [...this.matched[g.index]!.values()].sort(byName);
    const missing = this.missingNames(g);
    // A selector group whose every match failed has failed: keep those pods as members so
    // it cannot complete; otherwise their replacements stand for them.
    if (!g.selector || this.failedOnly[g.index])
      return { index: g.index, members: pods, missing, ignoredFailed: [] };
    return {
      index: g.index,
      members: pods.filter((p) => !isFailed(p)),
      missing,
      ignoredFailed: pods.filter(isFailed),
    };
  }
}

/** A tracker of the pods of `spec.namespace` among `pods` (pods without a namespace count as in it). */
export function trackerOf(
  spec: ResolvedSpec,
  pods: readonly Pod[],
  others: OtherSequence[] = [],
): MembershipTracker {
  return new MembershipTracker(
    spec,
    others,
    pods.filter((p) => (p.metadata.namespace ?? spec.namespace) === spec.namespace),
  );
}

export function resolveMembership(spec: ResolvedSpec, pods: Pod[], others: OtherSequence[] = []): Membership {
  return new MembershipTracker(spec, others, pods).membership();
}
