import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ContainerStatus } from '../../src/kube/builtin.ts';
import {
  isPodReady,
  isPodTerminal,
  type PodLike,
  podDisplay,
  podQOSClass,
  podReadyCondition,
  podReadyString,
  podRequestsMilli,
  podRestartsString,
  podStatusString,
} from '../../src/kube/pod.ts';

/** A container status with the fields Kubernetes requires and these tests do not read. */
function status(s: Partial<ContainerStatus> & { name: string }): ContainerStatus {
  return { image: 'x', imageID: '', ready: false, restartCount: 0, ...s };
}

function container(name: string, requests?: Record<string, string>, extra: Record<string, unknown> = {}) {
  return { name, image: 'x', resources: requests ? { requests } : {}, ...extra };
}

describe('readiness', () => {
  test('isPodReady reads the Ready condition', () => {
    const pod: PodLike = { status: { conditions: [{ type: 'Ready', status: 'True' }] } };
    assert.ok(isPodReady(pod));
    assert.equal(podReadyCondition(pod)?.status, 'True');
    assert.ok(!isPodReady({ status: { conditions: [{ type: 'Ready', status: 'False' }] } }));
    assert.ok(!isPodReady({}));
  });

  test('isPodTerminal', () => {
    assert.ok(isPodTerminal({ status: { phase: 'Succeeded' } }));
    assert.ok(isPodTerminal({ status: { phase: 'Failed' } }));
    assert.ok(!isPodTerminal({ status: { phase: 'Running' } }));
  });
});

describe('podRequests (scheduler accounting)', () => {
  test('sums app containers', () => {
    const pod: PodLike = {
      spec: { containers: [container('a', { cpu: '100m', memory: '64Mi' }), container('b', { cpu: '1' })] },
    };
    assert.deepEqual(podRequestsMilli(pod), { cpu: 1100n, memory: 64n * 1024n * 1024n * 1000n });
  });

  test('takes the larger of init peak and app sum, then adds overhead', () => {
    const pod: PodLike = {
      spec: {
        initContainers: [container('init', { cpu: '2', memory: '10Mi' })],
        containers: [container('a', { cpu: '500m', memory: '1Gi' })],
        overhead: { cpu: '250m' },
      },
    };
    const r = podRequestsMilli(pod);
    assert.equal(r.cpu, 2250n);
    assert.equal(r.memory, 1024n * 1024n * 1024n * 1000n);
    assert.equal(podRequestsMilli(pod, { excludeOverhead: true }).cpu, 2000n);
  });

  test('sidecars count for the whole life of the pod and during later init containers', () => {
    const pod: PodLike = {
      spec: {
        initContainers: [
          container('sidecar', { cpu: '1' }, { restartPolicy: 'Always' }),
          container('init', { cpu: '2' }),
        ],
        containers: [container('a', { cpu: '500m' })],
      },
    };
    // app phase: 1 + 0.5; init phase: sidecar 1 + init 2 = 3.
    assert.equal(podRequestsMilli(pod).cpu, 3000n);
  });

  test('pod-level requests override cpu and memory', () => {
    const pod: PodLike = {
      spec: {
        resources: { requests: { cpu: '4' } },
        containers: [container('a', { cpu: '1', 'example.com/dev': '2' })],
      },
    };
    assert.deepEqual(podRequestsMilli(pod), { cpu: 4000n, 'example.com/dev': 2000n });
  });

  test('ignores malformed quantities', () => {
    assert.deepEqual(podRequestsMilli({ spec: { containers: [container('a', { cpu: 'lots' })] } }), {});
  });
});

describe('podQOSClass', () => {
  test('BestEffort without requests or limits', () => {
    assert.equal(podQOSClass({ spec: { containers: [container('a')] } }), 'BestEffort');
  });

  test('Guaranteed when every container has equal cpu and memory limits and requests', () => {
    const res = { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1000m', memory: '1Gi' } };
    assert.equal(podQOSClass({ spec: { containers: [{ name: 'a', resources: res }] } }), 'Guaranteed');
  });

  test('Burstable otherwise', () => {
    assert.equal(podQOSClass({ spec: { containers: [container('a', { cpu: '1' })] } }), 'Burstable');
    const res = { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } };
    assert.equal(podQOSClass({ spec: { containers: [{ name: 'a', resources: res }] } }), 'Burstable');
  });
});

const running = { running: { startedAt: '2025-01-01T00:00:00Z' } };

describe('STATUS / READY / RESTARTS cells', () => {
  const now = new Date('2025-01-01T01:00:00Z');

  test('a new pod is Pending 0/1 with 0 restarts', () => {
    const pod: PodLike = { spec: { containers: [container('a')] }, status: { phase: 'Pending' } };
    assert.equal(podStatusString(pod), 'Pending');
    assert.equal(podReadyString(pod), '0/1');
    assert.equal(podRestartsString(pod, now), '0');
  });

  test('a gated pod prints SchedulingGated', () => {
    const pod: PodLike = {
      spec: { containers: [container('a')] },
      status: {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }],
      },
    };
    assert.equal(podStatusString(pod), 'SchedulingGated');
  });

  test('ContainerCreating comes from the waiting reason', () => {
    const pod: PodLike = {
      spec: { containers: [container('a')] },
      status: {
        phase: 'Pending',
        containerStatuses: [
          status({
            name: 'a',
            ready: false,
            restartCount: 0,
            state: { waiting: { reason: 'ContainerCreating' } },
          }),
        ],
      },
    };
    assert.equal(podStatusString(pod), 'ContainerCreating');
  });

  test('Running with ready containers counted', () => {
    const pod: PodLike = {
      spec: { containers: [container('a'), container('b')] },
      status: {
        phase: 'Running',
        containerStatuses: [
          status({ name: 'a', ready: true, restartCount: 0, state: running }),
          status({ name: 'b', ready: false, restartCount: 0, state: running }),
        ],
      },
    };
    assert.equal(podStatusString(pod), 'Running');
    assert.equal(podReadyString(pod), '1/2');
  });

  test('Completed and Error from terminated reasons, ExitCode without one', () => {
    const done = (terminated: { exitCode: number; reason?: string; signal?: number }): PodLike => ({
      spec: { containers: [container('a')] },
      status: {
        phase: 'Succeeded',
        containerStatuses: [status({ name: 'a', ready: false, restartCount: 0, state: { terminated } })],
      },
    });
    assert.equal(podStatusString(done({ exitCode: 0, reason: 'Completed' })), 'Completed');
    assert.equal(podStatusString(done({ exitCode: 1, reason: 'Error' })), 'Error');
    assert.equal(podStatusString(done({ exitCode: 3 })), 'ExitCode:3');
    assert.equal(podStatusString(done({ exitCode: 0, signal: 9 })), 'Signal:9');
  });

  test('CrashLoopBackOff with restarts and the time of the last one', () => {
    const pod: PodLike = {
      spec: { containers: [container('a')] },
      status: {
        phase: 'Running',
        containerStatuses: [
          status({
            name: 'a',
            ready: false,
            restartCount: 4,
            state: { waiting: { reason: 'CrashLoopBackOff' } },
            lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: '2025-01-01T00:55:00Z' } },
          }),
        ],
      },
    };
    assert.equal(podStatusString(pod), 'CrashLoopBackOff');
    assert.equal(podRestartsString(pod, now), '4 (5m ago)');
  });

  test('init containers: Init:0/2, Init:Error, Init:CrashLoopBackOff', () => {
    const base = {
      spec: { initContainers: [container('i1'), container('i2')], containers: [container('a')] },
    };
    const waiting: PodLike = {
      ...base,
      status: {
        phase: 'Pending',
        initContainerStatuses: [
          status({ name: 'i1', state: { running: {} } }),
          status({ name: 'i2', state: { waiting: { reason: 'PodInitializing' } } }),
        ],
      },
    };
    assert.equal(podStatusString(waiting), 'Init:0/2');
    const second: PodLike = {
      ...base,
      status: {
        phase: 'Pending',
        initContainerStatuses: [
          status({ name: 'i1', state: { terminated: { exitCode: 0, reason: 'Completed' } } }),
          status({ name: 'i2', state: { running: {} } }),
        ],
      },
    };
    assert.equal(podStatusString(second), 'Init:1/2');
    const failed: PodLike = {
      ...base,
      status: {
        phase: 'Pending',
        initContainerStatuses: [
          status({ name: 'i1', state: { terminated: { exitCode: 1, reason: 'Error' } } }),
        ],
      },
    };
    assert.equal(podStatusString(failed), 'Init:Error');
    const crash: PodLike = {
      ...base,
      status: {
        phase: 'Pending',
        initContainerStatuses: [
          status({ name: 'i1', restartCount: 2, state: { waiting: { reason: 'CrashLoopBackOff' } } }),
        ],
      },
    };
    assert.equal(podStatusString(crash), 'Init:CrashLoopBackOff');
    assert.equal(podDisplay(crash).restarts, 2);
  });

  test('started sidecars count towards READY and do not hold init', () => {
    const pod: PodLike = {
      spec: {
        initContainers: [container('side', undefined, { restartPolicy: 'Always' })],
        containers: [container('a')],
      },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Initialized', status: 'True' }],
        initContainerStatuses: [status({ name: 'side', started: true, ready: true, state: running })],
        containerStatuses: [status({ name: 'a', ready: true, state: running })],
      },
    };
    assert.equal(podReadyString(pod), '2/2');
    assert.equal(podStatusString(pod), 'Running');
  });

  test('Completed with a still-running container reads Running or NotReady', () => {
    const pod = (ready: boolean): PodLike => ({
      spec: { containers: [container('a'), container('b')] },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
        containerStatuses: [
          status({ name: 'a', ready: true, state: running }),
          status({ name: 'b', ready: false, state: { terminated: { exitCode: 0, reason: 'Completed' } } }),
        ],
      },
    });
    assert.equal(podStatusString(pod(true)), 'Running');
    assert.equal(podStatusString(pod(false)), 'NotReady');
  });

  test('Terminating while deleting, Unknown on a lost node, phase kept once terminal', () => {
    const deleting: PodLike = {
      metadata: { deletionTimestamp: '2025-01-01T00:00:00Z' },
      spec: { containers: [container('a')] },
      status: { phase: 'Running' },
    };
    assert.equal(podStatusString(deleting), 'Terminating');
    assert.equal(
      podStatusString({ ...deleting, status: { phase: 'Running', reason: 'NodeLost' } }),
      'Unknown',
    );
    assert.equal(podStatusString({ ...deleting, status: { phase: 'Succeeded' } }), 'Succeeded');
  });

  test('status.reason wins over the phase (Evicted)', () => {
    assert.equal(
      podStatusString({
        spec: { containers: [container('a')] },
        status: { phase: 'Failed', reason: 'Evicted' },
      }),
      'Evicted',
    );
  });
});
