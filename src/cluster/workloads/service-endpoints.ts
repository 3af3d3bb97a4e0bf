/**
 * What the Endpoints and EndpointSlice controllers share. Upstream they are two controllers
 * (pkg/controller/endpoint, pkg/controller/endpointslice) that wire the same handlers: a
 * Service event queues that Service, a pod event queues every Service selecting the pod before
 * or after its change (`GetPodServiceMemberships`), and an event on the controller's own kind
 * queues the Service it belongs to; and they read pods through the same helpers
 * (staging/src/k8s.io/endpointslice/util: `ShouldPodBeInEndpoints`, `FindPort`). Each
 * controller's sync, what it builds from the pods, stays in its own file.
 */

import { objectKey } from '../../kube/keys.ts';
import { selectorFromObject } from '../../kube/labels.ts';
import { recordOf as rec } from '../../lib/json.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { GVR, type Gvr } from '../client.ts';
import { type ControllerContext, LoopController } from './context.ts';
import { BY_NAMESPACE, type Informer } from './informer.ts';
import type { Pod } from './pods.ts';

type Json = Record<string, unknown>;

/** The Service's selector (undefined without one: such Services get no endpoints). */
export function serviceSelector(svc: KubeObject) {
  const sel = rec(rec(svc.spec).selector) as Record<string, string>;
  if (Object.keys(sel).length === 0) return undefined;
  try {
    return selectorFromObject({ matchLabels: sel });
  } catch {
    return undefined;
  }
}

/**
 * ShouldPodBeInEndpoints (staging/src/k8s.io/endpointslice/util): not terminal, has an IP, and
 * not terminating unless terminating pods are included.
 */
export function shouldPodBeInEndpoints(pod: Pod, includeTerminating: boolean): boolean {
  if (pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') return false;
  if (!(pod.status as Json | undefined)?.podIP) return false;
  return includeTerminating || !pod.metadata.deletionTimestamp;
}

/** FindPort: a numeric target port, or the pod's container port of that name. */
export function targetPort(svcPort: Json, pod: Pod): number | undefined {
  const t = svcPort.targetPort ?? svcPort.port;
  if (typeof t === 'number') return t;
  if (typeof t === 'string' && /^\d+$/.test(t)) return Number(t);
  for (const c of (rec(pod.spec).containers as Json[] | undefined) ?? []) {
    for (const p of (c.ports as Json[] | undefined) ?? []) {
      if (p.name === t && (p.protocol ?? 'TCP') === (svcPort.protocol ?? 'TCP'))
        return p.containerPort as number;
    }
  }
  return undefined;
}

/** The Services whose selector takes the pod, before or after a change of its labels. */
export function servicesSelecting(services: Informer, pod: KubeObject, old?: KubeObject): KubeObject[] {
  return services.byIndex(BY_NAMESPACE, pod.metadata.namespace ?? '').filter((svc) => {
    const sel = serviceSelector(svc);
    return (
      !!sel && (sel.matches(pod.metadata.labels ?? {}) || (!!old && sel.matches(old.metadata.labels ?? {})))
    );
  });
}

/** The controller's own kind, and the key of the Service one of its objects belongs to. */
export interface OwnKind {
  gvr: Gvr;
  serviceKey(obj: KubeObject): string | undefined;
}

/** A controller keyed by Service (`namespace/name`), queued as both upstream controllers are. */
export abstract class ServiceEndpointsController extends LoopController {
  protected readonly services: Informer;
  protected readonly pods: Informer;

  constructor(ctx: ControllerContext, name: string, own: OwnKind) {
    super(ctx, name);
    this.services = ctx.informers.for(GVR.services);
    this.pods = ctx.informers.for(GVR.pods);
    this.unsubscribeOnStop(this.services.subscribe((_t, o) => this.loop.enqueue(objectKey(o))));
    // Pod changes come in bursts (a rollout): a Service's sync waits one batch for the rest.
    this.unsubscribeOnStop(
      this.pods.subscribe((_t, o, old) => {
        for (const svc of servicesSelecting(this.services, o, old))
          this.loop.enqueueAfter(objectKey(svc), this.ctx.batchMs);
      }),
    );
    // Its own objects changed or deleted by someone else are put back (and leftovers removed).
    this.unsubscribeOnStop(
      ctx.informers.for(own.gvr).subscribe((_t, o) => {
        const key = own.serviceKey(o);
        if (key) this.loop.enqueueAfter(key, this.ctx.batchMs);
      }),
    );
  }
}
