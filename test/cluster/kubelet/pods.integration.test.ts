import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GVR } from '../../../src/cluster/client.ts';
import { startKubelet } from '../../../src/cluster/kubelet/index.ts';
import { waitFor } from '../../support/wait.ts';
import {
  condition,
  createNode,
  createPod,
  eventsFor,
  getPod,
  type KubeletEnv,
  reasons,
  recordPod,
  startKubeletEnv,
  waitForPod,
} from './helpers.ts';

const SCALE = 20;

describe('kubelet: pod lifecycle', () => {
  let env: KubeletEnv;
  before(async () => {
    env = await startKubeletEnv({ timeScale: SCALE });
    await createNode(env.admin, 'node-1');
  });
  after(() => env.close());

  test('a pod on a managed node starts: Running, IPs, containers running, Created/Started events', async () => {
    await createPod(env.admin, 'plain');
    const p = await waitForPod(env.admin, 'plain', 'Ready', (p) => condition(p, 'Ready') === 'True');
    assert.equal(p.status?.phase, 'Running');
    assert.match(p.status?.podIP ?? '', /^10\./);
    assert.match(p.status?.hostIP ?? '', /^10\.200\./);
    const c = p.status?.containerStatuses?.[0];
    assert.equal(c?.name, 'main');
    assert.equal(c?.ready, true);
    assert.equal(c?.restartCount, 0);
    assert.ok(c?.state.running?.startedAt);
    for (const t of ['PodScheduled', 'Initialized', 'ContainersReady', 'Ready'])
      assert.equal(condition(p, t), 'True', t);
    await env.kubelet.idle();
    // Nothing is timed for a pod without hints: it runs until deleted.
    assert.equal(env.kubelet.pending('Pod', 'default', 'plain'), undefined);
    const evs = await waitFor('Started event', () => {
      const e = eventsFor(env.admin, 'Pod', 'plain');
      return reasons(e).includes('Started') ? e : undefined;
    });
    assert.deepEqual(reasons(evs).sort(), ['Created', 'Pulled', 'Started']);
    const started = evs.find((e) => e.reason === 'Started')!;
    assert.equal(started.message, 'Started container main');
    assert.deepEqual(started.source, { component: 'kubelet', host: 'node-1' });
    assert.equal((started.involvedObject as { fieldPath?: string }).fieldPath, 'spec.containers{main}');
  });

  test("a host-network pod shares its node's address", async () => {
    await env.admin.create(GVR.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'hostnet', namespace: 'default' },
      spec: {
        nodeName: 'node-1',
        hostNetwork: true,
        containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }],
      },
    });
    const p = await waitForPod(env.admin, 'hostnet', 'Running', (p) => p.status?.phase === 'Running');
    assert.equal(p.status?.podIP, p.status?.hostIP);
  });

  test('readinessProbe.initialDelaySeconds: Running and unready first, Ready after the scaled delay', async () => {
    const rec = recordPod(env.admin, 'nginx');
    // The Pod Sequence seed's nginx container, bound directly to the node.
    await createPod(env.admin, 'nginx', {
      containers: [
        {
          name: 'nginx',
          image: 'nginx:latest',
          readinessProbe: { httpGet: { path: '/', port: 80 }, initialDelaySeconds: 5, periodSeconds: 5 },
        },
      ],
    });
    await waitForPod(env.admin, 'nginx', 'Ready', (p) => condition(p, 'Ready') === 'True');
    rec.stop();
    const running = rec.versions.find((v) => v.pod.status?.phase === 'Running')!;
    const ready = rec.versions.find((v) => condition(v.pod, 'Ready') === 'True')!;
    assert.equal(condition(running.pod, 'Ready'), 'False');
    const notReady = running.pod.status?.conditions?.find((c) => c.type === 'ContainersReady');
    assert.equal(notReady?.reason, 'ContainersNotReady');
    assert.equal(notReady?.message, 'containers with unready status: [nginx]');
    assert.equal(running.pod.status?.containerStatuses?.[0]?.ready, false);
    assert.equal(running.pod.status?.containerStatuses?.[0]?.started, true);
    // 5 s of probe delay at time scale 20 is 250 ms: never sooner (a few ms of slack for the
    // write that reported Running).
    assert.ok(ready.at - running.at >= 5000 / SCALE - 20, `ready after ${ready.at - running.at} ms`);
    assert.equal(ready.pod.status?.containerStatuses?.[0]?.ready, true);
  });

  test('troupe.dev/run-duration and exit-code: Never turns Failed with the exit code', async () => {
    await createPod(env.admin, 'fails', {
      restartPolicy: 'Never',
      annotations: { 'troupe.dev/run-duration': '2s', 'troupe.dev/exit-code': '3' },
    });
    const p = await waitForPod(env.admin, 'fails', 'Failed', (p) => p.status?.phase === 'Failed');
    const t = p.status?.containerStatuses?.[0]?.state.terminated;
    assert.equal(t?.exitCode, 3);
    assert.equal(t?.reason, 'Error');
    assert.ok(t?.startedAt && t.finishedAt);
    assert.equal(condition(p, 'Ready'), 'False');
    assert.equal(p.status?.conditions?.find((c) => c.type === 'Ready')?.reason, 'PodCompleted');
  });

  test('troupe.dev/run-duration with exit code 0: Succeeded, reason Completed', async () => {
    await createPod(env.admin, 'succeeds', {
      restartPolicy: 'Never',
      annotations: { 'troupe.dev/run-duration': '1s' },
    });
    const p = await waitForPod(env.admin, 'succeeds', 'Succeeded', (p) => p.status?.phase === 'Succeeded');
    const t = p.status?.containerStatuses?.[0]?.state.terminated;
    assert.equal(t?.exitCode, 0);
    assert.equal(t?.reason, 'Completed');
  });

  test('restartPolicy Always: the container runs again, restartCount grows, crash-loop back-off', async () => {
    const rec = recordPod(env.admin, 'loops');
    await createPod(env.admin, 'loops', {
      annotations: { 'troupe.dev/run-duration': '1s', 'troupe.dev/exit-code': '2' },
    });
    const p = await waitForPod(
      env.admin,
      'loops',
      'restarted twice',
      (p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 2,
    );
    rec.stop();
    assert.equal(p.status?.phase, 'Running');
    assert.ok(
      rec.versions.every((v) => v.pod.status?.phase !== 'Failed' && v.pod.status?.phase !== 'Succeeded'),
    );
    assert.equal(p.status?.containerStatuses?.[0]?.lastState?.terminated?.exitCode, 2);
    const waiting = rec.versions
      .map((v) => v.pod.status?.containerStatuses?.[0]?.state.waiting)
      .find((w) => w !== undefined);
    assert.equal(waiting?.reason, 'CrashLoopBackOff');
    assert.match(
      String(waiting?.message),
      /^back-off 10s restarting failed container=main pod=loops_default\(/,
    );
    const backoff = await waitFor('BackOff event', () =>
      eventsFor(env.admin, 'Pod', 'loops').find((e) => e.reason === 'BackOff'),
    );
    assert.equal(backoff.type, 'Warning');
    assert.match(
      String(backoff.message),
      /^Back-off restarting failed container main in pod loops_default\(/,
    );
  });

  test('restartPolicy OnFailure: exit 0 finishes the pod, a non-zero exit restarts it', async () => {
    await createPod(env.admin, 'onfailure-ok', {
      restartPolicy: 'OnFailure',
      annotations: { 'troupe.dev/run-duration': '1s' },
    });
    await createPod(env.admin, 'onfailure-bad', {
      restartPolicy: 'OnFailure',
      annotations: { 'troupe.dev/run-duration': '1s', 'troupe.dev/exit-code': '1' },
    });
    const ok = await waitForPod(
      env.admin,
      'onfailure-ok',
      'Succeeded',
      (p) => p.status?.phase === 'Succeeded',
    );
    assert.equal(ok.status?.containerStatuses?.[0]?.restartCount, 0);
    const bad = await waitForPod(
      env.admin,
      'onfailure-bad',
      'restarted',
      (p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1,
    );
    assert.equal(bad.status?.phase, 'Running');
  });

  test('a container whose command is a plain `sleep N` runs N seconds and exits 0', async () => {
    await createPod(env.admin, 'sleeper', {
      restartPolicy: 'Never',
      containers: [{ name: 'main', image: 'busybox', command: ['sleep', '10'] }],
    });
    await createPod(env.admin, 'shell-sleeper', {
      restartPolicy: 'Never',
      containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'sleep 10'] }],
    });
    await createPod(env.admin, 'scripted', {
      restartPolicy: 'Never',
      containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'sleep 10 && echo done'] }],
    });
    for (const name of ['sleeper', 'shell-sleeper']) {
      const p = await waitForPod(env.admin, name, 'Succeeded', (p) => p.status?.phase === 'Succeeded');
      assert.equal(p.status?.containerStatuses?.[0]?.state.terminated?.exitCode, 0);
    }
    await env.kubelet.idle();
    // A compound script is not a plain sleep: it runs like a server.
    assert.equal(getPod(env.admin, 'scripted')?.status?.phase, 'Running');
    assert.equal(env.kubelet.pending('Pod', 'default', 'scripted'), undefined);
  });

  test('a Job-owned pod without hints completes (pod-complete); with a run hint it runs its time', async () => {
    const owner = { apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: 'job-uid', controller: true };
    await createPod(env.admin, 'job-pod', { restartPolicy: 'Never', ownerReferences: [owner] });
    const done = await waitForPod(env.admin, 'job-pod', 'Succeeded', (p) => p.status?.phase === 'Succeeded');
    assert.equal(done.status?.containerStatuses?.[0]?.state.terminated?.reason, 'Completed');
    await createPod(env.admin, 'job-pod-timed', {
      restartPolicy: 'Never',
      ownerReferences: [owner],
      annotations: { 'troupe.dev/run-duration': '1h' },
    });
    await waitForPod(env.admin, 'job-pod-timed', 'Ready', (p) => condition(p, 'Ready') === 'True');
    await env.kubelet.idle();
    assert.equal(getPod(env.admin, 'job-pod-timed')?.status?.phase, 'Running');
    assert.equal(env.kubelet.pending('Pod', 'default', 'job-pod-timed')?.stage, 'pod-container-lifecycle');
  });

  test('a pod on a node without the kwok annotation is left alone until the node is managed', async () => {
    await createNode(env.admin, 'node-real', false);
    await createPod(env.admin, 'elsewhere', { node: 'node-real' });
    await env.kubelet.idle();
    assert.equal(getPod(env.admin, 'elsewhere')?.status?.phase, 'Pending');
    await env.admin.patch(GVR.nodes, '', 'node-real', 'merge', {
      metadata: { annotations: { 'kwok.x-k8s.io/node': 'fake' } },
    });
    await waitForPod(env.admin, 'elsewhere', 'Running', (p) => p.status?.phase === 'Running');
  });
});

describe('kubelet: pod deletion', () => {
  let env: KubeletEnv;
  before(async () => {
    env = await startKubeletEnv({ timeScale: SCALE });
    await createNode(env.admin, 'node-1');
  });
  after(() => env.close());

  test('a deleted pod stops its containers (Killing), turns terminal and is removed', async () => {
    const rec = recordPod(env.admin, 'server');
    await createPod(env.admin, 'server');
    await waitForPod(env.admin, 'server', 'Ready', (p) => condition(p, 'Ready') === 'True');
    await env.admin.delete(GVR.pods, 'default', 'server');
    assert.ok(
      getPod(env.admin, 'server')?.metadata.deletionTimestamp,
      'graceful deletion waits for the kubelet',
    );
    await waitFor('pod removed', () => getPod(env.admin, 'server') === undefined);
    rec.stop();
    const last = rec.versions.at(-1)!.pod;
    assert.equal(last.status?.phase, 'Succeeded');
    assert.equal(last.status?.containerStatuses?.[0]?.state.terminated?.exitCode, 0);
    const killing = await waitFor('Killing event', () =>
      eventsFor(env.admin, 'Pod', 'server').find((e) => e.reason === 'Killing'),
    );
    assert.equal(killing.message, 'Stopping container main');
  });

  test('a deleted pod still doing finite work reports exit 137 and Failed', async () => {
    const rec = recordPod(env.admin, 'worker');
    await createPod(env.admin, 'worker', { annotations: { 'troupe.dev/run-duration': '1h' } });
    await waitForPod(env.admin, 'worker', 'Running', (p) => p.status?.phase === 'Running');
    await env.admin.delete(GVR.pods, 'default', 'worker');
    await waitFor('pod removed', () => getPod(env.admin, 'worker') === undefined);
    rec.stop();
    const last = rec.versions.at(-1)!.pod;
    assert.equal(last.status?.phase, 'Failed');
    assert.equal(last.status?.containerStatuses?.[0]?.state.terminated?.exitCode, 137);
  });

  test("another controller's finalizer keeps the pod (grace 0, terminal) until it is removed", async () => {
    await createPod(env.admin, 'held', { finalizers: ['example.com/hold'] });
    await waitForPod(env.admin, 'held', 'Running', (p) => p.status?.phase === 'Running');
    await env.admin.delete(GVR.pods, 'default', 'held');
    const p = await waitForPod(
      env.admin,
      'held',
      'finalized by the kubelet',
      (p) => p.metadata.deletionGracePeriodSeconds === 0,
    );
    assert.equal(p.status?.phase, 'Succeeded');
    await env.admin.patch(GVR.pods, 'default', 'held', 'json', [
      { op: 'remove', path: '/metadata/finalizers' },
    ]);
    assert.equal(getPod(env.admin, 'held'), undefined);
  });

  test("KWOK's placeholder finalizer is removed by pod-remove-finalizer", async () => {
    await createPod(env.admin, 'kwok-held', { finalizers: ['kwok.x-k8s.io/fake'] });
    await waitForPod(env.admin, 'kwok-held', 'Running', (p) => p.status?.phase === 'Running');
    await env.admin.delete(GVR.pods, 'default', 'kwok-held');
    await waitFor('pod removed', () => getPod(env.admin, 'kwok-held') === undefined);
  });

  test('a pod deleted before it started is removed at once', async () => {
    await createNode(env.admin, 'node-off', false);
    await createPod(env.admin, 'never-started', { node: 'node-off' });
    await env.admin.delete(GVR.pods, 'default', 'never-started');
    await env.admin.patch(GVR.nodes, '', 'node-off', 'merge', {
      metadata: { annotations: { 'kwok.x-k8s.io/node': 'fake' } },
    });
    await waitFor('pod removed', () => getPod(env.admin, 'never-started') === undefined);
  });
});

describe('kubelet: options', () => {
  test('the time scale must be a number greater than 0', async () => {
    const env = await startKubeletEnv();
    try {
      await assert.rejects(startKubelet(env.admin, { timeScale: 0 }), /must be a number greater than 0/);
      await assert.rejects(
        startKubelet(env.admin, { timeScale: Number.NaN }),
        /must be a number greater than 0/,
      );
    } finally {
      await env.close();
    }
  });
});
