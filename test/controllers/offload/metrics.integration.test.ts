/**
 * Burst offloading's metrics, scraped from the manager's /metrics over HTTP while the
 * offload controllers run on the embedded cluster with the RunPod stand-in.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { OffloadContext } from '../../../src/controllers/offload/context.ts';
import { markError } from '../../../src/controllers/offload/job-writes.ts';
import { ERROR } from '../../../src/controllers/offload/keys.ts';
import type { Job } from '../../../src/controllers/offload/types.ts';
import { scrapeUntil } from '../../runtime/scrape.ts';
import { waitFor } from '../../support/wait.ts';
import { type OffloadEnv, seedJob, startOffloadEnv } from './harness.ts';

const JOB = { apiVersion: 'batch/v1', kind: 'Job' };
const POD = { apiVersion: 'v1', kind: 'Pod' };
const STATES = ['Launching', 'Pending', 'Running', 'Terminating'];

describe('offload metrics', () => {
  let env: OffloadEnv;
  const ns = 'gpu-metrics';

  before(async () => {
    env = await startOffloadEnv();
    await env.client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  });
  after(async () => {
    await env?.close();
  });

  test('Jobs offloaded, remote pods by state, spend, and launch failures by reason', async () => {
    await env.client.create(seedJob('long', ns, { command: ['sh', '-c', 'echo start; sleep infinity'] }));
    await waitFor('the virtual pod to run', async () => {
      const p = (await env.client.tryGet(POD, 'long-runpod', ns)) as
        | { status?: { phase?: string } }
        | undefined;
      return p?.status?.phase === 'Running';
    });
    let s = await scrapeUntil(
      env.manager,
      'one remote pod running at $0.25/h',
      (s) =>
        s.value('troupe_offload_remote_pods', { state: 'Running' }) === 1 &&
        s.value('troupe_offload_spend_usd_per_hour') === 0.25 &&
        s.value('troupe_offload_jobs_offloaded_total', { reason: 'Requested' }) === 1,
    );
    for (const state of STATES.filter((st) => st !== 'Running'))
      assert.equal(s.value('troupe_offload_remote_pods', { state }), 0, state);
    assert.equal(s.value('troupe_offload_jobs_offloaded_total', { reason: 'PendingTooLong' }), 0);
    assert.equal(s.value('troupe_offload_launch_failures_total', { error_class: 'Invalid' }), 0);

    // Refused before anything is written, and refused by the provider (no GPU that large).
    await env.client.create(
      seedJob('bad-mem', ns, { annotations: { 'runpod.io/required-gpu-memory': 'sixteen' } }),
    );
    await env.client.create(
      seedJob('huge', ns, { annotations: { 'runpod.io/required-gpu-memory': '4096' } }),
    );
    s = await scrapeUntil(
      env.manager,
      'both refusals counted',
      (s) =>
        s.value('troupe_offload_launch_failures_total', { error_class: 'Invalid' }) === 1 &&
        (s.value('troupe_offload_launch_failures_total', { error_class: 'NoCapacity' }) ?? 0) >= 1,
    );
    assert.equal(s.value('troupe_offload_launch_failures_total', { error_class: 'Other' }), 0);
    assert.equal(s.value('troupe_offload_jobs_offloaded_total', { reason: 'Requested' }), 1);

    // Deleting the Job terminates its remote pod: nothing runs, nothing is spent.
    await env.client.delete(
      { ...JOB, metadata: { name: 'long', namespace: ns } },
      { propagationPolicy: 'Background' },
    );
    s = await scrapeUntil(
      env.manager,
      'no remote pod left',
      (s) =>
        STATES.every((state) => s.value('troupe_offload_remote_pods', { state }) === 0) &&
        s.value('troupe_offload_spend_usd_per_hour') === 0,
    );
    assert.equal(s.value('troupe_offload_jobs_offloaded_total', { reason: 'Requested' }), 1);
  });

  test('a refusal seen again on a stale copy of the Job is reported and counted once', async () => {
    // A suspended Job troupe does not manage: once the Job controller has marked it suspended,
    // only the calls below write to it.
    await env.client.create({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'stale', namespace: ns },
      spec: {
        suspend: true,
        template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
      },
    });
    const job = await waitFor('the Job marked suspended', async () => {
      const j = (await env.client.get(JOB, 'stale', ns)) as Job & {
        status?: { conditions?: { type: string; status: string }[] };
      };
      return j.status?.conditions?.some((x) => x.type === 'Suspended' && x.status === 'True') ? j : undefined;
    });
    const warnings: string[] = [];
    let counted = 0;
    const c = {
      client: env.client,
      now: () => Date.now(),
      intervalMs: 60_000,
      recorder: { warning: (_o: unknown, reason: string) => warnings.push(reason) },
      metrics: { launchFailed: () => counted++ },
    } as unknown as OffloadContext;
    await markError(c, job, 'Invalid', 'bad gpu memory');
    // The same copy again, as a reconcile whose cache has not seen the first write.
    await markError(c, job, 'Invalid', 'bad gpu memory');
    assert.equal(counted, 1);
    assert.deepEqual(warnings, ['OffloadInvalid']);
    const stored = (await env.client.get(JOB, 'stale', ns)) as Job;
    assert.equal(stored.metadata.annotations?.[ERROR], 'bad gpu memory');
  });
});
