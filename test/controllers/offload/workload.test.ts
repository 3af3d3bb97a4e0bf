import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_GPU_TYPES } from '../../../src/cluster/runpod/catalog.ts';
import { readJobConfig } from '../../../src/controllers/offload/core.ts';
import { chooseGpuCandidates, classifyCreate, retryAfterMs } from '../../../src/controllers/offload/gpus.ts';
import { resolveOffloadOptions } from '../../../src/controllers/offload/options.ts';
import { runpodArgs } from '../../../src/controllers/offload/runpod.ts';
import type { Container, Job } from '../../../src/controllers/offload/types.ts';
import { buildLaunchRequest, expandRefs, remotePodName } from '../../../src/controllers/offload/workload.ts';

function job(
  container: Partial<Container>,
  spec: Record<string, unknown> = {},
  annotations: Record<string, string> = {},
): Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: 'train',
      namespace: 'ml',
      uid: '0b7c61a2-1111-2222-3333-444455556666',
      annotations: { 'runpod.io/managed': 'true', ...annotations },
    },
    spec: {
      ...spec,
      template: {
        metadata: { labels: { team: 'vision' } },
        spec: { containers: [{ name: 'main', image: 'pytorch:2', ...container }], restartPolicy: 'Never' },
      },
    },
  };
}

const ctx = {
  clusterName: 'lab',
  marker: 'troupe-exit-n0nce',
  defaultDiskGb: 20,
  defaultCloud: 'SECURE' as const,
};
const noRefs = { secrets: {}, configMaps: {} };

describe('building the launch request', () => {
  test('image, command, resources, tags', () => {
    const j = job({
      command: ['python', 'train.py'],
      args: ['--epochs', '$(EPOCHS)'],
      env: [{ name: 'EPOCHS', value: '3' }],
      resources: {
        requests: { cpu: '6', memory: '48Gi', 'nvidia.com/gpu': '2', 'ephemeral-storage': '100G' },
        limits: { 'nvidia.com/gpu': '2' },
      },
    });
    const r = buildLaunchRequest(j, readJobConfig(j), noRefs, ctx);
    assert.ok(r.ok);
    const q = r.request;
    assert.deepEqual(q.command, ['python', 'train.py']);
    assert.deepEqual(q.args, ['--epochs', '3'], '$(VAR) expanded as the kubelet does');
    assert.equal(q.wrapped, true);
    assert.deepEqual(
      [q.gpuCount, q.gpuVendor, q.minVcpuPerGpu, q.minRamGbPerGpu, q.diskGb],
      [2, 'NVIDIA', 3, 24, 100],
    );
    assert.equal(q.env.TROUPE_CLUSTER, 'lab');
    assert.equal(q.env.TROUPE_JOB_UID, '0b7c61a2-1111-2222-3333-444455556666');
    assert.equal(q.env.TROUPE_EXIT_MARKER, 'troupe-exit-n0nce');
    assert.equal(q.name, 'troupe-ml-train-0b7c61a2');
  });

  test('env from Secrets and ConfigMaps, fields, optional refs', () => {
    const j = job({
      envFrom: [
        { configMapRef: { name: 'cfg' }, prefix: 'CFG_' },
        { secretRef: { name: 'missing', optional: true } },
      ],
      env: [
        { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'creds', key: 'token' } } },
        { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'TEAM', valueFrom: { fieldRef: { fieldPath: "metadata.labels['team']" } } },
        { name: 'OPT', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'nope', optional: true } } },
      ],
    });
    const refs = {
      secrets: { creds: { token: 's3cr3t' }, missing: undefined },
      configMaps: { cfg: { mode: 'fast', 'bad key': 'x' } },
    };
    const r = buildLaunchRequest(j, readJobConfig(j), refs, ctx);
    assert.ok(r.ok);
    assert.equal(r.request.env.TOKEN, 's3cr3t');
    assert.equal(r.request.env.CFG_mode, 'fast');
    assert.equal(r.request.env['CFG_bad key'], undefined);
    assert.equal(r.request.env.POD, 'train-runpod');
    assert.equal(r.request.env.TEAM, 'vision');
    assert.equal('OPT' in r.request.env, false);
    assert.equal(r.request.wrapped, false, 'no command: the image entrypoint runs, unwrapped');
  });

  test('what RunPod cannot run is refused with a reason', () => {
    const cases: [Job, RegExp, string][] = [
      [job({ volumeMounts: [{ name: 'data', mountPath: '/data' }] }), /volume mounts/, 'Unexpressible'],
      [job({}, { parallelism: 2 }), /one pod per Job/, 'Unexpressible'],
      [
        job({ env: [{ name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } }] }),
        /status.podIP/,
        'Unexpressible',
      ],
      [
        job({ env: [{ name: 'T', valueFrom: { secretKeyRef: { name: 'creds', key: 'token' } } }] }),
        /Secret creds was not found/,
        'Unresolved',
      ],
      [job({ resources: { limits: { 'nvidia.com/gpu': '0' } } }), /at least one whole GPU/, 'Unexpressible'],
    ];
    for (const [j, msg, cls] of cases) {
      const r = buildLaunchRequest(j, readJobConfig(j), noRefs, ctx);
      assert.ok(!r.ok);
      assert.match(r.message, msg);
      assert.equal(r.errorClass, cls);
    }
    const twoContainers = job({});
    twoContainers.spec!.template!.spec!.containers.push({ name: 'side', image: 'x' });
    const r = buildLaunchRequest(twoContainers, readJobConfig(twoContainers), noRefs, ctx);
    assert.ok(!r.ok && /one container/.test(r.message));
  });

  test('$(VAR) expansion keeps unknown references and $$ escapes', () => {
    assert.equal(expandRefs('$(A)-$(B)-$$(A)', { A: '1' }), '1-$(B)-$(A)');
  });

  test('remote names stay within 63 characters', () => {
    const long = job({});
    long.metadata.name = 'x'.repeat(60);
    assert.ok(remotePodName(long).length <= 63);
  });

  test('the RunPod args string wraps the command to capture its exit code', () => {
    assert.equal(
      runpodArgs({ command: ['python', 'train.py'], args: ["it's"], wrapped: true }),
      `sh -c '"$@"; code=$?; echo "$TROUPE_EXIT_MARKER $code"; exec sleep infinity' troupe python train.py "it's"`,
    );
    assert.equal(runpodArgs({ args: ['--fast'], wrapped: false }), '--fast');
    assert.equal(runpodArgs({ wrapped: false }), '');
  });
});

describe('choosing GPUs', () => {
  const needs = {
    gpuCount: 1,
    gpuMemoryGb: 16,
    vendor: 'NVIDIA' as const,
    cloud: 'SECURE' as const,
    maxPrice: 0.5,
    budgetLeft: Infinity,
  };

  test('cheapest first among types with enough memory under the price', () => {
    const c = chooseGpuCandidates(DEFAULT_GPU_TYPES, needs);
    assert.deepEqual(
      c.map((x) => x.id),
      [
        'NVIDIA RTX A4000',
        'NVIDIA RTX A4500',
        'NVIDIA RTX A5000',
        'NVIDIA L4',
        'NVIDIA A40',
        'NVIDIA RTX A6000',
      ],
    );
    assert.ok(c.every((x, i) => i === 0 || c[i - 1]!.podPrice <= x.podPrice));
  });

  test('memory, cloud, vendor, count, price and budget all narrow the list', () => {
    assert.deepEqual(
      chooseGpuCandidates(DEFAULT_GPU_TYPES, { ...needs, gpuMemoryGb: 40 }).map((x) => x.id),
      ['NVIDIA A40', 'NVIDIA RTX A6000'],
    );
    assert.equal(
      chooseGpuCandidates(DEFAULT_GPU_TYPES, { ...needs, cloud: 'COMMUNITY', gpuMemoryGb: 8 })[0]!.id,
      'NVIDIA GeForce RTX 3070',
    );
    assert.deepEqual(
      chooseGpuCandidates(DEFAULT_GPU_TYPES, { ...needs, vendor: 'AMD' }),
      [],
      'the only AMD type costs more',
    );
    assert.deepEqual(
      chooseGpuCandidates(DEFAULT_GPU_TYPES, { ...needs, gpuCount: 2 }).map((x) => x.podPrice),
      [0.5],
    );
    assert.deepEqual(
      chooseGpuCandidates(DEFAULT_GPU_TYPES, { ...needs, budgetLeft: 0.26 }).map((x) => x.id),
      ['NVIDIA RTX A4000'],
    );
    assert.deepEqual(chooseGpuCandidates(DEFAULT_GPU_TYPES, { ...needs, maxPrice: 0.1 }), []);
  });

  test("create answers follow RunPod's documented semantics", () => {
    assert.deepEqual(classifyCreate(201), { step: 'done' });
    assert.deepEqual(classifyCreate(400), { step: 'next', why: 'capacity-or-rule' });
    assert.deepEqual(classifyCreate(403), { step: 'next', why: 'forbidden' });
    assert.deepEqual(classifyCreate(401), { step: 'stop', errorClass: 'Unauthorized' });
    assert.deepEqual(classifyCreate(402), { step: 'stop', errorClass: 'Payment' });
    assert.deepEqual(classifyCreate(422), { step: 'stop', errorClass: 'Rejected' });
    assert.deepEqual(classifyCreate(429, '12'), { step: 'wait', retryAfterMs: 12_000 });
    assert.deepEqual(classifyCreate(503), { step: 'retry' });
    assert.equal(retryAfterMs(null), 1000);
    assert.equal(retryAfterMs('Fri, 20 Nov 2026 10:00:05 GMT', Date.parse('2026-11-20T10:00:00Z')), 5000);
  });
});

describe('options', () => {
  test('the seed defaults and the key from RUNPOD_KEY', () => {
    const o = resolveOffloadOptions({}, { RUNPOD_KEY: 'k' });
    assert.deepEqual(
      [
        o.reconcileInterval,
        o.pendingJobThreshold,
        o.maxPendingTime,
        o.maxGpuPrice,
        o.healthServerAddress,
        o.runpodKey,
      ],
      [30, 1, 0, 0.5, ':8080', 'k'],
    );
    assert.equal(o.runpodBaseUrl, 'https://api.runpod.io/v2');
  });

  test('bad values fail at start', () => {
    assert.throws(() => resolveOffloadOptions({ pendingJobThreshold: -1 }, {}), /pending-job-threshold/);
    assert.throws(() => resolveOffloadOptions({ maxGpuPrice: Number.NaN }, {}), /max-gpu-price/);
    assert.throws(() => resolveOffloadOptions({ runpodBaseUrl: 'ftp://x' }, {}), /base URL/);
  });
});
