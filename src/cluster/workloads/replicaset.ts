/**
 * The ReplicaSet controller (pkg/controller/replicaset): keeps `spec.replicas` active pods
 * matching the selector, adopting matching orphans and releasing owned pods that stopped
 * matching; creates in slow-start batches, deletes the lowest-ranked pods first; reports
 * replicas, fullyLabeledReplicas, readyReplicas, availableReplicas (minReadySeconds),
 * observedGeneration and the ReplicaFailure condition.
 */
import type { ReplicaSet } from '../../kube/builtin.ts';
import { rfc3339 } from '../../kube/conditions.ts';
import { objectKey } from '../../kube/keys.ts';
import { type Selector, selectorFromObject } from '../../kube/labels.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { GVR, type Gvr } from '../client.ts';
import { type ControllerContext, int, LoopController } from './context.ts';
import { BY_CONTROLLER_UID, claimCandidates, type Informer, type InformerEvent } from './informer.ts';
import {
  appsSelector,
  claimObjects,
  colocationRanks,
  compareForDeletion,
  controllerRefOf,
  isPodActive,
  isPodAvailable,
  isPodReady,
  ownersToSync,
  type Pod,
  PodControl,
  podFromTemplate,
  untilAvailable,
} from './pods.ts';
import { writeStatusIfChanged } from './status.ts';
import { errMessage, slowStartBatch } from './util.ts';

/** Pods created or deleted per sync (burstReplicas). */
const BURST_REPLICAS = 500;

export type { ReplicaSet, ReplicaSetCondition } from '../../kube/builtin.ts';

/**
 * What differs between the ReplicaSet controller and the ReplicationController one, which
 * upstream runs as the same code behind an adapter (pkg/controller/replication): the
 * resource, the kind, and the selector (a LabelSelector, or a plain label map).
 */
export interface ReplicaKind {
  name: string;
  gvr: Gvr;
  kind: string;
  selectorOf(owner: KubeObject): Selector | undefined;
}

export const REPLICA_SET: ReplicaKind = {
  name: 'replicaset',
  gvr: GVR.replicasets,
  kind: 'ReplicaSet',
  selectorOf: appsSelector,
};

/** A ReplicationController's `spec.selector` is a label map; empty or invalid selects nothing. */
export const REPLICATION_CONTROLLER: ReplicaKind = {
  name: 'replicationmanager',
  gvr: GVR.replicationcontrollers,
  kind: 'ReplicationController',
  selectorOf(owner) {
    const sel = (owner.spec as { selector?: Record<string, string> } | undefined)?.selector;
    if (!sel || Object.keys(sel).length === 0) return undefined;
    try {
      return selectorFromObject({ matchLabels: sel });
    } catch {
      return undefined;
    }
  },
};

export class ReplicaSetController extends LoopController {
  private readonly rss: Informer;
  private readonly pods: Informer;
  private readonly podControl: PodControl;
  private readonly of: ReplicaKind;

  constructor(ctx: ControllerContext, of: ReplicaKind = REPLICA_SET) {
    super(ctx, of.name);
    this.of = of;
    this.rss = ctx.informers.for(of.gvr);
    this.pods = ctx.informers.for(GVR.pods);
    this.podControl = new PodControl(ctx.client, ctx.recorder);
    this.unsubscribeOnStop(this.rss.subscribe((_t, o) => this.loop.enqueue(objectKey(o))));
    this.unsubscribeOnStop(
      this.pods.subscribe((t, o, old) => this.onPod(t, o as Pod, old as Pod | undefined)),
    );
  }

  private onPod(type: InformerEvent, pod: Pod, old: Pod | undefined): void {
    for (const rs of ownersToSync(this.rss, this.of.kind, this.of.selectorOf, type, pod, old))
      this.loop.enqueueAfter(objectKey(rs), this.ctx.batchMs);
  }

  protected async sync(key: string): Promise<void> {
    const rs = this.rss.get(key) as ReplicaSet | undefined;
    if (!rs) return;
    const selector = this.of.selectorOf(rs);
    if (!selector) return;
    const candidates = (claimCandidates(this.pods, rs) as Pod[]).filter(isPodActive);
    const pods = await claimObjects(this.ctx.client, GVR.pods, rs, selector, candidates);
    let manageErr: unknown;
    if (!rs.metadata.deletionTimestamp) {
      try {
        await this.manageReplicas(rs, pods);
      } catch (err) {
        manageErr = err;
      }
    }
    const now = this.ctx.clock.now();
    // Pods created or deleted above are already in the cache: recount from it.
    const current = (claimCandidates(this.pods, rs) as Pod[]).filter(
      (p) =>
        isPodActive(p) && controllerRefOf(p)?.uid === rs.metadata.uid && selector.matches(p.metadata.labels),
    );
    const status = this.calculateStatus(rs, current, manageErr, now);
    await writeStatusIfChanged(this.ctx.client, this.of.gvr, rs, status);
    const minReady = int(rs.spec?.minReadySeconds, 0);
    if (!manageErr && minReady > 0) {
      // Re-check when the next ready pod crosses minReadySeconds.
      let soonest: number | undefined;
      for (const p of current) {
        const left = untilAvailable(p, minReady, now);
        if (left !== undefined && (soonest === undefined || left < soonest)) soonest = left;
      }
      if (soonest !== undefined) this.loop.enqueueAfter(key, soonest + 1);
    }
    if (manageErr) throw manageErr;
  }

  private async manageReplicas(rs: ReplicaSet, pods: Pod[]): Promise<void> {
    const want = int(rs.spec?.replicas, 1);
    const diff = pods.length - want;
    if (diff < 0) {
      const n = Math.min(-diff, BURST_REPLICAS);
      const res = await slowStartBatch(n, 1, async () => {
        await this.podControl.create(rs, podFromTemplate(rs.spec?.template, rs));
      });
      if (res.error) throw res.error;
      return;
    }
    if (diff > 0) {
      const n = Math.min(diff, BURST_REPLICAS);
      const related = this.relatedPods(rs);
      const ranks = colocationRanks(pods, related);
      const victims = [...pods]
        .sort((a, b) => compareForDeletion(a, b, { ranks, deletionCost: true }))
        .slice(0, n);
      const results = await Promise.allSettled(victims.map((p) => this.podControl.delete(rs, p)));
      const failed = results.find((r) => r.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
    }
  }

  /** Active pods of every ReplicaSet sharing this one's owner (a Deployment's other revisions). */
  private relatedPods(rs: ReplicaSet): Pod[] {
    const owner = controllerRefOf(rs);
    const siblings = owner ? (this.rss.byIndex(BY_CONTROLLER_UID, owner.uid) as ReplicaSet[]) : [rs];
    const out: Pod[] = [];
    for (const s of siblings)
      for (const p of this.pods.byIndex(BY_CONTROLLER_UID, s.metadata.uid!))
        if (isPodActive(p as Pod)) out.push(p as Pod);
    return out;
  }

  private calculateStatus(
    rs: ReplicaSet,
    pods: Pod[],
    manageErr: unknown,
    now: number,
  ): NonNullable<ReplicaSet['status']> {
    const templateLabels = rs.spec?.template?.metadata?.labels ?? {};
    const minReady = int(rs.spec?.minReadySeconds, 0);
    let fullyLabeled = 0;
    let ready = 0;
    let available = 0;
    for (const p of pods) {
      const labels = p.metadata.labels ?? {};
      if (Object.entries(templateLabels).every(([k, v]) => labels[k] === v)) fullyLabeled++;
      if (isPodReady(p)) {
        ready++;
        if (isPodAvailable(p, minReady, now)) available++;
      }
    }
    const status: NonNullable<ReplicaSet['status']> = {
      replicas: pods.length,
      fullyLabeledReplicas: fullyLabeled,
      readyReplicas: ready,
      availableReplicas: available,
      observedGeneration: rs.metadata.generation,
    };
    const conditions = (rs.status?.conditions ?? []).filter((c) => c.type !== 'ReplicaFailure');
    const prior = rs.status?.conditions?.find((c) => c.type === 'ReplicaFailure');
    if (manageErr) {
      const want = int(rs.spec?.replicas, 1);
      const reason = pods.length < want ? 'FailedCreate' : 'FailedDelete';
      conditions.push(
        prior ?? {
          type: 'ReplicaFailure',
          status: 'True',
          lastTransitionTime: rfc3339(),
          reason,
          message: errMessage(manageErr),
        },
      );
    }
    if (conditions.length) status.conditions = conditions;
    // readyReplicas/availableReplicas are omitempty in apps/v1.
    if (!status.readyReplicas) delete status.readyReplicas;
    if (!status.availableReplicas) delete status.availableReplicas;
    if (!status.fullyLabeledReplicas) delete status.fullyLabeledReplicas;
    return status;
  }
}
