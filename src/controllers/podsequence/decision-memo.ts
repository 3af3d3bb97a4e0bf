/**
 * What node-scoped passes keep between them, apart from the decision itself: the decision
 * is the same with or without it.
 */

import type { NodeSequenceStatus } from '../../apis/scheduling.example.com/v1alpha1.ts';
import type { MembershipTracker, NodePlacement, Placement } from './membership.ts';
import type { Node, Pod } from './objects.ts';
import type { NodeView, Release } from './plan.ts';
import { isDone } from './pods.ts';
import type { Timeline } from './timeline.ts';

/** Released pods not on a node yet, as they bear on each node's turn. */
export interface Inbound {
  /** Per group, released pods that may land on any node. */
  anywhere: number[];
  /** Per group, per node: released pods that may still land there. */
  headingTo: Map<string, string[]>[];
}

/** What a pass derives for one node, with the inputs it was derived from. */
export interface NodePass {
  placement: NodePlacement;
  index: number;
  /** The released pods that may still land on the node, as far as the node's outputs read them. */
  inboundKey: string;
  /** The node's pods another group or sequence also claims. */
  conflicted: string;
  /** The written status's entry for the node, which the node's entry is derived from. */
  prev: NodeSequenceStatus | undefined;
  view: NodeView;
  releases: Release[];
  failed: { pod: Pod; group: number; node: string }[];
  escapes: { pod: Pod; group: number }[];
  status: NodeSequenceStatus;
  /** The node's timeline (waitDuration, timeout), when the spec has any. */
  clock?: Timeline;
}

/**
 * What node-scoped passes of one sequence keep between them (one memo per sequence and
 * tracker): each node's part of the last pass, and what it was derived from, so that a
 * pass after one pod event re-derives one node, not a thousand. The decision is the same
 * with or without it (incremental.test.ts checks this over random histories).
 */
export class DecisionMemo {
  /** Every node the sequence knows, sorted; `passes` holds each one's part, in that order. */
  names: string[] = [];
  passes: (NodePass | undefined)[] = [];
  /** Nodes whose part releases pods: their releases are sent again until their pods change. */
  readonly releasing = new Set<string>();
  private pos = new Map<string, number>();
  private cluster = new Set<string>();
  private scope = '';
  private tracker: MembershipTracker | undefined;
  private groups = 0;
  private serial = -1;
  /** The last pass looked at every node it had to. */
  private settled = false;
  private anywhere: number[] = [];
  private anyMin = -1;
  private heading: Map<string, string>[] = [];
  private prevList: readonly NodeSequenceStatus[] | undefined | null = null;
  private prevByNode = new Map<string, NodeSequenceStatus>();
  private readonly empties = new Map<string, NodePlacement>();
  private readonly local = new WeakMap<NodePlacement, number>();

  /** Forgets everything when the tracker, gate, sequence or length differs from the last pass's. */
  reset(gate: string, key: string, groups: number, tracker: MembershipTracker): void {
    const scope = `${key} ${gate} ${groups}`;
    if (scope === this.scope && tracker === this.tracker) return;
    this.scope = scope;
    this.tracker = tracker;
    this.groups = groups;
    this.names = [];
    this.passes = [];
    this.releasing.clear();
    this.pos = new Map();
    this.cluster = new Set();
    this.serial = -1;
    this.anyMin = -1;
    this.heading = [];
    this.prevList = null;
    this.empties.clear();
  }

  position(name: string): number | undefined {
    return this.pos.get(name);
  }

  /**
   * Brings the node list up to date: the nodes with members (and, in full mode, every
   * node of the cluster). True when the list changed or this pass cannot tell (a
   * placement was taken without this memo): every node must then be looked at.
   */
  syncNodes(placement: Placement, cluster: readonly Node[] | undefined): boolean {
    // A pass that threw half-way left some changed nodes unlooked-at: look at all of them.
    let changed = placement.serial !== this.serial + 1 || !this.settled;
    this.serial = placement.serial;
    this.settled = false;
    let names = this.cluster;
    if (cluster) {
      names = new Set();
      for (const node of cluster) if (node.metadata.name) names.add(node.metadata.name);
      if (names.size !== this.cluster.size || [...names].some((x) => !this.cluster.has(x))) changed = true;
    }
    if (!changed) {
      for (const name of placement.changed) {
        if ((placement.nodes.has(name) || names.has(name)) !== this.pos.has(name)) changed = true;
      }
    }
    if (!changed) return false;
    this.cluster = names;
    const before = new Map(this.names.map((name, i) => [name, this.passes[i]]));
    this.names = [...new Set([...placement.nodes.keys(), ...names])].sort();
    this.pos = new Map(this.names.map((name, i) => [name, i]));
    this.passes = this.names.map((name) => before.get(name));
    for (const name of this.releasing) if (!this.pos.has(name)) this.releasing.delete(name);
    return true;
  }

  /**
   * Records the inbound pods of this pass; resolves the nodes whose inbound pods differ
   * from the last pass's, or undefined when pods that may land anywhere changed (every
   * node's turn may have moved).
   */
  inboundChanges(inbound: Inbound, anyMin: number): Set<string> | undefined {
    const heading = inbound.headingTo.map(
      (m) => new Map([...m].map(([node, pods]) => [node, pods.join(',')])),
    );
    const sameAnywhere =
      anyMin === this.anyMin &&
      this.anywhere.length === inbound.anywhere.length &&
      this.anywhere.every((c, k) => c === inbound.anywhere[k]);
    const before = this.heading;
    this.heading = heading;
    this.anywhere = [...inbound.anywhere];
    this.anyMin = anyMin;
    if (!sameAnywhere || before.length !== heading.length) return undefined;
    const changed = new Set<string>();
    heading.forEach((now, k) => {
      const was = before[k]!;
      for (const [node, pods] of now) if (was.get(node) !== pods) changed.add(node);
      for (const node of was.keys()) if (!now.has(node)) changed.add(node);
    });
    return changed;
  }

  /** Takes the written status's node entries; true when they are another list than last pass's. */
  syncPrev(list: readonly NodeSequenceStatus[] | undefined): boolean {
    if (list === this.prevList) return false;
    this.prevList = list;
    this.prevByNode = new Map((list ?? []).map((s) => [s.nodeName, s]));
    return true;
  }

  /** The written status's entry for a node. */
  prevOf(node: string): NodeSequenceStatus | undefined {
    return this.prevByNode.get(node);
  }

  /** The pass has looked at every node it had to (see `syncNodes`). */
  settle(): void {
    this.settled = true;
  }

  /** The nodes in `releasing`, in node order. */
  releasingInOrder(): string[] {
    return [...this.releasing].sort((a, b) => this.pos.get(a)! - this.pos.get(b)!);
  }

  /** The node's own blocker: its first group with no member on it or a member not done. */
  localIndex(p: NodePlacement): number {
    let k = this.local.get(p);
    if (k === undefined) {
      k = 0;
      while (k < p.byGroup.length && p.byGroup[k]!.length > 0 && p.byGroup[k]!.every(isDone)) k++;
      this.local.set(p, k);
    }
    return k;
  }

  /** The same placement object for a node without members, pass after pass. */
  empty(node: string): NodePlacement {
    let e = this.empties.get(node);
    if (!e) {
      e = { node, byGroup: Array.from({ length: this.groups }, () => []) };
      this.empties.set(node, e);
    }
    return e;
  }
}
