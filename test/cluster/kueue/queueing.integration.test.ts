/**
 * Real queueing through the Kueue stand-in on the embedded API server: WorkloadPriorityClass
 * and priorities, preemption within a ClusterQueue (LowerPriority, LowerOrNewerEqualPriority),
 * reclaim within a cohort, and the conditions, messages and events Kueue v0.19 writes for them.
 * The test plays the Job controller (a Job here never runs pods, so a suspended Job holds
 * nothing).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { ClusterClient, GVR } from '../../../src/cluster/client.ts';
import { KGVR, type KueueStandIn, startKueue, type Workload } from '../../../src/cluster/kueue/index.ts';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';
import { waitFor } from '../../support/wait.ts';

let ts: TestServer;
let client: ClusterClient;
let kueue: KueueStandIn;
const logged: string[] = [];

const QUEUES = `
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high-priority}
value: 10000
description: "Value of 10000 for urgent jobs"
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: prio-cq}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources: [{name: cpu, nominalQuota: 2}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: prio, namespace: default}
spec: {clusterQueue: prio-cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: fifo-cq}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerOrNewerEqualPriority}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources: [{name: cpu, nominalQuota: 2}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: fifo, namespace: default}
spec: {clusterQueue: fifo-cq}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a}
spec:
  cohortName: research
  namespaceSelector: {}
  preemption: {reclaimWithinCohort: Any}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources: [{name: cpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-b}
spec:
  cohortName: research
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources: [{name: cpu, nominalQuota: 4, borrowingLimit: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: a, namespace: default}
spec: {clusterQueue: team-a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: b, namespace: default}
spec: {clusterQueue: team-b}
`;

function job(name: string, queue: string, cpu: string, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: 'default', labels: { 'kueue.x-k8s.io/queue-name': queue, ...labels } },
    spec: {
      suspend: true,
      template: {
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu } } }],
        },
      },
    },
  };
}

function workloadOf(name: string): Workload | undefined {
  return client
    .list<Workload>(KGVR.workloads, 'default')
    .find((w) => w.metadata.ownerReferences?.some((r) => r.kind === 'Job' && r.name === name));
}

function condition(wl: Workload | undefined, type: string) {
  return wl?.status?.conditions?.find((c) => c.type === type);
}

const admitted = (name: string) => condition(workloadOf(name), 'Admitted')?.status === 'True';

function events(obj: KubeObject | undefined, reason: string): string[] {
  return client
    .list(GVR.events, 'default')
    .filter(
      (e) =>
        (e as { involvedObject?: { uid?: string } }).involvedObject?.uid === obj?.metadata.uid &&
        (e as { reason?: string }).reason === reason,
    )
    .map((e) => (e as { message?: string }).message ?? '');
}

before(async () => {
  ts = await startTestServer();
  client = new ClusterClient(ts.server.api, 'system:admin');
  kueue = await startKueue(client, {
    integrations: ['batch/job'],
    log: (_level, msg, fields) => logged.push(`${msg} ${JSON.stringify(fields ?? {})}`),
  });
  await ts.kubectl(['apply', '-f', '-'], QUEUES);
});

after(async () => {
  await kueue.stop();
  await ts.close();
});

describe('priorities and preemption on the embedded cluster', () => {
  test('kubectl serves WorkloadPriorityClass with its short name and Value column', async () => {
    const out = await ts.kubectl(['get', 'wpc']);
    assert.match(out.stdout, /^NAME\s+VALUE\s+AGE/m);
    assert.match(out.stdout, /^high-priority\s+10000\s/m);
  });

  test('a job labelled with a WorkloadPriorityClass preempts a lower-priority one in its ClusterQueue', async () => {
    await client.create(GVR.jobs, job('low', 'prio', '2'));
    await waitFor('low admitted', () => admitted('low'));
    const low = workloadOf('low')!;
    assert.equal(low.spec.priority, 0);
    assert.equal(low.spec.priorityClassRef, undefined);

    await client.create(
      GVR.jobs,
      job('urgent', 'prio', '1', { 'kueue.x-k8s.io/priority-class': 'high-priority' }),
    );
    const urgent = await waitFor('urgent workload', () => workloadOf('urgent'));
    assert.equal(urgent.spec.priority, 10000);
    assert.deepEqual(urgent.spec.priorityClassRef, {
      group: 'kueue.x-k8s.io',
      kind: 'WorkloadPriorityClass',
      name: 'high-priority',
    });
    await waitFor('urgent admitted', () => admitted('urgent'));

    const preempted = workloadOf('low')!;
    const message = `Preempted to accommodate a workload (UID: ${urgent.metadata.uid}, JobUID: ${urgent.metadata.labels?.['kueue.x-k8s.io/job-uid']}) due to prioritization in the ClusterQueue; preemptor path: /prio-cq; preemptee path: /prio-cq`;
    assert.deepEqual(
      [condition(preempted, 'Evicted')?.status, condition(preempted, 'Evicted')?.reason],
      ['True', 'Preempted'],
    );
    assert.equal(condition(preempted, 'Evicted')?.message, message);
    assert.deepEqual(
      [condition(preempted, 'Preempted')?.reason, condition(preempted, 'Preempted')?.message],
      ['InClusterQueue', message],
    );
    assert.deepEqual(
      [condition(preempted, 'Requeued')?.status, condition(preempted, 'Requeued')?.reason],
      ['True', 'Preempted'],
    );
    const lowJob = client.get(GVR.jobs, 'default', 'low');
    assert.equal((lowJob?.spec as { suspend?: boolean } | undefined)?.suspend, true);
    const ev = await waitFor('Preempted event', () => events(preempted, 'Preempted')[0]);
    assert.equal(
      ev,
      `${message}; preemptor effective priority: 10000 (base: 10000, boost: 0); preemptee effective priority: 0 (base: 0, boost: 0)`,
    );
    await waitFor('PreemptedWorkload event', () => events(urgent, 'PreemptedWorkload')[0]);
    // The preempted job waits for quota again.
    const pending = await waitFor('low pending', () => {
      const c = condition(workloadOf('low'), 'QuotaReserved');
      return c?.status === 'False' && /more needed$/.test(c.message) ? c : undefined;
    });
    assert.equal(
      pending.message,
      "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 1 more needed",
    );
  });

  test('LowerOrNewerEqualPriority: an older workload of equal priority preempts a newer one, never the reverse', async () => {
    // 'older' is queued first but waits (its LocalQueue does not exist yet) while 'newer',
    // queued a second later (creation times have whole seconds), takes the quota.
    await client.create(GVR.jobs, job('older', 'fifo-late', '2'));
    const older = await waitFor('older workload', () => workloadOf('older'));
    const created = Date.parse(older.metadata.creationTimestamp!);
    await waitFor('a later second', () => Date.now() >= created + 1000);
    await client.create(GVR.jobs, job('newer', 'fifo', '2'));
    await waitFor('newer admitted', () => admitted('newer'));
    const waiting = await waitFor('older inadmissible', () => {
      const c = condition(workloadOf('older'), 'QuotaReserved');
      return c?.reason === 'Inadmissible' ? c : undefined;
    });
    assert.equal(waiting.message, "LocalQueue fifo-late doesn't exist");

    await ts.kubectl(
      ['apply', '-f', '-'],
      'apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: fifo-late, namespace: default}\nspec: {clusterQueue: fifo-cq}\n',
    );
    await waitFor('older admitted', () => admitted('older'));
    const preempted = workloadOf('newer')!;
    assert.deepEqual(
      [condition(preempted, 'Preempted')?.reason, condition(preempted, 'Preempted')?.message],
      [
        'InClusterQueue',
        `Preempted to accommodate a workload (UID: ${older.metadata.uid}, JobUID: ${older.metadata.labels?.['kueue.x-k8s.io/job-uid']}) due to prioritization in the ClusterQueue; preemptor path: /fifo-cq; preemptee path: /fifo-cq`,
      ],
    );
    // Requeued, the newer one cannot preempt the older back: it waits for quota, no preemption pending.
    const pending = await waitFor('newer pending', () => {
      const c = condition(workloadOf('newer'), 'QuotaReserved');
      return c?.status === 'False' && /more needed$/.test(c.message) ? c : undefined;
    });
    assert.equal(
      pending.message,
      "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 2 more needed",
    );
    assert.equal(admitted('older'), true);
  });

  test("a pod's PriorityClass gives the Workload its priority when no WorkloadPriorityClass is named", async () => {
    await ts.kubectl(
      ['apply', '-f', '-'],
      'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: batch-high}\nvalue: 500\n',
    );
    const j = job('pc-job', 'prio', '1');
    (j.spec as { template: { spec: Record<string, unknown> } }).template.spec.priorityClassName =
      'batch-high';
    await client.create(GVR.jobs, j);
    const wl = await waitFor('workload', () => workloadOf('pc-job'));
    assert.equal(wl.spec.priority, 500);
    assert.deepEqual(wl.spec.priorityClassRef, {
      group: 'scheduling.k8s.io',
      kind: 'PriorityClass',
      name: 'batch-high',
    });
  });

  test('a missing WorkloadPriorityClass keeps the Workload from being created until it exists', async () => {
    await client.create(
      GVR.jobs,
      job('later', 'prio', '1', { 'kueue.x-k8s.io/priority-class': 'late-class' }),
    );
    // The job reconciler fails (and is retried); nothing is created while the class is missing.
    await waitFor('the sync failure', () =>
      logged.some((l) => l.includes('workloadpriorityclasses.kueue.x-k8s.io \\"late-class\\" not found')),
    );
    assert.equal(workloadOf('later'), undefined);
    await ts.kubectl(
      ['apply', '-f', '-'],
      'apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: late-class}\nvalue: 7\n',
    );
    const wl = await waitFor('workload created once the class exists', () => workloadOf('later'), {
      timeoutMs: 20_000,
    });
    assert.equal(wl.spec.priority, 7);
  });

  test('a ClusterQueue borrows from its cohort, and the lender reclaims its nominal quota', async () => {
    await client.create(GVR.jobs, job('borrower', 'b', '6'));
    await waitFor('borrower admitted', () => admitted('borrower'));
    const cq = await waitFor('team-b status shows borrowing', () => {
      const q = client.get(KGVR.clusterQueues, '', 'team-b');
      const usage = (q?.status as { flavorsUsage?: { resources: { total: string; borrowed: string }[] }[] })
        ?.flavorsUsage?.[0]?.resources[0];
      return usage?.borrowed === '2' ? usage : undefined;
    });
    assert.equal(cq.total, '6');
    // Kueue v0.19's QuotaReserved event: the wait, and the borrowing flavor it was admitted in.
    const reserved = await waitFor(
      'QuotaReserved event',
      () => events(workloadOf('borrower'), 'QuotaReserved')[0],
    );
    assert.match(
      reserved,
      /^Quota reserved in ClusterQueue team-b, wait time since queued was \d+s; Flavors considered: main: default-flavor\(Fit;borrow=1\)$/,
    );
    assert.deepEqual(events(workloadOf('borrower'), 'Admitted'), [
      'Admitted by ClusterQueue team-b, wait time since reservation was 0s',
    ]);

    await client.create(GVR.jobs, job('owner', 'a', '4'));
    await waitFor('owner admitted', () => admitted('owner'));
    const evicted = workloadOf('borrower')!;
    assert.equal(condition(evicted, 'Preempted')?.reason, 'InCohortReclamation');
    assert.match(
      condition(evicted, 'Preempted')!.message,
      /due to reclamation within the cohort; preemptor path: \/research\/team-a; preemptee path: \/research\/team-b$/,
    );
  });

  test('an over-large job gets Kueue v0.15+ maximum-capacity message', async () => {
    await client.create(GVR.jobs, job('huge', 'b', '9'));
    const c = await waitFor('huge pending', () => {
      const x = condition(workloadOf('huge'), 'QuotaReserved');
      return x?.status === 'False' ? x : undefined;
    });
    assert.equal(c.reason, 'Pending');
    assert.equal(
      c.message,
      "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default-flavor, previously considered podsets requests (0) + current podset request (9) > maximum capacity (8)",
    );
    // The scheduler's Warning event says the same (scheduler.go requeueAndUpdate).
    const warning = await waitFor('Pending event', () => events(workloadOf('huge'), 'Pending')[0]);
    assert.equal(warning, c.message);
    const types = client
      .list(GVR.events, 'default')
      .filter((e) => (e as { reason?: string }).reason === 'Pending')
      .map((e) => (e as { type?: string }).type);
    assert.deepEqual([...new Set(types)], ['Warning']);
  });
});
