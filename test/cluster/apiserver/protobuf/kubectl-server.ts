/**
 * A deliberately small HTTPS API server for driving the real kubectl: legacy discovery for a
 * fixed set of resources, and a pluggable answer for every other request. Tests use it to
 * capture the request bodies kubectl sends (protobuf for typed clients) and to check that
 * kubectl accepts JSON answers to them.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { kubeconfigYaml } from '../../../../src/cluster/apiserver/kubeconfig.ts';
import { selfSignedCert } from '../../../../src/cluster/apiserver/tls.ts';
import { kubectlFor } from '../../../support/kubectl.ts';

interface Res {
  name: string;
  kind: string;
  namespaced: boolean;
  verbs?: string[];
  group?: string;
  version?: string;
}

const ALL = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** group/version → resources; enough for the kubectl create/auth commands under test. */
const RESOURCES: Record<string, Res[]> = {
  v1: [
    { name: 'namespaces', kind: 'Namespace', namespaced: false },
    { name: 'configmaps', kind: 'ConfigMap', namespaced: true },
    { name: 'secrets', kind: 'Secret', namespaced: true },
    { name: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true },
    { name: 'serviceaccounts/token', kind: 'TokenRequest', namespaced: true, verbs: ['create'] },
    { name: 'services', kind: 'Service', namespaced: true },
    { name: 'pods', kind: 'Pod', namespaced: true },
    {
      name: 'pods/eviction',
      kind: 'Eviction',
      namespaced: true,
      verbs: ['create'],
      group: 'policy',
      version: 'v1',
    },
    { name: 'nodes', kind: 'Node', namespaced: false },
    { name: 'resourcequotas', kind: 'ResourceQuota', namespaced: true },
  ],
  'apps/v1': [
    { name: 'deployments', kind: 'Deployment', namespaced: true },
    {
      name: 'deployments/scale',
      kind: 'Scale',
      namespaced: true,
      verbs: ['get', 'patch', 'update'],
      group: 'autoscaling',
      version: 'v1',
    },
  ],
  'batch/v1': [
    { name: 'jobs', kind: 'Job', namespaced: true },
    { name: 'cronjobs', kind: 'CronJob', namespaced: true },
  ],
  'rbac.authorization.k8s.io/v1': [
    { name: 'roles', kind: 'Role', namespaced: true },
    { name: 'rolebindings', kind: 'RoleBinding', namespaced: true },
    { name: 'clusterroles', kind: 'ClusterRole', namespaced: false },
    { name: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false },
  ],
  'authorization.k8s.io/v1': [
    {
      name: 'selfsubjectaccessreviews',
      kind: 'SelfSubjectAccessReview',
      namespaced: false,
      verbs: ['create'],
    },
    { name: 'selfsubjectrulesreviews', kind: 'SelfSubjectRulesReview', namespaced: false, verbs: ['create'] },
    { name: 'subjectaccessreviews', kind: 'SubjectAccessReview', namespaced: false, verbs: ['create'] },
  ],
  'policy/v1': [{ name: 'poddisruptionbudgets', kind: 'PodDisruptionBudget', namespaced: true }],
  'networking.k8s.io/v1': [{ name: 'ingresses', kind: 'Ingress', namespaced: true }],
  'autoscaling/v1': [{ name: 'horizontalpodautoscalers', kind: 'HorizontalPodAutoscaler', namespaced: true }],
  'scheduling.k8s.io/v1': [{ name: 'priorityclasses', kind: 'PriorityClass', namespaced: false }],
};

export interface CapturedRequest {
  method: string;
  path: string;
  contentType: string;
  accept: string;
  body: Buffer;
}

/** What the server answers to a non-discovery request: status code and a JSON value. */
export type Responder = (req: CapturedRequest) => { status: number; body: unknown };

export interface KubectlServer {
  requests: CapturedRequest[];
  /** Runs kubectl against the server; resolves with stdout, rejects with stderr on failure. */
  kubectl(...args: string[]): Promise<string>;
  close(): Promise<void>;
}

function discovery(path: string): unknown {
  if (path === '/api') return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] };
  if (path === '/apis') {
    const groups = Object.keys(RESOURCES)
      .filter((gv) => gv.includes('/'))
      .map((gv) => {
        const [name, version] = gv.split('/');
        const v = { groupVersion: gv, version };
        return { name, versions: [v], preferredVersion: v };
      });
    return { kind: 'APIGroupList', apiVersion: 'v1', groups };
  }
  const gv = path === '/api/v1' ? 'v1' : path.startsWith('/apis/') ? path.slice(6) : undefined;
  const list = gv === undefined ? undefined : RESOURCES[gv];
  if (!list) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: gv,
    resources: list.map((r) => ({
      name: r.name,
      singularName: r.name.includes('/') ? '' : r.kind.toLowerCase(),
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: r.verbs ?? ALL,
      ...(r.group === undefined ? {} : { group: r.group, version: r.version }),
    })),
  };
}

export async function startKubectlServer(respond: Responder): Promise<KubectlServer> {
  const cert = await selfSignedCert();
  const requests: CapturedRequest[] = [];
  const server: Server = createServer({ cert: cert.cert, key: cert.key }, async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? '/', 'https://localhost');
    const send = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (req.method === 'GET') {
      const doc = discovery(url.pathname);
      if (doc !== undefined) return send(200, doc);
    }
    const captured: CapturedRequest = {
      method: req.method ?? '',
      path: url.pathname,
      contentType: String(req.headers['content-type'] ?? ''),
      accept: String(req.headers.accept ?? ''),
      body: Buffer.concat(chunks),
    };
    if (
      req.method === 'GET' &&
      captured.body.length === 0 &&
      !/^\/api\/v1\/|^\/apis\/[^/]+\/[^/]+\//.test(url.pathname)
    ) {
      // /version, /openapi/*: not served, as kube-apiserver without those endpoints would answer.
      return send(404, {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'NotFound',
        code: 404,
      });
    }
    requests.push(captured);
    try {
      const out = respond(captured);
      send(out.status, out.body);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      send(400, {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'BadRequest',
        message,
        code: 400,
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const k = await kubectlFor(
    kubeconfigYaml({ server: `https://127.0.0.1:${port}`, token: 'test-token', caPem: cert.ca }),
  );
  return {
    requests,
    kubectl: async (...args: string[]) => (await k.run(args)).stdout,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await k.cleanup();
    },
  };
}
