import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { GVR } from '../../../src/cluster/client.ts';
import { waitFor } from '../../support/wait.ts';
import {
  CONTAINER,
  clusterForSuite,
  cond,
  eventReasons,
  get,
  podsOwnedBy,
  setPodStatus,
  status,
} from './harness.ts';

const NS = 'jobs';
const FINALIZER = 'batch.kubernetes.io/job-tracking';

type JobStatus = {
  active?: number;
  succeeded?: number;
  failed?: number;
  ready?: number;
  terminating?: number;
  startTime?: string;
  completionTime?: string;
  completedIndexes?: string;
  uncountedTerminatedPods?: Record<string, unknown>;
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
};

function job(name: string, spec: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: NS },
    spec: { template: { spec: { restartPolicy: 'Never', containers: CONTAINER } }, ...spec },
  };
}

describe('Job controller', () => {
  const c = clusterForSuite(NS);

  const jobNow = (name: string) => get(c.client, GVR.jobs, NS, name)!;
  const active = (j: KubeObject) =>
    podsOwnedBy(c.client, j).filter(
      (p) =>
        !p.metadata.deletionTimestamp &&
        !['Succeeded', 'Failed'].includes(status<{ phase?: string }>(p).phase ?? ''),
    );

  test('runs completions one at a time, labels and tracks pods, and completes', async () => {
    const j = await c.client.create(GVR.jobs, job('pi', { completions: 2, parallelism: 1 }));
    const first = await waitFor('first pod', () => active(j)[0]);
    const m = first.metadata;
    assert.match(m.name!, /^pi-[a-z0-9]{5}$/);
    assert.equal(m.labels?.['batch.kubernetes.io/job-name'], 'pi');
    assert.equal(m.labels?.['job-name'], 'pi');
    assert.equal(m.labels?.['batch.kubernetes.io/controller-uid'], j.metadata.uid);
    assert.equal(m.labels?.['controller-uid'], j.metadata.uid);
    assert.deepEqual(m.finalizers, [FINALIZER]);
    assert.deepEqual(m.ownerReferences, [
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        name: 'pi',
        uid: j.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    await waitFor('active=1 ready=0 and startTime', () => {
      const s = status<JobStatus>(jobNow('pi'));
      return (
        s.active === 1 &&
        s.ready === 0 &&
        s.terminating === 0 &&
        s.startTime !== undefined &&
        s.uncountedTerminatedPods !== undefined
      );
    });

    await setPodStatus(c.client, first, 'Running');
    await waitFor('ready=1', () => status<JobStatus>(jobNow('pi')).ready === 1);
    assert.equal(active(j).length, 1, 'parallelism 1 keeps a single pod');

    await setPodStatus(c.client, first, 'Succeeded');
    const second = await waitFor('second pod', () =>
      active(j).find((p) => p.metadata.uid !== first.metadata.uid),
    );
    await waitFor('first pod counted', () => status<JobStatus>(jobNow('pi')).succeeded === 1);
    assert.equal(
      get(c.client, GVR.pods, NS, first.metadata.name!)?.metadata.finalizers,
      undefined,
      'counted pods lose the tracking finalizer',
    );

    await setPodStatus(c.client, second, 'Succeeded');
    const done = await waitFor('Complete', () =>
      cond(jobNow('pi'), 'Complete')?.status === 'True' ? jobNow('pi') : undefined,
    );
    const s = status<JobStatus>(done);
    assert.equal(s.succeeded, 2);
    assert.equal(s.active, undefined);
    assert.equal(s.failed, undefined);
    assert.ok(s.completionTime);
    assert.deepEqual(
      s.conditions!.map((x) => [x.type, x.status, x.reason, x.message]),
      [
        ['SuccessCriteriaMet', 'True', 'CompletionsReached', 'Reached expected number of succeeded pods'],
        ['Complete', 'True', 'CompletionsReached', 'Reached expected number of succeeded pods'],
      ],
    );
    await waitFor('events', () => {
      const r = eventReasons(c.client, NS, 'pi');
      return r.filter((x) => x === 'SuccessfulCreate').length === 2 && r.includes('Completed');
    });
    const created = c.client
      .list(GVR.events, NS)
      .find((e) => e.reason === 'SuccessfulCreate' && (e.involvedObject as { name: string }).name === 'pi')!;
    assert.equal((created.source as { component: string }).component, 'job-controller');
    assert.match(created.message as string, /^Created pod: pi-[a-z0-9]{5}$/);
    assert.equal((created.involvedObject as { kind: string }).kind, 'Job');
  });

  test('runs pods in parallel up to the remaining completions', async () => {
    const j = await c.client.create(GVR.jobs, job('par', { completions: 3, parallelism: 2 }));
    const pods = await waitFor('two pods', () => (active(j).length === 2 ? active(j) : undefined));
    await setPodStatus(c.client, pods[0]!, 'Succeeded');
    await setPodStatus(c.client, pods[1]!, 'Succeeded');
    const last = await waitFor('one more pod for the last completion', () =>
      active(j).length === 1 ? active(j)[0] : undefined,
    );
    await setPodStatus(c.client, last, 'Succeeded');
    await waitFor('Complete', () => cond(jobNow('par'), 'Complete')?.status === 'True');
    assert.equal(status<JobStatus>(jobNow('par')).succeeded, 3);
    assert.equal(podsOwnedBy(c.client, j).length, 3);
  });

  test('Indexed: one pod per index with annotation, label, hostname and env; failed indexes are retried', async () => {
    const j = await c.client.create(
      GVR.jobs,
      job('idx', { completions: 3, parallelism: 3, completionMode: 'Indexed' }),
    );
    const pods = await waitFor('three pods', () => (active(j).length === 3 ? active(j) : undefined));
    const byIndex = new Map(
      pods.map((p) => [p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'], p]),
    );
    assert.deepEqual([...byIndex.keys()].sort(), ['0', '1', '2']);
    for (const [ix, p] of byIndex) {
      assert.equal(p.metadata.labels?.['batch.kubernetes.io/job-completion-index'], ix);
      assert.match(p.metadata.name!, new RegExp(`^idx-${ix}-[a-z0-9]{5}$`));
      const spec = p.spec as {
        hostname?: string;
        containers: { env?: { name: string; valueFrom?: unknown }[] }[];
      };
      assert.equal(spec.hostname, `idx-${ix}`);
      assert.deepEqual(spec.containers[0]!.env, [
        {
          name: 'JOB_COMPLETION_INDEX',
          valueFrom: {
            fieldRef: {
              apiVersion: 'v1',
              fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']",
            },
          },
        },
      ]);
    }
    await setPodStatus(c.client, byIndex.get('1')!, 'Succeeded');
    await waitFor('completedIndexes 1', () => status<JobStatus>(jobNow('idx')).completedIndexes === '1');
    await setPodStatus(c.client, byIndex.get('0')!, 'Failed');
    const retry = await waitFor('index 0 recreated', () =>
      active(j).find(
        (p) =>
          p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'] === '0' &&
          p.metadata.uid !== byIndex.get('0')!.metadata.uid,
      ),
    );
    await waitFor('failure counted', () => status<JobStatus>(jobNow('idx')).failed === 1);
    await setPodStatus(c.client, retry, 'Succeeded');
    await setPodStatus(c.client, byIndex.get('2')!, 'Succeeded');
    await waitFor('Complete', () => cond(jobNow('idx'), 'Complete')?.status === 'True');
    const s = status<JobStatus>(jobNow('idx'));
    assert.equal(s.completedIndexes, '0-2');
    assert.equal(s.succeeded, 3);
    assert.equal(s.failed, 1);
  });

  test('backoffLimit: too many failed pods fail the Job with BackoffLimitExceeded', async () => {
    const j = await c.client.create(GVR.jobs, job('flaky', { backoffLimit: 1 }));
    const p1 = await waitFor('pod 1', () => active(j)[0]);
    await setPodStatus(c.client, p1, 'Failed');
    const p2 = await waitFor('pod 2 after backoff', () =>
      active(j).find((p) => p.metadata.uid !== p1.metadata.uid),
    );
    await setPodStatus(c.client, p2, 'Failed');
    const failed = await waitFor('Failed', () =>
      cond(jobNow('flaky'), 'Failed')?.status === 'True' ? jobNow('flaky') : undefined,
    );
    const s = status<JobStatus>(failed);
    assert.equal(s.failed, 2);
    assert.equal(s.completionTime, undefined);
    assert.deepEqual(
      s.conditions!.map((x) => [x.type, x.status, x.reason, x.message]),
      [
        ['FailureTarget', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'],
        ['Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'],
      ],
    );
    assert.equal(active(j).length, 0);
    await waitFor('warning event', () =>
      eventReasons(c.client, NS, 'flaky').includes('BackoffLimitExceeded'),
    );
    const ev = c.client.list(GVR.events, NS).find((e) => e.reason === 'BackoffLimitExceeded')!;
    assert.equal(ev.type, 'Warning');
  });

  test('activeDeadlineSeconds: running pods are terminated and the Job fails with DeadlineExceeded', async () => {
    const j = await c.client.create(
      GVR.jobs,
      // Long enough that the pods exist before the deadline even on a loaded machine.
      job('slow', { activeDeadlineSeconds: 5, parallelism: 2, completions: 2 }),
    );
    const pods = await waitFor('two pods', () => (active(j).length === 2 ? active(j) : undefined));
    for (const p of pods) await setPodStatus(c.client, p, 'Running');
    await waitFor('Failed', () => cond(jobNow('slow'), 'Failed')?.reason === 'DeadlineExceeded', {
      timeoutMs: 30_000,
    });
    assert.equal(cond(jobNow('slow'), 'FailureTarget')?.reason, 'DeadlineExceeded');
    assert.equal(cond(jobNow('slow'), 'Failed')?.message, 'Job was active longer than specified deadline');
    // The deleted pods were bound: the stand-in kubelet confirmed their deletion before Failed was set.
    assert.equal(podsOwnedBy(c.client, j).length, 0);
    const s = status<JobStatus>(jobNow('slow'));
    assert.equal(s.failed, 2);
    assert.equal(s.terminating, 0);
  });

  test('suspend: no pods while suspended, Suspended condition, resume resets startTime, suspending deletes active pods', async () => {
    const j = await c.client.create(GVR.jobs, job('sus', { suspend: true, parallelism: 2, completions: 4 }));
    await waitFor('Suspended=True', () => cond(jobNow('sus'), 'Suspended')?.status === 'True');
    const sc = cond(jobNow('sus'), 'Suspended')!;
    assert.equal(sc.reason, 'JobSuspended');
    assert.equal(sc.message, 'Job suspended');
    assert.equal(status<JobStatus>(jobNow('sus')).startTime, undefined);
    assert.equal(podsOwnedBy(c.client, j).length, 0);

    await c.client.mutate(GVR.jobs, NS, 'sus', (o) => {
      (o.spec as { suspend: boolean }).suspend = false;
    });
    await waitFor('resumed', () => cond(jobNow('sus'), 'Suspended')?.status === 'False');
    assert.equal(cond(jobNow('sus'), 'Suspended')!.reason, 'JobResumed');
    const pods = await waitFor('pods after resume', () => (active(j).length === 2 ? active(j) : undefined));
    assert.ok(status<JobStatus>(jobNow('sus')).startTime);
    await setPodStatus(c.client, pods[0]!, 'Running');

    await c.client.mutate(GVR.jobs, NS, 'sus', (o) => {
      (o.spec as { suspend: boolean }).suspend = true;
    });
    await waitFor(
      'suspended again, pods gone',
      () => cond(jobNow('sus'), 'Suspended')?.status === 'True' && podsOwnedBy(c.client, j).length === 0,
    );
    const s = status<JobStatus>(jobNow('sus'));
    assert.equal(s.active, undefined);
    assert.equal(s.failed, undefined, 'pods deleted by suspension are not failures');
    await waitFor('events', () => {
      const r = eventReasons(c.client, NS, 'sus');
      return r.includes('Suspended') && r.includes('Resumed') && r.includes('SuccessfulDelete');
    });
  });

  test('managedBy another controller: the Job is left alone', async () => {
    const j = await c.client.create(GVR.jobs, job('ext', { managedBy: 'kueue.x-k8s.io/multikueue' }));
    // A Job created after it and managed by us proves the controller has processed the first.
    const marker = await c.client.create(GVR.jobs, job('ext-marker', {}));
    await waitFor('marker pod', () => active(marker).length === 1);
    await waitFor('marker status', () => status<JobStatus>(jobNow('ext-marker')).active === 1);
    assert.equal(podsOwnedBy(c.client, j).length, 0);
    assert.deepEqual(status(jobNow('ext')), {});
  });

  test('ttlSecondsAfterFinished deletes the finished Job and the garbage collector its pods', async () => {
    const j = await c.client.create(GVR.jobs, job('ttl', { ttlSecondsAfterFinished: 0 }));
    const p = await waitFor('pod', () => active(j)[0]);
    await setPodStatus(c.client, p, 'Succeeded');
    await waitFor('job deleted', () => get(c.client, GVR.jobs, NS, 'ttl') === undefined);
    await waitFor('pod collected', () => get(c.client, GVR.pods, NS, p.metadata.name!) === undefined);
  });

  test('deleting a running Job: the garbage collector deletes its pods and their finalizer is released', async () => {
    const j = await c.client.create(GVR.jobs, job('gone', {}));
    const p = await waitFor('pod', () => active(j)[0]);
    await setPodStatus(c.client, p, 'Running');
    await c.client.delete(GVR.jobs, NS, 'gone', { propagationPolicy: 'Background' });
    await waitFor('pod gone', () => get(c.client, GVR.pods, NS, p.metadata.name!) === undefined);
  });

  test('adopts an orphan pod matching a manual selector instead of creating one', async () => {
    await c.client.create(GVR.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'stray', namespace: NS, labels: { app: 'adopt' } },
      spec: { containers: CONTAINER, restartPolicy: 'Never' },
    });
    const j = await c.client.create(
      GVR.jobs,
      job('adopt', {
        manualSelector: true,
        selector: { matchLabels: { app: 'adopt' } },
        template: {
          metadata: { labels: { app: 'adopt' } },
          spec: { restartPolicy: 'Never', containers: CONTAINER },
        },
      }),
    );
    const adopted = await waitFor('adopted', () => {
      const p = get(c.client, GVR.pods, NS, 'stray');
      return p?.metadata.ownerReferences?.[0]?.uid === j.metadata.uid ? p : undefined;
    });
    assert.deepEqual(adopted.metadata.finalizers, [FINALIZER]);
    await waitFor('active=1', () => status<JobStatus>(jobNow('adopt')).active === 1);
    assert.deepEqual(
      podsOwnedBy(c.client, j).map((p) => p.metadata.name),
      ['stray'],
    );
    await setPodStatus(c.client, adopted, 'Succeeded');
    await waitFor('Complete', () => cond(jobNow('adopt'), 'Complete')?.status === 'True');
  });
});
