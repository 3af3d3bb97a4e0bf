/**
 * docs/install.md holds up: the files it names exist, the kustomization it shows renders
 * config/default with the user's image and applies, the one combining PodSequence's and
 * AppWrapper's webhooks renders one webhook server for both, and the dashboard's opt-in role
 * gives the manager's ServiceAccount read access (and nothing more).
 */

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  DEFAULT_KUSTOMIZATION,
  INSTALL_PATH,
  type KubeDoc,
  kustomize,
  parseManifests,
  ROOT,
} from '../../scripts/gen-install.ts';
import { ClusterClient } from '../../src/cluster/client.ts';
import { ensureKueueCRDs } from '../../src/cluster/kueue/index.ts';
import { startTestServer, type TestServer } from '../support/apiserver.ts';
import { waitFor } from '../support/wait.ts';

const DOC = join(ROOT, 'docs', 'install.md');

/** The fenced block that follows `<!-- doc-test: <name> -->` in docs/install.md. */
async function docBlock(name: string): Promise<string> {
  const text = await readFile(DOC, 'utf8');
  const m = new RegExp(`<!-- doc-test: ${name} -->\\n\`\`\`\\w*\\n([\\s\\S]*?)\\n\`\`\``).exec(text);
  assert.ok(m?.[1], `docs/install.md has a block marked doc-test: ${name}`);
  return m[1];
}

type Pod = { spec: { template: { spec: { containers: { image: string }[] } } } };

test('every repository file docs/install.md names exists', async () => {
  const text = await readFile(DOC, 'utf8');
  const paths = new Set(
    [...text.matchAll(/(?<![\w.-])((?:config|deploy|samples|dist|scripts)\/[\w./-]*[\w])/g)].map(
      (m) => m[1]!,
    ),
  );
  assert.ok(paths.size > 10);
  for (const p of paths) assert.ok(existsSync(join(ROOT, p)), `${p} (named in docs/install.md)`);
});

describe("docs/install.md's own kustomization over config/default", () => {
  let dir: string;
  let t: TestServer;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'troupe-overlay-'));
    // Laid out as the doc says: the overlay next to a checkout named troupe.
    await symlink(ROOT, join(dir, 'troupe'));
    await mkdir(join(dir, 'my-troupe'));
    await writeFile(join(dir, 'my-troupe', 'kustomization.yaml'), await docBlock('overlay'));
    t = await startTestServer();
  });
  after(async () => {
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('renders config/default with the image it names, and nothing else changed', async () => {
    const mine = parseManifests(await kustomize(join(dir, 'my-troupe')));
    const base = parseManifests(await kustomize(DEFAULT_KUSTOMIZATION));
    const dep = (docs: KubeDoc[]) => docs.find((d) => d.kind === 'Deployment') as KubeDoc & Pod;
    assert.equal(dep(mine).spec.template.spec.containers[0]?.image, 'registry.example.com/troupe:0.1.0');
    dep(mine).spec.template.spec.containers[0]!.image = 'troupe:latest';
    assert.deepEqual(mine, base);
  });

  test('applies with kubectl apply -k (server dry run)', async () => {
    await t.kubectl(['create', 'namespace', 'troupe-system']);
    const { stdout } = await t.kubectl([
      'apply',
      '--server-side',
      '--dry-run=server',
      '-k',
      join(dir, 'my-troupe'),
    ]);
    const lines = stdout.trim().split('\n');
    assert.equal(lines.length, parseManifests(await readFile(INSTALL_PATH, 'utf8')).length, stdout);
  });
});

describe("docs/install.md's kustomization of full mode with the AppWrapper webhooks", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'troupe-combined-'));
    await symlink(ROOT, join(dir, 'troupe'));
    await mkdir(join(dir, 'my-troupe'));
    await writeFile(
      join(dir, 'my-troupe', 'kustomization.yaml'),
      await docBlock('full-and-appwrapper-webhooks'),
    );
  });
  after(() => rm(dir, { recursive: true, force: true }));

  type Args = { spec: { template: { spec: { containers: { args: string[] }[] } } } };
  type Hook = KubeDoc & { webhooks: { clientConfig: { service: { name: string } } }[] };

  test('one Service and one certificate serve both webhooks, with cert-manager injecting every CA', async () => {
    const docs = parseManifests(await kustomize(join(dir, 'my-troupe')));
    const args = (docs.find((d) => d.kind === 'Deployment') as KubeDoc & Args).spec.template.spec
      .containers[0]!.args;
    for (const flag of ['--appwrapper-webhooks', '--cert-dir=/tmp/k8s-webhook-server/serving-certs'])
      assert.equal(args.filter((a) => a === flag).length, 1, flag);
    const services = docs.filter((d) => d.kind === 'Service' && d.metadata.name === 'troupe-webhook-service');
    assert.equal(services.length, 1);
    const hooks = docs.filter((d) => d.kind.endsWith('WebhookConfiguration')) as Hook[];
    assert.deepEqual(hooks.map((h) => h.metadata.name).sort(), [
      'appwrapper-mutating-webhook-configuration',
      'appwrapper-validating-webhook-configuration',
      'podsequence-mutating-webhook',
    ]);
    for (const h of hooks) {
      assert.equal(h.webhooks[0]!.clientConfig.service.name, 'troupe-webhook-service');
      assert.equal(
        (h.metadata.annotations as Record<string, string> | undefined)?.['cert-manager.io/inject-ca-from'],
        'troupe-system/troupe-serving-cert',
        h.metadata.name,
      );
    }
  });
});

describe('config/rbac/dashboard_viewer_role.yaml', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ authorizationMode: 'RBAC' });
    await t.kubectl(['apply', '--server-side', '-f', INSTALL_PATH]);
    // Kueue's kinds, as on a cluster with Kueue installed (the dashboard shows its queues).
    const admin = new ClusterClient(t.server.api, 'system:admin');
    await ensureKueueCRDs(admin);
    await waitFor(
      'Kueue kinds served',
      async () => (await t.kubectlResult(['get', 'clusterqueues'])).code === 0,
    );
  });
  after(() => t?.close());

  test('lets the manager read what the dashboard shows, and only read', async () => {
    const docs = parseManifests(await readFile(join(ROOT, 'config/rbac/dashboard_viewer_role.yaml'), 'utf8'));
    const role = docs.find((d) => d.kind === 'ClusterRole') as KubeDoc & { rules: { verbs: string[] }[] };
    for (const rule of role.rules) assert.deepEqual(rule.verbs, ['get', 'list', 'watch']);
    const sa = parseManifests(await readFile(INSTALL_PATH, 'utf8')).find((d) => d.kind === 'ServiceAccount');
    assert.ok(sa);
    const as = `--as=system:serviceaccount:${sa.metadata.namespace}:${sa.metadata.name}`;
    const canI = async (verb: string, resource: string) =>
      (await t.kubectlResult(['auth', 'can-i', verb, resource, '-A', as])).stdout.trim();

    // Nodes are not in this list: the AppWrapper controller watches them for Autopilot's
    // health labels, so the manager reads them with or without the viewer role.
    const shown = ['events.events.k8s.io', 'customresourcedefinitions', 'clusterqueues.kueue.x-k8s.io'];
    for (const r of shown) assert.equal(await canI('list', r), 'no', `${r} before the viewer role`);
    await t.kubectl(['apply', '-f', join(ROOT, 'config/rbac/dashboard_viewer_role.yaml')]);
    for (const r of [
      ...shown,
      'nodes',
      'localqueues.kueue.x-k8s.io',
      'workloads.kueue.x-k8s.io',
      'jobs.batch',
    ])
      assert.equal(await canI('watch', r), 'yes', r);
    assert.equal(await canI('delete', 'nodes'), 'no');
  });
});
