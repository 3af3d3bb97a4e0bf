/**
 * Where a simulated pod's port leads, as KWOK decides it (pkg/kwok/server/debugging_port_forword.go,
 * getPodsForward/findPortInForwards): the pod's own `PortForward` object (named after it in its
 * namespace) if there is one, else the first `ClusterPortForward` whose selector takes the pod;
 * within one, the forward listing the port, else the first forward listing no ports. A forward
 * names a `command` (run with the connection as its stdin/stdout), else a `target` (address and
 * port, dialled on the machine running the cluster), else `httpRoutes` (canned HTTP answers by
 * path). No forward: the pod listens on nothing there.
 */
import { recordOf as rec } from '../../lib/json.ts';
import type { ForwardTarget, HttpRoute } from '../apiserver/http/portforward.ts';
import type { KubeObject } from '../apiserver/types.ts';
import type { ClusterClient } from '../client.ts';
import { STAGE_GROUP, STAGE_VERSION } from './crd.ts';

export const PORT_FORWARD_GVR = {
  group: STAGE_GROUP,
  version: STAGE_VERSION,
  resource: 'portforwards',
} as const;
export const CLUSTER_PORT_FORWARD_GVR = {
  group: STAGE_GROUP,
  version: STAGE_VERSION,
  resource: 'clusterportforwards',
} as const;

type Json = Record<string, unknown>;
const strs = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

function inForwards(forwards: unknown, port: number): Json | undefined {
  let fallback: Json | undefined;
  for (const f of Array.isArray(forwards) ? (forwards as Json[]) : []) {
    const ports = Array.isArray(f.ports) ? (f.ports as unknown[]) : [];
    if (ports.length === 0) fallback ??= f;
    else if (ports.includes(port)) return f;
  }
  return fallback;
}

function toTarget(f: Json | undefined): ForwardTarget | undefined {
  if (!f) return undefined;
  const command = strs(f.command);
  if (command.length) return { command };
  const t = rec(f.target);
  if (typeof t.address === 'string' && typeof t.port === 'number')
    return { address: t.address, port: t.port };
  if (Array.isArray(f.httpRoutes) && f.httpRoutes.length) {
    const httpRoutes = (f.httpRoutes as Json[]).map(
      (r): HttpRoute => ({
        location: typeof r.location === 'string' ? r.location : '',
        code: typeof r.code === 'number' ? r.code : 200,
        headers: (Array.isArray(r.headers) ? (r.headers as Json[]) : []).map((h) => ({
          name: String(h.name ?? ''),
          value: String(h.value ?? ''),
        })),
        body: typeof r.body === 'string' ? r.body : '',
      }),
    );
    return { httpRoutes };
  }
  return undefined;
}

/** The forward for a port of a pod, or undefined when nothing listens there. */
export function podForward(client: ClusterClient, pod: KubeObject, port: number): ForwardTarget | undefined {
  const ns = pod.metadata.namespace ?? '';
  const name = pod.metadata.name ?? '';
  if (client.served(PORT_FORWARD_GVR)) {
    const own = client.get(PORT_FORWARD_GVR, ns, name);
    // KWOK stops at the pod's own object even when none of its forwards takes the port.
    if (own) return toTarget(inForwards(rec(own.spec).forwards, port));
  }
  if (!client.served(CLUSTER_PORT_FORWARD_GVR)) return undefined;
  for (const cl of client.list(CLUSTER_PORT_FORWARD_GVR)) {
    const sel = rec(rec(cl.spec).selector);
    const namespaces = strs(sel.matchNamespaces);
    const names = strs(sel.matchNames);
    if (namespaces.length && !namespaces.includes(ns)) continue;
    if (names.length && !names.includes(name)) continue;
    const f = inForwards(rec(cl.spec).forwards, port);
    if (f) return toTarget(f);
  }
  return undefined;
}
