/**
 * The seed's walkthrough on the whole embedded cluster: simulated nodes, scheduler and
 * kubelet run the pods (a `sleep 5` container runs 5 seconds), the Job controller runs Jobs,
 * the Kueue stand-in queues, the AppWrapper controller drives the lifecycle over HTTP.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GVR } from '../../../src/cluster/client.ts';
import { KGVR, type Workload } from '../../../src/cluster/kueue/index.ts';
import { waitFor } from '../../support/wait.ts';
import {
  AW,
  appWrapper,
  conditionOf,
  type Env,
  getAw,
  phaseOf,
  startEnv,
  waitPhase,
  workloadOf,
} from './env.ts';

let env: Env;

before(async () => {
  env = await startEnv({ embedded: true });
});

after(async () => {
  await env.stop();
});

const podPhase = (name: string) =>
  (env.client.get(GVR.pods, 'default', name)?.status as { phase?: string } | undefined)?.phase;

describe('AppWrapper on the embedded cluster', () => {
  test("the seed's walkthrough: apply, Running with a running pod, Succeeded after about 5 s, delete", async () => {
    const applied = await env.kubectl(['apply', '-f', 'samples/appwrapper.yaml']);
    assert.equal(applied.code, 0, applied.stderr);
    await waitFor('pod sample running', () => podPhase('sample') === 'Running', { timeoutMs: 20_000 });
    const running = await env.kubectl(['get', 'appwrappers']);
    assert.match(running.stdout, /\nsample\s+Running\s+/);
    const pods = await env.kubectl(['get', 'pods']);
    assert.match(pods.stdout, /\nsample\s+1\/1\s+Running\s+0\s+/);

    await waitPhase(env, 'sample', 'Succeeded', 30_000);
    // The container sleeps 5 s: its run, as the pod's status records it (not as this test saw it).
    const terminated = (
      env.client.get(GVR.pods, 'default', 'sample')?.status as
        | {
            containerStatuses?: { state?: { terminated?: { startedAt: string; finishedAt: string } } }[];
          }
        | undefined
    )?.containerStatuses?.[0]?.state?.terminated;
    assert.ok(terminated, 'the container terminated');
    assert.equal(Date.parse(terminated.finishedAt) - Date.parse(terminated.startedAt), 5000);
    const completed = await env.kubectl(['get', 'pods']);
    assert.match(completed.stdout, /\nsample\s+0\/1\s+Completed\s+0\s+/);
    const listed = await env.kubectl(['get', 'appwrappers']);
    assert.match(listed.stdout, /\nsample\s+Succeeded\s+False\s+True\s+False\s+/);
    await waitFor(
      'workload finished',
      () => conditionOf(workloadOf(env, 'sample'), 'Finished')?.status === 'True',
    );

    const deleted = await env.kubectl(['delete', '-f', 'samples/appwrapper.yaml', '--timeout=60s']);
    assert.equal(deleted.code, 0, deleted.stderr);
    await waitFor(
      'everything cleaned up',
      () =>
        !getAw(env, 'sample') && !env.client.get(GVR.pods, 'default', 'sample') && !workloadOf(env, 'sample'),
      {
        timeoutMs: 60_000,
      },
    );
  });

  test('quota: a second AppWrapper waits until the first finishes', async () => {
    const job = (name: string, seconds: number) => ({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name },
      spec: {
        parallelism: 3,
        completions: 3,
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [
              {
                name: 'c',
                image: 'busybox',
                command: ['sleep', String(seconds)],
                resources: { requests: { cpu: '1' } },
              },
            ],
          },
        },
      },
    });
    await env.client.create(AW, appWrapper('gang-a', { components: [{ template: job('gang-a-job', 2) }] }));
    await waitPhase(env, 'gang-a', 'Running', 20_000);
    await env.client.create(AW, appWrapper('gang-b', { components: [{ template: job('gang-b-job', 1) }] }));
    // The stand-in and the controller write independently: wait for both views.
    await waitFor(
      'gang-b pending for quota and suspended',
      () =>
        conditionOf(workloadOf(env, 'gang-b'), 'QuotaReserved')?.reason === 'Pending' &&
        phaseOf(env, 'gang-b') === 'Suspended',
    );
    assert.equal(phaseOf(env, 'gang-b'), 'Suspended');
    assert.equal(env.client.get(GVR.jobs, 'default', 'gang-b-job'), undefined);
    await waitFor(
      'gang-a pods ready',
      () => conditionOf(getAw(env, 'gang-a'), 'PodsReady')?.status === 'True',
      { timeoutMs: 20_000 },
    );
    await waitPhase(env, 'gang-a', 'Succeeded', 30_000);
    await waitPhase(env, 'gang-b', 'Running', 20_000);
    await waitPhase(env, 'gang-b', 'Succeeded', 30_000);
    const b = getAw(env, 'gang-b')!;
    assert.equal(conditionOf(b, 'QuotaReserved')?.status, 'False');
  });

  test('a failing pod is retried once, then the AppWrapper fails; a terminal exit code fails at once', async () => {
    const failing = (name: string, exitCode: number) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        annotations: { 'troupe.dev/run-duration': '1s', 'troupe.dev/exit-code': String(exitCode) },
      },
      spec: {
        restartPolicy: 'Never',
        containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '100m' } } }],
      },
    });
    const fast = {
      'workload.codeflare.dev.appwrapper/failureGracePeriodDuration': '1s',
      'workload.codeflare.dev.appwrapper/retryPausePeriodDuration': '1s',
      'workload.codeflare.dev.appwrapper/retryLimit': '1',
    };
    await env.client.create(
      AW,
      appWrapper('retried', { annotations: fast, components: [{ template: failing('retried', 1) }] }),
    );
    await env.client.create(
      AW,
      appWrapper('terminal', {
        annotations: { ...fast, 'workload.codeflare.dev.appwrapper/terminalExitCodes': '3' },
        components: [{ template: failing('terminal', 3) }],
      }),
    );
    await waitFor(
      'retried reset once',
      () => (getAw(env, 'retried')?.status as { resettingCount?: number } | undefined)?.resettingCount === 1,
      {
        timeoutMs: 30_000,
      },
    );
    const failed = await waitPhase(env, 'retried', 'Failed', 30_000);
    assert.equal(conditionOf(failed, 'Unhealthy')?.reason, 'FoundFailedPods');
    const terminal = await waitPhase(env, 'terminal', 'Failed', 30_000);
    assert.equal((terminal.status as { resettingCount?: number }).resettingCount, undefined);
    await waitFor(
      'failed resources deleted, quota released',
      () =>
        ['retried', 'terminal'].every(
          (n) =>
            conditionOf(workloadOf(env, n), 'Finished')?.reason === 'Failed' &&
            !env.client.get(GVR.pods, 'default', n),
        ),
      { timeoutMs: 30_000 },
    );
  });

  test('a pod that cannot be scheduled: reset after the warmup grace period', async () => {
    const stuck = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'stuck' },
      spec: {
        restartPolicy: 'Never',
        nodeSelector: { 'example.com/no-such-node': 'true' },
        containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '100m' } } }],
      },
    };
    await env.client.create(
      AW,
      appWrapper('stuck', {
        annotations: {
          'workload.codeflare.dev.appwrapper/admissionGracePeriodDuration': '2s',
          'workload.codeflare.dev.appwrapper/warmupGracePeriodDuration': '2s',
          'workload.codeflare.dev.appwrapper/retryPausePeriodDuration': '1s',
        },
        components: [{ template: stuck }],
      }),
    );
    await waitFor(
      'reset for InsufficientPodsReady',
      () => {
        const a = getAw(env, 'stuck');
        return (
          conditionOf(a, 'Unhealthy')?.reason === 'InsufficientPodsReady' &&
          (a?.status as { resettingCount?: number } | undefined)?.resettingCount === 1
        );
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(
      conditionOf(getAw(env, 'stuck'), 'Unhealthy')?.message,
      '1 pods pending; 0 pods running; 0 pods succeeded',
    );
    await env.client.delete(AW, 'default', 'stuck');
    await waitFor('deleted', () => !getAw(env, 'stuck') && !env.client.get(GVR.pods, 'default', 'stuck'), {
      timeoutMs: 30_000,
    });
  });

  test('suspend and resume by the queue', async () => {
    const long = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'long' },
      spec: {
        restartPolicy: 'Never',
        containers: [
          { name: 'c', image: 'busybox', command: ['sleep', '3600'], resources: { requests: { cpu: '1' } } },
        ],
      },
    };
    await env.client.create(AW, appWrapper('long', { components: [{ template: long }] }));
    await waitFor('running', () => conditionOf(getAw(env, 'long'), 'PodsReady')?.status === 'True', {
      timeoutMs: 20_000,
    });
    const wl = workloadOf(env, 'long')!;
    await env.client.mutate<Workload>(KGVR.workloads, 'default', wl.metadata.name!, (cur) => {
      cur.spec.active = false;
    });
    await waitPhase(env, 'long', 'Suspended', 60_000);
    await waitFor('pod gone', () => !env.client.get(GVR.pods, 'default', 'long'), { timeoutMs: 60_000 });
    await env.client.mutate<Workload>(KGVR.workloads, 'default', wl.metadata.name!, (cur) => {
      cur.spec.active = true;
    });
    await waitFor('running again', () => podPhase('long') === 'Running', { timeoutMs: 20_000 });
    await env.client.delete(AW, 'default', 'long');
    await waitFor('deleted', () => !getAw(env, 'long'), { timeoutMs: 60_000 });
  });
});
