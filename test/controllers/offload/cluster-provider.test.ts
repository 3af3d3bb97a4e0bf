/** The cluster provider's pure parts: the remote pod it creates and how it reads one back. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  REMOTE_LABELS,
  remoteFromPod,
  remotePodFor,
} from '../../../src/controllers/offload/cluster-provider.ts';
import type { Pod } from '../../../src/controllers/offload/types.ts';
import type { LaunchRequest } from '../../../src/controllers/offload/workload.ts';
import { pod as buildPod } from '../../support/objects.ts';

const request: LaunchRequest = {
  name: 'troupe-train-j-1a2b3c4d',
  image: 'trainer:1',
  command: ['python', 'train.py'],
  args: ['--epochs', '3'],
  wrapped: true,
  env: { A: '1', TROUPE_JOB: 'j' },
  gpuCount: 2,
  gpuVendor: 'NVIDIA',
  gpuMemoryGb: 16,
  diskGb: 20,
  cloud: 'SECURE',
  tags: { cluster: 'c1', namespace: 'train', job: 'j', jobUid: 'uid-1', marker: 'm' },
  podAnnotations: { 'example.com/team': 'ml' },
};

function pod(phase: string, extra: Partial<Pod> = {}, cs?: unknown): Pod {
  return buildPod<Pod>('p', {
    namespace: 'train',
    creationTimestamp: '2026-11-20T10:00:00Z',
    labels: { [REMOTE_LABELS.cluster]: 'c1', [REMOTE_LABELS.jobUid]: 'uid-1', [REMOTE_LABELS.job]: 'j' },
    metadata: extra.metadata,
    spec: { containers: [{ name: 'job' }], ...extra.spec },
    phase,
    ...(cs ? { status: { containerStatuses: [cs] } } : {}),
  });
}

describe('cluster provider', () => {
  test('the remote pod: the command as given (no wrapper), env, resources, labels that trace it', () => {
    const p = remotePodFor(request) as Pod;
    assert.equal(p.metadata.name, request.name);
    assert.equal(p.metadata.namespace, 'train');
    assert.deepEqual(p.metadata.labels, {
      [REMOTE_LABELS.cluster]: 'c1',
      [REMOTE_LABELS.namespace]: 'train',
      [REMOTE_LABELS.job]: 'j',
      [REMOTE_LABELS.jobUid]: 'uid-1',
    });
    assert.deepEqual(p.metadata.annotations, { 'example.com/team': 'ml' });
    const c = p.spec!.containers[0]!;
    assert.deepEqual(
      [c.command, c.args],
      [
        ['python', 'train.py'],
        ['--epochs', '3'],
      ],
    );
    assert.deepEqual(c.env, [
      { name: 'A', value: '1' },
      { name: 'TROUPE_JOB', value: 'j' },
    ]);
    assert.deepEqual(
      c.resources,
      { limits: { 'nvidia.com/gpu': '2' } },
      'built from the GPU count when absent',
    );
    assert.equal(p.spec!.restartPolicy, 'Never');
    const withRes = remotePodFor({
      ...request,
      resources: { requests: { cpu: '4' }, limits: { 'amd.com/gpu': '1' } },
    });
    assert.deepEqual((withRes as Pod).spec!.containers[0]!.resources, {
      requests: { cpu: '4' },
      limits: { 'amd.com/gpu': '1' },
    });
  });

  test("statuses map onto RunPod's vocabulary, with the exit code once the container ended", () => {
    assert.equal(remoteFromPod(pod('Pending')).status, 'PROVISIONING');
    assert.equal(
      remoteFromPod(pod('Pending', { spec: { containers: [], nodeName: 'n1' } })).status,
      'STARTING',
    );
    assert.equal(
      remoteFromPod(pod('Pending', {}, { state: { waiting: { reason: 'ImagePullBackOff' } } })).status,
      'ERROR',
    );
    const running = remoteFromPod(
      pod('Running', {}, { state: { running: { startedAt: '2026-11-20T10:00:05Z' } } }),
    );
    assert.deepEqual(
      [running.status, running.startedAt, running.exitCode],
      ['RUNNING', '2026-11-20T10:00:05Z', undefined],
    );
    const failed = remoteFromPod(pod('Failed', {}, { state: { terminated: { exitCode: 3 } } }));
    assert.deepEqual([failed.status, failed.exitCode], ['EXITED', 3]);
    assert.equal(remoteFromPod(pod('Succeeded')).exitCode, 0);
    const going = remoteFromPod(pod('Running', { metadata: { deletionTimestamp: '2026-11-20T10:01:00Z' } }));
    assert.equal(going.status, 'TERMINATED');
    const r = remoteFromPod(pod('Running'));
    assert.equal(r.id, 'train/p');
    assert.deepEqual(r.tags, { cluster: 'c1', namespace: undefined, job: 'j', jobUid: 'uid-1' });
    assert.equal(r.costPerHr, 0);
  });
});
