/**
 * The DaemonSet controller (pkg/controller/daemon): one pod per eligible node. A node is
 * eligible when the pod template's nodeName (if any), nodeSelector and required node
 * affinity match it and the pod, with the default DaemonSet tolerations added, tolerates its
 * NoSchedule/NoExecute taints; a pod already there stays while its NoExecute taints are
 * tolerated. Pods are pinned with required node affinity `matchFields metadata.name In
 * [<node>]` and bound by the scheduler. Failed pods are replaced; surplus pods, pods on
 * ineligible or removed nodes are deleted; RollingUpdate replaces old pods within
 * maxUnavailable (maxSurge 0) and OnDelete waits for users. Status counts as upstream.
 */

import type { DaemonSet, Node } from '../../kube/builtin.ts';
import { objectKey } from '../../kube/keys.ts';
import type { Selector } from '../../kube/labels.ts';
import { sameLabels } from '../../kube/labels.ts';
import { backoffDelay } from '../../lib/backoff.ts';
import { jsonEqual } from '../../lib/json.ts';
import { GVR, isNotFound } from '../client.ts';
import { compileNodeAffinity } from '../scheduler/core/affinity.ts';
import { toleratesTaint } from '../scheduler/core/taints.ts';
import { type ControllerContext, int, LoopController } from './context.ts';
import { syncHistory } from './history.ts';
import { claimCandidates, type Informer, type InformerEvent } from './informer.ts';
import {
  appsSelector,
  claimObjects,
  controllerRefOf,
  isPodAvailable,
  isPodReady,
  ownersToSync,
  type Pod,
  PodControl,
  type PodSpec,
  podFromTemplate,
  type Toleration,
  untilAvailable,
} from './pods.ts';
import { writeStatusIfChanged } from './status.ts';
import { computeHash, parseTime, scaledValue, slowStartBatch } from './util.ts';

export const DS_REVISION_LABEL = 'controller-revision-hash';
export const TEMPLATE_GENERATION_LABEL = 'pod-template-generation';

/** Failed-pod replacement backoff (1 s doubling to 15 min upstream). */
const FAILED_POD_BACKOFF_BASE_MS = 1000;
const FAILED_POD_BACKOFF_MAX_MS = 15 * 60_000;

export type { DaemonSet } from '../../kube/builtin.ts';

/** AddOrUpdateDaemonPodTolerations: what every daemon pod tolerates. */
export function addDaemonTolerations(spec: PodSpec): void {
  const add: Toleration[] = [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
  ];
  if (spec.hostNetwork)
    add.push({ key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' });
  const list = [...(spec.tolerations ?? [])];
  for (const t of add) {
    // AddOrUpdateTolerationInPodSpec: a toleration of the same key/operator/effect is replaced.
    const i = list.findIndex(
      (x) =>
        (x.key ?? '') === t.key && (x.operator || 'Equal') === t.operator && (x.effect ?? '') === t.effect,
    );
    if (i >= 0) {
      if (jsonEqual(list[i], t)) continue;
      list[i] = t;
    } else list.push(t);
  }
  spec.tolerations = list;
}

/** ReplaceDaemonSetPodNodeNameNodeAffinity: the pod may only go to `node`. */
export function pinToNode(spec: PodSpec, node: string): void {
  const term = { matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] };
  spec.affinity ??= {};
  const affinity = spec.affinity;
  affinity.nodeAffinity ??= {};
  const na = affinity.nodeAffinity;
  na.requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms: [term] };
}

/** The node a daemon pod is meant for: its nodeName, else the pinned matchFields name. */
export function targetNode(pod: Pod): string | undefined {
  if (pod.spec?.nodeName) return pod.spec.nodeName;
  const terms =
    pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const t of terms) {
    for (const f of t.matchFields ?? []) {
      if (f.key === 'metadata.name' && f.operator === 'In' && f.values?.length === 1) return f.values[0];
    }
  }
  return undefined;
}

export type DaemonPredicate = (node: Node) => { shouldRun: boolean; shouldContinue: boolean };

/**
 * NodeShouldRunDaemonPod, compiled once per sync: for a node, [should a new pod run here,
 * may an existing one keep running].
 */
export function daemonPredicate(ds: DaemonSet): DaemonPredicate {
  const spec: PodSpec = structuredClone(ds.spec?.template?.spec ?? {});
  addDaemonTolerations(spec);
  const matcher = compileNodeAffinity({ spec } as Pod).required;
  const tolerations = spec.tolerations ?? [];
  return (node) => {
    const name = node.metadata.name!;
    if (spec.nodeName && spec.nodeName !== name) return { shouldRun: false, shouldContinue: false };
    if (matcher && !matcher(node.metadata.labels ?? {}, name))
      return { shouldRun: false, shouldContinue: false };
    const untolerated = (effects: string[]) =>
      (node.spec?.taints ?? []).some(
        (t) => effects.includes(t.effect) && !tolerations.some((tol) => toleratesTaint(tol, t)),
      );
    if (untolerated(['NoSchedule', 'NoExecute']))
      return { shouldRun: false, shouldContinue: !untolerated(['NoExecute']) };
    return { shouldRun: true, shouldContinue: true };
  };
}

export class DaemonSetController extends LoopController {
  private readonly sets: Informer;
  private readonly pods: Informer;
  private readonly nodes: Informer;
  private readonly revisions: Informer;
  private readonly podControl: PodControl;
  /** `<ds uid>/<node>` -> failed-pod backoff state. */
  private readonly failedBackoff = new Map<string, { count: number; last: number }>();

  constructor(ctx: ControllerContext) {
    super(ctx, 'daemonset');
    this.sets = ctx.informers.for(GVR.daemonsets);
    this.pods = ctx.informers.for(GVR.pods);
    this.nodes = ctx.informers.for(GVR.nodes);
    this.revisions = ctx.informers.for(GVR.controllerrevisions);
    this.podControl = new PodControl(ctx.client, ctx.recorder);
    this.unsubscribeOnStop(
      this.sets.subscribe((t, o) => {
        if (t === 'DELETED')
          for (const k of this.failedBackoff.keys())
            if (k.startsWith(`${o.metadata.uid}/`)) this.failedBackoff.delete(k);
        this.loop.enqueue(objectKey(o));
      }),
    );
    this.unsubscribeOnStop(
      this.pods.subscribe((t, o, old) => this.onPod(t, o as Pod, old as Pod | undefined)),
    );
    this.unsubscribeOnStop(
      this.nodes.subscribe((t, o, old) => this.onNode(t, o as Node, old as Node | undefined)),
    );
  }

  private onPod(type: InformerEvent, pod: Pod, old: Pod | undefined): void {
    for (const ds of ownersToSync(this.sets, 'DaemonSet', appsSelector, type, pod, old))
      this.loop.enqueueAfter(objectKey(ds), this.ctx.batchMs);
  }

  /** Node changes that can flip eligibility (labels, taints, existence) resync every DaemonSet. */
  private onNode(type: string, node: Node, old: Node | undefined): void {
    if (
      type === 'MODIFIED' &&
      old &&
      sameLabels(old.metadata.labels, node.metadata.labels) &&
      jsonEqual(old.spec?.taints ?? [], node.spec?.taints ?? [])
    ) {
      return;
    }
    for (const ds of this.sets.list()) this.loop.enqueueAfter(objectKey(ds), this.ctx.batchMs);
  }

  protected async sync(key: string): Promise<void> {
    const ds = this.sets.get(key) as DaemonSet | undefined;
    if (!ds) return;
    const selector = appsSelector(ds);
    if (!selector) return;
    const hash = computeHash(ds.spec?.template, ds.status?.collisionCount);
    // Compiled once per sync: every step below asks it about every node.
    const shouldRunOn = daemonPredicate(ds);
    if (!ds.metadata.deletionTimestamp) {
      const byNode = await this.podsByNode(ds, selector);
      const live = new Set<string>();
      for (const pods of byNode.values())
        for (const p of pods) {
          const h = p.metadata.labels?.[DS_REVISION_LABEL];
          if (h) live.add(`${ds.metadata.name}-${h}`);
        }
      await syncHistory(this.ctx.client, this.revisions, ds, `${ds.metadata.name}-${hash}`, hash, live);
      await this.manage(ds, shouldRunOn, byNode, hash);
      if ((ds.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate') {
        await this.rollingUpdate(ds, shouldRunOn, this.currentPodsByNode(ds, selector), hash);
      }
    }
    await this.updateStatus(ds, shouldRunOn, this.currentPodsByNode(ds, selector), hash);
  }

  private async podsByNode(ds: DaemonSet, selector: Selector): Promise<Map<string, Pod[]>> {
    const claimed = await claimObjects(
      this.ctx.client,
      GVR.pods,
      ds,
      selector,
      claimCandidates(this.pods, ds) as Pod[],
    );
    return groupByNode(claimed);
  }

  private currentPodsByNode(ds: DaemonSet, selector: Selector): Map<string, Pod[]> {
    const owned = (claimCandidates(this.pods, ds) as Pod[]).filter(
      (p) => controllerRefOf(p)?.uid === ds.metadata.uid && selector.matches(p.metadata.labels),
    );
    return groupByNode(owned);
  }

  private async manage(
    ds: DaemonSet,
    shouldRunOn: DaemonPredicate,
    byNode: Map<string, Pod[]>,
    hash: string,
  ): Promise<void> {
    const needPods: string[] = [];
    const toDelete: Pod[] = [];
    const now = this.ctx.clock.now();
    const nodeNames = new Set<string>();
    for (const n of this.nodes.list() as Node[]) {
      const name = n.metadata.name!;
      nodeNames.add(name);
      const { shouldRun, shouldContinue } = shouldRunOn(n);
      const pods = byNode.get(name) ?? [];
      if (shouldRun && pods.length === 0) {
        needPods.push(name);
        continue;
      }
      if (shouldContinue) {
        const running: Pod[] = [];
        for (const p of pods) {
          if (p.metadata.deletionTimestamp) continue;
          if (p.status?.phase === 'Failed') {
            const bk = `${ds.metadata.uid}/${name}`;
            const b = this.failedBackoff.get(bk);
            const delay = b
              ? backoffDelay(b.count - 1, FAILED_POD_BACKOFF_BASE_MS, FAILED_POD_BACKOFF_MAX_MS)
              : 0;
            if (b && now - b.last < delay) {
              this.loop.enqueueAfter(objectKey(ds), delay - (now - b.last));
              continue;
            }
            this.failedBackoff.set(bk, { count: (b?.count ?? 0) + 1, last: now });
            this.ctx.recorder.event(
              ds,
              'Warning',
              'FailedDaemonPod',
              `Found failed daemon pod ${p.metadata.namespace}/${p.metadata.name} on node ${name}, will try to kill it`,
            );
            toDelete.push(p);
            continue;
          }
          running.push(p);
        }
        if (running.length > 1) {
          // More than one pod on a node: keep the oldest (upstream's surge handling aside).
          running.sort(
            (a, b) =>
              (parseTime(a.metadata.creationTimestamp) ?? 0) - (parseTime(b.metadata.creationTimestamp) ?? 0),
          );
          toDelete.push(...running.slice(1));
        }
        continue;
      }
      for (const p of pods) if (!p.metadata.deletionTimestamp) toDelete.push(p);
    }
    // Pods meant for nodes that no longer exist (PodGC would remove bound ones on a real cluster).
    for (const [node, pods] of byNode) {
      if (nodeNames.has(node)) continue;
      for (const p of pods) if (!p.metadata.deletionTimestamp) toDelete.push(p);
    }
    await this.syncNodes(ds, toDelete, needPods, hash);
  }

  private async syncNodes(ds: DaemonSet, toDelete: Pod[], needPods: string[], hash: string): Promise<void> {
    let error: unknown;
    if (needPods.length > 0) {
      const generation = ds.metadata.generation;
      const res = await slowStartBatch(needPods.length, 1, async (i) => {
        const pod = podFromTemplate(ds.spec?.template, ds);
        pod.metadata.labels = { ...(pod.metadata.labels ?? {}), [DS_REVISION_LABEL]: hash };
        if (generation !== undefined) pod.metadata.labels[TEMPLATE_GENERATION_LABEL] = String(generation);
        pod.spec ??= {};
        const spec = pod.spec;
        addDaemonTolerations(spec);
        pinToNode(spec, needPods[i]!);
        await this.podControl.create(ds, pod);
      });
      error = res.error;
    }
    const results = await Promise.allSettled(toDelete.map((p) => this.podControl.delete(ds, p)));
    const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
    if (error ?? failed) throw error ?? failed!.reason;
  }

  /** rollingUpdate (maxSurge 0): old pods go, unavailable ones first, within maxUnavailable. */
  private async rollingUpdate(
    ds: DaemonSet,
    shouldRunOn: DaemonPredicate,
    byNode: Map<string, Pod[]>,
    hash: string,
  ): Promise<void> {
    const minReady = int(ds.spec?.minReadySeconds, 0);
    const now = this.ctx.clock.now();
    let desired = 0;
    let unavailable = 0;
    const oldAvailable: Pod[] = [];
    const oldUnavailable: Pod[] = [];
    for (const n of this.nodes.list() as Node[]) {
      const { shouldRun } = shouldRunOn(n);
      if (!shouldRun) continue;
      desired++;
      const pods = byNode.get(n.metadata.name!) ?? [];
      if (!pods.some((p) => isPodAvailable(p, minReady, now))) unavailable++;
      for (const p of pods) {
        if (isUpdated(ds, p, hash)) continue;
        if (isPodAvailable(p, minReady, now)) oldAvailable.push(p);
        else oldUnavailable.push(p);
      }
    }
    const maxUnavailable = scaledValue(
      ds.spec?.updateStrategy?.rollingUpdate?.maxUnavailable ?? 1,
      desired,
      true,
    );
    const toDelete = oldUnavailable.filter((p) => !p.metadata.deletionTimestamp);
    for (const p of oldAvailable) {
      if (unavailable >= maxUnavailable) break;
      toDelete.push(p);
      unavailable++;
    }
    if (toDelete.length) await this.syncNodes(ds, toDelete, [], hash);
  }

  private async updateStatus(
    ds: DaemonSet,
    shouldRunOn: DaemonPredicate,
    byNode: Map<string, Pod[]>,
    hash: string,
  ): Promise<void> {
    const minReady = int(ds.spec?.minReadySeconds, 0);
    const now = this.ctx.clock.now();
    let desired = 0;
    let current = 0;
    let misscheduled = 0;
    let ready = 0;
    let available = 0;
    let updated = 0;
    let soonest: number | undefined;
    for (const n of this.nodes.list() as Node[]) {
      const { shouldRun } = shouldRunOn(n);
      const pods = byNode.get(n.metadata.name!) ?? [];
      const scheduled = pods.length > 0;
      if (shouldRun) {
        desired++;
        if (!scheduled) continue;
        current++;
        const oldest = [...pods].sort(
          (a, b) =>
            (parseTime(a.metadata.creationTimestamp) ?? 0) - (parseTime(b.metadata.creationTimestamp) ?? 0),
        )[0]!;
        if (isPodReady(oldest)) {
          ready++;
          if (isPodAvailable(oldest, minReady, now)) available++;
          else {
            const left = untilAvailable(oldest, minReady, now);
            if (left !== undefined && (soonest === undefined || left < soonest)) soonest = left;
          }
        }
        if (isUpdated(ds, oldest, hash)) updated++;
      } else if (scheduled) misscheduled++;
    }
    const status: NonNullable<DaemonSet['status']> = {
      currentNumberScheduled: current,
      numberMisscheduled: misscheduled,
      desiredNumberScheduled: desired,
      numberReady: ready,
      observedGeneration: ds.metadata.generation,
      updatedNumberScheduled: updated,
      numberAvailable: available,
      numberUnavailable: desired - available,
    };
    if (ds.status?.collisionCount !== undefined) status.collisionCount = ds.status.collisionCount;
    for (const k of [
      'observedGeneration',
      'updatedNumberScheduled',
      'numberAvailable',
      'numberUnavailable',
    ] as const)
      if (!status[k]) delete status[k];
    if (soonest !== undefined) this.loop.enqueueAfter(objectKey(ds), soonest + 1);
    try {
      await writeStatusIfChanged(this.ctx.client, GVR.daemonsets, ds, status);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

/** IsPodUpdated: the pod carries the current template hash, or the current template generation. */
function isUpdated(ds: DaemonSet, pod: Pod, hash: string): boolean {
  const l = pod.metadata.labels ?? {};
  const generationMatches =
    ds.metadata.generation !== undefined && l[TEMPLATE_GENERATION_LABEL] === String(ds.metadata.generation);
  return l[DS_REVISION_LABEL] === hash || generationMatches;
}

function groupByNode(pods: Pod[]): Map<string, Pod[]> {
  const m = new Map<string, Pod[]>();
  for (const p of pods) {
    const n = targetNode(p);
    if (!n) continue;
    let l = m.get(n);
    if (!l) {
      l = [];
      m.set(n, l);
    }
    l.push(p);
  }
  return m;
}
