/**
 * Accounted pods by namespace and label, so counting the pods a selector matches (topology
 * spread, pod affinity) looks at the pods carrying one of its `key=value` labels rather than
 * at every pod in the cluster.
 */

import type { PodEntry } from './cluster-state.ts';
import type { Selector } from './label-selectors.ts';

interface NamespacePods {
  all: Set<PodEntry>;
  /** `key=value` → pods with that label. */
  byLabel: Map<string, Set<PodEntry>>;
}

export class PodLabelIndex {
  private readonly byNamespace = new Map<string, NamespacePods>();
  /**
   * Pods added since the last query, not yet indexed. A gang rejected at Permit adds and
   * removes each member it held, about a hundred times for every query (queries come only
   * from pods with spread or affinity rules): those pods never reach the index.
   */
  private readonly pending = new Set<PodEntry>();

  add(e: PodEntry): void {
    this.pending.add(e);
  }

  remove(e: PodEntry): void {
    if (this.pending.delete(e)) return;
    const ns = this.byNamespace.get(e.namespace);
    if (!ns?.all.delete(e)) return;
    for (const k in e.labels) {
      const lk = `${k}=${e.labels[k]}`;
      const set = ns.byLabel.get(lk);
      if (set?.delete(e) && set.size === 0) ns.byLabel.delete(lk);
    }
    if (ns.all.size === 0) this.byNamespace.delete(e.namespace);
  }

  /** Calls `fn` for every pod in `namespaces` whose labels the selector matches. */
  forEachMatch(
    namespaces: string | ReadonlySet<string> | 'all',
    selector: Selector,
    fn: (e: PodEntry) => void,
  ): void {
    if (this.pending.size > 0) {
      for (const e of this.pending) this.index(e);
      this.pending.clear();
    }
    if (namespaces === 'all') {
      for (const ns of this.byNamespace.values()) matchIn(ns, selector, fn);
    } else if (typeof namespaces === 'string') {
      const ns = this.byNamespace.get(namespaces);
      if (ns) matchIn(ns, selector, fn);
    } else {
      for (const name of namespaces) {
        const ns = this.byNamespace.get(name);
        if (ns) matchIn(ns, selector, fn);
      }
    }
  }

  private index(e: PodEntry): void {
    let ns = this.byNamespace.get(e.namespace);
    if (!ns) {
      ns = { all: new Set(), byLabel: new Map() };
      this.byNamespace.set(e.namespace, ns);
    }
    ns.all.add(e);
    for (const k in e.labels) {
      const lk = `${k}=${e.labels[k]}`;
      let set = ns.byLabel.get(lk);
      if (!set) {
        set = new Set();
        ns.byLabel.set(lk, set);
      }
      set.add(e);
    }
  }
}

function matchIn(ns: NamespacePods, selector: Selector, fn: (e: PodEntry) => void): void {
  // Every match carries each of the selector's equality labels: the smallest such set suffices.
  let candidates: Set<PodEntry> = ns.all;
  for (const [k, v] of selector.equalities()) {
    const set = ns.byLabel.get(`${k}=${v}`);
    if (!set) return;
    if (set.size < candidates.size) candidates = set;
  }
  for (const e of candidates) if (selector.matches(e.labels)) fn(e);
}
