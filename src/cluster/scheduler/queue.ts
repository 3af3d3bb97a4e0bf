/**
 * kube-scheduler's scheduling queue: an active queue ordered by priority then arrival
 * (the PrioritySort plugin), a backoff queue for pods waiting out their exponential
 * backoff, and the unschedulable pods parked until a cluster event that may help them
 * (the rejecting plugins' queueing hints) or the periodic leftover flush.
 *
 * Heaps use lazy deletion: an entry is live only while its pod still sits in that queue
 * under the same sequence number, so updates and deletions are O(1) here and stale
 * entries are dropped when they surface.
 */
import { Heap } from 'heap-js';
import { backoffDelay } from '../../lib/backoff.ts';
import { realClock } from '../../lib/clock.ts';
import type { KubeObject } from '../apiserver/types.ts';
import type { PodRequests, PreparedPod } from './core/index.ts';
import { compareSortKeys, type SortKey } from './gang/core.ts';

/** Matches any cluster event (a pod that found no nodes at all). */
export const ANY_PLUGIN = '*';

export type QueueName = 'active' | 'backoff' | 'unschedulable' | 'inflight';

export interface QueuedPod {
  readonly uid: string;
  /** `namespace/name`. */
  readonly key: string;
  pod: KubeObject;
  priority: number;
  /**
   * JSON of what scheduling reads (spec, labels, owners): an update that changes it may make
   * the pod schedulable.
   */
  inputsJson: string;
  /** Cached per inputsJson; cleared when it changes. */
  prepared: PreparedPod | undefined;
  requests: PodRequests | undefined;
  where: QueueName;
  /** Sequence of the heap entry that is live for this pod (lazy deletion). */
  seq: number;
  attempts: number;
  /** When the pod first joined the queue (Coscheduling's order for pods of no gang). */
  readonly firstAttempt: number;
  /** When the pod last entered the unschedulable or backoff queue (backoff counts from it). */
  timestamp: number;
  unschedulableSince: number;
  /** Plugins that rejected the pod in its last attempt; ANY_PLUGIN for every event. */
  rejectors: ReadonlySet<string>;
}

interface Entry {
  qp: QueuedPod;
  seq: number;
  /** Priority or backoff expiry, frozen at push time. */
  rank: number;
  /** The active queue's order within a priority, when a queue sort plugin sets one. */
  order: SortKey | undefined;
}

export interface QueueOptions {
  initialBackoffMs: number;
  maxBackoffMs: number;
  now?: () => number;
  /** Order within one priority (Coscheduling's queue sort); default arrival. */
  order?: (qp: QueuedPod) => SortKey;
}

export class SchedulingQueue {
  private readonly pods = new Map<string, QueuedPod>();
  private readonly active = new Heap<Entry>(
    (a, b) =>
      b.rank - a.rank || (a.order && b.order ? compareSortKeys(a.order, b.order) : 0) || a.seq - b.seq,
  );
  private readonly backoff = new Heap<Entry>((a, b) => a.rank - b.rank || a.seq - b.seq);
  private readonly unschedulable = new Map<string, QueuedPod>();
  private nextSeq = 0;
  private activeCount = 0;
  private backoffCount = 0;
  private readonly opts: QueueOptions;
  private readonly now: () => number;

  constructor(opts: QueueOptions) {
    this.opts = opts;
    this.now = opts.now ?? (() => realClock.now());
  }

  get(uid: string): QueuedPod | undefined {
    return this.pods.get(uid);
  }

  get size(): number {
    return this.pods.size;
  }

  counts(): { active: number; backoff: number; unschedulable: number } {
    return { active: this.activeCount, backoff: this.backoffCount, unschedulable: this.unschedulable.size };
  }

  /** A new pending pod joins the active queue. */
  add(pod: KubeObject, uid: string, inputsJson: string): QueuedPod {
    const m = pod.metadata;
    const qp: QueuedPod = {
      uid,
      key: `${m.namespace ?? ''}/${m.name ?? ''}`,
      pod,
      priority: podPriority(pod),
      inputsJson,
      prepared: undefined,
      requests: undefined,
      where: 'inflight',
      seq: -1,
      attempts: 0,
      firstAttempt: this.now(),
      timestamp: this.now(),
      unschedulableSince: 0,
      rejectors: new Set(),
    };
    this.pods.set(uid, qp);
    this.pushActive(qp);
    return qp;
  }

  /**
   * A newer copy of a queued pod. A changed spec or labels (gates lifted, selectors or
   * tolerations edited, priority, the labels its spread and affinity terms match) gives a
   * parked pod another try, as kube-scheduler's update handler does.
   */
  update(qp: QueuedPod, pod: KubeObject, inputsJson: string): void {
    qp.pod = pod;
    if (inputsJson === qp.inputsJson) return;
    qp.inputsJson = inputsJson;
    qp.prepared = undefined;
    qp.requests = undefined;
    const priority = podPriority(pod);
    const reorder = priority !== qp.priority;
    qp.priority = priority;
    if (qp.where === 'unschedulable') this.requeue(qp);
    else if (qp.where === 'active' && reorder) {
      this.leave(qp);
      this.pushActive(qp);
    }
  }

  delete(uid: string): QueuedPod | undefined {
    const qp = this.pods.get(uid);
    if (!qp) return undefined;
    this.leave(qp);
    this.pods.delete(uid);
    return qp;
  }

  /** The next pod to schedule; it stays tracked (in flight) until done, parked or requeued. */
  pop(): QueuedPod | undefined {
    for (;;) {
      const e = this.active.pop();
      if (!e) return undefined;
      if (e.qp.where !== 'active' || e.qp.seq !== e.seq) continue;
      this.activeCount--;
      e.qp.where = 'inflight';
      e.qp.attempts++;
      return e.qp;
    }
  }

  /** The pod was assumed on a node: the queue forgets it. */
  done(qp: QueuedPod): void {
    if (this.pods.get(qp.uid) === qp) {
      this.leave(qp);
      this.pods.delete(qp.uid);
    }
  }

  /** Parks a pod no node fits, remembering which plugins rejected it. */
  parkUnschedulable(qp: QueuedPod, rejectors: ReadonlySet<string>): void {
    if (this.pods.get(qp.uid) !== qp) return;
    this.leave(qp);
    const now = this.now();
    qp.rejectors = rejectors;
    qp.timestamp = now;
    qp.unschedulableSince = now;
    qp.where = 'unschedulable';
    this.unschedulable.set(qp.uid, qp);
  }

  /** Moves a backing-off or parked pod to the active queue now (a plugin's pods-to-activate). */
  activate(uid: string): boolean {
    const qp = this.pods.get(uid);
    if (!qp || (qp.where !== 'backoff' && qp.where !== 'unschedulable')) return false;
    this.leave(qp);
    this.pushActive(qp);
    return true;
  }

  /** Moves a parked pod to the backoff queue (active if its backoff is over), as a cluster event does. */
  retry(uid: string): boolean {
    const qp = this.pods.get(uid);
    if (qp?.where !== 'unschedulable') return false;
    this.requeue(qp);
    return true;
  }

  /** After an error (a failed binding): retry once the backoff has passed. */
  backoffAfterError(qp: QueuedPod): void {
    if (this.pods.get(qp.uid) !== qp) return;
    this.leave(qp);
    qp.timestamp = this.now();
    this.pushBackoff(qp);
  }

  /**
   * A cluster event: parked pods rejected by one of `plugins` go to the backoff queue
   * (or straight to active when their backoff is over). Returns how many moved.
   */
  moveForEvent(plugins: ReadonlySet<string> | 'all'): number {
    let moved = 0;
    for (const qp of this.unschedulable.values()) {
      if (plugins !== 'all' && !qp.rejectors.has(ANY_PLUGIN) && !intersects(qp.rejectors, plugins)) continue;
      this.requeue(qp);
      moved++;
    }
    return moved;
  }

  /** kube-scheduler's flushUnschedulablePodsLeftover: pods parked longer than `maxMs` retry. */
  flushLeftover(maxMs: number): number {
    const now = this.now();
    let moved = 0;
    for (const qp of this.unschedulable.values()) {
      if (now - qp.unschedulableSince <= maxMs) continue;
      this.requeue(qp);
      moved++;
    }
    return moved;
  }

  /** Moves pods whose backoff has expired to the active queue; returns the next expiry, if any. */
  flushBackoff(): number | undefined {
    const now = this.now();
    for (;;) {
      const e = this.backoff.peek();
      if (!e) return undefined;
      if (e.qp.where !== 'backoff' || e.qp.seq !== e.seq) {
        this.backoff.pop();
        continue;
      }
      if (e.rank > now) return e.rank;
      this.backoff.pop();
      this.backoffCount--;
      this.pushActive(e.qp);
    }
  }

  /** calculateBackoffDuration: initial × 2^(attempts−1), capped. */
  backoffDuration(qp: QueuedPod): number {
    return backoffDelay(qp.attempts - 1, this.opts.initialBackoffMs, this.opts.maxBackoffMs);
  }

  private requeue(qp: QueuedPod): void {
    this.leave(qp);
    const expiry = qp.timestamp + this.backoffDuration(qp);
    if (expiry > this.now()) this.pushBackoff(qp);
    else this.pushActive(qp);
  }

  private pushActive(qp: QueuedPod): void {
    const seq = this.nextSeq++;
    qp.where = 'active';
    qp.seq = seq;
    this.active.push({ qp, seq, rank: qp.priority, order: this.opts.order?.(qp) });
    this.activeCount++;
  }

  private pushBackoff(qp: QueuedPod): void {
    const seq = this.nextSeq++;
    qp.where = 'backoff';
    qp.seq = seq;
    this.backoff.push({ qp, seq, rank: qp.timestamp + this.backoffDuration(qp), order: undefined });
    this.backoffCount++;
  }

  /** Takes the pod out of whichever queue holds it; heap entries die lazily. */
  private leave(qp: QueuedPod): void {
    if (qp.where === 'active') this.activeCount--;
    else if (qp.where === 'backoff') this.backoffCount--;
    else if (qp.where === 'unschedulable') this.unschedulable.delete(qp.uid);
    qp.where = 'inflight';
    qp.seq = -1;
  }
}

function intersects(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  for (const x of a) if (b.has(x)) return true;
  return false;
}

export function podPriority(pod: KubeObject): number {
  const p = (pod.spec as { priority?: number } | undefined)?.priority;
  return typeof p === 'number' ? p : 0;
}
