/**
 * The disruption controller (pkg/controller/disruption/disruption.go): keeps each
 * PodDisruptionBudget's status — the pods it expects (from its pods' controllers' scale for
 * maxUnavailable and percentages, the pod count for an integer minAvailable), how many are
 * healthy (Ready, not terminating, not just evicted), how many must stay healthy, the
 * disruptions allowed and the DisruptionAllowed condition — which the eviction subresource reads.
 */
import { type Condition, rfc3339 } from '../../kube/conditions.ts';
import { objectKey } from '../../kube/keys.ts';
import { type LabelSelectorObject, selectorFromObject } from '../../kube/labels.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { GVR } from '../client.ts';
import { type ControllerContext, int, LoopController } from './context.ts';
import { BY_NAMESPACE, type Informer } from './informer.ts';
import { controllerRefOf, isPodReady, type Pod } from './pods.ts';
import { writeStatusIfChanged } from './status.ts';
import { errMessage, scaledValue } from './util.ts';

/** How long an evicted pod counts as disrupted while its deletion is pending (DeletionTimeout). */
const DELETION_TIMEOUT_MS = 2 * 60 * 1000;

interface Pdb extends KubeObject {
  spec?: { selector?: LabelSelectorObject; minAvailable?: number | string; maxUnavailable?: number | string };
  status?: Record<string, unknown> & { disruptedPods?: Record<string, string>; conditions?: Condition[] };
}

export class DisruptionController extends LoopController {
  private readonly pdbs: Informer;
  private readonly pods: Informer;
  private readonly scaleSources: Record<string, Informer>;

  constructor(ctx: ControllerContext) {
    super(ctx, 'disruption');
    this.pdbs = ctx.informers.for(GVR.poddisruptionbudgets);
    this.pods = ctx.informers.for(GVR.pods);
    this.scaleSources = {
      ReplicaSet: ctx.informers.for(GVR.replicasets),
      Deployment: ctx.informers.for(GVR.deployments),
      StatefulSet: ctx.informers.for(GVR.statefulsets),
      ReplicationController: ctx.informers.for(GVR.replicationcontrollers),
    };
    this.unsubscribeOnStop(this.pdbs.subscribe((_t, o) => this.loop.enqueue(objectKey(o))));
    this.unsubscribeOnStop(
      this.pods.subscribe((_t, o, old) => {
        for (const p of [o, old]) if (p) this.enqueueFor(p);
      }),
    );
    for (const inf of Object.values(this.scaleSources)) {
      this.unsubscribeOnStop(
        inf.subscribe((_t, o) => {
          for (const pdb of this.pdbs.byIndex(BY_NAMESPACE, o.metadata.namespace ?? ''))
            this.loop.enqueueAfter(objectKey(pdb), this.ctx.batchMs);
        }),
      );
    }
  }

  /** Every budget in the pod's namespace whose selector matches it. */
  private enqueueFor(pod: KubeObject): void {
    for (const pdb of this.pdbs.byIndex(BY_NAMESPACE, pod.metadata.namespace ?? '')) {
      if (matches(pdb as Pdb, pod)) this.loop.enqueueAfter(objectKey(pdb), this.ctx.batchMs);
    }
  }

  protected async sync(key: string): Promise<void> {
    const pdb = this.pdbs.get(key) as Pdb | undefined;
    if (!pdb || pdb.metadata.deletionTimestamp) return;
    const ns = pdb.metadata.namespace ?? '';
    const pods = (this.pods.byIndex(BY_NAMESPACE, ns) as Pod[]).filter((p) => matches(pdb, p));
    const now = this.ctx.clock.now();
    const spec = pdb.spec ?? {};
    let expected = 0;
    let desired = 0;
    let failure: string | undefined;
    if (spec.maxUnavailable !== undefined || typeof spec.minAvailable === 'string') {
      const scale = this.expectedScale(pods);
      if (typeof scale === 'string') failure = scale;
      else {
        expected = scale;
        try {
          // intstr.GetScaledValueFromIntOrPercent, rounding up as the disruption controller does.
          desired =
            spec.maxUnavailable !== undefined
              ? Math.max(0, expected - scaledValue(spec.maxUnavailable, expected, true))
              : scaledValue(spec.minAvailable, expected, true);
        } catch (err) {
          failure = errMessage(err);
        }
      }
    } else {
      expected = pods.length;
      desired = int(spec.minAvailable, 0);
    }
    // Evicted pods whose deletion is still pending count as disrupted, for a while.
    const disrupted: Record<string, string> = {};
    for (const [name, at] of Object.entries(pdb.status?.disruptedPods ?? {})) {
      const pod = pods.find((p) => p.metadata.name === name);
      if (!pod || pod.metadata.deletionTimestamp) continue;
      if (Date.parse(at) + DELETION_TIMEOUT_MS > now) disrupted[name] = at;
    }
    const healthy = pods.filter(
      (p) => !p.metadata.deletionTimestamp && isPodReady(p) && !(p.metadata.name! in disrupted),
    ).length;
    const allowed = failure ? 0 : Math.max(0, healthy - desired);
    const generation = pdb.metadata.generation ?? 0;
    const cond: Condition = failure
      ? { type: 'DisruptionAllowed', status: 'False', reason: 'SyncFailed', message: failure }
      : allowed > 0
        ? { type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', message: '' }
        : { type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods', message: '' };
    const old = (pdb.status?.conditions ?? []).find((c) => c.type === 'DisruptionAllowed');
    cond.observedGeneration = generation;
    cond.lastTransitionTime =
      old && old.status === cond.status ? old.lastTransitionTime : rfc3339(new Date(now));
    const status: Record<string, unknown> = {
      observedGeneration: generation,
      ...(Object.keys(disrupted).length ? { disruptedPods: disrupted } : {}),
      disruptionsAllowed: allowed,
      currentHealthy: healthy,
      desiredHealthy: desired,
      expectedPods: expected,
      conditions: [cond],
    };
    await writeStatusIfChanged(this.ctx.client, GVR.poddisruptionbudgets, pdb, status);
    // Re-check when the oldest disrupted entry expires.
    const times = Object.values(disrupted).map((at) => Date.parse(at) + DELETION_TIMEOUT_MS - now);
    if (times.length) this.loop.enqueueAfter(key, Math.max(1, Math.min(...times)));
  }

  /** getExpectedScale: the sum of the scale of the pods' controllers, or why it is unknown. */
  private expectedScale(pods: Pod[]): number | string {
    const seen = new Map<string, number>();
    for (const pod of pods) {
      const ref = controllerRefOf(pod);
      if (!ref) return `found no controller ref for pod "${pod.metadata.name}"`;
      let owner = this.scaleSources[ref.kind]?.get(`${pod.metadata.namespace}/${ref.name}`);
      if (!owner || owner.metadata.uid !== ref.uid)
        return `found no controllers for pod "${pod.metadata.name}"`;
      if (ref.kind === 'ReplicaSet') {
        // A Deployment's ReplicaSets take their scale from the Deployment.
        const dref = controllerRefOf(owner);
        const dep =
          dref?.kind === 'Deployment'
            ? this.scaleSources.Deployment!.get(`${pod.metadata.namespace}/${dref.name}`)
            : undefined;
        if (dep && dep.metadata.uid === dref!.uid) owner = dep;
      }
      seen.set(owner.metadata.uid!, int((owner.spec as { replicas?: number } | undefined)?.replicas, 1));
    }
    let sum = 0;
    for (const n of seen.values()) sum += n;
    return sum;
  }
}

/** policy/v1: an empty selector matches every pod of the namespace, a missing one none. */
export function matches(pdb: Pdb, pod: KubeObject): boolean {
  const sel = pdb.spec?.selector;
  if (!sel) return false;
  try {
    return selectorFromObject(sel).matches(pod.metadata.labels ?? {});
  } catch {
    return false;
  }
}
