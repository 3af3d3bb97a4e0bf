/**
 * The AppWrapper controller end to end over HTTP, with the Kueue stand-in, on the bare API
 * server: the test plays the kubelet by writing pod phases, so every transition is driven
 * deterministically.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GVR, type Gvr } from '../../../src/cluster/client.ts';
import { KGVR, type Workload } from '../../../src/cluster/kueue/index.ts';
import { waitFor } from '../../support/wait.ts';
import {
  AW,
  appWrapper,
  conditionOf,
  type Env,
  getAw,
  phaseOf,
  podTemplate,
  setPodPhase,
  startEnv,
  waitPhase,
  workloadOf,
} from './env.ts';

const FAST = {
  'workload.codeflare.dev.appwrapper/failureGracePeriodDuration': '1s',
  'workload.codeflare.dev.appwrapper/retryPausePeriodDuration': '1s',
  'workload.codeflare.dev.appwrapper/admissionGracePeriodDuration': '2s',
  'workload.codeflare.dev.appwrapper/warmupGracePeriodDuration': '2s',
};

let env: Env;

before(async () => {
  env = await startEnv();
});

after(async () => {
  await env.stop();
});

const podOf = (name: string) => env.client.get(GVR.pods, 'default', name);

describe('AppWrapper lifecycle (bare API server)', () => {
  test("the seed's sample: queued, admitted, running, succeeded, deleted", async () => {
    const applied = await env.kubectl(['apply', '-f', 'samples/appwrapper.yaml']);
    assert.equal(applied.code, 0, applied.stderr);
    const pod = await waitFor('pod sample created', () => podOf('sample'));
    const aw = getAw(env, 'sample')!;
    assert.equal(pod.metadata.labels?.['workload.codeflare.dev/appwrapper'], 'sample');
    assert.equal(pod.metadata.labels?.['kueue.x-k8s.io/podset'], 'sample-0');
    assert.deepEqual(pod.metadata.ownerReferences, [
      {
        apiVersion: 'workload.codeflare.dev/v1beta2',
        kind: 'AppWrapper',
        name: 'sample',
        uid: aw.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.deepEqual(aw.metadata.finalizers, ['workload.codeflare.dev/finalizer']);
    await waitPhase(env, 'sample', 'Running');
    assert.equal(conditionOf(getAw(env, 'sample'), 'QuotaReserved')?.status, 'True');
    assert.equal(conditionOf(getAw(env, 'sample'), 'ResourcesDeployed')?.status, 'True');

    await setPodPhase(env, 'sample', 'Running');
    await waitFor('PodsReady', () => conditionOf(getAw(env, 'sample'), 'PodsReady')?.status === 'True');
    const listed = await env.kubectl(['get', 'appwrappers']);
    assert.match(listed.stdout, /^NAME\s+STATUS\s+QUOTA RESERVED\s+RESOURCES DEPLOYED\s+UNHEALTHY\s+AGE\n/);
    assert.match(listed.stdout, /\nsample\s+Running\s+True\s+True\s+False\s+/);

    await setPodPhase(env, 'sample', 'Succeeded');
    const done = await waitPhase(env, 'sample', 'Succeeded');
    assert.equal(conditionOf(done, 'QuotaReserved')?.status, 'False');
    assert.equal(conditionOf(done, 'ResourcesDeployed')?.status, 'True');
    await waitFor(
      'workload finished',
      () => conditionOf(workloadOf(env, 'sample'), 'Finished')?.reason === 'Succeeded',
    );
    const short = await env.kubectl(['get', 'aw', 'sample', '-o', 'jsonpath={.status.phase}']);
    assert.equal(short.stdout, 'Succeeded');

    const deleted = await env.kubectl([
      'delete',
      '-f',
      'samples/appwrapper.yaml',
      '--wait=true',
      '--timeout=30s',
    ]);
    assert.equal(deleted.code, 0, deleted.stderr);
    await waitFor(
      'AppWrapper, pod and workload gone',
      () => !getAw(env, 'sample') && !podOf('sample') && !workloadOf(env, 'sample'),
    );
  });

  test('a second AppWrapper waits for quota until the first finishes', async () => {
    await env.client.create(AW, appWrapper('big-1', { cpu: '3' }));
    await env.client.create(AW, appWrapper('big-2', { cpu: '3' }));
    await waitPhase(env, 'big-1', 'Running');
    const waiting = await waitFor('big-2 pending in Kueue', () => {
      const w = workloadOf(env, 'big-2');
      return conditionOf(w, 'QuotaReserved')?.reason === 'Pending' ? w : undefined;
    });
    assert.match(
      conditionOf(waiting, 'QuotaReserved')!.message,
      /insufficient unused quota for cpu in flavor default-flavor, 2 more needed/,
    );
    assert.equal(phaseOf(env, 'big-2'), 'Suspended');
    assert.equal(podOf('big-2'), undefined);
    // Queue status is recounted once per burst of changes, a moment after them.
    await waitFor('the queues to count one pending and one admitted', () => {
      const counts = (gvr: Gvr, ns: string, name: string) => {
        const st = env.client.get(gvr, ns, name)?.status as
          | { pendingWorkloads?: number; admittedWorkloads?: number }
          | undefined;
        return st?.pendingWorkloads === 1 && st.admittedWorkloads === 1;
      };
      return (
        counts(KGVR.localQueues, 'default', 'user-queue') && counts(KGVR.clusterQueues, '', 'cluster-queue')
      );
    });
    const queues = await env.kubectl(['get', 'localqueues,clusterqueues', '-o', 'wide']);
    assert.match(queues.stdout, /localqueue\.kueue\.x-k8s\.io\/user-queue\s+cluster-queue\s+1\s+1/);
    assert.match(queues.stdout, /clusterqueue\.kueue\.x-k8s\.io\/cluster-queue\s+BestEffortFIFO\s+1\s+1/);

    await setPodPhase(env, 'big-1', 'Running');
    await setPodPhase(env, 'big-1', 'Succeeded');
    await waitPhase(env, 'big-1', 'Succeeded');
    await waitPhase(env, 'big-2', 'Running');
    await setPodPhase(env, 'big-2', 'Succeeded');
    await waitPhase(env, 'big-2', 'Succeeded');
  });

  test('suspended and resumed by the queue (Workload deactivated, then reactivated)', async () => {
    await env.client.create(AW, appWrapper('evictable', { cpu: '1' }));
    await waitPhase(env, 'evictable', 'Running');
    await setPodPhase(env, 'evictable', 'Running');
    const wl = await waitFor('workload', () => workloadOf(env, 'evictable'));
    await env.client.mutate<Workload>(KGVR.workloads, 'default', wl.metadata.name!, (cur) => {
      cur.spec.active = false;
    });
    const suspended = await waitPhase(env, 'evictable', 'Suspended');
    assert.equal((suspended.spec as { suspend: boolean }).suspend, true);
    assert.equal(conditionOf(suspended, 'QuotaReserved')?.reason, 'Suspended');
    assert.equal(conditionOf(suspended, 'ResourcesDeployed')?.status, 'False');
    await waitFor('pod deleted', () => !podOf('evictable'));
    await waitFor('quota released', () => !workloadOf(env, 'evictable')?.status?.admission);

    await env.client.mutate<Workload>(KGVR.workloads, 'default', wl.metadata.name!, (cur) => {
      cur.spec.active = true;
    });
    await waitPhase(env, 'evictable', 'Running');
    await waitFor('pod recreated', () => podOf('evictable'));
    await setPodPhase(env, 'evictable', 'Succeeded');
    await waitPhase(env, 'evictable', 'Succeeded');
  });

  test('a failed pod: failure grace period, reset with a pause, redeploy; the retry limit then fails it', async () => {
    await env.client.create(
      AW,
      appWrapper('flaky', { annotations: { ...FAST, 'workload.codeflare.dev.appwrapper/retryLimit': '1' } }),
    );
    await waitPhase(env, 'flaky', 'Running');
    const firstUid = podOf('flaky')!.metadata.uid;
    await setPodPhase(env, 'flaky', 'Failed', 1);
    await waitFor(
      'Unhealthy FoundFailedPods',
      () => conditionOf(getAw(env, 'flaky'), 'Unhealthy')?.reason === 'FoundFailedPods',
    );
    await waitFor(
      'reset',
      () => (getAw(env, 'flaky')?.status as { resettingCount?: number })?.resettingCount === 1,
      { timeoutMs: 20_000 },
    );
    await waitFor('new pod', () => {
      const p = podOf('flaky');
      return p && p.metadata.uid !== firstUid;
    });
    await waitPhase(env, 'flaky', 'Running');
    await setPodPhase(env, 'flaky', 'Failed', 1);
    const failed = await waitPhase(env, 'flaky', 'Failed');
    assert.equal(conditionOf(failed, 'Unhealthy')?.reason, 'FoundFailedPods');
    await waitFor('resources deleted and quota released', () => {
      const a = getAw(env, 'flaky');
      return (
        conditionOf(a, 'ResourcesDeployed')?.status === 'False' &&
        conditionOf(a, 'QuotaReserved')?.status === 'False' &&
        !podOf('flaky')
      );
    });
    await waitFor(
      'workload finished as failed',
      () => conditionOf(workloadOf(env, 'flaky'), 'Finished')?.reason === 'Failed',
    );
  });

  test('a terminal exit code fails at once, without a retry', async () => {
    await env.client.create(
      AW,
      appWrapper('terminal', {
        annotations: { ...FAST, 'workload.codeflare.dev.appwrapper/terminalExitCodes': '42' },
      }),
    );
    await waitPhase(env, 'terminal', 'Running');
    await setPodPhase(env, 'terminal', 'Failed', 42);
    const failed = await waitPhase(env, 'terminal', 'Failed');
    assert.equal((failed.status as { resettingCount?: number }).resettingCount, undefined);
  });

  test('pods that never start: reset after the warmup grace period', async () => {
    await env.client.create(AW, appWrapper('slow', { annotations: FAST }));
    await waitPhase(env, 'slow', 'Running');
    await setPodPhase(env, 'slow', 'Pending');
    await waitFor('reset for InsufficientPodsReady', () => {
      const a = getAw(env, 'slow');
      return (
        conditionOf(a, 'Unhealthy')?.reason === 'InsufficientPodsReady' &&
        (a?.status as { resettingCount?: number } | undefined)?.resettingCount === 1
      );
    });
    await env.client.delete(AW, 'default', 'slow');
    await waitFor('deleted', () => !getAw(env, 'slow') && !podOf('slow'));
  });

  test('a component deleted behind its back fails the AppWrapper', async () => {
    await env.client.create(AW, appWrapper('victim'));
    await waitPhase(env, 'victim', 'Running');
    await env.client.delete(GVR.pods, 'default', 'victim');
    const failed = await waitPhase(env, 'victim', 'Failed');
    assert.equal(conditionOf(failed, 'Unhealthy')?.reason, 'MissingComponent');
  });

  test('a wrapped kind whose CRD is missing ends Failed with the reason, and deletes cleanly', async () => {
    const thing = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      spec: { template: { spec: { containers: [{ name: 'c', image: 'x' }] } } },
    };
    await env.client.create(
      AW,
      appWrapper('nocrd', {
        components: [{ template: thing, podSets: [{ replicas: 1, path: 'template.spec.template' }] }],
      }),
    );
    const failed = await waitPhase(env, 'nocrd', 'Failed');
    assert.equal(conditionOf(failed, 'Unhealthy')?.reason, 'CreateFailed');
    assert.match(conditionOf(failed, 'Unhealthy')!.message, /error creating components: .*example\.com\/v1/);
    await waitFor(
      'quota released',
      () => conditionOf(getAw(env, 'nocrd'), 'QuotaReserved')?.status === 'False',
    );
    await env.client.delete(AW, 'default', 'nocrd');
    await waitFor('not stuck terminating', () => !getAw(env, 'nocrd'));
  });

  test('a Job component: pods counted through its pod template, success when all succeed', async () => {
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'wrapped-job' },
      spec: {
        parallelism: 2,
        completions: 2,
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '500m' } } }],
          },
        },
      },
    };
    await env.client.create(AW, appWrapper('jobwrap', { components: [{ template: job }] }));
    await waitPhase(env, 'jobwrap', 'Running');
    const created = env.client.get(GVR.jobs, 'default', 'wrapped-job')!;
    const tmpl = (created.spec as { template: { metadata: { labels: Record<string, string> } } }).template;
    assert.equal(tmpl.metadata.labels['workload.codeflare.dev/appwrapper'], 'jobwrap');
    assert.equal(workloadOf(env, 'jobwrap')?.spec.podSets[0]?.count, 2);
    // No Job controller on the bare server: create the two pods it would.
    for (const i of [0, 1]) {
      await env.client.create(GVR.pods, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `wrapped-job-${i}`, namespace: 'default', labels: { ...tmpl.metadata.labels } },
        spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] },
      });
      await setPodPhase(env, `wrapped-job-${i}`, 'Succeeded');
    }
    await waitPhase(env, 'jobwrap', 'Succeeded');
  });

  test('without a queue name (and no webhook) the AppWrapper is suspended and waits', async () => {
    const aw = appWrapper('unqueued', { queue: null, suspend: false });
    await env.client.create(AW, aw);
    const s = await waitPhase(env, 'unqueued', 'Suspended');
    assert.equal((s.spec as { suspend: boolean }).suspend, true);
    // Kueue has acted on every write so far (the controller's suspend included) and made no
    // Workload: a barrier, so the absence is not read before Kueue could have created one.
    await waitFor('the Kueue stand-in to act on the suspended AppWrapper', () => env.kueue.idle());
    assert.equal(workloadOf(env, 'unqueued'), undefined);
  });

  test("the admitting flavor's node labels and tolerations reach the pods", async () => {
    await env.client.create(KGVR.resourceFlavors, {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'ResourceFlavor',
      metadata: { name: 'zone-a' },
      spec: {
        nodeLabels: { zone: 'a' },
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'ml', effect: 'NoSchedule' }],
      },
    });
    await env.client.create(KGVR.clusterQueues, {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'ClusterQueue',
      metadata: { name: 'zoned' },
      spec: {
        namespaceSelector: {},
        resourceGroups: [
          {
            coveredResources: ['cpu'],
            flavors: [{ name: 'zone-a', resources: [{ name: 'cpu', nominalQuota: 8 }] }],
          },
        ],
      },
    });
    await env.client.create(KGVR.localQueues, {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'LocalQueue',
      metadata: { name: 'zoned', namespace: 'default' },
      spec: { clusterQueue: 'zoned' },
    });
    await env.client.create(AW, appWrapper('zoned', { queue: 'zoned' }));
    const pod = await waitFor('pod', () => podOf('zoned'));
    const spec = pod.spec as { nodeSelector?: Record<string, string>; tolerations?: { key?: string }[] };
    assert.deepEqual(spec.nodeSelector, { zone: 'a' });
    assert.ok(spec.tolerations?.some((t) => t.key === 'dedicated'));
    const aw = getAw(env, 'zoned')!;
    const infos = (aw.spec as { components: { podSetInfos?: unknown[] }[] }).components[0]!.podSetInfos;
    assert.deepEqual(infos, [
      {
        labels: { 'kueue.x-k8s.io/podset': 'zoned-0' },
        nodeSelector: { zone: 'a' },
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'ml', effect: 'NoSchedule' }],
      },
    ]);
    await env.client.delete(AW, 'default', 'zoned');
    await waitFor('deleted', () => !getAw(env, 'zoned') && !podOf('zoned'));
  });

  test('a later component that cannot be created fails the AppWrapper and the earlier ones are deleted', async () => {
    const widget = {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w2' },
      spec: { template: { spec: { containers: [{ name: 'c', image: 'x' }] } } },
    };
    await env.client.create(
      AW,
      appWrapper('partial', {
        components: [
          { template: podTemplate('partial') },
          { template: widget, podSets: [{ path: 'template.spec.template' }] },
        ],
      }),
    );
    const failed = await waitPhase(env, 'partial', 'Failed');
    assert.equal(conditionOf(failed, 'Unhealthy')?.reason, 'CreateFailed');
    await waitFor('first component deleted, quota released', () => {
      const a = getAw(env, 'partial');
      return (
        !podOf('partial') &&
        conditionOf(a, 'ResourcesDeployed')?.status === 'False' &&
        conditionOf(a, 'QuotaReserved')?.status === 'False'
      );
    });
  });

  test('template injection conflicts are fatal: Failed with the conflict', async () => {
    const t = podTemplate('conflicted');
    (t.metadata as Record<string, unknown>).labels = { 'kueue.x-k8s.io/podset': 'mine' };
    await env.client.create(AW, appWrapper('conflicted', { components: [{ template: t }] }));
    const failed = await waitPhase(env, 'conflicted', 'Failed');
    assert.match(
      conditionOf(failed, 'Unhealthy')!.message,
      /conflict for labels: conflict for key=kueue.x-k8s.io\/podset, value1=mine, value2=conflicted-0/,
    );
    assert.equal(podOf('conflicted'), undefined);
  });
});
