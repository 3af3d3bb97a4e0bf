/**
 * The AppWrapper controller's metrics, scraped from the manager's /metrics over HTTP while
 * it runs against the bare API server with the Kueue stand-in (the test plays the kubelet).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GVR } from '../../../src/cluster/client.ts';
import { scrapeUntil } from '../../runtime/scrape.ts';
import { waitFor } from '../../support/wait.ts';
import { AW, appWrapper, type Env, setPodPhase, startEnv, waitPhase } from './env.ts';

const FAST = {
  'workload.codeflare.dev.appwrapper/failureGracePeriodDuration': '1s',
  'workload.codeflare.dev.appwrapper/retryPausePeriodDuration': '1s',
  'workload.codeflare.dev.appwrapper/retryLimit': '1',
};

let env: Env;

before(async () => {
  env = await startEnv({ probes: true });
});

after(async () => {
  await env.stop();
});

const podOf = (name: string) => env.client.get(GVR.pods, 'default', name);

describe('AppWrapper metrics', () => {
  test('AppWrappers by phase, resets and failures by reason', async () => {
    await env.client.create(AW, appWrapper('victim'));
    await waitPhase(env, 'victim', 'Running');
    let s = await scrapeUntil(
      env.manager,
      'one AppWrapper running',
      (s) => s.value('troupe_appwrapper_appwrappers', { phase: 'Running' }) === 1,
    );
    for (const phase of ['Empty', 'Suspended', 'Resuming', 'Resetting', 'Suspending', 'Succeeded', 'Failed'])
      assert.equal(s.value('troupe_appwrapper_appwrappers', { phase }), 0, phase);
    assert.equal(s.value('troupe_appwrapper_resets_total', { reason: 'FoundFailedPods' }), 0);
    assert.equal(s.value('troupe_appwrapper_failures_total', { reason: 'MissingComponent' }), 0);
    // Upstream's appwrapper_phase_total: each phase the AppWrapper entered, once.
    for (const phase of ['Suspended', 'Resuming', 'Running'])
      assert.equal(s.value('appwrapper_phase_total', { namespace: 'default', phase }), 1, phase);

    // A component deleted behind its back: Failed at once, no reset.
    await env.client.delete(GVR.pods, 'default', 'victim');
    await waitPhase(env, 'victim', 'Failed');
    s = await scrapeUntil(
      env.manager,
      'the failure counted',
      (s) => s.value('troupe_appwrapper_failures_total', { reason: 'MissingComponent' }) === 1,
    );
    assert.equal(s.value('troupe_appwrapper_appwrappers', { phase: 'Failed' }), 1);
    assert.equal(s.value('troupe_appwrapper_appwrappers', { phase: 'Running' }), 0);
    assert.equal(s.value('appwrapper_phase_total', { namespace: 'default', phase: 'Failed' }), 1);

    // A failed pod: one reset (the retry limit), then Failed.
    await env.client.create(AW, appWrapper('flaky', { annotations: FAST }));
    await waitPhase(env, 'flaky', 'Running');
    const firstUid = await waitFor('the first pod', () => podOf('flaky')?.metadata.uid);
    await setPodPhase(env, 'flaky', 'Failed', 1);
    await waitFor('the pod recreated', () => {
      const uid = podOf('flaky')?.metadata.uid;
      return uid !== undefined && uid !== firstUid;
    });
    await waitPhase(env, 'flaky', 'Running');
    s = await scrapeUntil(
      env.manager,
      'the reset counted',
      (s) => s.value('troupe_appwrapper_resets_total', { reason: 'FoundFailedPods' }) === 1,
    );
    assert.equal(s.value('troupe_appwrapper_failures_total', { reason: 'FoundFailedPods' }), 0);

    await setPodPhase(env, 'flaky', 'Failed', 1);
    await waitPhase(env, 'flaky', 'Failed');
    s = await scrapeUntil(
      env.manager,
      'two AppWrappers failed',
      (s) =>
        s.value('troupe_appwrapper_failures_total', { reason: 'FoundFailedPods' }) === 1 &&
        s.value('troupe_appwrapper_appwrappers', { phase: 'Failed' }) === 2,
    );
    assert.equal(s.value('troupe_appwrapper_resets_total', { reason: 'FoundFailedPods' }), 1);
    assert.equal(s.value('troupe_appwrapper_failures_total', { reason: 'MissingComponent' }), 1);
    assert.equal(s.value('troupe_appwrapper_failures_total', { reason: 'Other' }), 0);
  });
});
