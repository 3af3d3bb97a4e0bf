/**
 * Composition of the embedded API server: storage, registry, generic API, HTTP(S)
 * codec, authentication, RBAC, admission, CRDs and the namespace lifecycle.
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { WebhookAdmission } from './admission/webhooks.ts';
import { Api, type ApiHooks } from './api.ts';
import { Authenticator } from './auth/authn.ts';
import { Authorizer, bootstrapRbacObjects } from './auth/rbac.ts';
import { bindingsResourceType } from './binding.ts';
import { builtinResourceTypes } from './builtin/index.ts';
import { ServiceAllocator } from './builtin/service-allocator.ts';
import { errors } from './errors.ts';
import { type FaultOptions, Faults } from './faults.ts';
import { Discovery } from './http/discovery.ts';
import { createHandler } from './http/handler.ts';
import { kubeconfigYaml } from './kubeconfig.ts';
import { CrdLifecycle } from './lifecycle/crds.ts';
import { KubernetesService } from './lifecycle/kubernetes-service.ts';
import { NamespaceLifecycle } from './lifecycle/namespaces.ts';
import { ApiMetrics } from './metrics.ts';
import { DefaultPatcher } from './patcher.ts';
import { ResourceRegistry } from './registry.ts';
import { SchemaService } from './schemas.ts';
import { ObjectStore } from './store.ts';
import { selfSignedCert } from './tls.ts';
import type { KubeObject } from './types.ts';

export interface ApiServerOptions {
  /** Listen address; loopback unless told otherwise. */
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** HTTPS with a generated self-signed certificate (default true, as kube-apiserver). */
  tls?: boolean;
  /** `RBAC` enforces RBAC for every user but the admin; `AlwaysAllow` only answers access reviews. */
  authorizationMode?: 'AlwaysAllow' | 'RBAC';
  adminToken?: string;
  historySize?: number;
  faults?: FaultOptions;
  /** Debug request log sink. */
  log?: (msg: string, fields: Record<string, unknown>) => void;
  /** Extra hooks composed with the server's own (admission webhooks, patchers, schema checks). */
  hooks?: Partial<ApiHooks>;
  /** --service-cluster-ip-range: where Services' cluster IPs come from (default 10.96.0.0/12). */
  serviceClusterIPRange?: string;
  /** --service-node-port-range (default 30000-32767). */
  serviceNodePortRange?: string;
}

export interface ApiServerHandle {
  url: string;
  token: string;
  /** kubeconfig YAML for kubectl and KubeConfig.loadFromString. */
  kubeconfig: string;
  ca?: string;
  api: Api;
  faults: Faults;
  metrics: ApiMetrics;
  authn: Authenticator;
  /** A token that authenticates as the service account, for RBAC tests. */
  mintServiceAccountToken(namespace: string, name: string): string;
  /** kubeconfig YAML authenticating with a given token. */
  kubeconfigFor(token: string): string;
  close(): Promise<void>;
}

export const KUBERNETES_VERSION = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-troupe',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-11-01T00:00:00Z',
  goVersion: 'go1.23.0',
  compiler: 'gc',
  platform: 'linux/amd64',
};

export async function startApiServer(opts: ApiServerOptions = {}): Promise<ApiServerHandle> {
  const store = new ObjectStore({ historySize: opts.historySize });
  const registry = new ResourceRegistry();
  const services = new ServiceAllocator({
    clusterIPRange: opts.serviceClusterIPRange,
    nodePortRange: opts.serviceNodePortRange,
  });
  for (const rt of builtinResourceTypes({ serviceHooks: services })) registry.add(rt);
  registry.add(bindingsResourceType);
  const hooks: ApiHooks = { ...opts.hooks };
  const api = new Api(store, registry, hooks);
  hooks.admission ??= new WebhookAdmission(api);
  const schemas = new SchemaService(api);
  hooks.unknownFields ??= schemas.unknownFields;
  hooks.patcher ??= new DefaultPatcher(schemas);
  const namespaces = new NamespaceLifecycle(api);
  const crds = new CrdLifecycle(api);
  // Made once the server listens: it needs the port.
  let kubernetes: KubernetesService | undefined;
  const userAfterWrite = hooks.afterWrite;
  hooks.afterWrite = (rt, type, obj) => {
    if (rt.resource === 'customresourcedefinitions') schemas.invalidate();
    crds.onWrite(rt, type, obj);
    namespaces.onWrite(rt, type, obj);
    kubernetes?.onWrite(rt, type, obj);
    userAfterWrite?.(rt, type, obj);
  };
  await bootstrap(api);

  const authn = new Authenticator(opts.adminToken);
  const authz = new Authorizer(api);
  const faults = new Faults(store);
  if (opts.faults) faults.configure(opts.faults);
  const metrics = new ApiMetrics();
  const handler = createHandler({
    api,
    registry,
    discovery: new Discovery(registry),
    authn,
    authz,
    enforceRbac: opts.authorizationMode === 'RBAC',
    faults,
    metrics,
    openapi: schemas.provider,
    version: KUBERNETES_VERSION,
    publicPaths: new Set(['/healthz', '/livez', '/readyz', '/version', '/version/']),
    log: opts.log,
    extra: [
      (_req, res, path) => {
        if (
          path === '/healthz' ||
          path === '/livez' ||
          path === '/readyz' ||
          path.startsWith('/healthz/') ||
          path.startsWith('/livez/') ||
          path.startsWith('/readyz/')
        ) {
          res.setHeader('Content-Type', 'text/plain; charset=utf-8');
          res.writeHead(200);
          res.end('ok');
          return true;
        }
        return false;
      },
      async (_req, res, path) => {
        if (path !== '/metrics') return false;
        res.setHeader('Content-Type', metrics.registry.contentType);
        res.writeHead(200);
        res.end(await metrics.registry.metrics());
        return true;
      },
    ],
  });

  let server: Server;
  let ca: string | undefined;
  const tls = opts.tls ?? true;
  if (tls) {
    const cert = await selfSignedCert();
    ca = cert.ca;
    server = createHttpsServer({ cert: cert.cert, key: cert.key, maxHeaderSize: MAX_HEADER_BYTES }, handler);
  } else {
    server = createHttpServer({ maxHeaderSize: MAX_HEADER_BYTES }, handler);
  }
  server.on('clientError', answerClientError);
  // Long-lived watches must not be cut by Node's request timeouts.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = 65_000;
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const close = async () => {
    faults.stop();
    namespaces.stop();
    crds.stop();
    kubernetes?.stop();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  try {
    kubernetes = new KubernetesService(api, services.firstIP, port);
    // No request is served before this ends: no webhook exists yet, so it waits on no I/O.
    await kubernetes.ensure();
  } catch (err) {
    await close();
    throw err;
  }
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  const url = `${tls ? 'https' : 'http'}://${urlHost}:${port}`;
  const kubeconfigFor = (token: string) => kubeconfigYaml({ server: url, token, caPem: ca });
  return {
    url,
    token: authn.adminToken,
    kubeconfig: kubeconfigFor(authn.adminToken),
    ca,
    api,
    faults,
    metrics,
    authn,
    mintServiceAccountToken: (ns, name) => authn.mintServiceAccountToken(ns, name),
    kubeconfigFor,
    close,
  };
}

/** The objects a fresh kube-apiserver (with its controllers) starts with. */
async function bootstrap(api: Api): Promise<void> {
  const reg = api.registry;
  const ns = reg.get('', 'v1', 'namespaces');
  if (!ns) throw errors.internal('namespaces are not served');
  for (const name of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
    await api.create(
      ns,
      '',
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
      { user: 'system:apiserver' },
    );
  }
  for (const obj of bootstrapRbacObjects()) {
    const resource = obj.kind === 'ClusterRole' ? 'clusterroles' : 'clusterrolebindings';
    const rt = reg.get('rbac.authorization.k8s.io', 'v1', resource);
    if (rt) await api.create(rt, '', obj as KubeObject, { user: 'system:apiserver' });
  }
}

/**
 * Request line and headers may take 1 MiB, as Go's http.Server allows by default
 * (`DefaultMaxHeaderBytes`, which kube-apiserver keeps), plus the 4 KiB slack Go adds.
 */
const MAX_HEADER_BYTES = (1 << 20) + 4096;

/**
 * What Go's server answers to a request it cannot parse: 431 when the headers are too
 * large, else 400, as plain text, then the connection closes.
 */
function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const status =
    err.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n${status}`,
  );
}
