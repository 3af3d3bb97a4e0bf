/**
 * Which sequences a pod event concerns, answered synchronously for the runtime's mapping
 * functions: an in-memory index of every PodSequence (target namespace, names, selectors),
 * kept current from PodSequence watch events. It is derived state: a restarted controller
 * rebuilds it from the cache's replay, and every sequence is reconciled in full when its
 * own event arrives, so pod events seen before the index knows a sequence lose nothing.
 */

import type { PodSequence } from '../../apis/scheduling.example.com/v1alpha1.ts';
import { objectKey } from '../../runtime/index.ts';
import type { OtherSequence } from './membership.ts';
import { groupSelects, type ResolvedSpec, resolveSpec } from './spec.ts';

interface Entry {
  key: string;
  uid: string | undefined;
  generation: number | undefined;
  deleting: boolean;
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
    const old = this.byKey.get(key);
    // Status writes change neither: keep the compiled spec rather than resolving it again.
    const spec =
      old && old.uid === seq.metadata.uid && old.generation === seq.metadata.generation
        ? old.spec
        : resolveSpec(seq, this.defaultGate);
    this.remove(key);
    const entry: Entry = {
      key,
      uid: seq.metadata.uid,
      generation: seq.metadata.generation,
      deleting: !!seq.metadata.deletionTimestamp,
      spec,
    };
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

  /**
   * The resolved spec of `seq` as indexed, when the index holds this very generation
   * (the reconcile then need not compile its selectors again).
   */
  specOf(seq: PodSequence): ResolvedSpec | undefined {
    const e = this.byKey.get(objectKey(seq));
    return e && e.uid === seq.metadata.uid && e.generation === seq.metadata.generation ? e.spec : undefined;
  }

  /** The other sequences, not being deleted, whose pods live in `namespace`. */
  others(key: string, namespace: string): OtherSequence[] {
    const out: OtherSequence[] = [];
    for (const e of this.byNamespace.get(namespace)?.values() ?? []) {
      if (e.key !== key && !e.deleting) out.push({ key: e.key, generation: e.generation, spec: e.spec });
    }
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
