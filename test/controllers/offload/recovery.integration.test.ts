/**
 * State lives in the cluster and in the remote pods' tags: a restarted troupe finds its
 * remote pods again, orphans are collected, and bad input keeps Jobs local with a clear
 * reason and nothing leaked.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_GPU_TYPES } from '../../../src/cluster/runpod/index.ts';
import type { KubeObject } from '../../../src/runtime/index.ts';
import { waitFor } from '../../support/wait.ts';
import { type OffloadEnv, seedJob, startOffloadEnv } from './harness.ts';

const JOB = { apiVersion: 'batch/v1', kind: 'Job' };
type Obj = KubeObject & { status?: Record<string, unknown> };

const complete = (j: Obj) =>
  ((j.status?.conditions ?? []) as { type: string; status: string }[]).some(
    (c) => c.type === 'Complete' && c.status === 'True',
  );
const failed = (j: Obj) =>
  ((j.status?.conditions ?? []) as { type: string; status: string }[]).some(
    (c) => c.type === 'Failed' && c.status === 'True',
  );

describe('offload recovery and bad input', () => {
  let env: OffloadEnv;
  const ns = 'rec';

  before(async () => {
    env = await startOffloadEnv();
    await env.client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  });
  after(async () => {
    await env?.close();
  });

  test('after a restart, troupe follows its remote pods again: exit codes and deletions', async () => {
    await env.client.create(
      seedJob('survivor', ns, { command: ['sh', '-c', 'sleep 40; exit 2'], backoffLimit: 0 }),
    );
    await env.client.create(seedJob('doomed', ns, { command: ['sh', '-c', 'sleep infinity'] }));
    const doomed = await waitFor('doomed offloaded', () =>
      env.runpod.pods().find((p) => p.env.TROUPE_JOB === 'doomed'),
    );
    await waitFor('survivor offloaded', () => env.runpod.pods().find((p) => p.env.TROUPE_JOB === 'survivor'));
    await env.stopManager();
    // While troupe is down: a Job is deleted (held by troupe's finalizer) and a remote command ends.
    await env.kubectl(['delete', 'job', 'doomed', '-n', ns, '--wait=false']);
    await env.restart();
    await waitFor(
      "the deleted Job's remote pod to be terminated",
      () => !env.runpod.pods().some((p) => p.id === doomed.id),
    );
    // Failed (the Job controller) and the exit code (troupe): two writers, in either order.
    const j = await waitFor('survivor to fail with its exit code', async () => {
      const cur = (await env.client.get(JOB, 'survivor', ns)) as Obj;
      return failed(cur) && cur.metadata.annotations?.['runpod.io/exit-code'] !== undefined ? cur : undefined;
    });
    assert.equal(j.metadata.annotations?.['runpod.io/exit-code'], '2');
    await waitFor('no remote pods left', () => env.runpod.pods().length === 0 || undefined);
  });

  test('a create that times out but lands later is adopted, not made twice', async () => {
    await env.restart({ requestTimeout: 1 });
    const stop = env.runpod.faults.inject({ method: 'POST', path: /^\/v2\/pods$/, delayMs: 1500, times: 1 });
    try {
      await env.client.create(seedJob('slow-create', ns, { command: ['sh', '-c', 'sleep 20'] }));
      const j = await waitFor('the Job to complete', async () => {
        const cur = (await env.client.get(JOB, 'slow-create', ns)) as Obj;
        return complete(cur) ? cur : undefined;
      });
      assert.equal(env.runpod.faults.applied.delay, 1, 'the create was held past the client timeout');
      const made = env.runpod.history().filter((h) => h.env.TROUPE_JOB === 'slow-create');
      assert.deepEqual(
        made.map((h) => h.id),
        [j.metadata.annotations?.['runpod.io/pod-id']],
        'one remote pod, the one the Job links',
      );
    } finally {
      stop();
      await env.restart();
    }
  });

  test('no capacity anywhere: the Job stays local and is tried again at the resync, not in a loop', async () => {
    for (const g of DEFAULT_GPU_TYPES) env.runpod.setCapacity(g.id, 0);
    const creates = () => env.runpod.requests().filter((r) => r.method === 'POST' && r.path === '/v2/pods');
    try {
      await env.client.create(seedJob('no-room', ns, { command: ['sh', '-c', 'exit 0'] }));
      const j = await waitFor('the NoCapacity refusal', async () => {
        const cur = (await env.client.get(JOB, 'no-room', ns)) as Obj;
        return cur.metadata.annotations?.['runpod.io/offload-error-class'] === 'NoCapacity' ? cur : undefined;
      });
      assert.equal(j.metadata.annotations?.['runpod.io/offload-state'], 'Local');
      assert.ok(!j.metadata.finalizers?.includes('runpod.io/offload-cleanup'));
      const retryAt = Number(j.metadata.annotations?.['runpod.io/offload-retry-at']);
      // The refusal is written one reconcile interval (the harness's 2 s) before the retry
      // time: judged from that, not from when this test got to look (a loaded machine may
      // look late), the refused attempt came before it and nothing until the retry time.
      const refusedAt = retryAt - 2000;
      assert.ok(
        creates().some((r) => r.at <= refusedAt),
        'the refused attempt came before the refusal was written',
      );
      await waitFor('the retry at the resync', () => creates().some((r) => r.at >= retryAt) || undefined);
      assert.deepEqual(
        creates().filter((r) => r.at > refusedAt && r.at < retryAt),
        [],
        'no create between the refusal and the retry time',
      );
    } finally {
      for (const g of DEFAULT_GPU_TYPES) env.runpod.setCapacity(g.id, 8);
    }
    await waitFor('the Job to complete once RunPod has room', async () =>
      complete((await env.client.get(JOB, 'no-room', ns)) as Obj),
    );
  });

  test('orphans: a remote pod tagged for this cluster whose Job is gone is terminated', async () => {
    const res = await fetch(`${env.runpod.url}/pods`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.runpod.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'troupe-rec-ghost-deadbeef',
        image: 'busybox',
        args: 'sleep infinity',
        gpu: { id: 'NVIDIA RTX A4000' },
        env: {
          TROUPE_CLUSTER: 'e2e',
          TROUPE_NAMESPACE: ns,
          TROUPE_JOB: 'ghost',
          TROUPE_JOB_UID: 'no-such-uid',
        },
      }),
    });
    assert.equal(res.status, 201);
    const { id } = (await res.json()) as { id: string };
    const foreign = await fetch(`${env.runpod.url}/pods`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.runpod.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'someone-else',
        image: 'busybox',
        gpu: { id: 'NVIDIA RTX A4000' },
        env: { TROUPE_CLUSTER: 'other' },
      }),
    });
    const other = (await foreign.json()) as { id: string };
    await waitFor('the orphan to be terminated', () => !env.runpod.pods().some((p) => p.id === id), {
      timeoutMs: 20_000,
    });
    assert.ok(
      env.runpod.pods().some((p) => p.id === other.id),
      "another cluster's pod is left alone",
    );
    await fetch(`${env.runpod.url}/pods/${other.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${env.runpod.apiKey}` },
    });
  });

  test('bad annotations keep the Job local with a clear reason', async () => {
    await env.client.create(
      seedJob('bad-mem', ns, { annotations: { 'runpod.io/required-gpu-memory': 'sixteen' } }),
    );
    const j = await waitFor('the error annotation', async () => {
      const cur = (await env.client.get(JOB, 'bad-mem', ns)) as Obj;
      return cur.metadata.annotations?.['runpod.io/offload-error'] ? cur : undefined;
    });
    assert.equal(j.metadata.annotations?.['runpod.io/offload-error-class'], 'Invalid');
    assert.match(j.metadata.annotations?.['runpod.io/offload-error'] ?? '', /required-gpu-memory/);
    assert.equal(j.metadata.annotations?.['runpod.io/offloaded'], undefined);
    assert.ok(!env.runpod.pods().some((p) => p.env.TROUPE_JOB === 'bad-mem'));
  });

  test('a Job RunPod cannot express stays local', async () => {
    const job = seedJob('with-volume', ns);
    const spec = (job.spec as { template: { spec: Record<string, unknown> } }).template.spec;
    spec.volumes = [{ name: 'data', emptyDir: {} }];
    (spec.containers as Record<string, unknown>[])[0]!.volumeMounts = [{ name: 'data', mountPath: '/data' }];
    await env.client.create(job);
    const j = await waitFor('the error annotation', async () => {
      const cur = (await env.client.get(JOB, 'with-volume', ns)) as Obj;
      return cur.metadata.annotations?.['runpod.io/offload-error-class'] ? cur : undefined;
    });
    assert.equal(j.metadata.annotations?.['runpod.io/offload-error-class'], 'Unexpressible');
    assert.ok(!j.metadata.finalizers?.includes('runpod.io/offload-cleanup'));
  });

  test('an invalid key: the Job stays local with Unauthorized, not retried forever, nothing leaked', async () => {
    await env.restart({ runpodKey: 'not-a-valid-key' });
    await env.client.create(seedJob('no-key', ns, { command: ['true'] }));
    const j = await waitFor('the Unauthorized annotation', async () => {
      const cur = (await env.client.get(JOB, 'no-key', ns)) as Obj;
      return cur.metadata.annotations?.['runpod.io/offload-error-class'] === 'Unauthorized' ? cur : undefined;
    });
    assert.equal(j.metadata.annotations?.['runpod.io/offload-state'], 'Local');
    assert.ok(!j.metadata.finalizers?.includes('runpod.io/offload-cleanup'));
    assert.equal(env.runpod.pods().filter((p) => p.env.TROUPE_JOB === 'no-key').length, 0);
    const ready = await fetch(`${env.manager.healthServer!.url}/readyz?verbose`);
    assert.equal(ready.status, 500, 'not ready without a working key');
    await env.restart();
  });
});
