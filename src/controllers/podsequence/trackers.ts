/**
 * The membership of every sequence, kept current from pod events (shell side of
 * membership.ts): one MembershipTracker per sequence, fed by a handler on the shared pod
 * informer, so that a reconcile reads a membership in which only the groups touched since
 * the previous reconcile are rebuilt.
 *
 * The handler runs synchronously with the informer's store update, so a tracker built from
 * the cache and then fed its events is as current as the cache itself: a decision made on
 * it is the decision a full pass over the cache would make (the property tests check the
 * tracker against a fresh build). A tracker is rebuilt from the cache whenever what it was
 * built for changes: the sequence (uid, generation) or the rival sequences in its namespace.
 */

import { POD } from '../../apis/scheduling.example.com/v1alpha1.ts';
import type { Cache, HandlerRegistration, Informer } from '../../runtime/index.ts';
import { DecisionMemo } from './core.ts';
import { MembershipTracker, type OtherSequence } from './membership.ts';
import type { Pod } from './objects.ts';
import type { ResolvedSpec } from './spec.ts';

interface Entry {
  /** What the tracker was built for; another value means it must be rebuilt. */
  version: string;
  namespace: string;
  tracker: MembershipTracker;
  /** The decision's per-node results between passes (node scope). */
  memo: DecisionMemo;
}

/** A sequence's derived state, as a reconcile uses it. */
export interface Tracked {
  tracker: MembershipTracker;
  memo: DecisionMemo;
}

export class Trackers {
  private readonly bySequence = new Map<string, Entry>();
  private readonly byNamespace = new Map<string, Set<Entry>>();
  /** The cache the pod handler is registered on (a restarted manager brings a new one). */
  private cache: Cache | undefined;
  private registration: HandlerRegistration | undefined;
  private informer: Promise<Informer<Pod>> | undefined;

  /**
   * The tracker of sequence `key`, built from the cached pods of `spec.namespace` when
   * there is none yet for this version.
   */
  async get(
    cache: Cache,
    key: string,
    version: string,
    spec: ResolvedSpec,
    others: OtherSequence[],
    signal: AbortSignal,
  ): Promise<Tracked> {
    const informer = await this.attach(cache);
    if (!(await informer.waitForSync(signal)))
      throw new Error('the pod cache did not sync (stopped or aborted)');
    // From here on synchronous: the store read below and the handler's later events cannot
    // interleave, so the tracker misses nothing between its build and its first event.
    const have = this.bySequence.get(key);
    if (have && have.version === version) return have;
    this.forget(key);
    const pods: Pod[] = [];
    for (const pod of informer.store.values()) if (pod.metadata.namespace === spec.namespace) pods.push(pod);
    const entry: Entry = {
      version,
      namespace: spec.namespace,
      tracker: new MembershipTracker(spec, others, pods),
      memo: new DecisionMemo(),
    };
    this.bySequence.set(key, entry);
    let set = this.byNamespace.get(entry.namespace);
    if (!set) {
      set = new Set();
      this.byNamespace.set(entry.namespace, set);
    }
    set.add(entry);
    return entry;
  }

  /** Drops the tracker of a deleted sequence. */
  forget(key: string): void {
    const entry = this.bySequence.get(key);
    if (!entry) return;
    this.bySequence.delete(key);
    const set = this.byNamespace.get(entry.namespace);
    set?.delete(entry);
    if (set && set.size === 0) this.byNamespace.delete(entry.namespace);
  }

  /** Registers the pod handler on `cache` (once per cache; concurrent callers share it). */
  private attach(cache: Cache): Promise<Informer<Pod>> {
    if (this.cache === cache && this.informer) return this.informer;
    this.registration?.remove();
    this.registration = undefined;
    this.bySequence.clear();
    this.byNamespace.clear();
    this.cache = cache;
    this.informer = cache.informerFor<Pod>(POD).then((informer) => {
      this.registration = informer.addHandler({
        add: (pod) => this.each(pod, (t) => t.upsert(pod)),
        update: (_old, pod) => this.each(pod, (t) => t.upsert(pod)),
        delete: (pod) => this.each(pod, (t) => t.remove(pod.metadata.name)),
      });
      return informer;
    });
    // A failed start is retried by the next reconcile rather than remembered.
    this.informer.catch(() => {
      this.cache = undefined;
      this.informer = undefined;
    });
    return this.informer;
  }

  private each(pod: Pod, fn: (t: MembershipTracker) => void): void {
    const set = this.byNamespace.get(pod.metadata.namespace ?? '');
    if (!set) return;
    for (const entry of set) {
      try {
        fn(entry.tracker);
      } catch {
        // A tracker that missed an event would decide on a wrong membership: rebuild it
        // from the cache on its next reconcile instead.
        entry.version = 'broken';
      }
    }
  }
}
