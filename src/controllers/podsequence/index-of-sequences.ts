/**
 * Which sequences a pod event concerns, answered synchronously for the runtime's mapping
 * functions: an in-memory index of every PodSequence (target namespace, names, selectors),
 * kept current from PodSequence watch events. It is derived state: a restarted controller
 * rebuilds it from the cache's replay, and every sequence is reconciled in full when its
 * own event arrives, so pod events seen before the index knows a sequence lose nothing.
 */

import { objectKey } from '../../runtime/index.ts';
import { groupSelects, type ResolvedSpec, resolveSpec } from './spec.ts';
import type { PodSequence } from './types.ts';

interface Entry {
  key: string;
  spec: ResolvedSpec;
}

export class SequenceIndex {
  private readonly defaultGate: string;
  private readonly byKey = new Map<string, Entry>();
  private readonly byNamespace = new Map<string, Map<string, Entry>>();

  constructor(defaultGate: string) {
    this.defaultGate = defaultGate;
  }

  upsert(seq: PodSequence): void {
    const key = objectKey(seq);
    this.remove(key);
    const entry: Entry = { key, spec: resolveSpec(seq, this.defaultGate) };
    this.byKey.set(key, entry);
    let m = this.byNamespace.get(entry.spec.namespace);
    if (!m) {
      m = new Map();
      this.byNamespace.set(entry.spec.namespace, m);
    }
    m.set(key, entry);
  }

  remove(key: string): void {
    const old = this.byKey.get(key);
    if (!old) return;
    this.byKey.delete(key);
    const m = this.byNamespace.get(old.spec.namespace);
    m?.delete(key);
    if (m && m.size === 0) this.byNamespace.delete(old.spec.namespace);
  }

  /** Keys of the sequences that select a pod with this name and these labels in `namespace`. */
  sequencesFor(
    namespace: string | undefined,
    name: string | undefined,
    labels: Record<string, string> | undefined,
  ): string[] {
    const m = this.byNamespace.get(namespace ?? '');
    if (!m) return [];
    const out: string[] = [];
    for (const e of m.values()) if (e.spec.groups.some((g) => groupSelects(g, name, labels))) out.push(e.key);
    return out;
  }

  /** Keys of node-scoped sequences (their taints depend on every node). */
  nodeScoped(): string[] {
    return [...this.byKey.values()].filter((e) => e.spec.scope === 'Node').map((e) => e.key);
  }

  get size(): number {
    return this.byKey.size;
  }
}
