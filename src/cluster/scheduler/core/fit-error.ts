/**
 * framework.FitError: why a pod fits no node, rendered exactly as kube-scheduler renders it
 * into the FailedScheduling event and the PodScheduled condition:
 * `0/N nodes are available: <prefilter msg>. <sorted reason histogram>. <postfilter msg>`.
 */

import { compareStrings } from '../../../lib/compare.ts';
import type { FilterStatus } from './filters.ts';

export const NO_NODES_AVAILABLE = 'no nodes available to schedule pods';

/**
 * The verdicts of the nodes a cycle rejected, in the order they were filtered (framework's
 * NodeToStatus). Two arrays rather than a Map: a cycle can reject every node, and a Map's
 * inserts cost about 20 µs per 500 nodes against 3, most of a cycle's own time.
 */
export class NodeStatuses {
  readonly names: string[];
  readonly statuses: FilterStatus[];

  /** Empty, or the given parallel arrays (filled by a caller that knows their length). */
  constructor(names: string[] = [], statuses: FilterStatus[] = []) {
    this.names = names;
    this.statuses = statuses;
  }

  /** Each node at most once per cycle. */
  add(name: string, status: FilterStatus): void {
    this.names.push(name);
    this.statuses.push(status);
  }

  get size(): number {
    return this.names.length;
  }
}

export class FitError {
  readonly name = 'FitError';
  readonly numAllNodes: number;
  /** Status per node that was evaluated and rejected. */
  readonly nodeStatuses: NodeStatuses;
  /** Status of every node not in nodeStatuses (rejected wholesale, e.g. by a PreFilter result). */
  readonly absentStatus: FilterStatus | undefined;
  readonly preFilterMessage: string;
  readonly postFilterMessage: string;

  constructor(init: {
    numAllNodes: number;
    nodeStatuses: NodeStatuses;
    absentStatus?: FilterStatus;
    preFilterMessage?: string;
    postFilterMessage?: string;
  }) {
    this.numAllNodes = init.numAllNodes;
    this.nodeStatuses = init.nodeStatuses;
    this.absentStatus = init.absentStatus;
    this.preFilterMessage = init.preFilterMessage ?? '';
    this.postFilterMessage = init.postFilterMessage ?? '';
  }

  /** `count reason` entries sorted as strings, the way Go's sort.Strings orders them. */
  histogram(): string[] {
    // Nodes rejected for the same reasons mostly share one status object: count those first.
    const byStatus = new Map<FilterStatus, number>();
    // ... and mostly in runs: count a run before looking its status up.
    const list = this.nodeStatuses.statuses;
    for (let i = 0; i < list.length; ) {
      const st = list[i]!;
      let j = i + 1;
      while (j < list.length && list[j] === st) j++;
      byStatus.set(st, (byStatus.get(st) ?? 0) + j - i);
      i = j;
    }
    const counts = new Map<string, number>();
    for (const [st, n] of byStatus) {
      for (const r of st.reasons) counts.set(r, (counts.get(r) ?? 0) + n);
    }
    const absent = this.numAllNodes - this.nodeStatuses.size;
    if (absent > 0 && this.absentStatus) {
      for (const r of this.absentStatus.reasons) counts.set(r, (counts.get(r) ?? 0) + absent);
    }
    const out: string[] = [];
    for (const [r, n] of counts) out.push(`${n} ${r}`);
    return out.sort(compareStrings);
  }

  /**
   * Rendered once: the scheduler reads it for the condition, the event and gang post-filter,
   * and counting the reasons of every node was a visible share of a busy simulated day.
   */
  get message(): string {
    this.rendered ??= this.render();
    return this.rendered;
  }

  private rendered: string | undefined;

  private render(): string {
    if (this.numAllNodes === 0) return NO_NODES_AVAILABLE;
    let msg = `0/${this.numAllNodes} nodes are available:`;
    if (this.preFilterMessage !== '') msg += ` ${this.preFilterMessage}.`;
    else {
      const h = this.histogram();
      if (h.length > 0) msg += ` ${h.join(', ')}.`;
    }
    if (this.postFilterMessage !== '') msg += ` ${this.postFilterMessage}`;
    return msg;
  }

  toString(): string {
    return this.message;
  }
}
