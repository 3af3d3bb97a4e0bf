import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  blockedByError,
  currentSpend,
  decideOffload,
  exitCodeFromLogLine,
  type JobObservation,
  jobFinished,
  orphanRemotePods,
  pendingState,
  readJobConfig,
  remoteOutcome,
  uncountedLocalEnd,
  virtualPodStatus,
} from '../../../src/controllers/offload/core.ts';
import type { Job, Pod, RemotePod } from '../../../src/controllers/offload/types.ts';
import { pod as buildPod } from '../../support/objects.ts';

const T0 = Date.parse('2026-11-20T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

function job(
  name: string,
  annotations: Record<string, string> = {},
  extra: Partial<Job> = {},
  createdMs = T0,
): Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      creationTimestamp: iso(createdMs),
      annotations: { 'runpod.io/managed': 'true', ...annotations },
    },
    spec: { template: { spec: { containers: [{ name: 'c', image: 'img' }] } } },
    ...extra,
  };
}

function pod(
  owner: Job,
  opts: { phase?: string; unschedulableSince?: number; nodeName?: string; virtual?: boolean } = {},
): Pod {
  const conditions =
    opts.unschedulableSince !== undefined
      ? [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            lastTransitionTime: iso(opts.unschedulableSince),
          },
        ]
      : [];
  return buildPod<Pod>(`${owner.metadata.name}-${opts.virtual ? 'runpod' : 'x'}`, {
    namespace: 'ns',
    uid: `pod-${owner.metadata.name}-${opts.virtual ? 'v' : 'l'}`,
    labels: opts.virtual ? { 'runpod.io/managed': 'true' } : {},
    annotations: opts.virtual
      ? {
          'runpod.io/provider': 'runpod',
          'runpod.io/pod-id': `r-${owner.metadata.name}`,
          'runpod.io/cost-per-hr': '0.25',
        }
      : {},
    ownerReferences: [
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        name: owner.metadata.name!,
        uid: owner.metadata.uid!,
        controller: true,
      },
    ],
    spec: { containers: [{ name: 'c' }] },
    ...(opts.nodeName ? { node: opts.nodeName } : {}),
    phase: opts.phase ?? 'Pending',
    conditions,
  });
}

const opts = { maxPendingTime: 0, pendingJobThreshold: 1 };

describe('reading Job annotations', () => {
  test('the seed annotations, and bad values reported, not guessed', () => {
    const ok = readJobConfig(
      job('a', { 'runpod.io/offload': 'true', 'runpod.io/required-gpu-memory': '16' }),
    );
    assert.deepEqual([ok.managed, ok.requested, ok.gpuMemoryGb, ok.errors], [true, true, 16, []]);
    const bad = readJobConfig(
      job('b', { 'runpod.io/required-gpu-memory': 'lots', 'runpod.io/cloud-type': 'PRIVATE' }),
    );
    assert.equal(bad.errors.length, 2);
    assert.match(bad.errors[0]!, /non-negative number of GB, got "lots"/);
    assert.equal(readJobConfig(job('c', { 'runpod.io/required-gpu-memory': '-4' })).errors.length, 1);
    assert.equal(readJobConfig(job('d', { 'runpod.io/managed': 'false' })).managed, false);
  });
});

describe('pending state', () => {
  test('pending only while a local pod is unschedulable and none runs or is bound', () => {
    const j = job('a');
    assert.deepEqual(pendingState(j, [pod(j, { unschedulableSince: T0 + 5000 })]), {
      pending: true,
      sinceMs: T0 + 5000,
      runningLocally: false,
    });
    assert.equal(pendingState(j, [pod(j)]).pending, false, 'a pod the scheduler has not looked at yet');
    assert.equal(
      pendingState(j, [pod(j, { nodeName: 'n1' })]).runningLocally,
      true,
      'bound: starting locally',
    );
    assert.equal(pendingState(j, [pod(j, { phase: 'Running', nodeName: 'n1' })]).runningLocally, true);
    const suspended = job('s', {}, { spec: { suspend: true, template: { spec: { containers: [] } } } });
    assert.equal(pendingState(suspended, [pod(suspended, { unschedulableSince: T0 })]).pending, false);
  });
});

describe('the offload decision', () => {
  test('requested Jobs go at once, unless they already run locally', () => {
    const j = job('a', { 'runpod.io/offload': 'true' });
    const d = decideOffload({ job: j, pods: [] }, [{ job: j, pods: [] }], opts, T0);
    assert.deepEqual(d, { offload: true, reason: 'Requested', message: 'runpod.io/offload is "true"' });
    const running = decideOffload(
      { job: j, pods: [pod(j, { phase: 'Running', nodeName: 'n' })] },
      [],
      opts,
      T0,
    );
    assert.equal(running.offload, false);
    assert.equal(running.offload === false && running.runningLocally, true);
  });

  test('unmanaged, finished, offloaded and blocked Jobs are left alone', () => {
    const unmanaged = job('u', { 'runpod.io/managed': 'false', 'runpod.io/offload': 'true' });
    assert.equal(decideOffload({ job: unmanaged, pods: [] }, [], opts, T0).offload, false);
    const done = job(
      'd',
      { 'runpod.io/offload': 'true' },
      { status: { conditions: [{ type: 'Complete', status: 'True' }] } },
    );
    assert.equal(decideOffload({ job: done, pods: [] }, [], opts, T0).offload, false);
    const j = job('o', { 'runpod.io/offload': 'true' });
    assert.equal(decideOffload({ job: j, pods: [pod(j, { virtual: true })] }, [], opts, T0).offload, false);
    const launching = job('l', { 'runpod.io/offload': 'true', 'runpod.io/offload-state': 'Launching' });
    assert.equal(decideOffload({ job: launching, pods: [] }, [], opts, T0).offload, false);
    const blocked = job('b', {
      'runpod.io/offload': 'true',
      'runpod.io/offload-error-class': 'Unauthorized',
    });
    assert.ok(blockedByError(blocked));
    assert.equal(decideOffload({ job: blocked, pods: [] }, [], opts, T0).offload, false);
    const retryable = job('r', {
      'runpod.io/offload': 'true',
      'runpod.io/offload-error-class': 'NoCapacity',
    });
    assert.equal(
      decideOffload({ job: retryable, pods: [] }, [], opts, T0).offload,
      true,
      'capacity errors are retried',
    );
  });

  test('a refusal that passes is retried at its retry time, not before', () => {
    const j = job('r', {
      'runpod.io/offload': 'true',
      'runpod.io/offload-error-class': 'NoCapacity',
      'runpod.io/offload-retry-at': String(T0 + 30_000),
    });
    const early = decideOffload({ job: j, pods: [] }, [], opts, T0 + 1000);
    assert.equal(early.offload, false);
    assert.equal(early.offload === false && early.recheckAfterMs, 29_000);
    assert.equal(decideOffload({ job: j, pods: [] }, [], opts, T0 + 30_000).offload, true);
  });

  test('a Job the Job controller is ending, or whose local pod ended uncounted, is not offloaded', () => {
    for (const type of ['FailureTarget', 'SuccessCriteriaMet']) {
      const ending = job(
        type,
        { 'runpod.io/offload': 'true' },
        { status: { conditions: [{ type, status: 'True' }] } },
      );
      assert.ok(jobFinished(ending), type);
      assert.equal(decideOffload({ job: ending, pods: [] }, [], opts, T0).offload, false, type);
    }
    const j = job('f', { 'runpod.io/offload': 'true' });
    const failed = pod(j, { phase: 'Failed', nodeName: 'n1' });
    failed.metadata.finalizers = ['batch.kubernetes.io/job-tracking'];
    assert.ok(uncountedLocalEnd([failed]));
    assert.equal(decideOffload({ job: j, pods: [failed] }, [], opts, T0).offload, false);
    failed.metadata.finalizers = [];
    assert.equal(
      decideOffload({ job: j, pods: [failed] }, [], opts, T0).offload,
      true,
      'counted: a retry the Job controller would make, and may be offloaded',
    );
  });

  test('max pending time: 0 offloads a pending Job at once; otherwise after the time, with a recheck before', () => {
    const j = job('a');
    const obs = { job: j, pods: [pod(j, { unschedulableSince: T0 })] };
    const d0 = decideOffload(obs, [obs], opts, T0 + 10);
    assert.equal(d0.offload && d0.reason, 'PendingTooLong');
    const early = decideOffload(obs, [obs], { maxPendingTime: 60, pendingJobThreshold: 5 }, T0 + 20_000);
    assert.deepEqual(early, { offload: false, why: 'pending within limits', recheckAfterMs: 40_001 });
    const late = decideOffload(obs, [obs], { maxPendingTime: 60, pendingJobThreshold: 5 }, T0 + 61_000);
    assert.equal(late.offload && late.reason, 'PendingTooLong');
  });

  test('threshold: the oldest pending Jobs beyond the threshold go, the rest wait', () => {
    const jobs = ['a', 'b', 'c', 'd'].map((n, i) => job(n, {}, {}, T0 + i * 1000));
    const obs: JobObservation[] = jobs.map((j) => ({
      job: j,
      pods: [pod(j, { unschedulableSince: T0 + 10_000 })],
    }));
    const o = { maxPendingTime: 3600, pendingJobThreshold: 2 };
    const decisions = obs.map((x) => decideOffload(x, obs, o, T0 + 20_000));
    assert.deepEqual(
      decisions.map((d) => (d.offload ? d.reason : 'stay')),
      ['TooManyPending', 'TooManyPending', 'stay', 'stay'],
    );
    // Once a and b are offloaded, c and d are within the threshold.
    const after = obs.map((x, i) => (i < 2 ? { ...x, pods: [pod(x.job, { virtual: true })] } : x));
    assert.equal(decideOffload(after[2]!, after, o, T0 + 20_000).offload, false);
  });
});

describe('spending and orphans', () => {
  test('spend counts virtual pods still running, from their annotations', () => {
    const a = job('a');
    const b = job('b');
    const done = pod(b, { virtual: true, phase: 'Succeeded' });
    assert.equal(currentSpend([pod(a, { virtual: true, phase: 'Running' }), done]), 0.25);
  });

  test('orphans come from cluster state: Job gone, never linked, or finished', () => {
    const remote = (id: string, jobUid: string | undefined, cluster = 'c1'): RemotePod => ({
      id,
      name: id,
      status: 'RUNNING',
      costPerHr: 0.2,
      startedAt: null,
      tags: { cluster, jobUid },
    });
    const live = job('live');
    const finished = job('fin');
    const launching = job('launch', { 'runpod.io/offload-state': 'Launching' });
    const unlinked = job('unlinked');
    const observed: JobObservation[] = [
      { job: live, pods: [pod(live, { virtual: true, phase: 'Running' })] },
      { job: finished, pods: [pod(finished, { virtual: true, phase: 'Succeeded' })] },
      { job: launching, pods: [] },
      { job: unlinked, pods: [] },
    ];
    const out = orphanRemotePods(
      [
        remote('r-live', 'uid-live'),
        remote('r-fin', 'uid-fin'),
        remote('r-launch', 'uid-launch'),
        remote('r-unlinked', 'uid-unlinked'),
        remote('r-gone', 'uid-deleted'),
        remote('other-cluster', 'uid-deleted', 'c2'),
      ],
      'c1',
      observed,
    );
    assert.deepEqual(out.map((r) => r.id).sort(), ['r-fin', 'r-gone', 'r-unlinked']);
  });
});

describe('remote outcome and the virtual pod', () => {
  const remote = (
    status: RemotePod['status'],
    startedAt: string | null = '2026-11-20T10:00:01.500Z',
  ): RemotePod => ({
    id: 'r1',
    name: 'r1',
    status,
    costPerHr: 0.2,
    startedAt,
    tags: {},
  });

  test('a captured exit code decides success or failure', () => {
    assert.deepEqual(remoteOutcome(remote('RUNNING'), { exitCode: 0, wrapped: true }).kind, 'finished');
    const failed = remoteOutcome(remote('RUNNING'), { exitCode: 3, wrapped: true });
    assert.ok(failed.kind === 'finished' && failed.exitCode === 3 && !failed.assumed);
    const s = virtualPodStatus(failed, remote('RUNNING'), 'c', 'img', 'now', 'start');
    assert.equal(s.phase, 'Failed');
    const ok = virtualPodStatus(
      { kind: 'finished', exitCode: 0, assumed: false, message: '' },
      remote('RUNNING'),
      'c',
      'img',
      'now',
      'start',
    );
    assert.equal(ok.phase, 'Succeeded');
  });

  test('statuses: starting is Pending, running is Running, gone or stopped is lost', () => {
    assert.equal(remoteOutcome(remote('PROVISIONING'), { wrapped: true }).kind, 'pending');
    assert.equal(remoteOutcome(remote('RUNNING'), { wrapped: true }).kind, 'running');
    assert.equal(remoteOutcome(undefined, { wrapped: true }).kind, 'lost');
    assert.equal(remoteOutcome(remote('EXITED'), { wrapped: true }).kind, 'lost');
    assert.equal(remoteOutcome(remote('ERROR'), { wrapped: true }).kind, 'lost');
    assert.equal(
      virtualPodStatus({ kind: 'lost', message: 'x' }, undefined, 'c', 'i', 'n', 's').phase,
      'Failed',
    );
  });

  test('unwrapped: a restart (a later startedAt) means the container ended; success is assumed', () => {
    const first = Date.parse('2026-11-20T10:00:01.500Z');
    assert.equal(remoteOutcome(remote('RUNNING'), { firstStartedMs: first, wrapped: false }).kind, 'running');
    const restarted = remoteOutcome(remote('RUNNING', '2026-11-20T10:00:01.900Z'), {
      firstStartedMs: first,
      wrapped: false,
    });
    assert.ok(restarted.kind === 'finished' && restarted.assumed && restarted.exitCode === 0);
    // Wrapped commands never rely on restarts: the marker decides.
    assert.equal(
      remoteOutcome(remote('RUNNING', '2026-11-20T10:00:09Z'), { firstStartedMs: first, wrapped: true }).kind,
      'running',
    );
  });

  test('the exit marker is read only with its per-pod nonce', () => {
    assert.equal(exitCodeFromLogLine('troupe-exit-abc 7', 'troupe-exit-abc'), 7);
    assert.equal(exitCodeFromLogLine('troupe-exit-zzz 7', 'troupe-exit-abc'), undefined);
    assert.equal(exitCodeFromLogLine('troupe-exit-abc seven', 'troupe-exit-abc'), undefined);
    assert.equal(exitCodeFromLogLine('troupe-exit-abc 300', 'troupe-exit-abc'), undefined);
  });
});
