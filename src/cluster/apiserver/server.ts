/**
 * Composition of the embedded API server: storage, registry, generic API, HTTP(S)
 * codec, authentication, RBAC, admission, CRDs and the namespace lifecycle.
 */

import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { type Clock, realClock } from '../../lib/clock.ts';
import { claimDataDir, type DataDirClaim, resetState } from '../state/data-dir.ts';
import { SqliteBackend } from '../state/sqlite-backend.ts';
import { BuiltinAdmission } from './admission/plugins.ts';
import { WebhookAdmission } from './admission/webhooks.ts';
import { Api, type ApiHooks } from './api.ts';
import { Authenticator } from './auth/authn.ts';
import { rbacEscalationGuard } from './auth/escalation.ts';
import { Authorizer, bootstrapRbacObjects } from './auth/rbac.ts';
import { bindingsResourceType } from './binding.ts';
import { builtinResourceTypes } from './builtin/index.ts';
import { ServiceAllocator } from './builtin/service-allocator.ts';
import { errors } from './errors.ts';
import { type FaultOptions, Faults } from './faults.ts';
import { Discovery } from './http/discovery.ts';
import { shows } from './http/durable-response.ts';
import { createHandler } from './http/handler.ts';
import type { PodLogs } from './http/pod-log-token.ts';
import type { PodPortForward } from './http/portforward.ts';
import { type PodAttach, type PodExec, rememberUpgradeHead } from './http/streaming.ts';
import { kubeconfigYaml } from './kubeconfig.ts';
import { CrdLifecycle } from './lifecycle/crds.ts';
import { EventTtl } from './lifecycle/event-ttl.ts';
import { KubernetesService } from './lifecycle/kubernetes-service.ts';
import { NamespaceLifecycle } from './lifecycle/namespaces.ts';
import { QuotaController } from './lifecycle/quota.ts';
import { bootstrapSystemObjects } from './lifecycle/system-objects.ts';
import { ApiMetrics } from './metrics.ts';
import { DefaultPatcher } from './patcher.ts';
import { ResourceRegistry, storageKey } from './registry.ts';
import { SchemaService } from './schemas.ts';
import { ObjectStore } from './store.ts';
import type { RestoredState } from './store-backend.ts';
import { type ServingCert, selfSignedCert } from './tls.ts';
import type { KubeObject, ResourceType } from './types.ts';

export interface ApiServerOptions {
  /** Container logs served by pods/log (the simulated kubelet's). */
  podLogs?: PodLogs;
  /** Commands run by pods/exec and interactive attach (the simulated kubelet's). */
  podExec?: PodExec;
  /** The process an interactive attach reaches, when the simulated kubelet runs one. */
  podAttach?: PodAttach;
  /** Where pods/portforward connects a pod's port (the simulated kubelet's KWOK PortForwards). */
  podPortForward?: PodPortForward;
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
  /**
   * Keep the cluster in this directory (SQLite, see src/cluster/state) and restart from what it
   * holds; without it the cluster lives in memory only.
   */
  dataDir?: string;
  /** Hold dataDir (one instance per directory) but keep the cluster in memory only. */
  ephemeral?: boolean;
  /** How long an Event lives after its last write (kube-apiserver's --event-ttl; default 1 h). */
  eventTtlMs?: number;
  /** The clock Events expire by (default `clock`). */
  eventClock?: Clock;
  /**
   * The server's time (timestamps it sets, Event expiry); a virtual clock in a simulation,
   * which the server also holds while it serves a request or a watch event is in flight.
   */
  clock?: Clock;
  /** Delete the state held in dataDir before starting (`--reset`). */
  reset?: boolean;
  /** The kubeconfig this instance will write, named to a second instance that finds it running. */
  kubeconfigPath?: string;
  /**
   * Called when a commit to the data directory fails (a full disk, a read-only file): the
   * server has already stopped serving and released the directory; the caller ends the
   * process. Without it the error is thrown.
   */
  onStateFailure?: (err: Error) => void;
}

/** How a server started from a data directory relates to its previous run. */
export interface RestartInfo {
  /** Objects were loaded from the data directory. */
  restored: boolean;
  /** The resourceVersion the previous run reached. */
  rv: number;
  objects: number;
  /** The port of the previous run, when it was taken and another one was chosen. */
  portTakenWas?: number;
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
  /** Set when the server keeps its state in a data directory. */
  restart?: RestartInfo;
  /** The data directory held by this server, if any. */
  dataDir?: DataDirClaim;
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
  const durable = opts.dataDir === undefined ? undefined : await openDataDir(opts.dataDir, opts);
  try {
    return await serve(opts, durable);
  } catch (err) {
    await durable?.backend?.close();
    durable?.claim.release();
    throw err;
  }
}

interface Durable {
  claim: DataDirClaim;
  /** Absent for an ephemeral cluster, which only holds the directory. */
  backend?: SqliteBackend;
  restored?: RestoredState;
}

/** Takes the data directory (refusing if another instance holds it) and loads its state. */
async function openDataDir(dir: string, opts: ApiServerOptions): Promise<Durable> {
  const claim = claimDataDir(dir, { kubeconfig: opts.kubeconfigPath });
  let backend: SqliteBackend | undefined;
  try {
    if (opts.reset) resetState(claim);
    if (opts.ephemeral) return { claim };
    backend = SqliteBackend.open(claim.stateFile);
    return { claim, backend, restored: backend.load() };
  } catch (err) {
    await backend?.close();
    claim.release();
    throw err;
  }
}

async function serve(opts: ApiServerOptions, durable: Durable | undefined): Promise<ApiServerHandle> {
  const store = new ObjectStore({
    historySize: opts.historySize,
    backend: durable?.backend,
    restored: durable?.restored,
  });
  const restored = [...(durable?.restored?.tables.values() ?? [])].some((t) => t.length > 0);
  const registry = new ResourceRegistry();
  const services = new ServiceAllocator({
    clusterIPRange: opts.serviceClusterIPRange,
    nodePortRange: opts.serviceNodePortRange,
  });
  const clock = opts.clock ?? realClock;
  const now = () => new Date(clock.now());
  for (const rt of builtinResourceTypes({ serviceHooks: services, now })) registry.add(rt);
  registry.add(bindingsResourceType);
  const hooks: ApiHooks = { ...opts.hooks };
  const api = new Api(store, registry, hooks);
  api.clock = clock;
  // The compiled-in plugins (LimitRanger, Priority, RuntimeClass, DefaultStorageClass,
  // ResourceQuota) around the webhooks, as kube-apiserver's default plugin order has them.
  const admission = new BuiltinAdmission(api, hooks.admission ?? new WebhookAdmission(api));
  hooks.admission = admission;
  const schemas = new SchemaService(api);
  hooks.unknownFields ??= schemas.unknownFields;
  hooks.patcher ??= new DefaultPatcher(schemas, now);
  const namespaces = new NamespaceLifecycle(api);
  const crds = new CrdLifecycle(api);
  const eventTtl = new EventTtl(api, opts.eventTtlMs, opts.eventClock ?? clock);
  const quotas = new QuotaController(api, admission.quotaUsage);
  // Made once the server listens: it needs the port.
  let kubernetes: KubernetesService | undefined;
  const userAfterWrite = hooks.afterWrite;
  hooks.afterWrite = (rt, type, obj) => {
    if (rt.resource === 'customresourcedefinitions') schemas.invalidate();
    crds.onWrite(rt, type, obj);
    namespaces.onWrite(rt, type, obj);
    quotas.onWrite(rt, type, obj);
    eventTtl.onWrite(rt, type, obj);
    kubernetes?.onWrite(rt, type, obj);
    userAfterWrite?.(rt, type, obj);
  };
  if (restored) {
    restoreLifecycles(api, services, hooks);
    eventTtl.restore();
  }
  await bootstrap(api);

  const saved = durable?.backend;
  const authn = new Authenticator(opts.adminToken ?? saved?.setting('token'));
  const authz = new Authorizer(api);
  if (opts.authorizationMode === 'RBAC') {
    // With any other authorizer every escalate and bind check passes, as upstream's do.
    const guard = rbacEscalationGuard(authz);
    // In-process components (no groups) are the API server's privileged loopback clients.
    hooks.guardWrite = (w) => {
      if (w.groups) guard({ ...w, user: { name: w.user, groups: w.groups } });
    };
  }
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
    podLogs: opts.podLogs,
    podExec: opts.podExec,
    podAttach: opts.podAttach,
    podPortForward: opts.podPortForward,
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
          shows(res, 0);
          res.setHeader('Content-Type', 'text/plain; charset=utf-8');
          res.writeHead(200);
          res.end('ok');
          return true;
        }
        return false;
      },
      async (_req, res, path) => {
        if (path !== '/metrics') return false;
        shows(res, 0);
        res.setHeader('Content-Type', metrics.registry.contentType);
        res.writeHead(200);
        res.end(await metrics.registry.metrics());
        return true;
      },
    ],
  });

  let server: Server;
  let ca: string | undefined;
  let servingCert: ServingCert | undefined;
  const tls = opts.tls ?? true;
  if (tls) {
    // The same certificate across restarts keeps the CA in existing kubeconfigs valid.
    const stored = saved?.setting('tls');
    const cert = stored ? (JSON.parse(stored) as ServingCert) : await selfSignedCert();
    servingCert = cert;
    ca = cert.ca;
    server = createHttpsServer({ cert: cert.cert, key: cert.key, maxHeaderSize: MAX_HEADER_BYTES }, handler);
  } else {
    server = createHttpServer({ maxHeaderSize: MAX_HEADER_BYTES }, handler);
  }
  server.on('clientError', answerClientError);
  // Upgrade requests (pods/exec, attach, portforward) go through the same handler, with a
  // response on the raw socket for refusals; a handler that upgrades takes the socket over.
  // Upgraded sockets leave the server's bookkeeping: close() ends them itself.
  const upgraded = new Set<Socket>();
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    rememberUpgradeHead(req, head);
    upgraded.add(socket);
    socket.once('close', () => upgraded.delete(socket));
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    res.on('finish', () => {
      res.detachSocket(socket);
      socket.end();
    });
    handler(req, res);
  });
  const backend = durable?.backend;
  if (backend) {
    backend.onFatal = (err) => {
      // As a crash would: every connection drops at once, so the requests waiting on the
      // failed commit (and anything later) are never answered, and no client is shown a
      // write that is not on disk. The backend writes nothing more, so the directory is free.
      server.close();
      server.closeAllConnections();
      for (const s of upgraded) s.destroy();
      durable.claim.release();
      if (!opts.onStateFailure) throw err;
      opts.onStateFailure(err);
    };
  }
  // Long-lived watches must not be cut by Node's request timeouts.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = 65_000;
  const host = opts.host ?? '127.0.0.1';
  const listen = (p: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(p, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  // Without an explicit port, the previous run's port, so existing kubeconfigs keep working.
  const previousPort = Number(saved?.setting('port') ?? 0);
  let portTakenWas: number | undefined;
  if (!opts.port && previousPort > 0) {
    try {
      await listen(previousPort);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      portTakenWas = previousPort;
      await listen(0);
    }
  } else {
    await listen(opts.port ?? 0);
  }
  const { port } = server.address() as AddressInfo;
  const close = async () => {
    faults.stop();
    namespaces.stop();
    quotas.stop();
    crds.stop();
    eventTtl.stop();
    kubernetes?.stop();
    server.closeAllConnections();
    for (const s of upgraded) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await store.close();
    durable?.claim.release();
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
  let restart: RestartInfo | undefined;
  durable?.claim.update({ url });
  if (durable?.backend && durable.restored) {
    await durable.backend.saveSettings({
      port: String(port),
      token: authn.adminToken,
      ...(servingCert ? { tls: JSON.stringify(servingCert) } : {}),
    });
    let objects = 0;
    for (const t of durable.restored.tables.values()) objects += t.length;
    restart = { restored, rv: durable.restored.rv, objects, portTakenWas };
  }
  return {
    restart,
    dataDir: durable?.claim,
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

/**
 * What kube-apiserver rebuilds from etcd when it starts: the served CRDs, namespaces being
 * finalized, and the Services' allocated addresses and ports.
 */
function restoreLifecycles(api: Api, services: ServiceAllocator, hooks: ApiHooks): void {
  const reg = api.registry;
  const replay = (group: string, resource: string, each: (rt: ResourceType, obj: KubeObject) => void) => {
    const rt = reg.get(group, 'v1', resource);
    if (!rt) return;
    for (const rec of api.store.table(storageKey(rt)).values()) each(rt, JSON.parse(rec.json) as KubeObject);
  };
  replay('apiextensions.k8s.io', 'customresourcedefinitions', (rt, obj) =>
    hooks.afterWrite?.(rt, 'ADDED', obj),
  );
  replay('', 'namespaces', (rt, obj) => hooks.afterWrite?.(rt, 'ADDED', obj));
  replay('', 'services', (_rt, obj) => services.restore(obj));
}

/** The objects a fresh kube-apiserver (with its controllers) starts with. */
async function bootstrap(api: Api): Promise<void> {
  const reg = api.registry;
  const ns = reg.get('', 'v1', 'namespaces');
  if (!ns) throw errors.internal('namespaces are not served');
  // After a restart most exist already; what a newer troupe adds is created.
  const ensure = async (rt: ResourceType, obj: KubeObject) => {
    if (!api.tryGet(rt, '', obj.metadata.name!)) await api.create(rt, '', obj, { user: 'system:apiserver' });
  };
  for (const name of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
    await ensure(ns, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }
  for (const obj of bootstrapRbacObjects()) {
    const resource = obj.kind === 'ClusterRole' ? 'clusterroles' : 'clusterrolebindings';
    const rt = reg.get('rbac.authorization.k8s.io', 'v1', resource);
    if (rt) await ensure(rt, obj as KubeObject);
  }
  await bootstrapSystemObjects(api);
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
