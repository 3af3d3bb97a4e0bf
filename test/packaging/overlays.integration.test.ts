/**
 * The overlays under config/overlays/ (lite, full, certmanager, appwrapper-webhooks and its
 * cert-manager variant, offloader): each renders with kubectl's built-in kustomize, its
 * pieces point at each other (webhook configuration to Service to the manager's port,
 * Certificate to the mounted Secret, role bindings to the manager's ServiceAccount), the
 * AppWrapper configurations are the ones its code registers, and
 * `kubectl apply --dry-run=server` of each rendering
 * passes against the embedded API server. cert-manager's kinds are not served there, so
 * the test installs a minimal CRD for Issuer and Certificate first, as installing
 * cert-manager would.
 */

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { stringify } from 'yaml';
import {
  DEFAULT_KUSTOMIZATION,
  type KubeDoc,
  kustomize,
  parseManifests,
  ROOT,
} from '../../scripts/gen-install.ts';
import { capabilityNames } from '../../src/cli/capabilities.ts';
import { appWrapperWebhookConfigurations } from '../../src/controllers/appwrapper/index.ts';
import { startTestServer, type TestServer } from '../support/apiserver.ts';

const NAMESPACE = 'troupe-system';
const OVERLAYS = [
  'lite',
  'full',
  'certmanager',
  'appwrapper-webhooks',
  'appwrapper-webhooks-certmanager',
  'offloader',
] as const;
type Overlay = (typeof OVERLAYS)[number];

interface Rule {
  apiGroups: string[];
  resources: string[];
  /** Only the metrics-reader role's rule is about a path (`/metrics`) rather than resources. */
  nonResourceURLs?: string[];
  verbs: string[];
  resourceNames?: string[];
}

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}

interface Container {
  name: string;
  args: string[];
  env: EnvVar[];
  ports: { name: string; containerPort: number }[];
  volumeMounts: { name: string; mountPath: string }[];
}

interface Deployment extends KubeDoc {
  spec: {
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        serviceAccountName: string;
        containers: Container[];
        volumes: { name: string; secret?: { secretName: string } }[];
      };
    };
  };
}

interface Service extends KubeDoc {
  spec: { selector: Record<string, string>; ports: { port: number; targetPort: string }[] };
}

interface WebhookConfiguration extends KubeDoc {
  webhooks: {
    clientConfig: {
      caBundle?: string;
      service: { name: string; namespace: string; port: number; path: string };
    };
    namespaceSelector?: { matchExpressions: { values: string[] }[] };
  }[];
}

type Certificate = KubeDoc & {
  spec: { secretName: string; dnsNames: string[]; issuerRef: { kind: string; name: string } };
};

interface Binding extends KubeDoc {
  roleRef: { kind: string; name: string };
  subjects: { kind: string; name: string; namespace: string }[];
}

const find = (docs: KubeDoc[], kind: string, name?: string) =>
  docs.filter((d) => d.kind === kind && (name === undefined || d.metadata.name === name));

const render = async (overlay: Overlay) =>
  parseManifests(await kustomize(join(ROOT, 'config', 'overlays', overlay)));

const manager = (docs: KubeDoc[]) => {
  const deps = find(docs, 'Deployment') as Deployment[];
  assert.equal(deps.length, 1);
  const c = deps[0]!.spec.template.spec.containers.find((x) => x.name === 'manager');
  assert.ok(c);
  return { dep: deps[0]!, c, env: new Map(c.env.map((e) => [e.name, e])) };
};

/** Every rule the ServiceAccount of the manager holds through the rendered ClusterRoles. */
function clusterRulesOfManager(docs: KubeDoc[], sa: string): Rule[] {
  return (find(docs, 'ClusterRoleBinding') as Binding[])
    .filter((b) =>
      b.subjects.some((s) => s.kind === 'ServiceAccount' && s.name === sa && s.namespace === NAMESPACE),
    )
    .flatMap((b) => find(docs, 'ClusterRole', b.roleRef.name).flatMap((r) => r.rules as Rule[]));
}

const allows = (rules: Rule[], group: string, resource: string, verb: string) =>
  rules.some(
    (r) =>
      !r.resourceNames &&
      (r.apiGroups ?? []).includes(group) &&
      (r.resources ?? []).includes(resource) &&
      r.verbs.includes(verb),
  );

const webhookConfigurations = (docs: KubeDoc[]) =>
  [
    ...find(docs, 'MutatingWebhookConfiguration'),
    ...find(docs, 'ValidatingWebhookConfiguration'),
  ] as WebhookConfiguration[];

/** The API server's call to `service` lands on the manager's webhook server port. */
function assertReachesManager(docs: KubeDoc[], service: { name: string; namespace: string; port: number }) {
  const { dep, c } = manager(docs);
  const svc = find(docs, 'Service', service.name)[0] as Service | undefined;
  assert.ok(svc, `Service ${service.name}`);
  assert.equal(svc.metadata.namespace, service.namespace);
  const port = svc.spec.ports.find((p) => p.port === service.port);
  assert.ok(port);
  const containerPort = c.ports.find((p) => p.name === port.targetPort);
  assert.equal(containerPort?.containerPort, 9443, 'troupe run --webhook-port default');
  for (const [k, v] of Object.entries(svc.spec.selector))
    assert.equal(dep.spec.template.metadata.labels[k], v, `selector ${k}`);
}

/** The Secret mounted where the manager's --cert-dir points. */
function certDirSecret(docs: KubeDoc[]): string | undefined {
  const { dep, c } = manager(docs);
  const certDir = c.args.find((a) => a.startsWith('--cert-dir='))?.slice('--cert-dir='.length);
  assert.ok(certDir);
  const mount = c.volumeMounts.find((m) => m.mountPath === certDir);
  assert.ok(mount, 'a volume at --cert-dir');
  return dep.spec.template.spec.volumes.find((v) => v.name === mount.name)?.secret?.secretName;
}

/** cert-manager issues the mounted Secret for the configuration's Service and injects its CA. */
function assertCaInjected(docs: KubeDoc[], hook: WebhookConfiguration) {
  const inject = (hook.metadata.annotations as Record<string, string> | undefined)?.[
    'cert-manager.io/inject-ca-from'
  ];
  assert.ok(inject, `${hook.metadata.name} names its Certificate`);
  const [ns, name] = inject.split('/');
  const cert = find(docs, 'Certificate', name)[0] as Certificate | undefined;
  assert.ok(cert, `Certificate ${inject}`);
  assert.equal(cert.metadata.namespace, ns);
  assert.equal(find(docs, cert.spec.issuerRef.kind, cert.spec.issuerRef.name)[0]?.metadata.namespace, ns);
  for (const { clientConfig } of hook.webhooks) {
    const { service } = clientConfig;
    assert.ok(cert.spec.dnsNames.includes(`${service.name}.${service.namespace}.svc`));
    // cainjector owns the bundle; an empty one in the file would blank it on every apply.
    assert.equal(clientConfig.caBundle, undefined);
  }
  assert.equal(certDirSecret(docs), cert.spec.secretName);
}

describe('kubectl kustomize config/overlays/*', () => {
  const rendered = new Map<Overlay, KubeDoc[]>();
  before(async () => {
    for (const o of OVERLAYS) rendered.set(o, await render(o));
  });
  const docsOf = (o: Overlay) => rendered.get(o)!;

  test('lite is config/default unchanged', async () => {
    assert.deepEqual(docsOf('lite'), parseManifests(await kustomize(DEFAULT_KUSTOMIZATION)));
    assert.equal(manager(docsOf('lite')).env.get('TROUPE_PODSEQUENCE_MODE')?.value, 'lite');
  });

  test('every overlay runs known capabilities and binds roles that exist to the manager', async () => {
    const known = new Set(await capabilityNames());
    for (const o of OVERLAYS) {
      const docs = docsOf(o);
      const { dep, env } = manager(docs);
      for (const name of env.get('TROUPE_CONTROLLERS')?.value?.split(',') ?? [])
        assert.ok(known.has(name), `${o}: unknown capability ${name}`);
      const sa = dep.spec.template.spec.serviceAccountName;
      assert.equal(find(docs, 'ServiceAccount', sa).length, 1);
      for (const b of [...find(docs, 'ClusterRoleBinding'), ...find(docs, 'RoleBinding')] as Binding[]) {
        const role = find(docs, b.roleRef.kind, b.roleRef.name);
        assert.equal(role.length, 1, `${o}: ${b.metadata.name} binds ${b.roleRef.name}`);
        if (b.kind === 'RoleBinding') assert.equal(role[0]!.metadata.namespace, b.metadata.namespace);
        assert.deepEqual(
          b.subjects,
          [{ kind: 'ServiceAccount', name: sa, namespace: NAMESPACE }],
          b.metadata.name,
        );
      }
      for (const role of [...find(docs, 'ClusterRole'), ...find(docs, 'Role')])
        for (const rule of role.rules as Rule[])
          for (const field of [
            rule.apiGroups ?? [],
            rule.resources ?? [],
            rule.nonResourceURLs ?? [],
            rule.verbs,
          ])
            assert.ok(!field.includes('*'), `${o}: wildcard in ${role.metadata.name}`);
    }
  });

  test('full runs PodSequence in full mode with rights on nodes and a webhook reaching the manager', () => {
    const docs = docsOf('full');
    const { dep, env } = manager(docs);
    assert.equal(env.get('TROUPE_PODSEQUENCE_MODE')?.value, 'full');
    const sa = dep.spec.template.spec.serviceAccountName;
    for (const verb of ['get', 'list', 'watch', 'patch', 'update'])
      assert.ok(allows(clusterRulesOfManager(docs, sa), '', 'nodes', verb), `nodes ${verb}`);
    assert.ok(
      !allows(clusterRulesOfManager(docsOf('lite'), sa), '', 'nodes', 'patch'),
      'lite has no node rights',
    );

    const [hook] = find(docs, 'MutatingWebhookConfiguration') as WebhookConfiguration[];
    assert.ok(hook);
    const entry = hook.webhooks[0]!;
    assertReachesManager(docs, entry.clientConfig.service);
    // The webhook leaves the manager's namespace alone, so its pods never wait on themselves.
    assert.deepEqual(entry.namespaceSelector?.matchExpressions[0]?.values, [NAMESPACE]);
    assert.equal(certDirSecret(docs), 'troupe-webhook-server-cert');
  });

  test('config/webhook keeps the seed webhook.yaml and only retargets it', async () => {
    const [seed] = parseManifests(
      await readFile(join(ROOT, 'config', 'webhook', 'webhook.yaml'), 'utf8'),
    ) as WebhookConfiguration[];
    const [ours] = find(docsOf('full'), 'MutatingWebhookConfiguration') as WebhookConfiguration[];
    assert.ok(seed && ours);
    const retargeted = structuredClone(seed);
    retargeted.webhooks[0]!.clientConfig.service.name = 'troupe-webhook-service';
    retargeted.webhooks[0]!.clientConfig.service.namespace = NAMESPACE;
    retargeted.webhooks[0]!.namespaceSelector!.matchExpressions[0]!.values = [NAMESPACE];
    assert.deepEqual(ours, retargeted);
  });

  test('certmanager issues the mounted Secret for the Service and has its CA injected', () => {
    const docs = docsOf('certmanager');
    const hooks = webhookConfigurations(docs);
    assert.equal(hooks.length, 1);
    assertCaInjected(docs, hooks[0]!);
  });

  test('appwrapper-webhooks registers the webhooks the code serves, at the manager behind the Service', () => {
    const docs = docsOf('appwrapper-webhooks');
    const { dep, c, env } = manager(docs);
    assert.ok(c.args.includes('--appwrapper-webhooks'));
    // troupe run refuses the flag without the capability.
    assert.ok(env.get('TROUPE_CONTROLLERS')?.value?.split(',').includes('appwrapper'));
    assert.equal(env.get('TROUPE_PODSEQUENCE_MODE')?.value, 'lite');
    const hooks = webhookConfigurations(docs);
    const service = hooks[0]?.webhooks[0]?.clientConfig.service;
    assert.ok(service);
    assertReachesManager(docs, service);
    assert.equal(certDirSecret(docs), 'troupe-webhook-server-cert');
    // What appWrapperWebhookConfigurations() gives for that Service: names, rules, paths,
    // failure policy. Only the label every troupe object carries is added.
    const unlabelled = hooks.map(({ metadata: { labels, ...metadata }, ...rest }) => ({ ...rest, metadata }));
    const { name, namespace, port } = service;
    assert.deepEqual(unlabelled, appWrapperWebhookConfigurations({ service: { name, namespace, port } }));

    // The validating webhook's SubjectAccessReviews and the defaulting webhook's Namespace
    // reads, in this overlay only.
    const sa = dep.spec.template.spec.serviceAccountName;
    const rules = clusterRulesOfManager(docs, sa);
    assert.ok(allows(rules, 'authorization.k8s.io', 'subjectaccessreviews', 'create'));
    assert.ok(allows(rules, '', 'namespaces', 'get'));
    // In lite, only the secure metrics endpoint reviews access (its own metrics-auth role).
    const liteRoles = (find(docsOf('lite'), 'ClusterRole') as (KubeDoc & { rules: Rule[] })[]).filter(
      (r) => r.metadata.name !== 'troupe-metrics-auth-role',
    );
    assert.ok(
      !allows(
        liteRoles.flatMap((r) => r.rules),
        'authorization.k8s.io',
        'subjectaccessreviews',
        'create',
      ),
      'lite asks no SubjectAccessReviews beyond the metrics endpoint',
    );
  });

  test('appwrapper-webhooks-certmanager is appwrapper-webhooks with both CAs injected by cert-manager', () => {
    const docs = docsOf('appwrapper-webhooks-certmanager');
    const hooks = webhookConfigurations(docs);
    assert.deepEqual(
      hooks.map((h) => h.kind),
      ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'],
    );
    for (const hook of hooks) assertCaInjected(docs, hook);
    const withoutCertManager = structuredClone(docs).filter(
      (d) => !d.apiVersion.startsWith('cert-manager.io/'),
    );
    for (const hook of webhookConfigurations(withoutCertManager)) delete hook.metadata.annotations;
    assert.deepEqual(withoutCertManager, docsOf('appwrapper-webhooks'));
  });

  test('offloader runs offload with the RunPod key and the seed runpod-controller rights', async () => {
    const docs = docsOf('offloader');
    const { dep, env } = manager(docs);
    assert.ok(env.get('TROUPE_CONTROLLERS')?.value?.split(',').includes('offload'));
    assert.deepEqual(env.get('RUNPOD_KEY')?.valueFrom?.secretKeyRef, {
      name: 'runpod-key',
      key: 'RUNPOD_KEY',
    });
    assert.equal(find(docs, 'Secret').length, 0, 'the key is not in the install');

    // Every right the seed's standalone controller holds, the manager holds too.
    const seed = parseManifests(await readFile(join(ROOT, 'deploy', 'runpod-controller.yaml'), 'utf8'));
    const have = clusterRulesOfManager(docs, dep.spec.template.spec.serviceAccountName);
    for (const rule of find(seed, 'ClusterRole').flatMap((r) => r.rules as Rule[]))
      for (const group of rule.apiGroups)
        for (const resource of rule.resources)
          for (const verb of rule.verbs)
            assert.ok(allows(have, group, resource, verb), `${verb} ${resource}.${group || 'core'}`);
    // The virtual node's Lease, in kube-node-lease as the seed's.
    const seedLease = find(seed, 'Role', 'runpod-controller-node-lease')[0]!;
    const lease = find(docs, 'Role').find((r) => r.metadata.namespace === 'kube-node-lease');
    assert.ok(lease);
    assert.deepEqual(lease.rules, seedLease.rules);
  });
});

/** Just enough of cert-manager's CRDs for the API server to accept Issuers and Certificates. */
const certManagerCrd = (kind: string, plural: string) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${plural}.cert-manager.io` },
  spec: {
    group: 'cert-manager.io',
    scope: 'Namespaced',
    names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
});

describe('kubectl apply --dry-run=server of each overlay rendering', () => {
  let t: TestServer;

  before(async () => {
    t = await startTestServer();
    // A server-side dry run creates nothing, so namespaced objects need their namespace
    // already (as on a real first install), and cert-manager's kinds need its CRDs.
    await t.kubectl(['create', 'namespace', NAMESPACE]);
    const nodeLease = await t.kubectlResult(['get', 'namespace', 'kube-node-lease']);
    if (nodeLease.code !== 0) await t.kubectl(['create', 'namespace', 'kube-node-lease']);
    const crds = [certManagerCrd('Issuer', 'issuers'), certManagerCrd('Certificate', 'certificates')];
    await t.kubectl(['apply', '-f', '-'], crds.map((c) => stringify(c)).join('---\n'));
    await t.kubectl([
      'wait',
      '--for=condition=Established',
      'crd/issuers.cert-manager.io',
      'crd/certificates.cert-manager.io',
    ]);
  });
  after(() => t?.close());

  for (const overlay of OVERLAYS) {
    test(`${overlay}: the API server accepts every object, client-side and server-side`, async () => {
      const text = await kustomize(join(ROOT, 'config', 'overlays', overlay));
      const count = parseManifests(text).length;
      const client = await t.kubectl(['apply', '--dry-run=server', '-f', '-'], text);
      const clientLines = client.stdout.trim().split('\n');
      assert.equal(clientLines.length, count, client.stdout);
      for (const line of clientLines)
        assert.match(line, / (created|configured|unchanged) \(server dry run\)$/, line);
      const server = await t.kubectl(['apply', '--server-side', '--dry-run=server', '-f', '-'], text);
      const serverLines = server.stdout.trim().split('\n');
      assert.equal(serverLines.length, count, server.stdout);
      for (const line of serverLines) assert.match(line, /serverside-applied \(server dry run\)$/, line);
    });
  }
});
