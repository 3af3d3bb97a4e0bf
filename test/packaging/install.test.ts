/**
 * dist/install.yaml: up to date with its generator, least privilege, a manager Deployment a
 * real cluster accepts, and `kubectl apply --dry-run=server` passing against the embedded
 * API server.
 */

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { type ApiServerHandle, startApiServer } from '../../src/cluster/apiserver/server.ts';
import {
  CAPABILITY_RULES,
  capabilityNames,
  INSTALL_PATH,
  NAMESPACE,
  renderInstall,
} from '../../scripts/gen-install.ts';

const run = promisify(execFile);

interface Doc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [k: string]: unknown;
}

async function installDocs(): Promise<Doc[]> {
  return parseAllDocuments(await readFile(INSTALL_PATH, 'utf8')).map((d) => d.toJSON() as Doc);
}

describe('dist/install.yaml', () => {
  let docs: Doc[];
  before(async () => {
    docs = await installDocs();
  });

  test('is what scripts/gen-install.ts generates (run it after changing CRDs or RBAC)', async () => {
    assert.equal(await readFile(INSTALL_PATH, 'utf8'), await renderInstall());
  });

  test('holds every CRD of config/crd/', async () => {
    const names = docs.filter((d) => d.kind === 'CustomResourceDefinition').map((d) => d.metadata.name);
    assert.deepEqual(names.sort(), [
      'appwrappers.workload.codeflare.dev',
      'podgroups.scheduling.incubator.k8s.io',
      'podsequences.scheduling.example.com',
    ]);
  });

  test('grants each capability its own rules, with no wildcards', async () => {
    for (const name of await capabilityNames()) assert.ok(CAPABILITY_RULES[name], `rules for ${name}`);
    const roles = docs.filter((d) => d.kind === 'ClusterRole' || d.kind === 'Role');
    assert.ok(roles.length >= 3);
    for (const role of roles) {
      for (const rule of role.rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[]) {
        assert.ok(
          !rule.verbs.includes('*') && !rule.resources.includes('*') && !rule.apiGroups.includes('*'),
          role.metadata.name,
        );
      }
    }
    // Leader election's Lease rights are granted in troupe-system only.
    const leRole = docs.find((d) => d.kind === 'Role' && d.metadata.name === 'troupe-leader-election');
    assert.equal(leRole?.metadata.namespace, NAMESPACE);
    // The dashboard only reads.
    const viewer = docs.find(
      (d) => d.kind === 'ClusterRole' && d.metadata.name === 'troupe-dashboard-viewer',
    );
    assert.ok(viewer);
    for (const rule of viewer.rules as { verbs: string[] }[])
      assert.deepEqual(rule.verbs, ['get', 'list', 'watch']);
  });

  test('runs two leader-electing, non-root manager replicas with probes and requests', () => {
    const dep = docs.find((d) => d.kind === 'Deployment') as Doc & {
      spec: {
        replicas: number;
        template: {
          spec: {
            serviceAccountName: string;
            securityContext: { runAsNonRoot: boolean };
            containers: {
              args: string[];
              livenessProbe: unknown;
              readinessProbe: unknown;
              resources: { requests: Record<string, string> };
              securityContext: { readOnlyRootFilesystem: boolean; allowPrivilegeEscalation: boolean };
              ports: { name: string; containerPort: number }[];
            }[];
          };
        };
      };
    };
    assert.equal(dep.metadata.namespace, NAMESPACE);
    assert.equal(dep.spec.replicas, 2);
    const pod = dep.spec.template.spec;
    assert.equal(pod.securityContext.runAsNonRoot, true);
    const c = pod.containers[0]!;
    assert.equal(c.args[0], 'run');
    assert.ok(c.args.includes('--leader-elect'));
    assert.ok(c.livenessProbe && c.readinessProbe);
    assert.ok(c.resources.requests.cpu && c.resources.requests.memory);
    assert.equal(c.securityContext.readOnlyRootFilesystem, true);
    assert.equal(c.securityContext.allowPrivilegeEscalation, false);
    assert.ok(c.ports.some((p) => p.name === 'metrics'));
    const sa = docs.find((d) => d.kind === 'ServiceAccount');
    assert.equal(pod.serviceAccountName, sa?.metadata.name);
    const svc = docs.find((d) => d.kind === 'Service') as Doc & { spec: { ports: { targetPort: string }[] } };
    assert.equal(svc.spec.ports[0]?.targetPort, 'metrics');
  });
});

describe('kubectl apply --dry-run=server -f dist/install.yaml', () => {
  let server: ApiServerHandle;
  let dir: string;
  let kubeconfig: string;

  before(async () => {
    server = await startApiServer({ port: 0 });
    dir = await mkdtemp(join(tmpdir(), 'troupe-install-'));
    kubeconfig = join(dir, 'kubeconfig');
    await writeFile(kubeconfig, server.kubeconfig, { mode: 0o600 });
  });

  after(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('the API server accepts every object', async () => {
    // A server-side dry run creates nothing, so the namespaced objects need their namespace
    // to exist already (as on any cluster): create it, then dry-run the whole file.
    await run('kubectl', ['--kubeconfig', kubeconfig, 'create', 'namespace', NAMESPACE]);
    const { stdout } = await run('kubectl', [
      '--kubeconfig',
      kubeconfig,
      'apply',
      '--server-side',
      '--dry-run=server',
      '-f',
      INSTALL_PATH,
    ]);
    const docs = await installDocs();
    const lines = stdout.trim().split('\n');
    assert.equal(lines.length, docs.length, stdout);
    for (const line of lines) assert.match(line, /serverside-applied \(server dry run\)$/);
  });
});
