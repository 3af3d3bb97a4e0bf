/**
 * The Kueue stand-in against the bare embedded API server: the tests play the AppWrapper
 * controller's and the Job controller's parts by writing the statuses themselves.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ApiServerHandle, startApiServer } from '../../../src/cluster/apiserver/server.ts';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { ClusterClient, GVR } from '../../../src/cluster/client.ts';
import { KGVR, type KueueStandIn, startKueue, type Workload } from '../../../src/cluster/kueue/index.ts';
import { appWrapperCrdManifests } from '../../../src/controllers/appwrapper/crd.ts';
import { waitFor } from '../../support/wait.ts';

const AW = KGVR.appWrappers;
const CRDS = KGVR.crds;

let server: ApiServerHandle;
let client: ClusterClient;
let kueue: KueueStandIn;

function appWrapper(name: string, cpu: string, opts: { ns?: string; queue?: string } = {}): KubeObject {
  return {
    apiVersion: 'workload.codeflare.dev/v1beta2',
    kind: 'AppWrapper',
    metadata: {
      name,
      namespace: opts.ns ?? 'default',
      labels: { 'kueue.x-k8s.io/queue-name': opts.queue ?? 'user-queue' },
    },
    spec: {
      suspend: true,
      components: [
        {
          template: {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name },
            spec: {
              restartPolicy: 'Never',
              containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu } } }],
            },
          },
        },
      ],
    },
  };
}

function workloadOf(name: string, kind = 'AppWrapper', ns = 'default'): Workload | undefined {
  return client
    .list<Workload>(KGVR.workloads, ns)
    .find((w) => w.metadata.ownerReferences?.some((r) => r.kind === kind && r.name === name));
}

function condition(
  obj: KubeObject | undefined,
  type: string,
): { status: string; reason: string; message: string } | undefined {
  return (
    (obj?.status as { conditions?: { type: string; status: string; reason: string; message: string }[] })
      ?.conditions ?? []
  ).find((c) => c.type === type);
}

/** Plays the AppWrapper controller: sets the phase and conditions the stand-in reads. */
async function setAwStatus(name: string, status: Record<string, unknown>): Promise<void> {
  await client.mutate(
    AW,
    'default',
    name,
    (cur) => {
      cur.status = { ...(cur.status as object), ...status };
    },
    'status',
  );
}

function suspendOf(gvr: typeof AW | typeof GVR.jobs, name: string): boolean | undefined {
  return (client.get(gvr, 'default', name)?.spec as { suspend?: boolean } | undefined)?.suspend;
}

const cond = (type: string, status: string, reason: string) => ({
  type,
  status,
  reason,
  message: '',
  lastTransitionTime: '2026-01-01T00:00:00Z',
});

before(async () => {
  server = await startApiServer({ port: 0 });
  client = new ClusterClient(server.api, 'system:admin');
  for (const crd of appWrapperCrdManifests()) await client.create(CRDS, crd);
  await waitFor('AppWrapper CRD served', () => client.served(AW));
  kueue = await startKueue(client, { defaultQueues: true });
});

after(async () => {
  await kueue.stop();
  await server.close();
});

describe('the Kueue stand-in', () => {
  test("installs Kueue's CRDs and the seed's default queues, with queue status", async () => {
    for (const r of ['resourceflavors', 'clusterqueues', 'localqueues', 'workloads']) {
      assert.ok(client.get(CRDS, '', `${r}.kueue.x-k8s.io`), r);
    }
    const lq = await waitFor('user-queue status', () => {
      const q = client.get(KGVR.localQueues, 'default', 'user-queue');
      return q?.status ? q : undefined;
    });
    assert.equal((lq.spec as { clusterQueue: string }).clusterQueue, 'cluster-queue');
    assert.equal(condition(lq, 'Active')?.status, 'True');
    const cq = await waitFor('cluster-queue status', () => {
      const q = client.get(KGVR.clusterQueues, '', 'cluster-queue');
      return q?.status ? q : undefined;
    });
    assert.equal((cq.spec as { queueingStrategy: string }).queueingStrategy, 'BestEffortFIFO');
    assert.equal(condition(cq, 'Active')?.reason, 'Ready');
  });

  test('queues an AppWrapper: Workload, admission within quota, unsuspended with PodSetInfos', async () => {
    const created = await client.create(AW, appWrapper('first', '3'));
    const wl = await waitFor('workload admitted', () => {
      const w = workloadOf('first');
      return w && condition(w, 'Admitted')?.status === 'True' ? w : undefined;
    });
    assert.match(wl.metadata.name!, /^appwrapper-first-[0-9a-f]{5}$/);
    assert.equal(wl.metadata.labels?.['kueue.x-k8s.io/job-uid'], created.metadata.uid);
    assert.deepEqual(wl.metadata.finalizers, ['kueue.x-k8s.io/resource-in-use']);
    assert.equal(wl.spec.queueName, 'user-queue');
    assert.deepEqual(
      wl.spec.podSets.map((p) => [p.name, p.count]),
      [['first-0', 1]],
    );
    assert.deepEqual(wl.status?.admission, {
      clusterQueue: 'cluster-queue',
      podSetAssignments: [
        { name: 'first-0', flavors: { cpu: 'default-flavor' }, resourceUsage: { cpu: '3' }, count: 1 },
      ],
    });
    const aw = await waitFor('AppWrapper unsuspended', () => {
      const a = client.get(AW, 'default', 'first');
      return (a?.spec as { suspend?: boolean })?.suspend === false ? a : undefined;
    });
    const comp = (aw.spec as { components: { podSetInfos?: unknown[] }[] }).components[0]!;
    assert.deepEqual(comp.podSetInfos, [{ labels: { 'kueue.x-k8s.io/podset': 'first-0' } }]);
  });

  test('a second AppWrapper waits for quota, then is admitted once the first finishes', async () => {
    await client.create(AW, appWrapper('second', '2'));
    const pending = await waitFor('second pending', () => {
      const w = workloadOf('second');
      return w && condition(w, 'QuotaReserved')?.reason === 'Pending' ? w : undefined;
    });
    assert.equal(
      condition(pending, 'QuotaReserved')?.message,
      "couldn't assign flavors to pod set second-0: insufficient unused quota for cpu in flavor default-flavor, 1 more needed",
    );
    await waitFor('queue counts', () => {
      const lq = client.get(KGVR.localQueues, 'default', 'user-queue')?.status as
        | Record<string, number>
        | undefined;
      return lq?.pendingWorkloads === 1 && lq.admittedWorkloads === 1;
    });
    assert.equal(suspendOf(AW, 'second'), true);

    await setAwStatus('first', {
      phase: 'Succeeded',
      conditions: [
        cond('QuotaReserved', 'False', 'Succeeded'),
        cond('ResourcesDeployed', 'True', 'Succeeded'),
      ],
    });
    const done = await waitFor('first finished', () => {
      const w = workloadOf('first');
      return w && condition(w, 'Finished')?.status === 'True' ? w : undefined;
    });
    assert.equal(condition(done, 'Finished')?.reason, 'Succeeded');
    assert.deepEqual(done.metadata.finalizers ?? [], []);
    await waitFor('second admitted and unsuspended', () => suspendOf(AW, 'second') === false);
  });

  test('eviction (deactivation) suspends the AppWrapper; quota is released once it drops QuotaReserved; reactivation readmits', async () => {
    await setAwStatus('second', {
      phase: 'Running',
      conditions: [cond('QuotaReserved', 'True', 'Resuming')],
    });
    const wl = workloadOf('second')!;
    await client.mutate<Workload>(KGVR.workloads, 'default', wl.metadata.name!, (cur) => {
      cur.spec.active = false;
    });
    await waitFor('AppWrapper suspended by the eviction', () => suspendOf(AW, 'second') === true);
    const comp = (client.get(AW, 'default', 'second')!.spec as { components: { podSetInfos?: unknown }[] })
      .components[0]!;
    assert.equal(comp.podSetInfos, undefined);
    let w = workloadOf('second')!;
    assert.equal(condition(w, 'Evicted')?.reason, 'Deactivated');
    assert.ok(w.status?.admission, 'quota held while the AppWrapper still reserves it');

    await setAwStatus('second', {
      phase: 'Suspended',
      conditions: [cond('QuotaReserved', 'False', 'Suspended')],
    });
    w = await waitFor('quota released', () => {
      const x = workloadOf('second');
      return x && !x.status?.admission ? x : undefined;
    });
    assert.equal(condition(w, 'QuotaReserved')?.reason, 'Pending');
    assert.equal(condition(w, 'Requeued')?.status, 'False');

    await client.mutate<Workload>(KGVR.workloads, 'default', w.metadata.name!, (cur) => {
      cur.spec.active = true;
    });
    await waitFor('readmitted', () => suspendOf(AW, 'second') === false);
    w = workloadOf('second')!;
    assert.equal(condition(w, 'Requeued')?.reason, 'Reactivated');
    assert.equal(condition(w, 'Evicted')?.status, 'False');
    assert.equal(condition(w, 'Evicted')?.message, 'Previously: The workload is deactivated');
  });

  test('a ClusterQueue stopped with HoldAndDrain evicts what it admitted', async () => {
    await setAwStatus('second', {
      phase: 'Running',
      conditions: [cond('QuotaReserved', 'True', 'Resuming')],
    });
    await client.mutate(KGVR.clusterQueues, '', 'cluster-queue', (cur) => {
      (cur.spec as Record<string, unknown>).stopPolicy = 'HoldAndDrain';
    });
    await waitFor('suspended', () => suspendOf(AW, 'second') === true);
    assert.equal(condition(workloadOf('second'), 'Evicted')?.reason, 'ClusterQueueStopped');
    await setAwStatus('second', {
      phase: 'Suspended',
      conditions: [cond('QuotaReserved', 'False', 'Suspended')],
    });
    await client.mutate(KGVR.clusterQueues, '', 'cluster-queue', (cur) => {
      (cur.spec as Record<string, unknown>).stopPolicy = 'None';
    });
    await waitFor('readmitted after restart', () => suspendOf(AW, 'second') === false);
    assert.equal(condition(workloadOf('second'), 'Requeued')?.reason, 'ClusterQueueRestarted');
  });

  test('a LocalQueue stopped with HoldAndDrain evicts its own workloads; restarting it readmits them', async () => {
    await setAwStatus('second', {
      phase: 'Running',
      conditions: [cond('QuotaReserved', 'True', 'Resuming')],
    });
    await client.mutate(KGVR.localQueues, 'default', 'user-queue', (cur) => {
      (cur.spec as Record<string, unknown>).stopPolicy = 'HoldAndDrain';
    });
    await waitFor('suspended', () => suspendOf(AW, 'second') === true);
    assert.equal(condition(workloadOf('second'), 'Evicted')?.reason, 'LocalQueueStopped');
    await setAwStatus('second', {
      phase: 'Suspended',
      conditions: [cond('QuotaReserved', 'False', 'Suspended')],
    });
    await waitFor('quota released', () => !workloadOf('second')?.status?.admission);
    await client.mutate(KGVR.localQueues, 'default', 'user-queue', (cur) => {
      (cur.spec as Record<string, unknown>).stopPolicy = 'None';
    });
    await waitFor('readmitted after restart', () => suspendOf(AW, 'second') === false);
    assert.equal(condition(workloadOf('second'), 'Requeued')?.reason, 'LocalQueueRestarted');
  });

  test('a failed AppWrapper releases quota only once its resources are deleted', async () => {
    await setAwStatus('second', {
      phase: 'Failed',
      conditions: [cond('QuotaReserved', 'True', 'Resuming'), cond('ResourcesDeployed', 'True', 'Resuming')],
    });
    // A barrier, not a sleep: once the stand-in's loops are idle it has acted on the write.
    await waitFor('the stand-in to act on the failed phase', () => kueue.idle());
    assert.notEqual(condition(workloadOf('second'), 'Finished')?.status, 'True');
    await setAwStatus('second', {
      conditions: [cond('QuotaReserved', 'False', 'Failed'), cond('ResourcesDeployed', 'False', 'Failed')],
    });
    const w = await waitFor('finished', () => {
      const x = workloadOf('second');
      return condition(x, 'Finished')?.status === 'True' ? x : undefined;
    });
    assert.equal(condition(w, 'Finished')?.reason, 'Failed');
    assert.equal(condition(w, 'Finished')?.message, 'AppWrapper failed');
  });

  test('without a queue name, a LocalQueue named "default" in the namespace is used', async () => {
    await client.create(GVR.namespaces, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'team-x' },
    });
    await client.create(KGVR.localQueues, {
      apiVersion: 'kueue.x-k8s.io/v1beta2',
      kind: 'LocalQueue',
      metadata: { name: 'default', namespace: 'team-x' },
      spec: { clusterQueue: 'cluster-queue' },
    });
    const aw = appWrapper('unlabelled', '1', { ns: 'team-x' });
    aw.metadata.labels = {};
    await client.create(AW, aw);
    const w = await waitFor('workload in the default queue', () =>
      workloadOf('unlabelled', 'AppWrapper', 'team-x'),
    );
    assert.equal(w.spec.queueName, 'default');
  });

  test('deleting the AppWrapper removes its Workload', async () => {
    await client.create(AW, appWrapper('doomed', '1'));
    await waitFor('workload', () => workloadOf('doomed'));
    await client.delete(AW, 'default', 'doomed');
    await waitFor('workload gone', () => !workloadOf('doomed'));
  });

  test('batch/v1 Jobs with a queue name are queued, started and finished the same way', async () => {
    await client.create(GVR.jobs, {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: 'queued-job',
        namespace: 'default',
        labels: { 'kueue.x-k8s.io/queue-name': 'user-queue' },
      },
      spec: {
        suspend: true,
        parallelism: 2,
        completions: 2,
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '1' } } }],
          },
        },
      },
    });
    const w = await waitFor('job admitted', () => {
      const x = workloadOf('queued-job', 'Job');
      return condition(x, 'Admitted')?.status === 'True' ? x : undefined;
    });
    assert.deepEqual(
      w.spec.podSets.map((p) => [p.name, p.count]),
      [['main', 2]],
    );
    const job = await waitFor('job unsuspended', () => {
      const j = client.get(GVR.jobs, 'default', 'queued-job');
      return (j?.spec as { suspend?: boolean } | undefined)?.suspend === false ? j : undefined;
    });
    const labels = (job.spec as { template: { metadata: { labels: Record<string, string> } } }).template
      .metadata.labels;
    assert.equal(labels['kueue.x-k8s.io/podset'], 'main');
    await client.mutate(
      GVR.jobs,
      'default',
      'queued-job',
      (cur) => {
        cur.status = {
          conditions: [{ type: 'Complete', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' }],
          succeeded: 2,
        };
      },
      'status',
    );
    await waitFor(
      'job workload finished',
      () => condition(workloadOf('queued-job', 'Job'), 'Finished')?.reason === 'Succeeded',
    );
  });

  test('a Job started without suspend is suspended until admitted', async () => {
    await client.mutate(KGVR.clusterQueues, '', 'cluster-queue', (cur) => {
      (cur.spec as Record<string, unknown>).stopPolicy = 'Hold';
    });
    await client.create(GVR.jobs, {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: 'eager',
        namespace: 'default',
        labels: { 'kueue.x-k8s.io/queue-name': 'user-queue' },
      },
      spec: {
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '1' } } }],
          },
        },
      },
    });
    await waitFor('suspended by the stand-in', () => suspendOf(GVR.jobs, 'eager') === true);
    assert.equal(
      condition(workloadOf('eager', 'Job'), 'QuotaReserved')?.message,
      'ClusterQueue cluster-queue is inactive',
    );
    await client.mutate(KGVR.clusterQueues, '', 'cluster-queue', (cur) => {
      (cur.spec as Record<string, unknown>).stopPolicy = 'None';
    });
    await waitFor('resumed', () => suspendOf(GVR.jobs, 'eager') === false);
  });
});
