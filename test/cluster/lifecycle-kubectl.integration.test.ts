/**
 * The embedded cluster's "done when" through plain kubectl: workloads run, complete,
 * spread to new nodes and are garbage-collected as on a real cluster with KWOK.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestCluster, type TestCluster } from '../support/cluster.ts';
import { webDeployment } from '../support/manifests.ts';
import { waitFor } from '../support/wait.ts';

const DEPLOYMENT = webDeployment({ replicas: 3, image: 'nginx:1.27', readinessDelaySeconds: 5 });

const JOB = `apiVersion: batch/v1
kind: Job
metadata: {name: count}
spec:
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: c
        image: busybox
        command: ["sleep", "5"]
`;

const DAEMONSET = `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: a, image: agent}]
`;

const STATEFULSET = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 3
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: db
        image: postgres
        readinessProbe:
          exec: {command: [pg_isready]}
          initialDelaySeconds: 2
`;

const NEW_NODE = `apiVersion: v1
kind: Node
metadata:
  name: late-node
  annotations: {kwok.x-k8s.io/node: fake}
  labels: {kubernetes.io/hostname: late-node}
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
`;

describe('the embedded cluster through kubectl', () => {
  let t: TestCluster;
  before(async () => {
    t = await startTestCluster({ nodes: 3, timeScale: 10 });
  });
  after(() => t.close());

  const json = async (args: string[]) => JSON.parse(await t.kubectl([...args, '-o', 'json']));

  test('a Deployment becomes available with Running, Ready pods', async () => {
    await t.kubectl(['apply', '-f', '-'], DEPLOYMENT);
    await t.kubectl(['rollout', 'status', 'deployment/web', '--timeout=60s']);
    const pods = (await json(['get', 'pods', '-l', 'app=web'])).items as {
      status: { phase: string; conditions: { type: string; status: string }[] };
    }[];
    assert.equal(pods.length, 3);
    for (const p of pods) {
      assert.equal(p.status.phase, 'Running');
      assert.equal(p.status.conditions.find((c) => c.type === 'Ready')?.status, 'True');
    }
    const table = await t.kubectl(['get', 'pods', '-l', 'app=web']);
    assert.match(table, /web-\S+\s+1\/1\s+Running\s+0/);
  });

  test('a Job completes', async () => {
    await t.kubectl(['apply', '-f', '-'], JOB);
    await t.kubectl(['wait', '--for=condition=Complete', 'job/count', '--timeout=60s']);
    const out = await t.kubectl(['get', 'job', 'count']);
    assert.match(out, /count\s+Complete\s+2\/2/);
    const pods = await t.kubectl(['get', 'pods', '-l', 'job-name=count']);
    assert.match(pods, /Completed/);
  });

  test('a DaemonSet puts one pod on each node, and on a node added later', async () => {
    await t.kubectl(['apply', '-f', '-'], DAEMONSET);
    await waitFor(
      '3 daemon pods running',
      async () => (await json(['get', 'ds', 'agent'])).status?.numberReady === 3,
      { timeoutMs: 60_000 },
    );
    await t.kubectl(['apply', '-f', '-'], NEW_NODE);
    await waitFor(
      '4 daemon pods running',
      async () => (await json(['get', 'ds', 'agent'])).status?.numberReady === 4,
      { timeoutMs: 60_000 },
    );
    const nodes = ((await json(['get', 'pods', '-l', 'app=agent'])).items as { spec: { nodeName: string } }[])
      .map((p) => p.spec.nodeName)
      .sort();
    assert.deepEqual(nodes, ['late-node', 'node-0', 'node-1', 'node-2']);
  });

  test('a StatefulSet starts its pods in order', async () => {
    await t.kubectl(['apply', '-f', '-'], STATEFULSET);
    await t.kubectl(['rollout', 'status', 'statefulset/db', '--timeout=60s']);
    const pods = (
      (await json(['get', 'pods', '-l', 'app=db'])).items as {
        metadata: { name: string };
        status: { startTime: string };
      }[]
    ).sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    assert.deepEqual(
      pods.map((p) => p.metadata.name),
      ['db-0', 'db-1', 'db-2'],
    );
    for (let i = 1; i < pods.length; i++) {
      assert.ok(pods[i]!.status.startTime >= pods[i - 1]!.status.startTime, 'db-N starts after db-(N-1)');
    }
  });

  test('deleting a Deployment garbage-collects its ReplicaSet and pods', async () => {
    await t.kubectl(['delete', 'deployment', 'web']);
    await waitFor(
      'web pods gone',
      async () => (await json(['get', 'pods', '-l', 'app=web'])).items.length === 0,
      { timeoutMs: 60_000 },
    );
    assert.equal((await json(['get', 'replicasets', '-l', 'app=web'])).items.length, 0);
  });

  test('a gated pod stays SchedulingGated until its gate is removed', async () => {
    await t.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: v1
kind: Pod
metadata: {name: gated}
spec:
  schedulingGates: [{name: example.com/wait}]
  containers: [{name: c, image: nginx}]
`,
    );
    assert.match(await t.kubectl(['get', 'pod', 'gated']), /gated\s+0\/1\s+SchedulingGated/);
    await t.kubectl([
      'patch',
      'pod',
      'gated',
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/spec/schedulingGates"}]',
    ]);
    await t.kubectl(['wait', '--for=condition=Ready', 'pod/gated', '--timeout=60s']);
  });

  test("a pod that can never fit stays Pending with the scheduler's reason", async () => {
    await t.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: v1
kind: Pod
metadata: {name: greedy}
spec:
  containers:
  - name: c
    image: trainer
    resources: {requests: {nvidia.com/gpu: "1"}, limits: {nvidia.com/gpu: "1"}}
`,
    );
    await waitFor('the Unschedulable condition', async () => {
      const p = await json(['get', 'pod', 'greedy']);
      return p.status.conditions?.find((c: { reason?: string }) => c.reason === 'Unschedulable');
    });
    const p = await json(['get', 'pod', 'greedy']);
    assert.equal(p.status.phase, 'Pending');
    const msg = p.status.conditions.find((c: { reason?: string }) => c.reason === 'Unschedulable')
      .message as string;
    assert.match(msg, /^0\/4 nodes are available: 4 Insufficient nvidia.com\/gpu\./);
    const described = await t.kubectl(['describe', 'pod', 'greedy']);
    assert.match(described, /FailedScheduling/);
  });
});
