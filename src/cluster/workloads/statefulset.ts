/**
 * The StatefulSet controller (pkg/controller/statefulset): pods `<set>-<ordinal>` with
 * stable identity (hostname, subdomain, `statefulset.kubernetes.io/pod-name`,
 * `apps.kubernetes.io/pod-index`, `controller-revision-hash`), OrderedReady (one pod at a
 * time, each Running and Ready before the next; scale-down from the highest ordinal) and
 * Parallel management, failed pods recreated, RollingUpdate (highest ordinal first, down to
 * the partition) and OnDelete updates, and status counters with current/update revisions.
 *
 * Revisions: the revision name is `<set>-<hash of the template>` as upstream, kept as
 * ControllerRevisions (history.ts) for `kubectl rollout history/undo`; the templates of past
 * revisions the pods need are also remembered in memory. PersistentVolumeClaims
 * from volumeClaimTemplates are created when the server serves them; pods always reference them.
 */

import type { StatefulSet } from '../../kube/builtin.ts';
import { objectKey } from '../../kube/keys.ts';
import { ApiError } from '../apiserver/errors.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { GVR, isConflict } from '../client.ts';
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
  type PodTemplate,
  podFromTemplate,
  untilAvailable,
} from './pods.ts';
import { writeStatusIfChanged } from './status.ts';
import { computeHash, errMessage } from './util.ts';

export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';
export const REVISION_LABEL = 'controller-revision-hash';

const PVCS = GVR.persistentvolumeclaims;

export type { StatefulSet } from '../../kube/builtin.ts';

function ordinalOf(set: StatefulSet, pod: Pod): number {
  const name = pod.metadata.name ?? '';
  const prefix = `${set.metadata.name}-`;
  if (!name.startsWith(prefix)) return -1;
  const rest = name.slice(prefix.length);
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : -1;
}

function revisionOfPod(pod: Pod): string {
  return pod.metadata.labels?.[REVISION_LABEL] ?? '';
}

function isCreated(pod: Pod | undefined): pod is Pod {
  return pod !== undefined && (pod.status?.phase ?? '') !== '';
}

function isTerminating(pod: Pod): boolean {
  return !!pod.metadata.deletionTimestamp;
}

function isFailedOrSucceeded(pod: Pod): boolean {
  const p = pod.status?.phase;
  return p === 'Failed' || p === 'Succeeded';
}

function isRunningAndReady(pod: Pod): boolean {
  return pod.status?.phase === 'Running' && isPodReady(pod);
}

function isHealthy(pod: Pod, minReady: number, now: number): boolean {
  return isRunningAndReady(pod) && !isTerminating(pod) && isPodAvailable(pod, minReady, now);
}

export function revisionName(set: StatefulSet, template: PodTemplate | undefined): string {
  const data = { spec: { template: { ...(template ?? {}), $patch: 'replace' } } };
  return `${set.metadata.name}-${computeHash(data, set.status?.collisionCount)}`;
}

export class StatefulSetController extends LoopController {
  private readonly sets: Informer;
  private readonly pods: Informer;
  /** set uid -> revision name -> template. */
  private readonly history = new Map<string, Map<string, PodTemplate>>();
  private readonly revisions: Informer;

  constructor(ctx: ControllerContext) {
    super(ctx, 'statefulset');
    this.sets = ctx.informers.for(GVR.statefulsets);
    this.pods = ctx.informers.for(GVR.pods);
    this.revisions = ctx.informers.for(GVR.controllerrevisions);
    this.unsubscribeOnStop(
      this.sets.subscribe((t, o) => {
        if (t === 'DELETED') this.history.delete(o.metadata.uid!);
        this.loop.enqueue(objectKey(o));
      }),
    );
    this.unsubscribeOnStop(
      this.pods.subscribe((t, o, old) => this.onPod(t, o as Pod, old as Pod | undefined)),
    );
  }

  private onPod(type: InformerEvent, pod: Pod, old: Pod | undefined): void {
    for (const set of ownersToSync(this.sets, 'StatefulSet', appsSelector, type, pod, old))
      this.loop.enqueueAfter(objectKey(set), this.ctx.batchMs);
  }

  private remember(set: StatefulSet, name: string, template: PodTemplate | undefined): void {
    let h = this.history.get(set.metadata.uid!);
    if (!h) {
      h = new Map();
      this.history.set(set.metadata.uid!, h);
    }
    if (!h.has(name)) h.set(name, structuredClone(template ?? {}));
  }

  protected async sync(key: string): Promise<void> {
    const set = this.sets.get(key) as StatefulSet | undefined;
    if (!set) return;
    const selector = appsSelector(set);
    if (!selector) return;
    const candidates = claimCandidates(this.pods, set) as Pod[];
    // A StatefulSet only adopts pods whose names say they are its members.
    const pods = (
      await claimObjects(
        this.ctx.client,
        GVR.pods,
        set,
        selector,
        candidates.filter((p) => controllerRefOf(p) || ordinalOf(set, p) >= 0),
      )
    ).filter((p) => ordinalOf(set, p) >= 0);
    const updateRevision = revisionName(set, set.spec?.template);
    this.remember(set, updateRevision, set.spec?.template);
    const currentRevision = set.status?.currentRevision || updateRevision;
    if (!set.metadata.deletionTimestamp) {
      const live = new Set([currentRevision, ...pods.map(revisionOfPod)]);
      await syncHistory(
        this.ctx.client,
        this.revisions,
        set,
        updateRevision,
        updateRevision.slice(set.metadata.name!.length + 1),
        live,
      );
    }
    if (!set.metadata.deletionTimestamp) await this.update(set, pods, currentRevision, updateRevision);
    await this.updateStatus(set, currentRevision, updateRevision);
  }

  private async update(
    set: StatefulSet,
    pods: Pod[],
    currentRevision: string,
    updateRevision: string,
  ): Promise<void> {
    const replicas = int(set.spec?.replicas, 1);
    const start = int(set.spec?.ordinals?.start, 0);
    const parallel = set.spec?.podManagementPolicy === 'Parallel';
    const minReady = int(set.spec?.minReadySeconds, 0);
    const now = this.ctx.clock.now();
    const slots: (Pod | undefined)[] = new Array(replicas).fill(undefined);
    const condemned: Pod[] = [];
    for (const p of pods) {
      const ord = ordinalOf(set, p);
      if (ord >= start && ord < start + replicas) slots[ord - start] = p;
      else condemned.push(p);
    }
    condemned.sort((a, b) => ordinalOf(set, b) - ordinalOf(set, a));
    const firstUnhealthy = [...slots.filter((p): p is Pod => p !== undefined), ...condemned].find(
      (p) => !isHealthy(p, minReady, now),
    );
    let creationError: unknown;

    for (let i = 0; i < replicas; i++) {
      let pod = slots[i];
      const ord = start + i;
      if (pod && isFailedOrSucceeded(pod) && !isTerminating(pod)) {
        // A finished pod is replaced: StatefulSet pods are meant to run forever.
        await this.deletePod(set, pod);
        pod = undefined;
      }
      if (!pod) {
        const fresh = this.newPod(set, ord, currentRevision, updateRevision);
        try {
          await this.createPod(set, fresh);
        } catch (err) {
          creationError ??= err;
          if (!parallel) throw err;
        }
        if (!parallel) return;
        continue;
      }
      if (isTerminating(pod)) {
        if (!parallel) return;
        continue;
      }
      if (!isRunningAndReady(pod) || !isPodAvailable(pod, minReady, now)) {
        const left = untilAvailable(pod, minReady, now);
        if (left !== undefined) this.loop.enqueueAfter(objectKey(set), left + 1);
        if (!parallel) return;
        continue;
      }
      await this.fixIdentity(pod, ord);
    }
    if (creationError) throw creationError;

    for (const pod of condemned) {
      if (isTerminating(pod)) {
        if (!parallel) return;
        continue;
      }
      if (!parallel && !isHealthy(pod, minReady, now) && pod !== firstUnhealthy) return;
      await this.deletePod(set, pod);
      if (!parallel) return;
    }

    if ((set.spec?.updateStrategy?.type ?? 'RollingUpdate') !== 'RollingUpdate') return;
    const partition = int(set.spec?.updateStrategy?.rollingUpdate?.partition, 0);
    for (let i = replicas - 1; i >= Math.max(0, partition - start); i--) {
      const pod = slots[i];
      if (!pod) return;
      if (revisionOfPod(pod) !== updateRevision && !isTerminating(pod)) {
        await this.deletePod(set, pod);
        return;
      }
      if (!isHealthy(pod, minReady, now)) return;
    }
  }

  /** newVersionedStatefulSetPod: below the partition a missing pod comes back at the current revision. */
  private newPod(set: StatefulSet, ord: number, currentRevision: string, updateRevision: string): Pod {
    const strategy = set.spec?.updateStrategy;
    const partition = int(strategy?.rollingUpdate?.partition, 0);
    const start = int(set.spec?.ordinals?.start, 0);
    const current = this.history.get(set.metadata.uid!)?.get(currentRevision);
    const useCurrent = (strategy?.type ?? 'RollingUpdate') === 'RollingUpdate' && ord < start + partition;
    // A past template not remembered (the controller restarted) falls back to the update revision.
    const [template, revision] =
      useCurrent && current ? [current, currentRevision] : [set.spec?.template, updateRevision];
    const name = `${set.metadata.name}-${ord}`;
    const pod = podFromTemplate(template, set, { name });
    Object.assign(pod.metadata.labels!, {
      [POD_NAME_LABEL]: name,
      [POD_INDEX_LABEL]: String(ord),
      [REVISION_LABEL]: revision,
    });
    const spec = pod.spec!;
    spec.hostname = name;
    if (set.spec?.serviceName) spec.subdomain = set.spec.serviceName;
    const volumes = (spec.volumes ?? []).filter(
      (v) => !set.spec?.volumeClaimTemplates?.some((c) => c.metadata?.name === v.name),
    );
    for (const c of set.spec?.volumeClaimTemplates ?? []) {
      volumes.push({
        name: c.metadata?.name as string, // validation requires a claim template's name
        persistentVolumeClaim: { claimName: `${c.metadata?.name}-${name}` },
      });
    }
    if (volumes.length) spec.volumes = volumes;
    return pod;
  }

  private async createPod(set: StatefulSet, pod: Pod): Promise<void> {
    await this.createClaims(set, pod);
    try {
      await this.ctx.client.create(GVR.pods, pod);
      this.ctx.recorder.event(
        set,
        'Normal',
        'SuccessfulCreate',
        `create Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} successful`,
      );
    } catch (err) {
      if (err instanceof ApiError && err.code === 409) return;
      this.ctx.recorder.event(
        set,
        'Warning',
        'FailedCreate',
        `create Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} failed error: ${errMessage(err)}`,
      );
      throw err;
    }
  }

  private async createClaims(set: StatefulSet, pod: Pod): Promise<void> {
    if (!set.spec?.volumeClaimTemplates?.length || !this.ctx.client.served(PVCS)) return;
    for (const c of set.spec.volumeClaimTemplates) {
      const claimName = `${c.metadata?.name}-${pod.metadata.name}`;
      if (this.ctx.client.get(PVCS, set.metadata.namespace!, claimName)) continue;
      const claim: KubeObject = {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: {
          name: claimName,
          namespace: set.metadata.namespace,
          labels: { ...(set.spec.selector?.matchLabels ?? {}), ...(c.metadata?.labels ?? {}) },
          ...(c.metadata?.annotations ? { annotations: c.metadata.annotations } : {}),
        },
        spec: structuredClone(c.spec ?? {}),
      };
      try {
        await this.ctx.client.create(PVCS, claim);
        this.ctx.recorder.event(
          set,
          'Normal',
          'SuccessfulCreate',
          `create Claim ${claimName} Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} success`,
        );
      } catch (err) {
        if (err instanceof ApiError && err.code === 409) continue;
        this.ctx.recorder.event(
          set,
          'Warning',
          'FailedCreate',
          `create Claim ${claimName} for Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} failed error: ${errMessage(err)}`,
        );
        throw err;
      }
    }
  }

  private async deletePod(set: StatefulSet, pod: Pod): Promise<void> {
    try {
      if (
        this.ctx.client.get(GVR.pods, pod.metadata.namespace!, pod.metadata.name!)?.metadata.uid !==
        pod.metadata.uid
      )
        return;
      await this.ctx.client.delete(GVR.pods, pod.metadata.namespace!, pod.metadata.name!, {
        preconditions: { uid: pod.metadata.uid },
      });
      this.ctx.recorder.event(
        set,
        'Normal',
        'SuccessfulDelete',
        `delete Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} successful`,
      );
    } catch (err) {
      if (isConflict(err)) return;
      this.ctx.recorder.event(
        set,
        'Warning',
        'FailedDelete',
        `delete Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name} failed error: ${errMessage(err)}`,
      );
      throw err;
    }
  }

  /** Restores identity labels a user removed (identityMatches / updateIdentity). */
  private async fixIdentity(pod: Pod, ord: number): Promise<void> {
    const name = pod.metadata.name!;
    const l = pod.metadata.labels ?? {};
    if (l[POD_NAME_LABEL] === name && l[POD_INDEX_LABEL] === String(ord)) return;
    await this.ctx.client.mutate(GVR.pods, pod.metadata.namespace!, name, (cur) => {
      if (cur.metadata.uid !== pod.metadata.uid) return;
      cur.metadata.labels = {
        ...(cur.metadata.labels ?? {}),
        [POD_NAME_LABEL]: name,
        [POD_INDEX_LABEL]: String(ord),
      };
    });
  }

  private async updateStatus(
    set: StatefulSet,
    currentRevision: string,
    updateRevision: string,
  ): Promise<void> {
    const now = this.ctx.clock.now();
    const minReady = int(set.spec?.minReadySeconds, 0);
    const pods = (claimCandidates(this.pods, set) as Pod[]).filter(
      (p) => controllerRefOf(p)?.uid === set.metadata.uid && ordinalOf(set, p) >= 0,
    );
    const status: NonNullable<StatefulSet['status']> = {
      observedGeneration: set.metadata.generation,
      replicas: 0,
      readyReplicas: 0,
      currentReplicas: 0,
      updatedReplicas: 0,
      availableReplicas: 0,
      currentRevision,
      updateRevision,
    };
    if (set.status?.collisionCount !== undefined) status.collisionCount = set.status.collisionCount;
    for (const p of pods) {
      if (isCreated(p)) status.replicas!++;
      if (isRunningAndReady(p)) {
        status.readyReplicas!++;
        if (isPodAvailable(p, minReady, now)) status.availableReplicas!++;
      }
      if (isCreated(p) && !isTerminating(p)) {
        if (revisionOfPod(p) === currentRevision) status.currentReplicas!++;
        if (revisionOfPod(p) === updateRevision) status.updatedReplicas!++;
      }
    }
    // completeRollingUpdate: once every pod is updated and ready, the update revision is current.
    if (
      (set.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate' &&
      status.updatedReplicas === status.replicas &&
      status.readyReplicas === status.replicas
    ) {
      status.currentReplicas = status.updatedReplicas;
      status.currentRevision = updateRevision;
    }
    for (const k of ['readyReplicas', 'currentReplicas', 'updatedReplicas', 'observedGeneration'] as const)
      if (!status[k]) delete status[k];
    await writeStatusIfChanged(this.ctx.client, GVR.statefulsets, set, status);
  }
}
