/**
 * Burst offloading's metrics, scraped from the manager's /metrics over HTTP while the
 * offload controllers run on the embedded cluster with the RunPod stand-in.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
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
    // At least once each: a second reconcile of the Job that runs before the informer has seen
    // the first refusal's annotation refuses and counts it again (seen on a busy machine).
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
        (s.value('troupe_offload_launch_failures_total', { error_class: 'Invalid' }) ?? 0) >= 1 &&
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
});
