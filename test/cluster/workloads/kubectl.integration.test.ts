/** The controllers seen through kubectl over HTTP: rollout status, get and describe read as on a real cluster. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ClusterClient } from '../../../src/cluster/client.ts';
import { startWorkloadControllers, type WorkloadControllers } from '../../../src/cluster/workloads/index.ts';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';
import { waitFor } from '../../support/wait.ts';
import { autoRun, createNode } from './harness.ts';

const MANIFESTS = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: nginx, image: nginx}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: default}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: agent, image: busybox}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: default}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
`;

describe('workload controllers through kubectl', () => {
  let ts: TestServer;
  let controllers: WorkloadControllers;
  let stopRun: () => void;
  let client: ClusterClient;
  before(async () => {
    ts = await startTestServer();
    client = new ClusterClient(ts.server.api, 'system:test');
    controllers = startWorkloadControllers(client);
    await createNode(client, 'node-1');
    await createNode(client, 'node-2');
    stopRun = autoRun(client, 'default');
  });
  after(async () => {
    stopRun();
    await controllers.stop();
    await ts.close();
  });

  test('rollout status completes for a Deployment, a StatefulSet and a DaemonSet', async () => {
    await ts.kubectl(['apply', '-f', '-'], MANIFESTS);
    for (const what of ['deployment/web', 'statefulset/db', 'daemonset/agent']) {
      const r = await ts.kubectl(['rollout', 'status', what, '--timeout=30s']);
      assert.match(
        r.stdout,
        /successfully rolled out|roll out complete|partitioned roll out complete/,
        `${what}: ${r.stdout}`,
      );
    }
    const get = await ts.kubectl(['get', 'deployment', 'web', '--no-headers']);
    assert.match(get.stdout, /^web\s+2\/2\s+2\s+2\s/);
  });

  test('a finished Job reads naturally in kubectl describe', async () => {
    const pod = await waitFor('job pod', async () => {
      const r = await ts.kubectl(['get', 'pods', '-l', 'job-name=once', '-o', 'name']);
      return r.stdout.trim() || undefined;
    });
    await client.as('system:node:node-1').mutate(
      { group: '', version: 'v1', resource: 'pods' },
      'default',
      pod.replace('pod/', ''),
      (p) => {
        (p.status as { phase: string }).phase = 'Succeeded';
      },
      'status',
    );
    await ts.kubectl(['wait', '--for=condition=complete', 'job/once', '--timeout=30s']);
    const d = await ts.kubectl(['describe', 'job', 'once']);
    assert.match(d.stdout, /Pods Statuses:\s+0 Active \(0 Ready\) \/ 1 Succeeded \/ 0 Failed/);
    assert.match(
      d.stdout,
      /Normal\s+SuccessfulCreate\s+\S+\s+job-controller\s+Created pod: once-[a-z0-9]{5}/,
    );
    assert.match(d.stdout, /Normal\s+Completed\s+\S+\s+job-controller\s+Job completed/);
    const dd = await ts.kubectl(['describe', 'deployment', 'web']);
    assert.match(
      dd.stdout,
      /Normal\s+ScalingReplicaSet\s+\S+\s+deployment-controller\s+Scaled up replica set web-[a-z0-9]+ to 2 from 0/,
    );
    assert.match(dd.stdout, /Available\s+True\s+MinimumReplicasAvailable/);
    assert.match(dd.stdout, /Progressing\s+True\s+NewReplicaSetAvailable/);
  });
});
