/**
 * pods/proxy, services/proxy and nodes/proxy. kube-apiserver finds the location as the
 * registries' `ResourceLocation` do (pkg/registry/core/pod/strategy.go: the pod's IP and the
 * port named in `[scheme:]name[:port]`, else its first container port; 400 `address not
 * allowed` without an IP; pkg/registry/core/service/storage/storage.go: a ready address of the
 * Service's endpoints for the port, 503 `no endpoints available for service "x"`;
 * pkg/registry/core/node/strategy.go: the node's kubelet) and proxies the request there.
 *
 * The pods are simulated and listen on nothing, so a pod or Service location answers what a
 * real proxy answers for a port nobody listens on: 503 `error trying to reach service: dial
 * tcp <ip>:<port>: connect: connection refused`. Nothing is dialled: the simulated addresses
 * may belong to real machines. The simulated kubelet answers its read-only endpoints itself:
 * `/healthz` and `/pods` (the pods bound to the node), as KWOK's kubelet server does; any other
 * path is Go's mux 404.
 */
import type { IncomingMessage } from 'node:http';
import { arrayOf, recordOf, str } from '../builtin/common.ts';
import { ApiError, errors } from '../errors.ts';
import type { KubeObject } from '../types.ts';
import { type HandlerDeps, type SubresourceContext, sendJson } from './handler.ts';

const PROXY_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** `net.SplitSchemeNamePort`: `name`, `name:port` or `scheme:name:port`. */
function splitSchemeNamePort(id: string): { scheme: string; name: string; port: string } {
  const parts = id.split(':');
  if (parts.length === 1) return { scheme: '', name: parts[0]!, port: '' };
  if (parts.length === 2) return { scheme: '', name: parts[0]!, port: parts[1]! };
  if (parts.length === 3) return { scheme: parts[0]!, name: parts[1]!, port: parts[2]! };
  throw errors.badRequest(`invalid request ${id}`);
}

/** The path after `<resource>/<name>/proxy` in the request URL. */
function proxiedPath(req: IncomingMessage, resource: string, name: string): string {
  const segs = new URL(req.url ?? '/', 'http://localhost').pathname.split('/');
  for (let i = 0; i + 2 < segs.length; i++) {
    if (segs[i] === resource && decodeURIComponent(segs[i + 1]!) === name && segs[i + 2] === 'proxy')
      return `/${segs.slice(i + 3).join('/')}`;
  }
  return '/';
}

function unreachable(ip: string, port: string): ApiError {
  return new ApiError(
    503,
    'ServiceUnavailable',
    `error trying to reach service: dial tcp ${ip}:${port || '80'}: connect: connection refused`,
  );
}

function podLocation(pod: KubeObject, port: string): { ip: string; port: string } {
  let p = port;
  if (p === '') {
    for (const c of arrayOf(recordOf(pod.spec).containers)) {
      const first = arrayOf(c.ports)[0];
      if (first) {
        p = String(first.containerPort);
        break;
      }
    }
  }
  const ip = str(recordOf(pod.status).podIP);
  if (!ip) throw errors.badRequest('address not allowed');
  return { ip, port: p };
}

async function podProxy({ deps, p }: SubresourceContext): Promise<never> {
  const { name, port } = splitSchemeNamePort(p.name!);
  const pod = deps.api.get(p.rt, p.namespace ?? '', name);
  const loc = podLocation(pod, port);
  throw unreachable(loc.ip, loc.port);
}

/** The ready addresses of a Service's port, from its Endpoints (as upstream) or EndpointSlices. */
function serviceAddresses(deps: HandlerDeps, ns: string, svc: KubeObject, portName: string): string[] {
  const epRt = deps.registry.get('', 'v1', 'endpoints');
  let ep: KubeObject | undefined;
  try {
    if (epRt) ep = deps.api.get(epRt, ns, svc.metadata.name!);
  } catch {
    ep = undefined;
  }
  const out: string[] = [];
  for (const subset of arrayOf((ep as Record<string, unknown> | undefined)?.subsets)) {
    const port = arrayOf(subset.ports).find((x) => str(x.name) === portName);
    if (!port) continue;
    for (const a of arrayOf(subset.addresses)) out.push(`${str(a.ip)}:${port.port}`);
  }
  if (out.length || ep) return out;
  const sliceRt = deps.registry.get('discovery.k8s.io', 'v1', 'endpointslices');
  if (!sliceRt) return out;
  const selector = `kubernetes.io/service-name=${svc.metadata.name}`;
  for (const r of deps.api.list(sliceRt, ns, { labelSelector: selector }).records) {
    const s = deps.api.decode(sliceRt, r);
    const port = arrayOf((s as Record<string, unknown>).ports).find((x) => str(x.name) === portName);
    if (!port) continue;
    for (const e of arrayOf((s as Record<string, unknown>).endpoints)) {
      if (recordOf(e.conditions).ready === false) continue;
      for (const a of arrayOf<string>(e.addresses)) out.push(`${a}:${port.port}`);
    }
  }
  return out;
}

async function serviceProxy({ deps, p }: SubresourceContext): Promise<never> {
  const { name, port } = splitSchemeNamePort(p.name!);
  const ns = p.namespace ?? '';
  const svc = deps.api.get(p.rt, ns, name);
  const ports = arrayOf(recordOf(svc.spec).ports);
  // A port given by number or name picks the Service port; none picks the only one.
  const sp = port === '' ? ports[0] : ports.find((x) => str(x.name) === port || String(x.port) === port);
  if (!sp) throw errors.badRequest(`no service port ${JSON.stringify(port)} found for service "${name}"`);
  const addrs = serviceAddresses(deps, ns, svc, str(sp.name));
  if (addrs.length === 0)
    throw new ApiError(503, 'ServiceUnavailable', `no endpoints available for service "${name}"`);
  const [ip, target] = addrs[0]!.split(':') as [string, string];
  throw unreachable(ip, target);
}

async function nodeProxy({ deps, p, req, res, method }: SubresourceContext): Promise<void> {
  const { name } = splitSchemeNamePort(p.name!);
  const node = deps.api.get(p.rt, '', name);
  const path = proxiedPath(req, p.rt.resource, p.name!).replace(/\/+$/, '') || '/';
  if (method === 'GET' && path === '/healthz') {
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.writeHead(200);
    res.end('ok');
    return;
  }
  if (method === 'GET' && path === '/pods') {
    const podsRt = deps.registry.get('', 'v1', 'pods')!;
    const { records } = deps.api.list(podsRt, undefined, {
      fieldSelector: `spec.nodeName=${node.metadata.name}`,
    });
    const items = records.map((r) => deps.api.decode(podsRt, r));
    return sendJson(res, 200, { kind: 'PodList', apiVersion: 'v1', metadata: {}, items });
  }
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.writeHead(404);
  res.end('404 page not found\n');
}

/** GET/POST/PUT/PATCH/DELETE <pods|services|nodes>/<name>/proxy[/path]. */
export async function serveProxy(c: SubresourceContext): Promise<void> {
  if (!PROXY_METHODS.has(c.method))
    throw errors.methodNotAllowed(c.method.toLowerCase(), {
      group: '',
      resource: `${c.p.rt.resource}/proxy`,
    });
  switch (c.p.rt.resource) {
    case 'pods':
      return podProxy(c);
    case 'services':
      return serviceProxy(c);
    case 'nodes':
      return nodeProxy(c);
    default:
      throw errors.notFoundPath();
  }
}
