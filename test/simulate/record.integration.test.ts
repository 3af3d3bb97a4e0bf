/**
 * `troupe simulate --record` against an embedded cluster over its kubeconfig, as against any
 * cluster: the trace it writes is a valid scenario holding the cluster's nodes and the Jobs
 * that ran (before the recording and during it), with their members, run times and failures.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parseScenario } from '../../src/simulate/scenario.ts';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';
import { spawnTroupe } from '../support/troupe-process.ts';
import { waitFor } from '../support/wait.ts';

function job(name: string, pods: number, runFor: string, exitCode = 0): string {
  return JSON.stringify({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: 'default' },
    spec: {
      parallelism: pods,
      completions: pods,
      backoffLimit: 0,
      template: {
        metadata: {
          annotations: { 'troupe.dev/run-duration': runFor, 'troupe.dev/exit-code': String(exitCode) },
        },
        spec: {
          restartPolicy: 'Never',
          containers: [
            { name: 'main', image: 'busybox', resources: { requests: { cpu: '500m', memory: '1Gi' } } },
          ],
        },
      },
    },
  });
}

let dir: string;
let tc: TestCluster;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'troupe-record-'));
  tc = await startTestCluster({ nodes: 2 });
});
after(async () => {
  await tc.close();
  await rm(dir, { recursive: true, force: true });
});

test('--record writes a replayable trace of what ran before and during the recording', async () => {
  await tc.kubectl(['apply', '-f', '-'], job('before', 2, '1s'));
  await tc.kubectl(['wait', '--for=condition=Complete', 'job/before', '--timeout=60s']);
  const file = join(dir, 'my-day.yaml');
  const rec = spawnTroupe(['simulate', '--record', file, '--kubeconfig', tc.kubeconfigPath]);
  try {
    await waitFor(
      'the recorder to watch',
      () => rec.stderr().includes('recording pods and nodes until Ctrl+C'),
      {
        timeoutMs: 60_000,
      },
    );
    await tc.kubectl(['apply', '-f', '-'], job('during', 3, '2s', 3));
    await tc.kubectl(['wait', '--for=condition=Failed', 'job/during', '--timeout=60s']);
    // The recorder sees the last pod fail before the Job's condition is written.
  } finally {
    rec.child.kill('SIGINT');
  }
  assert.equal(await rec.exited, 0, rec.stderr());
  assert.match(rec.stderr(), /wrote .*my-day\.yaml: 2 gangs\n$/);
  const text = await readFile(file, 'utf8');
  const s = parseScenario(text, file);
  assert.equal(s.name, 'my-day');
  assert.deepEqual(s.nodes.pools, [
    {
      name: 'pool-0',
      count: 2,
      capacity: { cpu: '32', memory: '256Gi', pods: '110' },
      labels: { 'node.kubernetes.io/instance-type': 'standard' },
    },
  ]);
  const [before_, during] = s.gangs;
  assert.deepEqual(
    [before_!.name, before_!.kind, before_!.size, before_!.atMs, before_!.durationMs, before_!.fail],
    ['default-before', 'Job', 2, 0, 1000, undefined],
  );
  assert.equal(before_!.cpu, '500m');
  assert.equal(before_!.memory, '1024Mi');
  assert.deepEqual(
    [during!.name, during!.kind, during!.size, during!.fail],
    ['default-during', 'Job', 3, { afterMs: 2000, exitCode: 3 }],
  );
  assert.ok(during!.atMs > 0, String(during!.atMs));
  assert.deepEqual(
    s.policies.map((p) => p.name),
    ['default', 'coscheduling'],
  );
});

test('--record against a cluster that does not answer: one clear line, exit code 1', async () => {
  const kubeconfig = join(dir, 'dead.kubeconfig');
  await writeFile(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]',
      'users: [{name: u, user: {token: x}}]',
      'contexts: [{name: c, context: {cluster: c, user: u}}]',
      'current-context: c',
    ].join('\n'),
  );
  const rec = spawnTroupe(['simulate', '--record', join(dir, 'never.yaml'), '--kubeconfig', kubeconfig]);
  assert.equal(await rec.exited, 1);
  assert.match(
    rec.stderr(),
    /^(recording pods and nodes until Ctrl\+C\n)?troupe: watching https:\/\/127\.0\.0\.1:1 failed: .+ \(check the kubeconfig's server, and that the cluster runs\)\n$/,
  );
});
