/**
 * Pod facts and pod control shared by the workload controllers, after pkg/controller's
 * controller_utils.go and controller_ref_manager.go: activity, availability, the ranking
 * used to pick pods to delete, creating pods from a template with a controller reference,
 * which owners an event about a dependent concerns, and claiming pods (adopting matching
 * orphans, releasing owned pods that stopped matching).
 */

import type { Pod, PodTemplateSpec } from '../../kube/builtin.ts';
import {
  type LabelSelectorObject,
  type Selector,
  sameLabels,
  selectorFromObject,
} from '../../kube/labels.ts';
import {
  isPodReady,
  isPodTerminal as isTerminal,
  podReadyCondition as readyCondition,
} from '../../kube/pod.ts';
import type { KubeObject, OwnerReference } from '../apiserver/types.ts';
import { type ClusterClient, GVR, type Gvr, isNotFound } from '../client.ts';
import type { EventRecorder } from './events.ts';
import { BY_NAMESPACE, type Informer, type InformerEvent } from './informer.ts';
import { errMessage, parseTime } from './util.ts';

export type {
  ContainerStatus,
  NodeSelectorTerm,
  Pod,
  PodCondition,
  PodSpec,
  PodTemplateSpec,
  Toleration,
} from '../../kube/builtin.ts';

/** A pod template (spec.template of the workload kinds). */
export type PodTemplate = PodTemplateSpec;

export function controllerRefOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((r) => r.controller === true);
}

export function newControllerRef(owner: KubeObject): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name!,
    uid: owner.metadata.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}

// Pod readiness and phase, as every part reads them (src/kube/pod.ts).
export { isPodReady, isTerminal, readyCondition };

/** controller.IsPodActive: not finished and not being deleted. */
export function isPodActive(pod: Pod): boolean {
  return !isTerminal(pod) && !pod.metadata.deletionTimestamp;
}

/** controller.IsPodTerminating: being deleted but not finished. */
export function isPodTerminating(pod: Pod): boolean {
  return !isTerminal(pod) && !!pod.metadata.deletionTimestamp;
}

/** podutil.IsPodAvailable: Ready for at least minReadySeconds. */
export function isPodAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  const c = readyCondition(pod);
  if (c?.status !== 'True') return false;
  if (!minReadySeconds) return true;
  const since = parseTime(c.lastTransitionTime);
  return since !== undefined && since + minReadySeconds * 1000 <= now;
}

/** Milliseconds until a Ready pod becomes available, or undefined when that never happens by waiting. */
export function untilAvailable(pod: Pod, minReadySeconds: number, now: number): number | undefined {
  const c = readyCondition(pod);
  if (c?.status !== 'True' || !minReadySeconds) return undefined;
  const since = parseTime(c.lastTransitionTime);
  if (since === undefined) return undefined;
  const left = since + minReadySeconds * 1000 - now;
  return left > 0 ? left : undefined;
}

export function restartCount(pod: Pod): number {
  let n = 0;
  for (const c of pod.status?.containerStatuses ?? []) n = Math.max(n, c.restartCount ?? 0);
  return n;
}

const PHASE_RANK: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

/**
 * The order in which pods are chosen for deletion (controller.ActivePods /
 * ActivePodsWithRanks): unscheduled before scheduled, pending before running, not ready
 * before ready, lower pod-deletion-cost first, more co-located pods first, ready for a
 * shorter time first, more restarts first, newer before older. Negative = `a` goes first.
 */
export function compareForDeletion(
  a: Pod,
  b: Pod,
  opts: { ranks?: Map<Pod, number>; deletionCost?: boolean } = {},
): number {
  const an = a.spec?.nodeName ?? '';
  const bn = b.spec?.nodeName ?? '';
  if ((an === '') !== (bn === '')) return an === '' ? -1 : 1;
  const ap = PHASE_RANK[a.status?.phase ?? 'Pending'] ?? 0;
  const bp = PHASE_RANK[b.status?.phase ?? 'Pending'] ?? 0;
  if (ap !== bp) return ap - bp;
  const ar = isPodReady(a);
  const br = isPodReady(b);
  if (ar !== br) return ar ? 1 : -1;
  if (opts.deletionCost) {
    const ac = deletionCost(a);
    const bc = deletionCost(b);
    if (ac !== bc) return ac - bc;
  }
  if (opts.ranks) {
    const ak = opts.ranks.get(a) ?? 0;
    const bk = opts.ranks.get(b) ?? 0;
    if (ak !== bk) return bk - ak;
  }
  if (ar && br) {
    const at = parseTime(readyCondition(a)?.lastTransitionTime);
    const bt = parseTime(readyCondition(b)?.lastTransitionTime);
    if (at !== bt) {
      if (at === undefined) return -1;
      if (bt === undefined) return 1;
      return bt - at; // became ready later = ready for less time = first
    }
  }
  const rc = restartCount(b) - restartCount(a);
  if (rc !== 0) return rc;
  const ac = parseTime(a.metadata.creationTimestamp);
  const bc = parseTime(b.metadata.creationTimestamp);
  if (ac !== bc) {
    if (ac === undefined) return -1;
    if (bc === undefined) return 1;
    return bc - ac;
  }
  return 0;
}

function deletionCost(pod: Pod): number {
  const v = pod.metadata.annotations?.['controller.kubernetes.io/pod-deletion-cost'];
  const n = v === undefined ? 0 : Number(v);
  return Number.isInteger(n) ? n : 0;
}

/** Ranks each pod by how many of `related` share its node, for spreading scale-downs. */
export function colocationRanks(pods: Pod[], related: Pod[]): Map<Pod, number> {
  const perNode = new Map<string, number>();
  for (const p of related) {
    const n = p.spec?.nodeName;
    if (n && isPodActive(p)) perNode.set(n, (perNode.get(n) ?? 0) + 1);
  }
  const ranks = new Map<Pod, number>();
  for (const p of pods) {
    const n = p.spec?.nodeName;
    ranks.set(p, n ? (perNode.get(n) ?? 0) : 0);
  }
  return ranks;
}

/** A pod for `owner` from its template (controller.GetPodFromTemplate). */
export function podFromTemplate(
  template: PodTemplate | undefined,
  owner: KubeObject,
  opts: { name?: string; generateName?: string } = {},
): Pod {
  const t = structuredClone(template ?? {});
  const meta = t.metadata ?? {};
  const pod: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      namespace: owner.metadata.namespace,
      labels: { ...(meta.labels ?? {}) },
      annotations: { ...(meta.annotations ?? {}) },
      ownerReferences: [newControllerRef(owner)],
    },
    spec: t.spec ?? {},
  };
  if (meta.finalizers?.length) pod.metadata.finalizers = [...meta.finalizers];
  if (opts.name) pod.metadata.name = opts.name;
  else pod.metadata.generateName = opts.generateName ?? `${owner.metadata.name}-`;
  if (Object.keys(pod.metadata.annotations!).length === 0) delete pod.metadata.annotations;
  return pod;
}

/** The namespace-terminating create failure, which controllers ignore quietly. */
export function isNamespaceTerminating(err: unknown): boolean {
  return /because it is being terminated/.test(errMessage(err));
}

/** RealPodControl: creates and deletes pods, recording the events kube-controller-manager records. */
export class PodControl {
  private readonly client: ClusterClient;
  private readonly recorder: EventRecorder;

  constructor(client: ClusterClient, recorder: EventRecorder) {
    this.client = client;
    this.recorder = recorder;
  }

  async create(owner: KubeObject, pod: Pod): Promise<Pod> {
    try {
      const created = await this.client.create<Pod>(GVR.pods, pod);
      this.recorder.event(owner, 'Normal', 'SuccessfulCreate', `Created pod: ${created.metadata.name}`);
      return created;
    } catch (err) {
      if (!isNamespaceTerminating(err))
        this.recorder.event(owner, 'Warning', 'FailedCreate', `Error creating: ${errMessage(err)}`);
      throw err;
    }
  }

  /** Deletes a pod (gracefully, as the API decides); a pod already gone is not an error and returns false. */
  async delete(owner: KubeObject, pod: Pod): Promise<boolean> {
    try {
      const ns = pod.metadata.namespace!;
      const name = pod.metadata.name!;
      // client.delete folds 404 into `false`, like a graceful delete: look first so a pod that is
      // already gone records no event, as RealPodControl does.
      if (this.client.get(GVR.pods, ns, name)?.metadata.uid !== pod.metadata.uid) return false;
      // A uid precondition keeps a same-named replacement (StatefulSet) safe from a stale delete.
      await this.client.delete(GVR.pods, ns, name, { preconditions: { uid: pod.metadata.uid } });
      this.recorder.event(owner, 'Normal', 'SuccessfulDelete', `Deleted pod: ${name}`);
      return true;
    } catch (err) {
      if (isNotFound(err) || isPreconditionFailure(err)) return false;
      this.recorder.event(owner, 'Warning', 'FailedDelete', `Error deleting: ${errMessage(err)}`);
      throw err;
    }
  }
}

export function isPreconditionFailure(err: unknown): boolean {
  return /Precondition failed/.test(errMessage(err));
}

/**
 * The selector of an apps/v1 controller: a missing, empty or invalid one selects nothing
 * (validation rejects those anyway).
 */
export function appsSelector(owner: KubeObject): Selector | undefined {
  const sel = (owner.spec as { selector?: LabelSelectorObject } | undefined)?.selector;
  if (!sel) return undefined;
  try {
    const s = selectorFromObject(sel);
    return s.empty ? undefined : s;
  } catch {
    return undefined;
  }
}

/** The owner a controller reference names, if the informer holds it (same uid) and it is of `kind`. */
export function ownerOf(
  owners: Informer,
  namespace: string,
  ref: OwnerReference | undefined,
  kind: string,
): KubeObject | undefined {
  if (ref?.kind !== kind) return undefined;
  const o = owners.getByName(namespace, ref.name);
  return o?.metadata.uid === ref.uid ? o : undefined;
}

/**
 * The owners that may adopt an orphan (pod, ReplicaSet) after an event about it (upstream's
 * add/update handlers): those of its namespace whose selector matches, when the object is new,
 * changed labels or lost its controller. Other updates of an orphan (status) cannot change
 * who adopts it.
 */
export function adopterCandidates(
  owners: Informer,
  selectorOf: (owner: KubeObject) => Selector | undefined,
  type: InformerEvent,
  obj: KubeObject,
  old: KubeObject | undefined,
): KubeObject[] {
  if (type === 'DELETED' || controllerRefOf(obj)) return [];
  if (old && !controllerRefOf(old) && sameLabels(old.metadata.labels, obj.metadata.labels)) return [];
  return owners
    .byIndex(BY_NAMESPACE, obj.metadata.namespace ?? '')
    .filter((o) => selectorOf(o)?.matches(obj.metadata.labels));
}

/**
 * The owners of `kind` an event about a dependent concerns: its controller before and after
 * the change, and the owners that may adopt it if it is an orphan.
 */
export function ownersToSync(
  owners: Informer,
  kind: string,
  selectorOf: (owner: KubeObject) => Selector | undefined,
  type: InformerEvent,
  obj: KubeObject,
  old: KubeObject | undefined,
): KubeObject[] {
  const ns = obj.metadata.namespace ?? '';
  const ref = controllerRefOf(obj);
  const oldRef = old ? controllerRefOf(old) : undefined;
  const out = adopterCandidates(owners, selectorOf, type, obj, old);
  for (const r of oldRef && oldRef.uid !== ref?.uid ? [ref, oldRef] : [ref]) {
    const o = ownerOf(owners, ns, r, kind);
    if (o) out.push(o);
  }
  return out;
}

/**
 * ControllerRefManager.Claim*: of `candidates` (same namespace as the owner), keeps those
 * the owner controls and whose labels still match, adopts matching orphans (unless owner or
 * object is being deleted) and releases owned ones that stopped matching. Adoption and
 * release are read-modify-writes that re-check ownership on the fresh object.
 */
export async function claimObjects<T extends KubeObject>(
  client: ClusterClient,
  gvr: Gvr,
  owner: KubeObject,
  selector: Selector,
  candidates: T[],
  opts: { onAdopt?: (obj: T) => void; canAdopt?: () => boolean } = {},
): Promise<T[]> {
  const uid = owner.metadata.uid!;
  const out: T[] = [];
  const ownerDeleting = !!owner.metadata.deletionTimestamp;
  for (const obj of candidates) {
    const ref = controllerRefOf(obj);
    const matches = selector.matches(obj.metadata.labels);
    if (ref) {
      if (ref.uid !== uid) continue;
      if (matches) {
        out.push(obj);
        continue;
      }
      if (ownerDeleting) continue;
      await release(client, gvr, obj, uid);
      continue;
    }
    if (!matches || ownerDeleting || obj.metadata.deletionTimestamp) continue;
    if (opts.canAdopt && !opts.canAdopt()) continue;
    const adopted = await adopt(client, gvr, owner, obj, opts.onAdopt);
    if (adopted) out.push(adopted);
  }
  return out;
}

async function adopt<T extends KubeObject>(
  client: ClusterClient,
  gvr: Gvr,
  owner: KubeObject,
  obj: T,
  onAdopt?: (obj: T) => void,
): Promise<T | undefined> {
  try {
    let refused = false;
    const res = await client.mutate<T>(gvr, obj.metadata.namespace ?? '', obj.metadata.name!, (cur) => {
      if (cur.metadata.uid !== obj.metadata.uid || controllerRefOf(cur) || cur.metadata.deletionTimestamp) {
        refused = true;
        return;
      }
      cur.metadata.ownerReferences = [...(cur.metadata.ownerReferences ?? []), newControllerRef(owner)];
      onAdopt?.(cur);
    });
    return refused ? undefined : res;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

async function release(client: ClusterClient, gvr: Gvr, obj: KubeObject, ownerUid: string): Promise<void> {
  try {
    await client.mutate(gvr, obj.metadata.namespace ?? '', obj.metadata.name!, (cur) => {
      if (cur.metadata.uid !== obj.metadata.uid) return;
      const refs = cur.metadata.ownerReferences?.filter((r) => r.uid !== ownerUid);
      if (refs?.length) cur.metadata.ownerReferences = refs;
      else delete cur.metadata.ownerReferences;
    });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}
