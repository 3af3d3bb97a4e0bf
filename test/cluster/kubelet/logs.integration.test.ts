/**
 * `kubectl logs` on the embedded cluster: KWOK's Logs (per pod) and ClusterLogs (by namespace
 * and name) objects point a container's log at a file, as KWOK serves them.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { startTestCluster, type TestCluster } from '../../support/cluster.ts';
import { waitFor } from '../../support/wait.ts';

describe('pod logs from KWOK Logs and ClusterLogs', () => {
  let c: TestCluster;
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'troupe-logs-'));
    await writeFile(join(dir, 'web.log'), 'listening on :8080\nGET / 200\n');
    await writeFile(join(dir, 'batch.log'), 'step 1\nstep 2\ndone\n');
    c = await startTestCluster({ nodes: 1, timeScale: 20 });
  });
  after(async () => {
    await c.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('a Logs object serves its file to kubectl logs and the client', async () => {
    await c.kubectl(['run', 'web', '--image=nginx']);
    await waitFor(
      'web running',
      async () => (await c.kubectl(['get', 'pod', 'web', '-o', 'jsonpath={.status.phase}'])) === 'Running',
    );
    assert.equal(await c.kubectl(['logs', 'web']), '', 'no Logs object: an empty log');
    await c.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Logs
metadata: {name: web, namespace: default}
spec:
  logs:
  - containers: [web]
    logsFile: ${join(dir, 'web.log')}
`,
    );
    assert.equal(await c.kubectl(['logs', 'web']), 'listening on :8080\nGET / 200\n');
    assert.equal(await c.kubectl(['logs', 'web', '--tail=1']), 'GET / 200\n');
    const core = c.kc.makeApiClient(CoreV1Api);
    assert.equal(
      await core.readNamespacedPodLog({ name: 'web', namespace: 'default' }),
      'listening on :8080\nGET / 200\n',
    );
  });

  test('a ClusterLogs object covers the pods of its namespaces', async () => {
    await c.kubectl(['create', 'namespace', 'jobs']);
    await c.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata: {name: batch}
spec:
  selector: {matchNamespaces: [jobs]}
  logs:
  - logsFile: ${join(dir, 'batch.log')}
`,
    );
    await c.kubectl(['run', 'worker', '-n', 'jobs', '--image=busybox', '--', 'sleep', '3600']);
    await waitFor(
      'worker running',
      async () =>
        (await c.kubectl(['get', 'pod', 'worker', '-n', 'jobs', '-o', 'jsonpath={.status.phase}'])) ===
        'Running',
    );
    assert.equal(await c.kubectl(['logs', 'worker', '-n', 'jobs']), 'step 1\nstep 2\ndone\n');
  });
});
