/**
 * The second provider end to end, with two embedded clusters: troupe's offload controllers
 * run against the local one (no GPU), whose kubeconfig Secret names the remote one (a GPU
 * node). A managed Job is offloaded as a pod of the remote cluster, shown locally by its
 * virtual pod, ends with the remote container's exit code, and its remote pod is deleted
 * when it ends or when the Job is deleted; orphans are collected; a missing Secret keeps
 * the Job local with a clear reason.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type EmbeddedCluster, startEmbeddedCluster } from '../../../src/cluster/index.ts';
import { validateNodeConfig } from '../../../src/cluster/nodes/index.ts';
import { REMOTE_LABELS } from '../../../src/controllers/offload/index.ts';
import { Client, type KubeObject, kubeConfigFromString } from '../../../src/runtime/index.ts';
import { waitFor } from '../../support/wait.ts';
import { type OffloadEnv, seedJob, startOffloadEnv } from './harness.ts';

const JOB = { apiVersion: 'batch/v1', kind: 'Job' };
const POD = { apiVersion: 'v1', kind: 'Pod' };
const SECRET_NAME = 'gpu-cluster';
type Obj = KubeObject & {
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
  spec?: { nodeName?: string };
};

const condition = (j: Obj | undefined, type: string) =>
  (j?.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');

describe('offload to a second Kubernetes cluster', () => {
  let env: OffloadEnv;
  let remote: EmbeddedCluster;
  let remoteClient: Client;
  const ns = 'train';

  const remotePods = async (job?: string) =>
    (
      await remoteClient.list(POD, {
        namespace: ns,
        labelSelector: `${REMOTE_LABELS.cluster}=e2e${job ? `,${REMOTE_LABELS.job}=${job}` : ''}`,
      })
    ).items as Obj[];

  before(async () => {
    env = await startOffloadEnv({ offload: { remoteClusterSecret: `kube-system/${SECRET_NAME}` } });
    remote = await startEmbeddedCluster({
      port: 0,
      timeScale: 20,
      nodes: validateNodeConfig({
        pools: [{ name: 'gpu', count: 1, capacity: { cpu: '32', memory: '256Gi', 'nvidia.com/gpu': '8' } }],
      }),
    });
    remoteClient = Client.fromKubeConfig(kubeConfigFromString(remote.server.kubeconfig));
    // As with MultiKueue, the Job's namespace must exist in the remote cluster.
    for (const c of [env.client, remoteClient]) {
      await c.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    }
  });

  after(async () => {
    await env?.close();
    await remoteClient?.rest.close();
    await remote?.stop();
  });

  test('without its kubeconfig Secret, a Job stays local with a clear reason', async () => {
    await env.client.create(seedJob('no-secret', ns, { command: ['sleep', '20'] }));
    const j = await waitFor('the Unauthorized refusal', async () => {
      const cur = (await env.client.get(JOB, 'no-secret', ns)) as Obj;
      return cur.metadata.annotations?.['runpod.io/offload-error-class'] === 'Unauthorized' ? cur : undefined;
    });
    assert.match(
      j.metadata.annotations?.['runpod.io/offload-error'] ?? '',
      /kubeconfig Secret kube-system\/gpu-cluster was not found/,
    );
    assert.equal(j.metadata.annotations?.['runpod.io/offload-state'], 'Local');
    assert.ok(!j.metadata.finalizers?.includes('runpod.io/offload-cleanup'));
    const ready = await fetch(`${env.manager.healthServer!.url}/readyz?verbose`);
    assert.equal(ready.status, 500, 'not ready while the remote cluster cannot be reached');
    await env.client.delete({ ...JOB, metadata: { name: 'no-secret', namespace: ns } });

    await env.client.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: SECRET_NAME, namespace: 'kube-system' },
      stringData: { kubeconfig: remote.server.kubeconfig },
    });
  });

  test('the seed example Job runs in the other cluster and completes', async () => {
    await env.client.create(seedJob('remote-ok', ns, { command: ['sleep', '20'] }));
    const [rpod] = await waitFor('the remote pod', async () => {
      const pods = await remotePods('remote-ok');
      return pods.length ? pods : undefined;
    });
    assert.equal(rpod!.metadata.labels?.[REMOTE_LABELS.namespace], ns);
    const job = (await env.client.get(JOB, 'remote-ok', ns)) as Obj;
    assert.equal(rpod!.metadata.labels?.[REMOTE_LABELS.jobUid], job.metadata.uid);
    const vpod = await waitFor('the virtual pod to run', async () => {
      const p = (await env.client.tryGet(POD, 'remote-ok-runpod', ns)) as Obj | undefined;
      return p?.status?.phase === 'Running' ? p : undefined;
    });
    assert.equal(vpod.spec?.nodeName, 'runpod-virtual-node');
    assert.equal(vpod.metadata.annotations?.['runpod.io/pod-id'], `${ns}/${rpod!.metadata.name}`);
    // Complete (the Job controller) and the outcome annotations (troupe): two writers.
    const done = await waitFor('the Job to complete, with its outcome', async () => {
      const cur = (await env.client.get(JOB, 'remote-ok', ns)) as Obj;
      return condition(cur, 'Complete') &&
        cur.metadata.annotations?.['runpod.io/offload-state'] === 'Completed'
        ? cur
        : undefined;
    });
    const a = done.metadata.annotations ?? {};
    assert.equal(a['runpod.io/offloaded'], 'true');
    assert.equal(a['runpod.io/provider'], `cluster/${SECRET_NAME}`);
    assert.equal(a['runpod.io/exit-code'], '0');
    assert.equal(a['runpod.io/offload-state'], 'Completed');
    await waitFor('the remote pod to be deleted', async () => (await remotePods('remote-ok')).length === 0);
  });

  test("a failing command fails the Job with the remote container's exit code", async () => {
    const job = seedJob('remote-fails', ns, { command: ['sh', '-c', 'exit 3'], backoffLimit: 0 });
    const tpl = (job.spec as { template: { metadata?: Record<string, unknown> } }).template;
    // What the remote cluster's simulated kubelet runs: one simulated second, then exit 3.
    tpl.metadata = { annotations: { 'troupe.dev/run-duration': '20s', 'troupe.dev/exit-code': '3' } };
    await env.client.create(job);
    await waitFor('the Job to fail', async () => {
      const cur = (await env.client.get(JOB, 'remote-fails', ns)) as Obj;
      return condition(cur, 'Failed') ? cur : undefined;
    });
    // The Job controller fails the Job from the virtual pod; the offload controller writes the
    // exit code on the Job: two writers, in either order.
    const annotated = await waitFor('the exit code on the Job', async () => {
      const cur = (await env.client.get(JOB, 'remote-fails', ns)) as Obj;
      return cur.metadata.annotations?.['runpod.io/exit-code'] !== undefined ? cur : undefined;
    });
    assert.equal(annotated.metadata.annotations?.['runpod.io/exit-code'], '3');
    const vpod = (await env.client.get(POD, 'remote-fails-runpod', ns)) as Obj & {
      status?: { containerStatuses?: { state: { terminated?: { exitCode: number } } }[] };
    };
    assert.equal(vpod.status?.phase, 'Failed');
    assert.equal(vpod.status?.containerStatuses?.[0]?.state.terminated?.exitCode, 3);
    await waitFor(
      'the remote pod to be deleted',
      async () => (await remotePods('remote-fails')).length === 0,
    );
  });

  test('deleting a Job deletes its remote pod', async () => {
    await env.client.create(seedJob('remote-long', ns, { command: ['sleep', '100000'] }));
    await waitFor('the remote pod to run', async () =>
      (await remotePods('remote-long')).some((p) => p.status?.phase === 'Running'),
    );
    await env.client.delete({ ...JOB, metadata: { name: 'remote-long', namespace: ns } });
    await waitFor('the Job to be gone', async () => !(await env.client.tryGet(JOB, 'remote-long', ns)));
    await waitFor('the remote pod to be deleted', async () => (await remotePods('remote-long')).length === 0);
  });

  test('orphans: a remote pod labelled for this cluster whose Job is gone is deleted', async () => {
    const orphan = await remoteClient.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'troupe-train-ghost-deadbeef',
        namespace: ns,
        labels: {
          [REMOTE_LABELS.cluster]: 'e2e',
          [REMOTE_LABELS.namespace]: ns,
          [REMOTE_LABELS.job]: 'ghost',
          [REMOTE_LABELS.jobUid]: 'no-such-uid',
        },
      },
      spec: { containers: [{ name: 'job', image: 'trainer:1', command: ['sleep', '100000'] }] },
    });
    const foreign = await remoteClient.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'someone-else', namespace: ns, labels: { [REMOTE_LABELS.cluster]: 'other' } },
      spec: { containers: [{ name: 'c', image: 'trainer:1', command: ['sleep', '100000'] }] },
    });
    await waitFor(
      'the orphan to be deleted',
      async () => !(await remoteClient.tryGet(POD, orphan.metadata.name ?? '', ns)),
    );
    assert.ok(
      await remoteClient.tryGet(POD, foreign.metadata.name ?? '', ns),
      "another cluster's pod is left alone",
    );
    await remoteClient.delete(foreign, { gracePeriodSeconds: 0 });
  });

  test('the manager is ready once the remote cluster answers', async () => {
    // Readiness answers are reused for 5 s: the failure seen without the Secret may linger.
    const text = await waitFor('ready', async () => {
      const res = await fetch(`${env.manager.healthServer!.url}/readyz?verbose`);
      const body = await res.text();
      return res.status === 200 ? body : undefined;
    });
    assert.match(text, /\[\+\]offload-cluster-gpu-cluster ok/);
  });

  test('nothing is left in the remote cluster', async () => {
    await waitFor('no remote pods of this cluster', async () => (await remotePods()).length === 0);
  });
});
