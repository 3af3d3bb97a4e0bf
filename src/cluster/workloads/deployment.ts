/**
 * The Deployment controller (pkg/controller/deployment): ReplicaSets named
 * `<deployment>-<pod-template-hash>`, RollingUpdate (maxSurge/maxUnavailable) and Recreate
 * rollouts, proportional scaling during a rollout, pause, revision annotations, cleanup of
 * old ReplicaSets past revisionHistoryLimit, and status with the Available and Progressing
 * conditions (including progressDeadlineSeconds).
 *
 * Why one file: the rollout strategies share one sync pass, as in upstream's deployment
 * controller; the pure helpers are in deployment-util.ts.
 */

import { objectKey } from '../../kube/keys.ts';
import { type Selector, selectorFromObject } from '../../kube/labels.ts';
import { jsonEqual } from '../../lib/json.ts';
import { ApiError } from '../apiserver/errors.ts';
import { GVR, isNotFound } from '../client.ts';
import { type ControllerContext, int, LoopController } from './context.ts';
import {
  activeReplicaSets,
  calculateStatus,
  DESIRED_REPLICAS_ANNOTATION,
  type Deployment,
  type DeploymentStatus,
  deploymentComplete,
  deploymentProgressing,
  deploymentTimedOut,
  equalIgnoreHash,
  findActiveOrLatest,
  findNewReplicaSet,
  getCondition,
  hasProgressDeadline,
  isRollingUpdate,
  isSaturated,
  maxRevision,
  maxSurge,
  maxUnavailable,
  newCondition,
  newRSNewReplicas,
  POD_TEMPLATE_HASH,
  podTemplateHash,
  progressDeadlineSeconds,
  proportion,
  REVISION_ANNOTATION,
  removeCondition,
  replicasAnnotationsNeedUpdate,
  replicasOf,
  revisionOf,
  rsReplicas,
  serializedStatus,
  setCondition,
  setNewReplicaSetAnnotations,
  setReplicasAnnotations,
  sortByCreation,
  sortBySize,
  sumSpecReplicas,
} from './deployment-util.ts';
import { BY_CONTROLLER_UID, claimCandidates, type Informer, type InformerEvent } from './informer.ts';
import {
  appsSelector,
  claimObjects,
  controllerRefOf,
  newControllerRef,
  ownerOf,
  ownersToSync,
  type Pod,
} from './pods.ts';
import type { ReplicaSet } from './replicaset.ts';
import { writeStatus } from './status.ts';
import { parseTime } from './util.ts';

export class DeploymentController extends LoopController {
  private readonly deployments: Informer;
  private readonly rss: Informer;
  private readonly pods: Informer;

  constructor(ctx: ControllerContext) {
    super(ctx, 'deployment');
    this.deployments = ctx.informers.for(GVR.deployments);
    this.rss = ctx.informers.for(GVR.replicasets);
    this.pods = ctx.informers.for(GVR.pods);
    this.unsubscribeOnStop(this.deployments.subscribe((_t, o) => this.loop.enqueue(objectKey(o))));
    this.unsubscribeOnStop(
      this.rss.subscribe((t, o, old) => {
        for (const d of ownersToSync(this.deployments, 'Deployment', appsSelector, t, o, old))
          this.loop.enqueue(objectKey(d));
      }),
    );
    this.unsubscribeOnStop(this.pods.subscribe((t, o) => this.onPod(t, o as Pod)));
  }

  /** Recreate waits for old pods to be gone, so a pod deletion may unblock a rollout. */
  private onPod(type: InformerEvent, pod: Pod): void {
    if (type !== 'DELETED') return;
    const ns = pod.metadata.namespace ?? '';
    const rs = ownerOf(this.rss, ns, controllerRefOf(pod), 'ReplicaSet');
    const d =
      rs && (ownerOf(this.deployments, ns, controllerRefOf(rs), 'Deployment') as Deployment | undefined);
    if (d && !isRollingUpdate(d)) this.loop.enqueue(objectKey(d));
  }

  protected async sync(key: string): Promise<void> {
    const cached = this.deployments.get(key) as Deployment | undefined;
    if (!cached) return;
    let d: Deployment = structuredClone(cached);
    const selector = deploymentSelector(d);
    if (!selector) return;
    if (selector.empty) {
      this.ctx.recorder.event(
        d,
        'Warning',
        'SelectingAll',
        'This deployment is selecting all pods. A non-empty selector is required.',
      );
      if (int(d.status?.observedGeneration, 0) < int(d.metadata.generation, 0)) {
        await this.writeStatus(d, { ...(d.status ?? {}), observedGeneration: d.metadata.generation });
      }
      return;
    }
    const rsList = await this.replicaSetsFor(d, selector);
    if (d.metadata.deletionTimestamp) {
      const { newRs, olds } = await this.allReplicaSets(d, rsList, false);
      await this.syncStatusOnly(d, [...olds, ...(newRs ? [newRs] : [])], newRs);
      return;
    }
    d = await this.checkPausedConditions(d);
    if (d.spec?.paused) {
      await this.syncScaling(d, rsList);
      return;
    }
    if (this.isScalingEvent(d, rsList)) {
      await this.syncScaling(d, rsList);
      return;
    }
    if (isRollingUpdate(d)) await this.rolloutRolling(d, rsList);
    else await this.rolloutRecreate(d, rsList);
  }

  // ---------- ReplicaSets ----------

  private async replicaSetsFor(d: Deployment, selector: Selector): Promise<ReplicaSet[]> {
    const candidates = claimCandidates(this.rss, d) as ReplicaSet[];
    return claimObjects(this.ctx.client, GVR.replicasets, d, selector, candidates);
  }

  /**
   * getAllReplicaSetsAndSyncRevision: the new ReplicaSet (created when asked and missing,
   * its revision annotations brought up to date) and the old ones.
   */
  private async allReplicaSets(
    d: Deployment,
    rsList: ReplicaSet[],
    create: boolean,
  ): Promise<{ newRs: ReplicaSet | undefined; olds: ReplicaSet[]; d: Deployment }> {
    const existing = findNewReplicaSet(d, rsList);
    const olds = rsList.filter((rs) => rs !== existing);
    const newRevision = maxRevision(olds) + 1;
    const now = new Date(this.ctx.clock.now());
    if (existing) {
      let rs = existing;
      const copy: ReplicaSet = structuredClone(existing);
      const annotationsChanged = setNewReplicaSetAnnotations(d, copy, newRevision, true);
      const minReadyChanged = int(copy.spec?.minReadySeconds, 0) !== int(d.spec?.minReadySeconds, 0);
      if (annotationsChanged || minReadyChanged) {
        rs = await this.ctx.client.mutate<ReplicaSet>(
          GVR.replicasets,
          copy.metadata.namespace!,
          copy.metadata.name!,
          (cur) => {
            cur.metadata.annotations = copy.metadata.annotations;
            cur.spec = { ...(cur.spec ?? {}), minReadySeconds: d.spec?.minReadySeconds ?? 0 };
          },
        );
      }
      d = (await this.setDeploymentRevision(d, rs.metadata.annotations?.[REVISION_ANNOTATION])) ?? d;
      if (!getCondition(d.status, 'Progressing') && hasProgressDeadline(d)) {
        d = await this.setProgressing(
          d,
          'FoundNewReplicaSet',
          `Found new replica set "${rs.metadata.name}"`,
          now,
        );
      }
      return { newRs: rs, olds, d };
    }
    if (!create) return { newRs: undefined, olds, d };

    const hash = podTemplateHash(d);
    const template = structuredClone(d.spec?.template ?? {});
    template.metadata ??= {};
    template.metadata.labels = { ...(template.metadata.labels ?? {}), [POD_TEMPLATE_HASH]: hash };
    const selector = structuredClone(d.spec?.selector ?? {});
    selector.matchLabels = { ...(selector.matchLabels ?? {}), [POD_TEMPLATE_HASH]: hash };
    const newRs: ReplicaSet = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: `${d.metadata.name}-${hash}`,
        namespace: d.metadata.namespace,
        ownerReferences: [newControllerRef(d)],
        labels: { ...template.metadata.labels },
      },
      spec: { replicas: 0, minReadySeconds: d.spec?.minReadySeconds ?? 0, selector, template },
    };
    newRs.spec!.replicas = newRSNewReplicas(d, [...olds, newRs], newRs);
    setNewReplicaSetAnnotations(d, newRs, newRevision, false);

    let created: ReplicaSet;
    try {
      created = await this.ctx.client.create<ReplicaSet>(GVR.replicasets, newRs);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 409)) {
        const status = structuredClone(d.status ?? {});
        const msg = `Failed to create new replica set "${newRs.metadata.name}": ${err instanceof Error ? err.message : String(err)}`;
        if (hasProgressDeadline(d)) {
          setCondition(status, newCondition('Progressing', 'False', 'ReplicaSetCreateError', msg, now));
          await this.writeStatus(d, status);
        }
        this.ctx.recorder.event(d, 'Warning', 'ReplicaSetCreateError', msg);
        throw err;
      }
      // AlreadyExists: ours with the same template (our cache saw it late) or a hash collision.
      const other = this.ctx.client.get<ReplicaSet>(
        GVR.replicasets,
        d.metadata.namespace!,
        newRs.metadata.name!,
      );
      if (
        other &&
        controllerRefOf(other)?.uid === d.metadata.uid &&
        equalIgnoreHash(other.spec?.template, d.spec?.template)
      ) {
        return { newRs: other, olds, d };
      }
      const status = structuredClone(d.status ?? {});
      status.collisionCount = int(status.collisionCount, 0) + 1;
      await this.writeStatus(d, status);
      throw new Error(
        `hash collision for ReplicaSet ${newRs.metadata.name}: bumped collisionCount to ${status.collisionCount}`,
      );
    }
    if (rsReplicas(created) > 0) {
      this.ctx.recorder.event(
        d,
        'Normal',
        'ScalingReplicaSet',
        `Scaled up replica set ${created.metadata.name} to ${rsReplicas(created)} from 0`,
      );
    }
    d = (await this.setDeploymentRevision(d, String(newRevision))) ?? d;
    if (hasProgressDeadline(d)) {
      d = await this.setProgressing(
        d,
        'NewReplicaSetCreated',
        `Created new replica set "${created.metadata.name}"`,
        now,
      );
    }
    return { newRs: created, olds, d };
  }

  /** Writes Progressing=True with the reason and message; returns the Deployment as written. */
  private async setProgressing(
    d: Deployment,
    reason: string,
    message: string,
    now: Date,
  ): Promise<Deployment> {
    const status = structuredClone(d.status ?? {});
    setCondition(status, newCondition('Progressing', 'True', reason, message, now));
    return this.writeStatus(d, status);
  }

  /** SetDeploymentRevision: the Deployment carries its newest ReplicaSet's revision. */
  private async setDeploymentRevision(
    d: Deployment,
    revision: string | undefined,
  ): Promise<Deployment | undefined> {
    if (revision === undefined || d.metadata.annotations?.[REVISION_ANNOTATION] === revision)
      return undefined;
    const updated = await this.ctx.client.mutate<Deployment>(
      GVR.deployments,
      d.metadata.namespace!,
      d.metadata.name!,
      (cur) => {
        if (cur.metadata.uid !== d.metadata.uid) throw new Error('deployment was replaced');
        cur.metadata.annotations = { ...(cur.metadata.annotations ?? {}), [REVISION_ANNOTATION]: revision };
      },
    );
    return {
      ...d,
      metadata: {
        ...d.metadata,
        annotations: updated.metadata.annotations,
        resourceVersion: updated.metadata.resourceVersion,
      },
    };
  }

  /** scaleReplicaSetAndRecordEvent; returns the updated ReplicaSet. */
  private async scaleReplicaSet(
    rs: ReplicaSet,
    size: number,
    d: Deployment,
  ): Promise<{ scaled: boolean; rs: ReplicaSet }> {
    const desired = replicasOf(d);
    const max = desired + maxSurge(d);
    const sizeChanged = rsReplicas(rs) !== size;
    if (!sizeChanged && !replicasAnnotationsNeedUpdate(rs, desired, max)) return { scaled: false, rs };
    const from = rsReplicas(rs);
    const updated = await this.ctx.client.mutate<ReplicaSet>(
      GVR.replicasets,
      rs.metadata.namespace!,
      rs.metadata.name!,
      (cur) => {
        if (cur.metadata.uid !== rs.metadata.uid)
          throw new Error(`replicaset ${rs.metadata.name} was replaced`);
        cur.spec = { ...(cur.spec ?? {}), replicas: size };
        setReplicasAnnotations(cur, desired, max);
      },
    );
    if (sizeChanged) {
      const op = from < size ? 'up' : 'down';
      this.ctx.recorder.event(
        d,
        'Normal',
        'ScalingReplicaSet',
        `Scaled ${op} replica set ${rs.metadata.name} to ${size} from ${from}`,
      );
    }
    return { scaled: sizeChanged, rs: updated };
  }

  // ---------- scaling and pause ----------

  private async checkPausedConditions(d: Deployment): Promise<Deployment> {
    if (!hasProgressDeadline(d)) return d;
    const cond = getCondition(d.status, 'Progressing');
    if (cond?.reason === 'ProgressDeadlineExceeded') return d;
    const pausedCond = cond?.reason === 'DeploymentPaused';
    const now = new Date(this.ctx.clock.now());
    const status = structuredClone(d.status ?? {});
    if (d.spec?.paused && !pausedCond) {
      setCondition(
        status,
        newCondition('Progressing', 'Unknown', 'DeploymentPaused', 'Deployment is paused', now),
      );
    } else if (!d.spec?.paused && pausedCond) {
      setCondition(
        status,
        newCondition('Progressing', 'Unknown', 'DeploymentResumed', 'Deployment is resumed', now),
      );
    } else return d;
    return this.writeStatus(d, status);
  }

  /** isScalingEvent: an active ReplicaSet's desired-replicas annotation disagrees with spec.replicas. */
  private isScalingEvent(d: Deployment, rsList: ReplicaSet[]): boolean {
    for (const rs of activeReplicaSets(rsList)) {
      const v = rs.metadata.annotations?.[DESIRED_REPLICAS_ANNOTATION];
      if (v === undefined) continue;
      if (Number(v) !== replicasOf(d)) return true;
    }
    return false;
  }

  /** sync: scaling (and cleanup when paused) without rolling anything out. */
  private async syncScaling(d0: Deployment, rsList: ReplicaSet[]): Promise<void> {
    const { newRs, olds, d } = await this.allReplicaSets(d0, rsList, false);
    const updated = await this.scale(d, newRs, olds);
    if (d.spec?.paused) await this.cleanup(d, updated.olds);
    await this.syncStatusOnly(d, [...updated.olds, ...(updated.newRs ? [updated.newRs] : [])], updated.newRs);
  }

  private async scale(
    d: Deployment,
    newRs: ReplicaSet | undefined,
    olds: ReplicaSet[],
  ): Promise<{ newRs: ReplicaSet | undefined; olds: ReplicaSet[] }> {
    const replace = (rs: ReplicaSet) => {
      if (newRs && rs.metadata.uid === newRs.metadata.uid) newRs = rs;
      else olds = olds.map((o) => (o.metadata.uid === rs.metadata.uid ? rs : o));
    };
    const single = findActiveOrLatest(newRs, olds);
    if (single) {
      if (rsReplicas(single) !== replicasOf(d))
        replace((await this.scaleReplicaSet(single, replicasOf(d), d)).rs);
      return { newRs, olds };
    }
    if (isSaturated(d, newRs)) {
      for (const old of activeReplicaSets(olds)) replace((await this.scaleReplicaSet(old, 0, d)).rs);
      return { newRs, olds };
    }
    if (!isRollingUpdate(d)) return { newRs, olds };
    const all = activeReplicaSets([...olds, ...(newRs ? [newRs] : [])]);
    const allowed = replicasOf(d) > 0 ? replicasOf(d) + maxSurge(d) : 0;
    const toAdd = allowed - sumSpecReplicas(all);
    const ordered = toAdd > 0 ? sortBySize(all, true) : sortBySize(all, false);
    const sizes = new Map<string, number>();
    let added = 0;
    for (const rs of ordered) {
      if (toAdd !== 0) {
        const p = proportion(rs, d, toAdd, added);
        sizes.set(rs.metadata.uid!, rsReplicas(rs) + p);
        added += p;
      } else sizes.set(rs.metadata.uid!, rsReplicas(rs));
    }
    if (ordered.length > 0 && toAdd !== added) {
      // The leftover goes to the largest ReplicaSet, never below zero.
      const first = ordered[0]!.metadata.uid!;
      sizes.set(first, Math.max(0, sizes.get(first)! + toAdd - added));
    }
    for (const rs of ordered) replace((await this.scaleReplicaSet(rs, sizes.get(rs.metadata.uid!)!, d)).rs);
    return { newRs, olds };
  }

  // ---------- rollouts ----------

  private async rolloutRolling(d0: Deployment, rsList: ReplicaSet[]): Promise<void> {
    const { newRs, olds, d } = await this.allReplicaSets(d0, rsList, true);
    const all = [...olds, ...(newRs ? [newRs] : [])];
    if (newRs && (await this.reconcileNewReplicaSet(all, newRs, d))) {
      await this.syncRolloutStatus(d, this.refresh(all), this.refreshOne(newRs));
      return;
    }
    if (await this.reconcileOldReplicaSets(all, activeReplicaSets(olds), newRs, d)) {
      await this.syncRolloutStatus(d, this.refresh(all), this.refreshOne(newRs));
      return;
    }
    if (deploymentComplete(d, d.status ?? {})) await this.cleanup(d, olds);
    await this.syncRolloutStatus(d, this.refresh(all), this.refreshOne(newRs));
  }

  private async reconcileNewReplicaSet(
    all: ReplicaSet[],
    newRs: ReplicaSet,
    d: Deployment,
  ): Promise<boolean> {
    const want = replicasOf(d);
    if (rsReplicas(newRs) === want) return false;
    if (rsReplicas(newRs) > want) return (await this.scaleReplicaSet(newRs, want, d)).scaled;
    return (await this.scaleReplicaSet(newRs, newRSNewReplicas(d, all, newRs), d)).scaled;
  }

  private async reconcileOldReplicaSets(
    all: ReplicaSet[],
    oldActive: ReplicaSet[],
    newRs: ReplicaSet | undefined,
    d: Deployment,
  ): Promise<boolean> {
    if (sumSpecReplicas(oldActive) === 0) return false;
    const minAvailable = replicasOf(d) - maxUnavailable(d);
    const newUnavailable = newRs ? rsReplicas(newRs) - int(newRs.status?.availableReplicas, 0) : 0;
    const maxScaledDown = sumSpecReplicas(all) - minAvailable - newUnavailable;
    if (maxScaledDown <= 0) return false;
    // First drop old replicas that are not available anyway: they cost no availability.
    let cleaned = 0;
    const olds = sortByCreation(oldActive);
    for (let i = 0; i < olds.length; i++) {
      if (cleaned >= maxScaledDown) break;
      const rs = olds[i]!;
      const spec = rsReplicas(rs);
      const avail = int(rs.status?.availableReplicas, 0);
      if (spec === 0 || spec === avail) continue;
      const down = Math.min(maxScaledDown - cleaned, spec - avail);
      const r = await this.scaleReplicaSet(rs, spec - down, d);
      olds[i] = r.rs;
      cleaned += down;
    }
    const allNow = [...olds, ...(newRs ? [newRs] : [])];
    const available = allNow.reduce((n, rs) => n + int(rs.status?.availableReplicas, 0), 0);
    let scaledDown = 0;
    if (available > minAvailable) {
      const total = available - minAvailable;
      for (const rs of sortByCreation(olds)) {
        if (scaledDown >= total) break;
        if (rsReplicas(rs) === 0) continue;
        const down = Math.min(rsReplicas(rs), total - scaledDown);
        await this.scaleReplicaSet(rs, rsReplicas(rs) - down, d);
        scaledDown += down;
      }
    }
    return cleaned + scaledDown > 0;
  }

  private async rolloutRecreate(d0: Deployment, rsList: ReplicaSet[]): Promise<void> {
    let { newRs, olds, d } = await this.allReplicaSets(d0, rsList, false);
    let all = [...olds, ...(newRs ? [newRs] : [])];
    let scaledDown = false;
    for (const rs of activeReplicaSets(olds)) {
      if ((await this.scaleReplicaSet(rs, 0, d)).scaled) scaledDown = true;
    }
    if (scaledDown) {
      await this.syncRolloutStatus(d, this.refresh(all), this.refreshOne(newRs));
      return;
    }
    if (this.oldPodsRunning(newRs, this.refresh(olds))) {
      await this.syncRolloutStatus(d, this.refresh(all), this.refreshOne(newRs));
      return;
    }
    if (!newRs) {
      ({ newRs, olds, d } = await this.allReplicaSets(d, this.refresh(rsList), true));
      all = [...olds, ...(newRs ? [newRs] : [])];
    }
    if (newRs && rsReplicas(newRs) !== replicasOf(d)) await this.scaleReplicaSet(newRs, replicasOf(d), d);
    if (deploymentComplete(d, d.status ?? {})) await this.cleanup(d, olds);
    await this.syncRolloutStatus(d, this.refresh(all), this.refreshOne(newRs));
  }

  /** oldPodsRunning: any old ReplicaSet still reports pods, or has a pod not finished. */
  private oldPodsRunning(newRs: ReplicaSet | undefined, olds: ReplicaSet[]): boolean {
    if (olds.some((rs) => int(rs.status?.replicas, 0) > 0)) return true;
    for (const rs of olds) {
      if (newRs && rs.metadata.uid === newRs.metadata.uid) continue;
      for (const p of this.pods.byIndex(BY_CONTROLLER_UID, rs.metadata.uid!)) {
        const phase = (p as Pod).status?.phase;
        if (phase !== 'Failed' && phase !== 'Succeeded') return true;
      }
    }
    return false;
  }

  /** cleanupDeployment: deletes the oldest fully scaled-down ReplicaSets beyond revisionHistoryLimit. */
  private async cleanup(d: Deployment, olds: ReplicaSet[]): Promise<void> {
    const limit = d.spec?.revisionHistoryLimit;
    if (typeof limit !== 'number') return;
    const alive = olds.filter((rs) => !rs.metadata.deletionTimestamp);
    const diff = alive.length - limit;
    if (diff <= 0) return;
    const byRevision = [...alive].sort(
      (a, b) =>
        revisionOf(a) - revisionOf(b) ||
        (parseTime(a.metadata.creationTimestamp) ?? 0) - (parseTime(b.metadata.creationTimestamp) ?? 0),
    );
    for (let i = 0; i < diff; i++) {
      const rs = this.refreshOne(byRevision[i])!;
      if (!rs) continue;
      if (
        int(rs.status?.replicas, 0) !== 0 ||
        rsReplicas(rs) !== 0 ||
        int(rs.metadata.generation, 0) > int(rs.status?.observedGeneration, 0) ||
        rs.metadata.deletionTimestamp
      )
        continue;
      try {
        await this.ctx.client.delete(GVR.replicasets, rs.metadata.namespace!, rs.metadata.name!, {
          preconditions: { uid: rs.metadata.uid },
        });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }

  // ---------- status ----------

  private async syncStatusOnly(
    d: Deployment,
    all: ReplicaSet[],
    newRs: ReplicaSet | undefined,
  ): Promise<void> {
    const status = calculateStatus(
      this.refresh(all),
      this.refreshOne(newRs),
      d,
      new Date(this.ctx.clock.now()),
    );
    if (jsonEqual(serializedStatus(status), d.status ?? {})) return;
    await this.writeStatus(d, status);
  }

  private async syncRolloutStatus(
    d: Deployment,
    all: ReplicaSet[],
    newRs: ReplicaSet | undefined,
  ): Promise<void> {
    const now = new Date(this.ctx.clock.now());
    const status = calculateStatus(all, newRs, d, now);
    if (!hasProgressDeadline(d)) removeCondition(status, 'Progressing');
    const cur = getCondition(status, 'Progressing');
    const isComplete =
      int(status.replicas, 0) === int(status.updatedReplicas, 0) && cur?.reason === 'NewReplicaSetAvailable';
    if (hasProgressDeadline(d) && !isComplete) {
      if (deploymentComplete(d, status)) {
        const msg = newRs
          ? `ReplicaSet "${newRs.metadata.name}" has successfully progressed.`
          : `Deployment "${d.metadata.name}" has successfully progressed.`;
        setCondition(status, newCondition('Progressing', 'True', 'NewReplicaSetAvailable', msg, now));
      } else if (deploymentProgressing(d, status)) {
        const msg = newRs
          ? `ReplicaSet "${newRs.metadata.name}" is progressing.`
          : `Deployment "${d.metadata.name}" is progressing.`;
        const c = newCondition('Progressing', 'True', 'ReplicaSetUpdated', msg, now);
        // Progress refreshes lastUpdateTime (the deadline's start) but not the transition time.
        if (cur?.status === 'True') c.lastTransitionTime = cur.lastTransitionTime;
        removeCondition(status, 'Progressing');
        setCondition(status, c);
      } else if (deploymentTimedOut(d, status, now.getTime())) {
        const msg = newRs
          ? `ReplicaSet "${newRs.metadata.name}" has timed out progressing.`
          : `Deployment "${d.metadata.name}" has timed out progressing.`;
        setCondition(status, newCondition('Progressing', 'False', 'ProgressDeadlineExceeded', msg, now));
      }
    }
    const failures = all
      .flatMap(
        (rs) =>
          (
            rs.status as
              | { conditions?: { type: string; status: string; reason?: string; message?: string }[] }
              | undefined
          )?.conditions ?? [],
      )
      .filter((c) => c.type === 'ReplicaFailure');
    if (failures.length > 0) {
      const f = failures[0]!;
      setCondition(status, newCondition('ReplicaFailure', f.status, f.reason ?? '', f.message ?? '', now));
    } else removeCondition(status, 'ReplicaFailure');

    if (jsonEqual(serializedStatus(status), d.status ?? {})) {
      this.requeueStuck(d, status, now.getTime());
      return;
    }
    await this.writeStatus(d, status);
  }

  /** requeueStuckDeployment: wake up when the progress deadline would pass. */
  private requeueStuck(d: Deployment, status: DeploymentStatus, now: number): void {
    const c = getCondition(status, 'Progressing');
    if (
      !hasProgressDeadline(d) ||
      !c ||
      c.reason === 'NewReplicaSetAvailable' ||
      c.reason === 'ProgressDeadlineExceeded'
    )
      return;
    if (deploymentComplete(d, status)) return;
    const from = parseTime(c.lastUpdateTime);
    if (from === undefined) return;
    const after = from + progressDeadlineSeconds(d) * 1000 - now;
    this.loop.enqueueAfter(objectKey(d), Math.max(0, after) + 1000);
  }

  private async writeStatus(d: Deployment, status: DeploymentStatus): Promise<Deployment> {
    const updated = await writeStatus(this.ctx.client, GVR.deployments, d, serializedStatus(status));
    return {
      ...d,
      status: updated.status,
      metadata: { ...d.metadata, resourceVersion: updated.metadata.resourceVersion },
    };
  }

  /** The cached (post-write) versions of ReplicaSets: writes land in the cache synchronously. */
  private refresh(rss: ReplicaSet[]): ReplicaSet[] {
    return rss.map((rs) => this.refreshOne(rs)).filter((x): x is ReplicaSet => x !== undefined);
  }

  private refreshOne(rs: ReplicaSet | undefined): ReplicaSet | undefined {
    if (!rs) return undefined;
    const cur = this.rss.getByName(rs.metadata.namespace ?? '', rs.metadata.name!) as ReplicaSet | undefined;
    return cur && cur.metadata.uid === rs.metadata.uid ? cur : undefined;
  }
}

export function deploymentSelector(d: Deployment): Selector | undefined {
  try {
    return selectorFromObject(d.spec?.selector ?? {});
  } catch {
    return undefined;
  }
}
