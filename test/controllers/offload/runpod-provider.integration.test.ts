/** The RunPod REST v2 provider against the stand-in: candidate fallback and error semantics. */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type RunPodStandIn, startRunPodStandIn } from '../../../src/cluster/runpod/index.ts';
import { ProviderError } from '../../../src/controllers/offload/provider.ts';
import { RunPodProvider } from '../../../src/controllers/offload/runpod.ts';
import type { LaunchRequest } from '../../../src/controllers/offload/workload.ts';
import { waitFor } from '../../support/wait.ts';

const REQUEST_TIMEOUT_MS = 30_000;

function request(extra: Partial<LaunchRequest> = {}): LaunchRequest {
  return {
    name: 'troupe-ns-job-12345678',
    image: 'busybox',
    command: ['sh', '-c', 'echo hello; exit 4'],
    wrapped: true,
    env: { TROUPE_CLUSTER: 'lab', TROUPE_JOB_UID: 'uid-1', TROUPE_EXIT_MARKER: 'troupe-exit-xyz' },
    gpuCount: 1,
    gpuVendor: 'NVIDIA',
    gpuMemoryGb: 16,
    diskGb: 20,
    cloud: 'SECURE',
    tags: { cluster: 'lab', namespace: 'ns', job: 'job', jobUid: 'uid-1', marker: 'troupe-exit-xyz' },
    ...extra,
  };
}

const limits = { maxPrice: 0.5, budgetLeft: Number.POSITIVE_INFINITY };

describe('RunPod provider (REST v2) against the stand-in', () => {
  let rp: RunPodStandIn;
  let provider: RunPodProvider;

  before(async () => {
    rp = await startRunPodStandIn({ timeScale: 50 });
  });
  beforeEach(async () => {
    rp.faults.clear();
    rp.setBalance(100);
    rp.setForbidden([]);
    for (const id of ['NVIDIA RTX A4000', 'NVIDIA RTX A4500', 'NVIDIA RTX A5000']) rp.setCapacity(id, 8);
    // The request timeout is no part of what these tests check: generous, so that a loaded
    // machine answering the local fake slowly cannot fail them.
    provider = new RunPodProvider({
      baseUrl: rp.url,
      apiKey: rp.apiKey,
      clusterName: 'lab',
      timeoutMs: REQUEST_TIMEOUT_MS,
      retryBaseMs: 5,
    });
    for (const p of await provider.list()) await provider.terminate(p.id);
  });
  after(async () => {
    await rp?.stop();
  });

  test('the cheapest fitting GPU is used', async () => {
    const out = await provider.launch(request(), limits);
    assert.equal(out.kind, 'launched');
    assert.ok(out.kind === 'launched');
    assert.equal(out.gpuTypeId, 'NVIDIA RTX A4000');
    assert.equal(out.costPerHr, 0.25);
    assert.equal(out.pod.tags.jobUid, 'uid-1');
  });

  test('no capacity (400) falls back to the next candidate; 403 skips one', async () => {
    rp.setCapacity('NVIDIA RTX A4000', 0);
    rp.setForbidden(['NVIDIA RTX A4500']);
    const out = await provider.launch(request(), limits);
    assert.ok(out.kind === 'launched');
    assert.equal(out.gpuTypeId, 'NVIDIA RTX A5000');
  });

  test('every candidate refused: unavailable, with the last details', async () => {
    const out = await provider.launch(request(), { maxPrice: 0.26, budgetLeft: Number.POSITIVE_INFINITY });
    assert.equal(out.kind, 'launched');
    rp.setCapacity('NVIDIA RTX A4000', 0);
    const none = await provider.launch(request(), { maxPrice: 0.26, budgetLeft: Number.POSITIVE_INFINITY });
    assert.ok(none.kind === 'unavailable' && none.errorClass === 'NoCapacity');
    assert.match(
      none.message,
      /NVIDIA RTX A4000: 400 Bad Request: There are no instances currently available/,
    );
  });

  test('402 stops at once', async () => {
    rp.setBalance(0);
    const out = await provider.launch(request(), limits);
    assert.ok(out.kind === 'failed' && out.errorClass === 'Payment');
    assert.equal(rp.pods().length, 0);
  });

  test('422 is never retried', async () => {
    rp.inject({ method: 'POST', path: '/v2/pods', status: 422, detail: 'Request validation failed.' });
    const out = await provider.launch(request(), limits);
    assert.ok(out.kind === 'failed' && out.errorClass === 'Rejected');
    assert.equal(rp.faults.applied['422'], 1, 'one call, no retry, no other candidate');
  });

  test('429 returns the Retry-After wait', async () => {
    rp.inject({ method: 'POST', path: '/v2/pods', status: 429, retryAfterSeconds: 7, times: 1 });
    const out = await provider.launch(request(), limits);
    assert.deepEqual(out.kind === 'rateLimited' && out.retryAfterMs, 7000);
  });

  test('5xx retries the same candidate with backoff, then gives up with a retryable error', async () => {
    rp.inject({ method: 'POST', path: '/v2/pods', status: 503, times: 2 });
    const out = await provider.launch(request(), limits);
    assert.ok(out.kind === 'launched');
    assert.equal(out.gpuTypeId, 'NVIDIA RTX A4000', 'the same candidate, not the next one');
    rp.inject({ method: 'POST', path: '/v2/pods', status: 500 });
    await assert.rejects(() => provider.launch(request(), limits), ProviderError);
  });

  test('an invalid key is Unauthorized, and ping fails', async () => {
    const bad = new RunPodProvider({
      baseUrl: rp.url,
      apiKey: 'wrong',
      clusterName: 'lab',
      timeoutMs: REQUEST_TIMEOUT_MS,
    });
    const out = await bad.launch(request(), limits);
    assert.ok(out.kind === 'failed' && out.errorClass === 'Unauthorized');
    await assert.rejects(() => bad.ping(), /401/);
    const none = new RunPodProvider({
      baseUrl: rp.url,
      apiKey: undefined,
      clusterName: 'lab',
      timeoutMs: REQUEST_TIMEOUT_MS,
    });
    assert.equal(none.configured(), false);
    await assert.rejects(() => none.ping(), /RUNPOD_KEY/);
    await provider.ping();
  });

  test('the spending cap: unavailable (Budget) when the cheapest fit costs more than is left', async () => {
    const out = await provider.launch(request(), { maxPrice: 0.5, budgetLeft: 0.1 });
    assert.ok(out.kind === 'unavailable' && out.errorClass === 'Budget');
  });

  test("list shows only this cluster's pods; terminate is idempotent", async () => {
    const out = await provider.launch(request(), limits);
    const other = new RunPodProvider({
      baseUrl: rp.url,
      apiKey: rp.apiKey,
      clusterName: 'elsewhere',
      timeoutMs: REQUEST_TIMEOUT_MS,
    });
    assert.deepEqual(await other.list(), []);
    assert.ok(out.kind === 'launched');
    assert.deepEqual(
      (await provider.list()).map((p) => p.id),
      [out.pod.id],
    );
    await provider.terminate(out.pod.id);
    await provider.terminate(out.pod.id);
    assert.equal(await provider.get(out.pod.id), undefined);
  });

  test("the wrapped command's exit code comes from the log stream", async () => {
    const out = await provider.launch(request(), limits);
    assert.ok(out.kind === 'launched');
    let code: number | undefined;
    const ac = new AbortController();
    provider.watchExit(
      out.pod,
      (c) => {
        code = c;
      },
      ac.signal,
    );
    await waitFor('the exit code', () => code);
    assert.equal(code, 4);
    const pod = rp.pods().find((p) => p.id === out.pod.id)!;
    assert.equal(pod.starts, 1, 'the wrapper keeps the container alive, so RunPod does not restart it');
    ac.abort();
  });
});
