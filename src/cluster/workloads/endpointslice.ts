/**
 * The EndpointSlice controller (pkg/controller/endpointslice, staging endpointslice
 * reconciler): for every Service with a selector, IPv4 EndpointSlices named
 * `<service>-<suffix>` labelled `kubernetes.io/service-name` and
 * `endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io`, owned by the
 * Service, listing each selected pod that has an IP (ready, serving, terminating conditions,
 * nodeName, targetRef) and the Service's ports with their target ports resolved against the
 * pod's named container ports. Up to 100 endpoints per slice (maxEndpointsPerSlice).
 * Its queueing and pod helpers are shared with the Endpoints controller (service-endpoints.ts).
 */

import { parseKey } from '../../kube/keys.ts';
import { jsonEqual, recordOf as rec } from '../../lib/json.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { GVR, isNotFound } from '../client.ts';
import type { ControllerContext } from './context.ts';
import { BY_NAMESPACE, type Informer } from './informer.ts';
import { isPodReady, newControllerRef, type Pod } from './pods.ts';
import {
  ServiceEndpointsController,
  serviceSelector,
  shouldPodBeInEndpoints,
  targetPort,
} from './service-endpoints.ts';

const SLICES = GVR.endpointslices;

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
export const MANAGED_BY = 'endpointslice-controller.k8s.io';
const MAX_PER_SLICE = 100;

type Json = Record<string, unknown>;

export class EndpointSliceController extends ServiceEndpointsController {
  private readonly slices: Informer;

  constructor(ctx: ControllerContext) {
    super(ctx, 'endpointslice', {
      gvr: SLICES,
      // A slice this controller manages belongs to the Service its label names.
      serviceKey: (o) => {
        const svc = o.metadata.labels?.[SERVICE_NAME_LABEL];
        return svc && o.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY
          ? `${o.metadata.namespace}/${svc}`
          : undefined;
      },
    });
    this.slices = ctx.informers.for(SLICES);
  }

  protected async sync(key: string): Promise<void> {
    const { namespace = '', name } = parseKey(key);
    const svc = this.services.get(key);
    const owned = this.slices
      .byIndex(BY_NAMESPACE, namespace)
      .filter(
        (s) =>
          s.metadata.labels?.[SERVICE_NAME_LABEL] === name &&
          s.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY,
      );
    const sel = svc && !svc.metadata.deletionTimestamp ? serviceSelector(svc) : undefined;
    if (!svc || !sel) {
      // No Service (or no selector): its managed slices go (the GC also removes owned ones).
      for (const s of owned) await this.remove(s);
      return;
    }
    const svcPorts = (rec(svc.spec).ports as Json[] | undefined) ?? [];
    const endpoints: Json[] = [];
    let ports: Json[] | undefined;
    const pods = (this.pods.byIndex(BY_NAMESPACE, namespace) as Pod[])
      .filter((p) => sel.matches(p.metadata.labels ?? {}) && shouldPodBeInEndpoints(p, true))
      .sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
    for (const pod of pods) {
      ports ??= svcPorts.map((sp) => {
        const port: Json = { name: sp.name ?? '', protocol: sp.protocol ?? 'TCP' };
        const t = targetPort(sp, pod);
        if (t !== undefined) port.port = t;
        return port;
      });
      const terminating = !!pod.metadata.deletionTimestamp;
      const ready = isPodReady(pod) && !terminating;
      endpoints.push({
        addresses: [(pod.status as Json).podIP],
        conditions: { ready, serving: isPodReady(pod), terminating },
        ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}),
        targetRef: { kind: 'Pod', namespace, name: pod.metadata.name, uid: pod.metadata.uid },
      });
    }
    const chunks: Json[][] = [];
    for (let i = 0; i < endpoints.length; i += MAX_PER_SLICE)
      chunks.push(endpoints.slice(i, i + MAX_PER_SLICE));
    if (chunks.length === 0) chunks.push([]);
    const desiredPorts =
      ports ?? svcPorts.map((sp) => ({ name: sp.name ?? '', protocol: sp.protocol ?? 'TCP' }));
    for (const [i, eps] of chunks.entries()) {
      const existing = owned[i];
      const body = { addressType: 'IPv4', endpoints: eps, ports: desiredPorts };
      if (existing) {
        const cur = existing as Json;
        if (jsonEqual(cur.endpoints ?? [], eps) && jsonEqual(cur.ports ?? [], desiredPorts)) continue;
        await this.ctx.client.mutate(SLICES, namespace, existing.metadata.name!, (s) => {
          Object.assign(s, { endpoints: eps, ports: desiredPorts });
        });
      } else {
        await this.ctx.client.create(SLICES, {
          apiVersion: 'discovery.k8s.io/v1',
          kind: 'EndpointSlice',
          metadata: {
            generateName: `${name}-`,
            namespace,
            labels: {
              ...(svc.metadata.labels ?? {}),
              [SERVICE_NAME_LABEL]: name,
              [MANAGED_BY_LABEL]: MANAGED_BY,
            },
            ownerReferences: [newControllerRef(svc)],
          },
          ...body,
        } as KubeObject);
      }
    }
    for (const s of owned.slice(chunks.length)) await this.remove(s);
  }

  private async remove(slice: KubeObject): Promise<void> {
    try {
      await this.ctx.client.delete(SLICES, slice.metadata.namespace!, slice.metadata.name!);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
