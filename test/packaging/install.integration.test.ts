/**
 * The kustomize layout under config/ and dist/install.yaml rendered from it: config/default
 * renders with kubectl's built-in kustomize, dist/install.yaml is that rendering, its RBAC
 * has no wildcards, its Deployment keeps the properties docs/install.md promises, and
 * `kubectl apply --dry-run=server` of the file passes against the embedded API server.
 */

import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import {
  DEFAULT_KUSTOMIZATION,
  HEADER,
  INSTALL_PATH,
  type KubeDoc,
  kustomize,
  manifestDifference,
  parseManifests,
  ROOT,
} from '../../scripts/gen-install.ts';
import { capabilityNames } from '../../src/cli/capabilities.ts';
import { startTestServer, type TestServer } from '../support/apiserver.ts';

const NAMESPACE = 'troupe-system';

interface Rule {
  apiGroups: string[];
  resources: string[];
  /** Only the metrics-reader role's rule is about a path (`/metrics`) rather than resources. */
  nonResourceURLs?: string[];
  verbs: string[];
  resourceNames?: string[];
}

interface Container {
  name: string;
  image: string;
  args: string[];
  env: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
  ports: { name: string; containerPort: number }[];
  livenessProbe: { httpGet: { path: string; port: string } };
  readinessProbe: { httpGet: { path: string; port: string } };
  resources: { requests: Record<string, string>; limits?: Record<string, string> };
  securityContext: {
    readOnlyRootFilesystem: boolean;
    allowPrivilegeEscalation: boolean;
    capabilities: { drop: string[] };
  };
}

interface Deployment extends KubeDoc {
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        serviceAccountName: string;
        securityContext: { runAsNonRoot: boolean; seccompProfile: { type: string } };
        containers: Container[];
      };
    };
  };
}

const find = (docs: KubeDoc[], kind: string, name?: string) =>
  docs.filter((d) => d.kind === kind && (name === undefined || d.metadata.name === name));

async function crdFilesOnDisk(): Promise<string[]> {
  return (await readdir(join(ROOT, 'config', 'crd'))).filter((f) => f.endsWith('-crd.yaml')).sort();
}

describe('kubectl kustomize config/default', () => {
  let docs: KubeDoc[];
  before(async () => {
    docs = parseManifests(await kustomize(DEFAULT_KUSTOMIZATION));
  });

  test('renders every CRD of config/crd/, unchanged and unprefixed', async () => {
    const listed = parse(await readFile(join(ROOT, 'config', 'crd', 'kustomization.yaml'), 'utf8')) as {
      resources: string[];
    };
    // A CRD file added to config/crd/ without listing it would be missing from the install.
    assert.deepEqual([...listed.resources].sort(), await crdFilesOnDisk());
    const rendered = find(docs, 'CustomResourceDefinition');
    for (const file of await crdFilesOnDisk()) {
      const [own] = parseManifests(await readFile(join(ROOT, 'config', 'crd', file), 'utf8'));
      assert.ok(own);
      assert.deepEqual(
        rendered.find((d) => d.metadata.name === own.metadata.name),
        own,
        `${file} as rendered`,
      );
    }
    assert.equal(rendered.length, (await crdFilesOnDisk()).length);
  });

  test('puts everything namespaced in troupe-system and prefixes names with troupe-', () => {
    const ns = find(docs, 'Namespace');
    assert.deepEqual(
      ns.map((d) => d.metadata.name),
      [NAMESPACE],
    );
    const cluster = new Set(['Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding']);
    for (const d of docs) {
      if (d.kind === 'CustomResourceDefinition' || d.kind === 'Namespace') continue;
      assert.match(d.metadata.name, /^troupe-/, `${d.kind} ${d.metadata.name}`);
      if (cluster.has(d.kind)) assert.equal(d.metadata.namespace, undefined, d.metadata.name);
      else assert.equal(d.metadata.namespace, NAMESPACE, `${d.kind} ${d.metadata.name}`);
    }
    // Kustomize rewrote the references along with the names.
    const dep = find(docs, 'Deployment')[0] as Deployment;
    const sa = find(docs, 'ServiceAccount');
    assert.equal(sa.length, 1);
    assert.equal(dep.spec.template.spec.serviceAccountName, sa[0]!.metadata.name);
    for (const b of [...find(docs, 'ClusterRoleBinding'), ...find(docs, 'RoleBinding')]) {
      const binding = b as KubeDoc & {
        roleRef: { kind: string; name: string };
        subjects: { kind: string; name: string; namespace: string }[];
      };
      assert.equal(find(docs, binding.roleRef.kind, binding.roleRef.name).length, 1, binding.metadata.name);
      assert.deepEqual(binding.subjects, [
        { kind: 'ServiceAccount', name: sa[0]!.metadata.name, namespace: NAMESPACE },
      ]);
    }
  });
});

describe('dist/install.yaml', () => {
  let text: string;
  let docs: KubeDoc[];
  before(async () => {
    text = await readFile(INSTALL_PATH, 'utf8');
    docs = parseManifests(text);
  });

  test('is the rendering of config/default (run `make build-installer` after changing config/)', async () => {
    assert.ok(text.startsWith(HEADER), 'the generated header');
    assert.equal(manifestDifference(text, await kustomize(DEFAULT_KUSTOMIZATION)), undefined);
  });

  test('grants no wildcard, and leader election only in troupe-system', () => {
    const roles = [...find(docs, 'ClusterRole'), ...find(docs, 'Role')];
    assert.ok(roles.length >= 2);
    for (const role of roles) {
      for (const rule of role.rules as Rule[]) {
        for (const field of [
          rule.apiGroups ?? [],
          rule.resources ?? [],
          rule.nonResourceURLs ?? [],
          rule.verbs,
        ])
          assert.ok(!field.includes('*'), `${role.metadata.name}: ${JSON.stringify(rule)}`);
      }
    }
    // The metrics-reader role (bound by whoever scrapes) grants `get` on /metrics and nothing else.
    const [reader] = find(docs, 'ClusterRole', 'troupe-metrics-reader');
    assert.deepEqual(reader?.rules, [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
    const clusterRules = find(docs, 'ClusterRole')
      .flatMap((r) => r.rules as Rule[])
      .filter((r) => r.resources);
    // Nothing cluster-wide on Leases, Secrets or RBAC itself.
    for (const rule of clusterRules) {
      for (const res of ['leases', 'secrets', 'roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'])
        assert.ok(!rule.resources.includes(res), `cluster-wide rights on ${res}`);
    }
    const [le] = find(docs, 'Role');
    assert.ok(le);
    assert.equal(le.metadata.namespace, NAMESPACE);
    assert.deepEqual(
      (le.rules as Rule[]).flatMap((r) => r.resources),
      ['leases', 'leases'],
    );
  });

  test('runs two leader-electing, non-root manager replicas with probes, requests and metrics', async () => {
    const [dep] = find(docs, 'Deployment') as Deployment[];
    assert.ok(dep);
    assert.equal(dep.metadata.name, 'troupe-controller-manager');
    assert.equal(dep.spec.replicas, 2);
    const pod = dep.spec.template.spec;
    assert.equal(pod.securityContext.runAsNonRoot, true);
    assert.equal(pod.securityContext.seccompProfile.type, 'RuntimeDefault');
    const [c] = pod.containers;
    assert.ok(c);
    assert.deepEqual(c.args.slice(0, 2), ['run', '--leader-elect']);
    const env = new Map(c.env.map((e) => [e.name, e]));
    // The Lease follows the namespace the manager runs in (an overlay may change it).
    assert.equal(
      env.get('TROUPE_LEADER_ELECTION_NAMESPACE')?.valueFrom?.fieldRef?.fieldPath,
      'metadata.namespace',
    );
    // The capabilities it runs exist (a renamed capability would make `troupe run` exit).
    const known = new Set(await capabilityNames());
    const running = env.get('TROUPE_CONTROLLERS')?.value?.split(',') ?? [];
    assert.ok(running.length > 0);
    for (const name of running) assert.ok(known.has(name), `unknown capability ${name}`);
    assert.equal(c.livenessProbe.httpGet.path, '/healthz');
    assert.equal(c.readinessProbe.httpGet.path, '/readyz');
    const ports = new Map(c.ports.map((p) => [p.name, p.containerPort]));
    assert.equal(ports.get(c.livenessProbe.httpGet.port), 8081);
    assert.ok(c.args.includes(`--health-probe-bind-address=:${ports.get('health')}`));
    assert.ok(c.args.includes(`--metrics-bind-address=:${ports.get('metrics')}`));
    assert.ok(c.resources.requests.cpu && c.resources.requests.memory);
    assert.equal(c.securityContext.readOnlyRootFilesystem, true);
    assert.equal(c.securityContext.allowPrivilegeEscalation, false);
    assert.deepEqual(c.securityContext.capabilities.drop, ['ALL']);
    assert.equal(c.image, 'troupe:latest', 'the image make deploy substitutes');
    // The metrics Service reaches the manager's pods on their metrics port.
    const [svc] = find(docs, 'Service') as (KubeDoc & {
      spec: { selector: Record<string, string>; ports: { targetPort: string }[] };
    })[];
    assert.ok(svc);
    assert.equal(svc.spec.ports[0]?.targetPort, 'metrics');
    for (const [k, v] of Object.entries(svc.spec.selector))
      assert.equal(dep.spec.template.metadata.labels[k], v, `selector ${k}`);
    for (const [k, v] of Object.entries(dep.spec.selector.matchLabels))
      assert.equal(dep.spec.template.metadata.labels[k], v);
  });
});

describe('kubectl apply --dry-run=server -f dist/install.yaml', () => {
  let t: TestServer;
  let count: number;

  before(async () => {
    t = await startTestServer();
    count = parseManifests(await readFile(INSTALL_PATH, 'utf8')).length;
    // A server-side dry run creates nothing, so on any cluster the namespaced objects need
    // their namespace to exist already: create it first, as a real first install would have.
    await t.kubectl(['create', 'namespace', NAMESPACE]);
  });
  after(() => t?.close());

  test('client-side apply: the API server accepts every object', async () => {
    const { stdout } = await t.kubectl(['apply', '--dry-run=server', '-f', INSTALL_PATH]);
    const lines = stdout.trim().split('\n');
    assert.equal(lines.length, count, stdout);
    for (const line of lines) assert.match(line, / (created|configured|unchanged) \(server dry run\)$/, line);
  });

  test('server-side apply: the API server accepts every object', async () => {
    const { stdout } = await t.kubectl(['apply', '--server-side', '--dry-run=server', '-f', INSTALL_PATH]);
    const lines = stdout.trim().split('\n');
    assert.equal(lines.length, count, stdout);
    for (const line of lines) assert.match(line, /serverside-applied \(server dry run\)$/, line);
  });
});
