/**
 * waitForPodsReady on the embedded cluster: the PodsReady condition follows the job's ready
 * pods; a job whose pods are not ready in time is evicted (PodsReadyTimeout), re-queued after
 * the backoff, and past backoffLimitCount deactivated, with Kueue v0.19's reasons and
 * messages. The test plays the Job controller by writing `status.ready`.
 *
 * Kueue runs on a ManualClock that moves only when the test says: by a few milliseconds at
 * each poll (so its own short delays pass), and past the 10-minute timeout or a backoff
 * only by an explicit jump. However loaded the machine, a timeout fires exactly when the
 * test moves time past it, and never while the test is still setting up.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ApiServerHandle, startApiServer } from '../../../src/cluster/apiserver/server.ts';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { ClusterClient, GVR } from '../../../src/cluster/client.ts';
import { KGVR, type KueueStandIn, startKueue, type Workload } from '../../../src/cluster/kueue/index.ts';
import { ManualClock } from '../../../src/lib/clock.ts';
import { waitFor } from '../../support/wait.ts';

let server: ApiServerHandle;
let client: ClusterClient;
let kueue: KueueStandIn;
const clock = new ManualClock(Date.now());
const TIMEOUT_MS = 10 * 60_000;
/** Kueue's own short delays (scheduling, status batching) pass as the test polls. */
const TICK_MS = 20;

/** waitFor, moving Kueue's clock on by a tick at each poll. */
function settle<T>(what: string, check: () => T | undefined | false): Promise<T> {
  return waitFor(what, () => {
    clock.advance(TICK_MS);
    return check();
  });
}

function job(name: string): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: 'default', labels: { 'kueue.x-k8s.io/queue-name': 'user-queue' } },
    spec: {
      suspend: true,
      template: {
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '1' } } }],
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

async function setReady(name: string, ready: number): Promise<void> {
  await client.mutate(
    GVR.jobs,
    'default',
    name,
    (cur) => {
      cur.status = { ...(cur.status as object), ready };
    },
    'status',
  );
}

before(async () => {
  server = await startApiServer({ port: 0 });
  client = new ClusterClient(server.api, 'system:admin');
  kueue = await startKueue(client, {
    integrations: ['batch/job'],
    defaultQueues: true,
    clock,
    waitForPodsReady: {
      timeout: '10m',
      requeuingStrategy: { backoffBaseSeconds: 60, backoffLimitCount: 1 },
    },
  });
});

after(async () => {
  await kueue.stop();
  await server.close();
});

describe('waitForPodsReady', () => {
  test('PodsReady follows the ready pods: WaitForStart, Started, WaitForRecovery, Recovered', async () => {
    await client.create(GVR.jobs, job('healthy'));
    const waiting = await settle('admitted and waiting for pods', () => {
      const w = workloadOf('healthy');
      const pr = condition(w, 'PodsReady');
      return condition(w, 'Admitted')?.status === 'True' && pr?.reason === 'WaitForStart' ? pr : undefined;
    });
    assert.deepEqual([waiting.status, waiting.message], ['False', 'Not all pods are ready or succeeded']);
    await setReady('healthy', 1);
    const started = await settle('Started', () => {
      const pr = condition(workloadOf('healthy'), 'PodsReady');
      return pr?.status === 'True' ? pr : undefined;
    });
    assert.deepEqual(
      [started.reason, started.message],
      ['Started', 'All pods reached readiness and the workload is running'],
    );
    await setReady('healthy', 0);
    await settle(
      'WaitForRecovery',
      () => condition(workloadOf('healthy'), 'PodsReady')?.reason === 'WaitForRecovery',
    );
    await setReady('healthy', 1);
    await settle('Recovered', () => condition(workloadOf('healthy'), 'PodsReady')?.reason === 'Recovered');
    // Ready pods keep the workload admitted past the timeout.
    clock.advance(TIMEOUT_MS + 60_000);
    await client.mutate(
      GVR.jobs,
      'default',
      'healthy',
      (cur) => {
        cur.status = {
          ...(cur.status as object),
          succeeded: 1,
          ready: 0,
          conditions: [{ type: 'Complete', status: 'True' }],
        };
      },
      'status',
    );
    const done = await settle('finished', () => condition(workloadOf('healthy'), 'Finished'));
    assert.equal(done.reason, 'Succeeded');
    assert.notEqual(condition(workloadOf('healthy'), 'Evicted')?.status, 'True');
  });

  test('pods not ready in time: evicted, re-queued after the backoff, then deactivated past the limit', async () => {
    await client.create(GVR.jobs, job('stuck'));
    await settle('stuck admitted', () => condition(workloadOf('stuck'), 'Admitted')?.status === 'True');
    clock.advance(TIMEOUT_MS);
    const first = await settle('evicted for the PodsReady timeout', () => {
      const w = workloadOf('stuck');
      return condition(w, 'Evicted')?.reason === 'PodsReadyTimeout' ? w : undefined;
    });
    assert.equal(
      condition(first, 'Evicted')!.message,
      `Exceeded the PodsReady timeout default/${first.metadata.name}`,
    );
    assert.equal(first.status?.requeueState?.count, 1);
    const requeueAt = Date.parse(first.status!.requeueState!.requeueAt!);
    const evictedAt = Date.parse(condition(first, 'Evicted')!.lastTransitionTime);
    // backoffBaseSeconds 60: re-queued a minute (to the second, plus Kueue's jitter) after the eviction.
    assert.ok(Math.abs(requeueAt - evictedAt - 60_000) <= 1000, `${requeueAt - evictedAt} ms`);
    // The eviction holds it back in the same write, until requeueAt.
    const held = condition(first, 'Requeued');
    assert.deepEqual([held?.status, held?.reason], ['False', 'PodsReadyTimeout']);
    clock.advanceTo(requeueAt);
    const back = await settle('backoff finished', () => {
      const rq = condition(workloadOf('stuck'), 'Requeued');
      return rq?.status === 'True' ? rq : undefined;
    });
    assert.deepEqual([back.reason, back.message], ['BackoffFinished', 'The workload backoff was finished']);
    assert.ok(Date.parse(back.lastTransitionTime) >= requeueAt, 'not re-queued before requeueAt');

    // Admitted again, and again not ready in time: past backoffLimitCount (1).
    await settle('stuck admitted again', () => {
      const w = workloadOf('stuck');
      return condition(w, 'Admitted')?.status === 'True' && condition(w, 'Evicted')?.status !== 'True';
    });
    clock.advance(TIMEOUT_MS);
    const last = await settle('deactivated past backoffLimitCount', () => {
      const w = workloadOf('stuck');
      return w?.spec.active === false && condition(w, 'Evicted')?.reason.startsWith('Deactivated')
        ? w
        : undefined;
    });
    assert.deepEqual(
      [condition(last, 'Evicted')!.reason, condition(last, 'Evicted')!.message],
      [
        'DeactivatedDueToRequeuingLimitExceeded',
        'The workload is deactivated due to exceeding the maximum number of re-queuing retries',
      ],
    );
    await settle(
      'job suspended',
      () =>
        (client.get(GVR.jobs, 'default', 'stuck')?.spec as { suspend?: boolean } | undefined)?.suspend ===
        true,
    );
  });
});
