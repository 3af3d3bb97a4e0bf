import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';
import { waitFor } from '../../support/wait.ts';

const GATED_POD = `apiVersion: v1
kind: Pod
metadata:
  name: gated
  namespace: default
  labels: {app: demo}
spec:
  schedulingGates:
  - name: podsequence.example.com/sequence-gate
  containers:
  - name: nginx
    image: nginx:latest
`;

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
`;

describe('kubectl against the embedded API server', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(() => t.close());

  test('version, api-resources and api-versions read discovery', async () => {
    const v = await t.kubectl(['version', '-o', 'json']);
    assert.equal(JSON.parse(v.stdout).serverVersion.minor, '32');
    const r = await t.kubectl(['api-resources', '--no-headers']);
    for (const line of ['pods ', 'deployments ', 'customresourcedefinitions ', 'leases ', 'jobs ']) {
      assert.ok(r.stdout.includes(line), `api-resources lists ${line.trim()}`);
    }
    assert.match(r.stdout, /^pods\s+po\s+v1\s+true\s+Pod$/m);
    const gv = await t.kubectl(['api-versions']);
    assert.match(gv.stdout, /^apps\/v1$/m);
  });

  test('apply with default (strict) validation creates, then get shows SchedulingGated', async () => {
    const out = await t.kubectl(['apply', '-f', '-'], GATED_POD);
    assert.match(out.stdout, /pod\/gated created/);
    const get = await t.kubectl(['get', 'pod', 'gated']);
    assert.match(get.stdout, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/m);
    assert.match(get.stdout, /^gated\s+0\/1\s+SchedulingGated\s+0\s+\S+$/m);
    const cond = await t.kubectl(['get', 'pod', 'gated', '-o', 'jsonpath={.status.conditions[0].reason}']);
    assert.equal(cond.stdout, 'SchedulingGated');
  });

  test('strict validation rejects unknown fields', async () => {
    const r = await t.kubectlResult(
      ['apply', '-f', '-'],
      GATED_POD.replace('  name: gated\n', '  name: strict\n').replace(
        '  - name: nginx\n',
        '  - name: nginx\n    bogus: 1\n',
      ),
    );
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /unknown field "spec.containers\[0\].bogus"/);
  });

  test('a gate cannot be added, only removed', async () => {
    const add = await t.kubectlResult([
      'patch',
      'pod',
      'gated',
      '--type=json',
      '-p',
      '[{"op":"add","path":"/spec/schedulingGates/-","value":{"name":"another"}}]',
    ]);
    assert.notEqual(add.code, 0);
    assert.match(add.stderr, /only deletion is allowed/);
    await t.kubectl([
      'patch',
      'pod',
      'gated',
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/spec/schedulingGates/0"}]',
    ]);
    const get = await t.kubectl(['get', 'pod', 'gated', '-o', 'jsonpath={.spec.schedulingGates}']);
    assert.equal(get.stdout, '');
  });

  test('label, annotate and strategic-merge patch', async () => {
    await t.kubectl(['label', 'pod', 'gated', 'tier=db']);
    await t.kubectl(['annotate', 'pod', 'gated', 'note=hello']);
    await t.kubectl([
      'patch',
      'pod',
      'gated',
      '-p',
      '{"spec":{"containers":[{"name":"nginx","image":"nginx:1.28"}]}}',
    ]);
    const got = JSON.parse((await t.kubectl(['get', 'pod', 'gated', '-o', 'json'])).stdout);
    assert.equal(got.metadata.labels.tier, 'db');
    assert.equal(got.metadata.annotations.note, 'hello');
    assert.equal(got.spec.containers[0].image, 'nginx:1.28');
    assert.equal(got.spec.containers.length, 1);
    const sel = await t.kubectl(['get', 'pods', '-l', 'tier=db', '-o', 'name']);
    assert.equal(sel.stdout.trim(), 'pod/gated');
  });

  test('apply --server-side records managedFields and reports conflicts', async () => {
    await t.kubectl(['apply', '--server-side', '-f', '-'], DEPLOYMENT);
    const d = JSON.parse(
      (await t.kubectl(['get', 'deploy', 'web', '-o', 'json', '--show-managed-fields'])).stdout,
    );
    assert.ok(
      d.metadata.managedFields.some(
        (m: { manager: string; operation: string }) => m.manager === 'kubectl' && m.operation === 'Apply',
      ),
    );
    await t.kubectl(['scale', 'deploy', 'web', '--replicas=3']);
    const conflict = await t.kubectlResult(['apply', '--server-side', '-f', '-'], DEPLOYMENT);
    assert.notEqual(conflict.code, 0);
    assert.match(conflict.stderr, /conflict/i);
    await t.kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], DEPLOYMENT);
    const replicas = await t.kubectl(['get', 'deploy', 'web', '-o', 'jsonpath={.spec.replicas}']);
    assert.equal(replicas.stdout, '2');
  });

  test('client-side apply updates an existing object', async () => {
    await t.kubectl(
      ['apply', '-f', '-'],
      DEPLOYMENT.replace('web', 'web2').replace(/app: web/g, 'app: web2'),
    );
    const out = await t.kubectl(
      ['apply', '-f', '-'],
      DEPLOYMENT.replace('web', 'web2')
        .replace(/app: web/g, 'app: web2')
        .replace('replicas: 2', 'replicas: 4'),
    );
    assert.match(out.stdout, /deployment.apps\/web2 configured/);
    const r = await t.kubectl(['get', 'deploy', 'web2', '-o', 'jsonpath={.spec.replicas}']);
    assert.equal(r.stdout, '4');
  });

  test('describe reads naturally', async () => {
    const out = await t.kubectl(['describe', 'pod', 'gated']);
    assert.match(out.stdout, /^Name:\s+gated$/m);
    assert.match(out.stdout, /^Namespace:\s+default$/m);
    assert.match(out.stdout, /Image:\s+nginx:1.28/);
  });

  test('explain uses the published OpenAPI', async () => {
    const out = await t.kubectl(['explain', 'pods.spec.schedulingGates']);
    assert.match(out.stdout, /FIELD:\s+schedulingGates/);
    assert.match(out.stdout, /name\s+<string>/);
  });

  test('wait --for=delete and wait --for=condition', async () => {
    await t.kubectl(['create', 'configmap', 'waitme']);
    const waiter = t.kubectl(['wait', '--for=delete', 'configmap/waitme', '--timeout=20s']);
    await t.kubectl(['delete', 'configmap', 'waitme']);
    await waiter;
    await t.kubectl(['apply', '-f', '-'], GATED_POD.replace('name: gated', 'name: waited'));
    const condWaiter = t.kubectl([
      'wait',
      '--for=condition=PodScheduled=False',
      'pod/waited',
      '--timeout=20s',
    ]);
    const r = await condWaiter;
    assert.match(r.stdout, /condition met/);
  });

  test('get -w streams changes as table rows', async () => {
    const child = spawn(
      'kubectl',
      ['--kubeconfig', t.kubeconfigPath, 'get', 'configmaps', '-w', '--output-watch-events'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    await waitFor(
      'the initial listing',
      () => out.includes('kube-root') || out.includes('EVENT') || out.length > 0,
      { timeoutMs: 10000 },
    ).catch(() => undefined);
    await t.kubectl(['create', 'configmap', 'watched']);
    await waitFor('the watch to show the new configmap', () => /ADDED\s+watched/.test(out));
    child.kill();
    assert.match(out, /ADDED\s+watched/);
  });

  test('errors come back as kubectl prints them', async () => {
    const r = await t.kubectlResult(['get', 'pod', 'missing']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Error from server \(NotFound\): pods "missing" not found/);
    const bad = await t.kubectlResult(
      ['create', '-f', '-'],
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: Bad_Name\nspec:\n  containers: []\n',
    );
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /is invalid/);
  });

  test('default, kube-system and kube-public may not be deleted', async () => {
    for (const ns of ['default', 'kube-system', 'kube-public']) {
      for (const dryRun of [[], ['--dry-run=server']]) {
        const r = await t.kubectlResult(['delete', 'namespace', ns, ...dryRun]);
        assert.equal(r.code, 1);
        assert.equal(
          r.stderr.trim(),
          `Error from server (Forbidden): namespaces "${ns}" is forbidden: this namespace may not be deleted`,
        );
      }
      const got = JSON.parse((await t.kubectl(['get', 'namespace', ns, '-o', 'json'])).stdout);
      assert.equal(got.metadata.deletionTimestamp, undefined);
      assert.equal(got.status.phase, 'Active');
    }
    await t.kubectl(['create', 'namespace', 'mortal']);
    await t.kubectl(['delete', 'namespace', 'mortal', '--wait=false']);
  });

  test('delete removes objects', async () => {
    await t.kubectl(['delete', 'pod', 'gated', '--wait=false']);
    const r = await t.kubectlResult(['get', 'pod', 'gated']);
    assert.notEqual(r.code, 0);
  });
});
