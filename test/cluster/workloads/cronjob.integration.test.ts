/**
 * The CronJob controller on the embedded cluster's timeline (`timeScale` simulated seconds
 * per real second): Jobs named `<cronjob>-<minutes>` at each schedule time, status.active and
 * lastScheduleTime, concurrencyPolicy Forbid, suspend, and `kubectl create job --from`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import { startTestCluster, type TestCluster } from '../../support/cluster.ts';
import { waitFor } from '../../support/wait.ts';

const CRON = `apiVersion: batch/v1
kind: CronJob
metadata: {name: tick, namespace: default}
spec:
  schedule: "* * * * *"
  concurrencyPolicy: Forbid
  jobTemplate:
    metadata:
      labels: {app: tick}
    spec:
      template:
        metadata:
          annotations: {troupe.dev/run-duration: 1000h}
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox}]
`;

describe('CronJob controller', () => {
  let c: TestCluster;
  before(async () => {
    // One simulated minute per real second.
    c = await startTestCluster({ nodes: 1, timeScale: 60 });
  });
  after(() => c.close());

  test('a Job per schedule time, named by the scheduled minute, listed in status.active', async () => {
    await c.kubectl(['apply', '-f', '-'], CRON);
    const batch = c.kc.makeApiClient(BatchV1Api);
    const cj = await waitFor('a scheduled job', async () => {
      const r = await batch.readNamespacedCronJob({ name: 'tick', namespace: 'default' });
      return r.status?.active?.length ? r : undefined;
    });
    const last = cj.status!.lastScheduleTime!;
    const ref = cj.status!.active![0]!;
    // Named by the scheduled minute on the simulated timeline.
    assert.match(ref.name!, /^tick-\d{8}$/);
    const job = await batch.readNamespacedJob({ name: ref.name!, namespace: 'default' });
    assert.equal(job.metadata?.labels?.app, 'tick');
    assert.equal(job.metadata?.ownerReferences?.[0]?.kind, 'CronJob');
    assert.equal(
      job.metadata?.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp'],
      new Date(last).toISOString().replace('.000Z', 'Z'),
    );
    const row = await c.kubectl(['get', 'cronjob', 'tick', '--no-headers']);
    assert.match(row, /^tick\s+\* \* \* \* \*\s+<none>\s+False\s+1\s+\d+s\s+/);
  });

  test('Forbid keeps one Job while it runs, with the JobAlreadyActive event', async () => {
    const core = c.kc.makeApiClient(CoreV1Api);
    await waitFor('JobAlreadyActive event', async () => {
      const evs = await core.listNamespacedEvent({
        namespace: 'default',
        fieldSelector: 'involvedObject.kind=CronJob,involvedObject.name=tick,reason=JobAlreadyActive',
      });
      return evs.items[0];
    });
    const jobs = await c.kubectl(['get', 'jobs', '-l', 'app=tick', '-o', 'name']);
    assert.equal(jobs.trim().split('\n').length, 1);
  });

  test('finished Jobs beyond successfulJobsHistoryLimit are deleted', async () => {
    await c.kubectl(
      ['apply', '-f', '-'],
      CRON.replace('name: tick', 'name: quick')
        .replace('app: tick', 'app: quick')
        .replace('troupe.dev/run-duration: 1000h', 'troupe.dev/run-duration: 1s')
        .replace('concurrencyPolicy: Forbid', 'successfulJobsHistoryLimit: 2'),
    );
    const core = c.kc.makeApiClient(CoreV1Api);
    await waitFor('SuccessfulDelete of an old job', async () => {
      const evs = await core.listNamespacedEvent({
        namespace: 'default',
        fieldSelector: 'involvedObject.name=quick,reason=SuccessfulDelete',
      });
      return evs.items[0];
    });
    await c.kubectl(['patch', 'cronjob', 'quick', '--type=merge', '-p', '{"spec":{"suspend":true}}']);
    const finished = await waitFor('two finished jobs kept', async () => {
      const jobs = JSON.parse(await c.kubectl(['get', 'jobs', '-l', 'app=quick', '-o', 'json'])).items as {
        status?: { succeeded?: number };
      }[];
      const done = jobs.filter((j) => j.status?.succeeded === 1);
      return done.length === 2 ? done : undefined;
    });
    assert.equal(finished.length, 2);
  });

  test('suspend stops new Jobs; kubectl create job --from=cronjob runs one by hand', async () => {
    await c.kubectl(['patch', 'cronjob', 'tick', '--type=merge', '-p', '{"spec":{"suspend":true}}']);
    const out = await c.kubectl(['create', 'job', 'by-hand', '--from=cronjob/tick']);
    assert.match(out, /job.batch\/by-hand created/);
    const job = JSON.parse(await c.kubectl(['get', 'job', 'by-hand', '-o', 'json']));
    assert.equal(job.metadata.annotations['cronjob.kubernetes.io/instantiate'], 'manual');
    assert.equal(job.metadata.ownerReferences[0].name, 'tick');
    const row = await c.kubectl(['get', 'cronjob', 'tick', '--no-headers']);
    assert.match(row, /^tick\s+\* \* \* \* \*\s+<none>\s+True\s+/);
  });

  test('an unparseable schedule is refused as kube-apiserver refuses it, or reported by an Event', async () => {
    const bad = await c.kubectlResult(
      ['apply', '-f', '-'],
      CRON.replace('name: tick', 'name: bad').replace('"* * * * *"', '"not a schedule"'),
    );
    if (bad.code !== 0) {
      assert.match(bad.stderr, /schedule/);
      return;
    }
    const core = c.kc.makeApiClient(CoreV1Api);
    const ev = await waitFor('UnparseableSchedule event', async () => {
      const evs = await core.listNamespacedEvent({
        namespace: 'default',
        fieldSelector: 'involvedObject.name=bad,reason=UnparseableSchedule',
      });
      return evs.items[0];
    });
    assert.equal(ev.type, 'Warning');
  });
});
