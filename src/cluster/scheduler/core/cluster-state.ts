/**
 * The scheduler's cache: per-node allocation summaries kept up to date incrementally as pods
 * are added (bound or assumed) and removed, the way kube-scheduler's NodeInfo works, plus the
 * indexes inter-pod rules read (pods by label, affinity terms of placed pods) and what they
 * need from outside the nodes (namespace labels, workload selectors). Filtering and scoring
 * read plain numbers and indexes from here: pods matching a selector are read from the label
 * index, not found by walking every pod.
 */

import type { Node, Pod, Taint } from '../../../kube/builtin.ts';
import { ExistingPodTerms } from './existing-pod-terms.ts';
import { NodeVerdicts } from './node-verdicts.ts';
import { compilePodAffinityTerms, type PodAffinityTerms } from './pod-affinity-terms.ts';
import { PodLabelIndex } from './pod-label-index.ts';
import { computePodRequests, type PodRequests, resourcesFromList } from './requests.ts';
import { WorkloadSelectors } from './workload-selectors.ts';

export interface PodEntry {
  uid: string;
  nodeName: string;
  /** `namespace/name`, for victims and messages. */
  key: string;
  namespace: string;
  labels: Readonly<Record<string, string>>;
  /** Deletion under way: topology spread no longer counts the pod. */
  terminating: boolean;
  /** Its pod (anti-)affinity terms, if it has any. */
  affinity: PodAffinityTerms | undefined;
  requests: PodRequests;
  priority: number;
  /** status.startTime (or creationTimestamp) in epoch ms; orders preemption victims. */
  startTime: number;
}

export class NodeInfo {
  readonly name: string;
  /** Undefined while only pods reference this node (the node was deleted or not seen yet). */
  node: Node | undefined;
  labels: Record<string, string> = {};
  unschedulable = false;
  taints: Taint[] = [];
  /** NoSchedule/NoExecute taints only: the ones filtering looks at. */
  scheduleTaints: Taint[] = [];
  preferNoScheduleTaints: Taint[] = [];

  allocMilliCPU = 0;
  allocMemory = 0;
  allocEphemeralStorage = 0;
  allowedPodNumber = 0;
  allocScalar: Map<string, number> | null = null;

  reqMilliCPU = 0;
  reqMemory = 0;
  reqEphemeralStorage = 0;
  reqScalar: Map<string, number> | null = null;
  nonZeroMilliCPU = 0;
  nonZeroMemory = 0;

  readonly pods = new Map<string, PodEntry>();
  /** Bumped on every change, for callers that cache per-node results. */
  generation = 0;
  /** Position in ClusterState.nodes (and its verdicts), -1 while not listed. */
  index = -1;

  constructor(name: string) {
    this.name = name;
  }

  get podCount(): number {
    return this.pods.size;
  }

  private listed = { generation: -1, pods: [] as PodEntry[], lowest: 0 };

  /**
   * The lowest priority among the node's pods (Infinity with none), kept per generation:
   * preemption asks it of every node on every failed attempt, and a node with no pod below
   * the preemptor has no victims.
   */
  lowestPodPriority(): number {
    return this.list().lowest;
  }

  /** The node's pods in the order they were added, kept per generation (preemption's candidates). */
  podList(): readonly PodEntry[] {
    return this.list().pods;
  }

  private list(): { pods: PodEntry[]; lowest: number } {
    if (this.listed.generation !== this.generation) {
      const pods = [...this.pods.values()];
      let lowest = Number.POSITIVE_INFINITY;
      for (const e of pods) if (e.priority < lowest) lowest = e.priority;
      this.listed = { generation: this.generation, pods, lowest };
    }
    return this.listed;
  }

  setNode(node: Node): void {
    this.node = node;
    this.labels = node.metadata.labels ?? {};
    this.unschedulable = node.spec?.unschedulable === true;
    this.taints = node.spec?.taints ?? [];
    this.scheduleTaints = this.taints.filter((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute');
    this.preferNoScheduleTaints = this.taints.filter((t) => t.effect === 'PreferNoSchedule');
    const { res, pods } = resourcesFromList(node.status?.allocatable);
    this.allocMilliCPU = res.milliCPU;
    this.allocMemory = res.memory;
    this.allocEphemeralStorage = res.ephemeralStorage;
    this.allowedPodNumber = pods;
    this.allocScalar = res.scalar;
    this.generation++;
  }

  /** Adds (sign 1) or subtracts (sign -1) a pod's requests. */
  apply(r: PodRequests, sign: 1 | -1): void {
    const q = r.requests;
    this.reqMilliCPU += sign * q.milliCPU;
    this.reqMemory += sign * q.memory;
    this.reqEphemeralStorage += sign * q.ephemeralStorage;
    this.nonZeroMilliCPU += sign * r.nonZeroMilliCPU;
    this.nonZeroMemory += sign * r.nonZeroMemory;
    if (q.scalar) {
      this.reqScalar ??= new Map();
      for (const [k, v] of q.scalar) this.reqScalar.set(k, (this.reqScalar.get(k) ?? 0) + sign * v);
    }
    this.generation++;
  }

  scalarAllocatable(name: string): number {
    return this.allocScalar?.get(name) ?? 0;
  }

  scalarRequested(name: string): number {
    return this.reqScalar?.get(name) ?? 0;
  }
}

function podKey(pod: Pod): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}

/** status.startTime, or creationTimestamp until the kubelet writes it, in epoch ms (0 if neither). */
export function podStartTime(pod: Pod): number {
  const t = pod.status?.startTime ?? pod.metadata?.creationTimestamp;
  const ms = t ? Date.parse(t) : Number.NaN;
  return Number.isFinite(ms) ? ms : 0;
}

export function podEntry(pod: Pod, nodeName: string, requests?: PodRequests): PodEntry {
  const uid = pod.metadata?.uid ?? podKey(pod);
  return {
    uid,
    nodeName,
    key: podKey(pod),
    namespace: pod.metadata?.namespace ?? '',
    labels: pod.metadata?.labels ?? {},
    terminating: pod.metadata?.deletionTimestamp != null,
    affinity: compilePodAffinityTerms(pod),
    requests: requests ?? computePodRequests(pod),
    priority: pod.spec?.priority ?? 0,
    startTime: podStartTime(pod),
  };
}

/** Pod shapes remembered before shapeId starts over. */
const MAX_SHAPES = 4096;

export class ClusterState {
  /** Nodes with a Node object, in the order they were first added: the scheduler's node list. */
  readonly nodes: NodeInfo[] = [];
  private readonly byName = new Map<string, NodeInfo>();
  private readonly podIndex = new Map<string, PodEntry>();
  /** How many accounted pods have each priority: preemption asks for the lowest. */
  private readonly priorities = new Map<number, number>();
  /** Where the next scheduling cycle starts scanning, as kube-scheduler rotates it. */
  nextStartNodeIndex = 0;
  readonly podsByLabel = new PodLabelIndex();
  /** The node-local filters' verdicts per pod shape and node (by index in `nodes`). */
  readonly verdicts = new NodeVerdicts();
  readonly existingTerms = new ExistingPodTerms();
  /** Namespace name → labels, for namespaceSelector in pod affinity terms. */
  readonly namespaceLabels = new Map<string, Readonly<Record<string, string>>>();
  readonly workloads = new WorkloadSelectors();
  /** Ids of the pod shapes seen lately (shapeId), by their inputs' JSON. */
  private readonly shapes = new Map<string, number>();
  private nextShape = 0;
  /**
   * Bumped on every change scheduling reads (nodes, pods, and through `changed()` namespace
   * labels and workload selectors): equal versions mean the same state.
   */
  version = 0;

  /** Records a change made to `namespaceLabels` or `workloads` directly. */
  changed(): void {
    this.version++;
  }

  /**
   * One id per distinct input of the filters that read only the node and the pod (see
   * runFilters): pods of one gang or workload share it, so a node unchanged since one of them
   * was tried gives the next the same verdict.
   */
  shapeId(key: string): number {
    let id = this.shapes.get(key);
    if (id === undefined) {
      // A long-lived cluster sees ever new shapes: start over now and then. Ids are never
      // reused, so a node's verdict for a forgotten shape matches no later one.
      if (this.shapes.size >= MAX_SHAPES) this.shapes.clear();
      id = this.nextShape++;
      this.shapes.set(key, id);
    }
    return id;
  }

  getNode(name: string): NodeInfo | undefined {
    const ni = this.byName.get(name);
    return ni?.node ? ni : undefined;
  }

  /** The lowest priority of any accounted pod (Infinity without pods): a bound for every node's. */
  lowestPodPriority(): number {
    let min = Number.POSITIVE_INFINITY;
    for (const p of this.priorities.keys()) if (p < min) min = p;
    return min;
  }

  getPod(uid: string): PodEntry | undefined {
    return this.podIndex.get(uid);
  }

  get podCount(): number {
    return this.podIndex.size;
  }

  upsertNode(node: Node): NodeInfo {
    this.version++;
    const name = node.metadata.name ?? '';
    let ni = this.byName.get(name);
    if (!ni) {
      ni = new NodeInfo(name);
      this.byName.set(name, ni);
    }
    if (!ni.node) {
      ni.index = this.nodes.length;
      this.nodes.push(ni);
      this.verdicts.ensure(this.nodes.length);
    }
    ni.setNode(node);
    this.verdicts.forget(ni.index);
    return ni;
  }

  removeNode(name: string): void {
    this.version++;
    const ni = this.byName.get(name);
    if (!ni?.node) return;
    ni.node = undefined;
    const i = ni.index;
    if (i >= 0) {
      this.verdicts.removeAt(i, this.nodes.length);
      this.nodes.splice(i, 1);
      for (let k = i; k < this.nodes.length; k++) this.nodes[k]!.index = k;
      ni.index = -1;
    }
    // Pods still bound to a vanished node keep a ghost entry until they are removed too.
    if (ni.pods.size === 0) this.byName.delete(name);
    if (this.nextStartNodeIndex >= this.nodes.length) this.nextStartNodeIndex = 0;
  }

  /**
   * Accounts a pod on `nodeName` (its spec.nodeName by default): bound pods and pods the
   * caller has just chosen a node for (kube-scheduler's "assume"). Re-adding a known uid
   * replaces the old entry, so updates are remove+add.
   */
  addPod(pod: Pod, nodeName = pod.spec?.nodeName ?? '', requests?: PodRequests): PodEntry {
    return this.addEntry(podEntry(pod, nodeName, requests));
  }

  addEntry(entry: PodEntry): PodEntry {
    if (!entry.nodeName) throw new Error(`pod ${entry.key} has no node to account it on`);
    this.version++;
    if (this.podIndex.has(entry.uid)) this.removePod(entry.uid);
    let ni = this.byName.get(entry.nodeName);
    if (!ni) {
      ni = new NodeInfo(entry.nodeName);
      this.byName.set(entry.nodeName, ni);
    }
    ni.pods.set(entry.uid, entry);
    ni.apply(entry.requests, 1);
    this.verdicts.forget(ni.index);
    this.podIndex.set(entry.uid, entry);
    this.priorities.set(entry.priority, (this.priorities.get(entry.priority) ?? 0) + 1);
    this.podsByLabel.add(entry);
    this.existingTerms.add(entry);
    return entry;
  }

  /** Forgets a pod (deleted, or finished: Succeeded/Failed pods hold no resources). */
  removePod(uid: string): boolean {
    const entry = this.podIndex.get(uid);
    if (!entry) return false;
    this.version++;
    this.podIndex.delete(uid);
    const n = (this.priorities.get(entry.priority) ?? 0) - 1;
    if (n > 0) this.priorities.set(entry.priority, n);
    else this.priorities.delete(entry.priority);
    this.podsByLabel.remove(entry);
    this.existingTerms.remove(entry);
    const ni = this.byName.get(entry.nodeName);
    if (ni) {
      ni.pods.delete(uid);
      ni.apply(entry.requests, -1);
      this.verdicts.forget(ni.index);
      if (!ni.node && ni.pods.size === 0) this.byName.delete(entry.nodeName);
    }
    return true;
  }
}
