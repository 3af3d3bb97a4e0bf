/**
 * End to end on the embedded cluster with the RunPod stand-in: the seed README's example
 * Job is offloaded, represented by the virtual node and pod, shown by the seed's kubectl
 * checks, completes with its exit code reflected, and deleting a Job terminates its remote
 * pod; nothing is left running.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/runtime/index.ts';
import { holdableClock } from '../../support/holdable-clock.ts';
import { waitFor } from '../../support/wait.ts';
import { type OffloadEnv, seedJob, startOffloadEnv } from './harness.ts';

const JOB = { apiVersion: 'batch/v1', kind: 'Job' };
const POD = { apiVersion: 'v1', kind: 'Pod' };
const NODE = { apiVersion: 'v1', kind: 'Node' };

type Obj = KubeObject & { status?: Record<string, unknown>; spec?: Record<string, unknown> };

function condition(job: Obj | undefined, type: string): boolean {
  const conds = (job?.status?.conditions ?? []) as { type: string; status: string }[];
  return conds.some((c) => c.type === type && c.status === 'True');
}

describe('offload end to end (embedded cluster + RunPod stand-in)', () => {
  let env: OffloadEnv;
  const ns = 'gpu';
  // RunPod's time, which the seed test holds while it looks at a running container.
  const time = holdableClock();

  before(async () => {
    env = await startOffloadEnv({
      runpod: {
        clock: time.clock,
        images: {
          // What the seed's example image does on the stand-in: works a moment, exits 0.
          'my-gpu-image:latest': { cmd: ['sh', '-c', 'echo "training"; sleep 40; echo "saved model"'] },
        },
      },
    });
    await env.client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  });

  // A test that failed while holding RunPod's time does not stop the next ones.
  afterEach(() => time.release());
  after(async () => {
    time.stop();
    await env?.close();
  });

  test('the seed example Job is offloaded, shown as running, and completes', async (t) => {
    const created = Date.now();
    await env.client.create(seedJob('my-gpu-job', ns));
    // Its container works 2 s of RunPod's time: held from the moment it runs, so that what
    // follows sees it running however long the checks take; released once they are done.
    const remote = await waitFor('the remote container to run', () => {
      const p = env.runpod.pods().find((p) => p.env.TROUPE_JOB === 'my-gpu-job' && p.status === 'RUNNING');
      if (p) time.hold();
      return p;
    });
    t.diagnostic(`remote create ${Date.now() - created} ms after the Job was created`);
    assert.equal(remote.env.TROUPE_NAMESPACE, ns);
    assert.equal(remote.env.TROUPE_CLUSTER, 'e2e');
    assert.equal(remote.image, 'my-gpu-image:latest');
    assert.equal(remote.gpuTypeId, 'NVIDIA RTX A4000', 'the cheapest GPU with 16 GB under $0.50/h');

    const vpod = await waitFor('the virtual pod to run', async () => {
      const p = (await env.client.tryGet(POD, 'my-gpu-job-runpod', ns)) as Obj | undefined;
      return p?.status?.phase === 'Running' ? p : undefined;
    });
    assert.equal(vpod.spec?.nodeName, 'runpod-virtual-node');
    assert.equal(vpod.metadata.annotations?.['runpod.io/pod-id'], remote.id);
    assert.equal(vpod.metadata.annotations?.['runpod.io/cost-per-hr'], '0.25');
    // What the upstream controller puts on its virtual pod, which users select on.
    assert.equal(vpod.metadata.labels?.['runpod.io/pod-id'], remote.id);
    assert.equal(vpod.metadata.annotations?.['runpod.io/external'], 'true');
    assert.equal(vpod.metadata.annotations?.['runpod.io/job-name'], 'my-gpu-job');
    const byId = await env.kubectl([
      'get',
      'pods',
      '-n',
      ns,
      '-l',
      `runpod.io/pod-id=${remote.id}`,
      '-o',
      'name',
    ]);
    assert.equal(byId.trim(), 'pod/my-gpu-job-runpod');

    const node = (await env.client.get(NODE, 'runpod-virtual-node')) as Obj;
    assert.deepEqual((node.spec?.taints as unknown[])?.[0], {
      key: 'runpod.io/virtual',
      value: 'true',
      effect: 'NoSchedule',
    });

    // The seed's kubectl checks.
    const pods = await env.kubectl(['get', 'pods', '-l', 'runpod.io/managed=true', '-n', ns, '-o', 'name']);
    assert.match(pods, /pod\/my-gpu-job-runpod/);
    const wide = await env.kubectl(['get', 'pods', '-l', 'runpod.io/managed=true', '-n', ns]);
    assert.match(wide, /my-gpu-job-runpod\s+1\/1\s+Running/);
    const ann = JSON.parse(
      await env.kubectl(['get', 'job', 'my-gpu-job', '-n', ns, '-o', 'jsonpath={.metadata.annotations}']),
    ) as Record<string, string>;
    assert.equal(ann['runpod.io/offloaded'], 'true');
    assert.equal(ann['runpod.io/pod-id'], remote.id);
    assert.equal(ann['runpod.io/cost-per-hr'], '0.25');

    // The Job controller counts the virtual pod in its own time (it batches status writes).
    const job = await waitFor('the Job to count its virtual pod', async () => {
      const cur = (await env.client.get(JOB, 'my-gpu-job', ns)) as Obj;
      return cur.status?.active !== undefined ? cur : undefined;
    });
    assert.equal(job.status?.active, 1, 'the Job shows one active pod: its virtual pod');
    const local = ((await env.client.list(POD, { namespace: ns })).items as Obj[]).filter(
      (p) => p.metadata.name !== 'my-gpu-job-runpod' && !p.metadata.deletionTimestamp,
    );
    assert.deepEqual(
      local.map((p) => p.metadata.name),
      [],
      'no local pod runs the Job as well',
    );

    // The image exits, RunPod restarts it: troupe notices, terminates it, the Job completes.
    time.release();
    // Complete (the Job controller) and the outcome annotations (troupe): two writers.
    const done = await waitFor('the Job to complete, with its outcome', async () => {
      const j = (await env.client.get(JOB, 'my-gpu-job', ns)) as Obj;
      return condition(j, 'Complete') && j.metadata.annotations?.['runpod.io/offload-state'] === 'Completed'
        ? j
        : undefined;
    });
    assert.equal(done.status?.succeeded, 1);
    assert.equal(done.status?.failed ?? 0, 0, 'the local pod troupe replaced is not counted as a failure');
    assert.equal(done.metadata.annotations?.['runpod.io/exit-code'], '0');
    await waitFor(
      'the remote pod to be terminated',
      () => !env.runpod.pods().some((p) => p.id === remote.id),
    );
  });

  test('a wrapped command: its exit code is captured and the Job fails', async () => {
    await env.client.create(
      seedJob('exits-3', ns, { command: ['sh', '-c', 'echo working; sleep 1; exit 3'], backoffLimit: 0 }),
    );
    await waitFor('the Job to fail', async () => {
      const j = (await env.client.get(JOB, 'exits-3', ns)) as Obj;
      return condition(j, 'Failed') ? j : undefined;
    });
    // The Job controller fails the Job from the virtual pod; the offload controller writes
    // the outcome on the Job: two writers, in either order.
    const failed = await waitFor('the outcome on the Job', async () => {
      const j = (await env.client.get(JOB, 'exits-3', ns)) as Obj;
      return j.metadata.annotations?.['runpod.io/offload-state'] === 'Failed' ? j : undefined;
    });
    assert.equal(failed.metadata.annotations?.['runpod.io/exit-code'], '3');
    const vpod = (await env.client.get(POD, 'exits-3-runpod', ns)) as Obj;
    assert.equal(vpod.status?.phase, 'Failed');
    const cs = (
      (vpod.status?.containerStatuses ?? []) as { state: { terminated?: { exitCode: number } } }[]
    )[0];
    assert.equal(cs?.state.terminated?.exitCode, 3);
    await waitFor(
      'no remote pod for the Job',
      () => !env.runpod.pods().some((p) => p.env.TROUPE_JOB === 'exits-3'),
    );
    // The finalizer goes in a later reconcile than the remote pod's termination.
    await waitFor('the cleanup finalizer to be released', async () => {
      const j = (await env.client.get(JOB, 'exits-3', ns)) as Obj;
      return !j.metadata.finalizers?.includes('runpod.io/offload-cleanup');
    });
  });

  test('a wrapped command that succeeds completes the Job with exit code 0', async () => {
    await env.client.create(seedJob('exits-0', ns, { command: ['sh', '-c', 'echo ok'] }));
    const done = await waitFor('the Job to complete, with its outcome', async () => {
      const j = (await env.client.get(JOB, 'exits-0', ns)) as Obj;
      return condition(j, 'Complete') && j.metadata.annotations?.['runpod.io/offload-state'] === 'Completed'
        ? j
        : undefined;
    });
    assert.equal(done.metadata.annotations?.['runpod.io/exit-code'], '0');
    assert.equal(done.status?.succeeded, 1);
  });

  test('deleting a Job terminates its remote pod and removes its virtual pod', async () => {
    await env.client.create(seedJob('long', ns, { command: ['sh', '-c', 'echo start; sleep infinity'] }));
    const remote = await waitFor('the remote pod', () =>
      env.runpod.pods().find((p) => p.env.TROUPE_JOB === 'long'),
    );
    await waitFor('the virtual pod', () => env.client.tryGet(POD, 'long-runpod', ns));
    await env.kubectl(['delete', 'job', 'long', '-n', ns, '--wait=false']);
    await waitFor(
      'the remote pod to be terminated',
      () => !env.runpod.pods().some((p) => p.id === remote.id),
    );
    await waitFor('the Job to be gone', async () => !(await env.client.tryGet(JOB, 'long', ns)));
    await waitFor(
      'the virtual pod to be gone',
      async () => !(await env.client.tryGet(POD, 'long-runpod', ns)),
    );
  });

  test('a managed Job that cannot be scheduled locally is offloaded without being asked', async () => {
    const job = seedJob('pending', ns, { command: ['sh', '-c', 'exit 0'] });
    delete job.metadata.annotations!['runpod.io/offload'];
    await env.client.create(job);
    const j = await waitFor('the Job to be offloaded', async () => {
      const cur = (await env.client.get(JOB, 'pending', ns)) as Obj;
      return cur.metadata.annotations?.['runpod.io/offloaded'] === 'true' ? cur : undefined;
    });
    assert.equal(j.metadata.annotations?.['runpod.io/offload-reason'], 'PendingTooLong');
    await waitFor('the Job to complete', async () =>
      condition((await env.client.get(JOB, 'pending', ns)) as Obj, 'Complete'),
    );
  });

  test('a launch reads each referenced Secret and ConfigMap once and passes their values', async () => {
    const getsOf = async (resource: string) => {
      const { values } = await env.cluster.server.metrics.registry
        .getSingleMetric('apiserver_request_total')!
        .get();
      return values
        .filter((v) => v.labels.verb === 'GET' && v.labels.resource === resource)
        .reduce((n, v) => n + v.value, 0);
    };
    await env.client.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds', namespace: ns },
      data: { token: Buffer.from('s3cret').toString('base64') },
    });
    await env.client.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: ns },
      data: { mode: 'fast' },
    });
    const before = { secrets: await getsOf('secrets'), configmaps: await getsOf('configmaps') };
    await env.client.create(
      seedJob('with-refs', ns, {
        command: ['sh', '-c', 'exit 0'],
        env: [
          { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'creds', key: 'token' } } },
          { name: 'MODE', valueFrom: { configMapKeyRef: { name: 'settings', key: 'mode' } } },
        ],
      }),
    );
    await waitFor('the Job to be offloaded', async () => {
      const j = (await env.client.get(JOB, 'with-refs', ns)) as Obj;
      return j.metadata.annotations?.['runpod.io/offload-state'] === 'Offloaded' || undefined;
    });
    const remote = env.runpod.history().find((p) => p.env.TROUPE_JOB === 'with-refs');
    assert.equal(remote?.env.TOKEN, 's3cret');
    assert.equal(remote?.env.MODE, 'fast');
    assert.deepEqual(
      {
        secrets: (await getsOf('secrets')) - before.secrets,
        configmaps: (await getsOf('configmaps')) - before.configmaps,
      },
      { secrets: 1, configmaps: 1 },
      'the request is built once per launch',
    );
    await waitFor('the Job to complete', async () =>
      condition((await env.client.get(JOB, 'with-refs', ns)) as Obj, 'Complete'),
    );
  });

  test('the manager is ready: the provider answers and a key is configured', async () => {
    const url = env.manager.healthServer!.url;
    const res = await fetch(`${url}/readyz?verbose`);
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.match(text, /\[\+\]offload-runpod ok/);
  });

  test('the seed manifests apply with kubectl', async () => {
    const node = await env.kubectl(['apply', '-f', 'deploy/virtual-node-setup.yaml']);
    assert.match(node, /node\/runpod-virtual-node (configured|unchanged|created)/);
    const ctl = await env.kubectl(['apply', '--dry-run=server', '-f', 'deploy/runpod-controller.yaml']);
    for (const kind of [
      'serviceaccount',
      'clusterrole',
      'clusterrolebinding',
      'role',
      'rolebinding',
      'deployment',
      'service',
    ]) {
      assert.match(ctl, new RegExp(`${kind}[^ ]*/runpod-controller`));
    }
    const sample = await env.kubectl(['apply', '--dry-run=server', '-n', ns, '-f', 'samples/offload/']);
    assert.match(sample, /job.batch\/my-gpu-job/);
  });

  test('nothing is left running', async () => {
    await waitFor('every remote pod to be gone', () => env.runpod.pods().length === 0 || undefined);
  });
});
