/**
 * The Endpoints controller (pkg/controller/endpoint/endpoints_controller.go): for every Service
 * with a selector (not ExternalName), a core/v1 Endpoints object of the same name, labelled as
 * the Service (plus `service.kubernetes.io/headless` when it has no cluster IP), whose subsets
 * list each selected pod with an IP (`ShouldPodBeInEndpoints`, terminating pods only with
 * `publishNotReadyAddresses`) under `addresses` when ready (or when the Service publishes not
 * ready addresses) and `notReadyAddresses` otherwise, with `nodeName`, `targetRef` and
 * `hostname` (a pod whose `subdomain` is the Service), per port its target port resolved against
 * the pod (a pod without the named port is left out of that port), repacked into one subset per
 * set of ports (`RepackSubsets`); at most 1000 addresses (`endpoints.kubernetes.io/over-capacity:
 * truncated`). A headless Service without ports gets its addresses without ports. The Service
 * gone, its Endpoints go. Services without a selector keep the Endpoints their owners write.
 *
 * Pod selection, readiness, port resolution and the queueing are shared with the EndpointSlice
 * controller (./service-endpoints.ts). Subsets and addresses are sorted by IP and port name;
 * upstream sorts them by a hash, so the order may differ.
 */

import { objectKey, parseKey } from '../../kube/keys.ts';
import { arrayOf, jsonEqual, recordOf as rec } from '../../lib/json.ts';
import { ApiError } from '../apiserver/errors.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { GVR, isNotFound } from '../client.ts';
import type { ControllerContext } from './context.ts';
import { BY_NAMESPACE, type Informer } from './informer.ts';
import { isPodReady, type Pod } from './pods.ts';
import {
  ServiceEndpointsController,
  serviceSelector,
  shouldPodBeInEndpoints,
  targetPort,
} from './service-endpoints.ts';

const ENDPOINTS = GVR.endpoints;

const HEADLESS_LABEL = 'service.kubernetes.io/headless';
const OVER_CAPACITY = 'endpoints.kubernetes.io/over-capacity';
const MAX_CAPACITY = 1000;

type Json = Record<string, unknown>;

interface Entry {
  address: Json;
  ready: boolean;
  ports: Json[];
}

/** RepackSubsets: addresses with the same set of ports share a subset. */
function repack(entries: Entry[]): Json[] {
  const byAddress = new Map<string, Entry>();
  for (const e of entries) {
    const key = `${e.address.ip}/${e.ready}`;
    const cur = byAddress.get(key);
    if (cur) {
      for (const p of e.ports) if (!cur.ports.some((q) => jsonEqual(q, p))) cur.ports.push(p);
    } else byAddress.set(key, { ...e, ports: [...e.ports] });
  }
  const subsets = new Map<string, { addresses: Json[]; notReadyAddresses: Json[]; ports: Json[] }>();
  for (const e of byAddress.values()) {
    const ports = [...e.ports].sort(
      (a, b) => String(a.name).localeCompare(String(b.name)) || Number(a.port) - Number(b.port),
    );
    const key = JSON.stringify(ports);
    let s = subsets.get(key);
    if (!s) {
      s = { addresses: [], notReadyAddresses: [], ports };
      subsets.set(key, s);
    }
    (e.ready ? s.addresses : s.notReadyAddresses).push(e.address);
  }
  const byIp = (a: Json, b: Json) => String(a.ip).localeCompare(String(b.ip), undefined, { numeric: true });
  return [...subsets.values()]
    .map((s) => {
      const out: Json = {};
      if (s.addresses.length) out.addresses = s.addresses.sort(byIp);
      if (s.notReadyAddresses.length) out.notReadyAddresses = s.notReadyAddresses.sort(byIp);
      if (s.ports.length) out.ports = s.ports;
      return out;
    })
    .sort((a, b) =>
      byIp(
        arrayOf(a.addresses ?? a.notReadyAddresses)[0] ?? {},
        arrayOf(b.addresses ?? b.notReadyAddresses)[0] ?? {},
      ),
    );
}

/** truncateEndpoints: ready addresses first, each subset its proportional share. */
function truncate(subsets: Json[]): boolean {
  const ready = subsets.reduce((n, s) => n + arrayOf(s.addresses).length, 0);
  const notReady = subsets.reduce((n, s) => n + arrayOf(s.notReadyAddresses).length, 0);
  if (ready + notReady <= MAX_CAPACITY) return false;
  const truncateReady = ready > MAX_CAPACITY;
  const max = truncateReady ? MAX_CAPACITY : MAX_CAPACITY - ready;
  const total = truncateReady ? ready : notReady;
  let room = max;
  for (const s of subsets) {
    const field = truncateReady ? 'addresses' : 'notReadyAddresses';
    const list = arrayOf(s[field]);
    const take = Math.min(Math.ceil((list.length / total) * max), room);
    s[field] = list.slice(0, take);
    if (truncateReady) delete s.notReadyAddresses;
    room -= arrayOf(s[field]).length;
  }
  return true;
}

export class EndpointsController extends ServiceEndpointsController {
  private readonly endpoints: Informer;

  constructor(ctx: ControllerContext) {
    // An Endpoints object belongs to the Service of its name.
    super(ctx, 'endpoint', { gvr: ENDPOINTS, serviceKey: objectKey });
    this.endpoints = ctx.informers.for(ENDPOINTS);
  }

  protected async sync(key: string): Promise<void> {
    const { namespace = '', name } = parseKey(key);
    const svc = this.services.get(key);
    const current = this.endpoints.get(key);
    if (!svc) {
      // checkLeftoverEndpoints keeps leader-election records that have no Service.
      if (current && !current.metadata.annotations?.['control-plane.alpha.kubernetes.io/leader'])
        await this.remove(current);
      return;
    }
    const spec = rec(svc.spec);
    if (spec.type === 'ExternalName') return;
    const sel = serviceSelector(svc);
    if (!sel) return;
    const publishNotReady = spec.publishNotReadyAddresses === true;
    const svcPorts = arrayOf(spec.ports);
    const headless = !spec.clusterIP || spec.clusterIP === 'None';
    const entries: Entry[] = [];
    for (const pod of this.pods.byIndex(BY_NAMESPACE, namespace) as Pod[]) {
      if (!sel.matches(pod.metadata.labels ?? {}) || !shouldPodBeInEndpoints(pod, publishNotReady)) continue;
      const podSpec = rec(pod.spec);
      const address: Json = { ip: rec(pod.status).podIP };
      if (podSpec.hostname && podSpec.subdomain === name) address.hostname = podSpec.hostname;
      if (podSpec.nodeName) address.nodeName = podSpec.nodeName;
      address.targetRef = { kind: 'Pod', namespace, name: pod.metadata.name, uid: pod.metadata.uid };
      const ready = publishNotReady || isPodReady(pod);
      if (svcPorts.length === 0) {
        if (spec.clusterIP === 'None') entries.push({ address, ready, ports: [] });
        continue;
      }
      for (const sp of svcPorts) {
        const port = targetPort(sp, pod);
        if (port === undefined) continue;
        const epp: Json = { name: sp.name ?? '', port, protocol: sp.protocol ?? 'TCP' };
        if (!epp.name) delete epp.name;
        if (sp.appProtocol) epp.appProtocol = sp.appProtocol;
        entries.push({ address, ready, ports: [epp] });
      }
    }
    const subsets = repack(entries);
    const truncated = truncate(subsets);
    const labels: Record<string, string> = { ...(svc.metadata.labels ?? {}) };
    if (headless) labels[HEADLESS_LABEL] = '';
    const annotations = { ...(current?.metadata.annotations ?? {}) };
    if (truncated) annotations[OVER_CAPACITY] = 'truncated';
    else delete annotations[OVER_CAPACITY];
    if (current) {
      if (
        jsonEqual(arrayOf(current.subsets), subsets) &&
        jsonEqual(current.metadata.labels ?? {}, labels) &&
        jsonEqual(current.metadata.annotations ?? {}, annotations)
      )
        return;
      await this.ctx.client.mutate(ENDPOINTS, namespace, name!, (ep) => {
        ep.subsets = subsets;
        ep.metadata.labels = labels;
        ep.metadata.annotations = annotations;
      });
      return;
    }
    try {
      await this.ctx.client.create(ENDPOINTS, {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name, namespace, labels, ...(truncated ? { annotations } : {}) },
        subsets,
      } as KubeObject);
    } catch (err) {
      // A terminating namespace refuses new objects: nothing to do.
      if (!(err instanceof ApiError && err.code === 403)) throw err;
    }
  }

  private async remove(ep: KubeObject): Promise<void> {
    try {
      await this.ctx.client.delete(ENDPOINTS, ep.metadata.namespace!, ep.metadata.name!);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
