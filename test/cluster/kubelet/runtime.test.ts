import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  Anchors,
  advanceContainers,
  backoffMs,
  containerBehaviour,
  nextContainerChange,
  sleepDurationMs,
  stopAllContainers,
} from '../../../src/cluster/kubelet/runtime.ts';
import type { ContainerStatus, Pod } from '../../../src/kube/builtin.ts';
import { pod as buildPod } from '../../support/objects.ts';

const T0 = Date.parse('2026-05-01T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

function runningPod(opts: {
  container?: Record<string, unknown>;
  annotations?: Record<string, string>;
  restartPolicy?: string;
  status?: Record<string, unknown>;
  ownerKind?: string;
}): Pod {
  return buildPod<Pod>('p', {
    namespace: 'ns',
    uid: 'uid-1',
    annotations: opts.annotations ?? {},
    ownerReferences: opts.ownerKind
      ? [{ apiVersion: 'batch/v1', kind: opts.ownerKind, name: 'owner', uid: 'owner-uid' }]
      : [],
    spec: {
      restartPolicy: opts.restartPolicy ?? 'Always',
      containers: [{ name: 'c', image: 'img', ...opts.container }],
    },
    status: {
      phase: 'Running',
      // Consistent with the container: ready only when the status says so.
      conditions: ['ContainersReady', 'Ready'].map((type) => ({
        type,
        status: opts.status?.ready === true ? 'True' : 'False',
        lastTransitionTime: iso(T0),
      })),
      containerStatuses: [
        {
          name: 'c',
          image: 'img',
          ready: false,
          started: true,
          restartCount: 0,
          state: { running: { startedAt: iso(T0) } },
          ...opts.status,
        },
      ],
    },
  });
}

const env = (now: number, timeScale = 1) => ({ now, timeScale, anchors: new Anchors() });
type CS = {
  ready: boolean;
  restartCount: number;
  state: Record<string, Record<string, unknown>>;
  lastState?: Record<string, Record<string, unknown>>;
};
const cs = (status: Record<string, unknown> | undefined) => ((status?.containerStatuses ?? []) as CS[])[0]!;
const cond = (status: Record<string, unknown> | undefined, type: string) =>
  ((status?.conditions ?? []) as { type: string; status: string; reason?: string }[]).find(
    (c) => c.type === type,
  );

describe('sleep commands', () => {
  const cases: [unknown, unknown, number | undefined][] = [
    [['sleep', '10'], undefined, 10_000],
    [['/bin/sleep', '10'], undefined, 10_000],
    [['sleep'], ['1m'], 60_000],
    [['sleep', '1.5'], undefined, 1500],
    [['sleep', '1m', '30'], undefined, 90_000],
    [['sh', '-c', 'sleep 10'], undefined, 10_000],
    [['/bin/bash', '-c', 'exec sleep 2s'], undefined, 2000],
    [['sh'], ['-c', 'sleep 3'], 3000],
    [['sleep', 'infinity'], undefined, undefined],
    [['sh', '-c', 'sleep 10 && echo done'], undefined, undefined],
    [['sh', '-c', 'sleep $(T)'], undefined, undefined],
    [['nginx', '-g', 'daemon off;'], undefined, undefined],
    [['sleep', 'ten'], undefined, undefined],
    [undefined, undefined, undefined],
  ];
  for (const [command, args, want] of cases) {
    test(`${JSON.stringify(command)} ${JSON.stringify(args ?? [])} -> ${want}`, () => {
      assert.equal(sleepDurationMs(command, args), want);
    });
  }
});

describe('container behaviour', () => {
  test('annotations: pod-wide, per container, and exit codes', () => {
    const pod = buildPod<Pod>('p', {
      annotations: {
        'troupe.dev/run-duration': '30s',
        'troupe.dev/exit-code': '4',
        'troupe.dev/run-duration.sidecar': '1h',
        'troupe.dev/exit-code.sidecar': '0',
      },
    });
    assert.deepEqual(
      [containerBehaviour(pod, { name: 'main' }), containerBehaviour(pod, { name: 'sidecar' })].map((b) => [
        b.runMs,
        b.exitCode,
      ]),
      [
        [30_000, 4],
        [3_600_000, 0],
      ],
    );
  });

  test('the annotation wins over a sleep command; a bad duration means no run hint', () => {
    const pod = (d: string) => buildPod<Pod>('p', { annotations: { 'troupe.dev/run-duration': d } });
    assert.equal(containerBehaviour(pod('2s'), { name: 'c', command: ['sleep', '9'] }).runMs, 2000);
    assert.equal(containerBehaviour(pod('soon'), { name: 'c' }).runMs, undefined);
  });

  test('probe delays: initialDelaySeconds plus (successThreshold - 1) periods, startup first', () => {
    const b = containerBehaviour(buildPod<Pod>('p'), {
      name: 'c',
      readinessProbe: { initialDelaySeconds: 5, periodSeconds: 5, successThreshold: 2 },
      startupProbe: { initialDelaySeconds: 3 },
    });
    assert.equal(b.readinessMs, 10_000);
    assert.equal(b.startupMs, 3000);
    assert.equal(containerBehaviour(buildPod<Pod>('p'), { name: 'c' }).readinessMs, undefined);
  });

  test('crash-loop back-off: immediate, then 10 s doubling to 5 min; reset after a 10 min run', () => {
    assert.deepEqual(
      [0, 1, 2, 3, 5, 6, 9].map((n) => backoffMs(n, 1000)),
      [0, 10_000, 20_000, 40_000, 160_000, 300_000, 300_000],
    );
    assert.equal(backoffMs(4, 600_000), 0);
  });
});

describe('advancing containers', () => {
  const probed = { readinessProbe: { httpGet: { path: '/', port: 80 }, initialDelaySeconds: 5 } };

  test('a readiness probe passes initialDelaySeconds after the start, divided by the time scale', () => {
    const pod = runningPod({ container: probed });
    assert.equal(nextContainerChange(pod, env(T0)), T0 + 5000);
    assert.equal(nextContainerChange(pod, env(T0, 10)), T0 + 500);
    assert.equal(advanceContainers(pod, env(T0 + 4999)), undefined);
    const s = advanceContainers(pod, env(T0 + 5000))?.status;
    assert.equal(cs(s).ready, true);
    assert.equal(cond(s, 'Ready')?.status, 'True');
    assert.equal(cond(s, 'ContainersReady')?.status, 'True');
    assert.equal(s?.phase, undefined);
  });

  test('remembered start times beat the second-precision timestamps', () => {
    const pod = runningPod({ container: probed });
    const e = env(T0);
    e.anchors.record('uid-1', 'c', 0, 'started', T0 + 700);
    assert.equal(nextContainerChange(pod, e), T0 + 5700);
  });

  test('Always: the first exit restarts at once, the next one backs off 10 s', () => {
    const pod = runningPod({
      annotations: { 'troupe.dev/run-duration': '2s', 'troupe.dev/exit-code': '1' },
      status: { ready: true },
    });
    assert.equal(nextContainerChange(pod, env(T0)), T0 + 2000);
    const first = cs(advanceContainers(pod, env(T0 + 2000))?.status);
    assert.equal(first.restartCount, 1);
    assert.ok(first.state.running);
    assert.equal(first.lastState?.terminated?.exitCode, 1);
    assert.equal(first.lastState?.terminated?.reason, 'Error');

    const again = runningPod({
      annotations: { 'troupe.dev/run-duration': '2s', 'troupe.dev/exit-code': '1' },
      status: { restartCount: 1, state: { running: { startedAt: iso(T0 + 2000) } } },
    });
    const e = env(T0 + 4000);
    const s = advanceContainers(again, e)?.status;
    const waiting = cs(s);
    assert.equal(waiting.state.waiting?.reason, 'CrashLoopBackOff');
    assert.equal(waiting.restartCount, 1);
    assert.equal(s?.phase, undefined);
    const backingOff = {
      ...again,
      status: { ...again.status, containerStatuses: s?.containerStatuses as ContainerStatus[] },
    };
    assert.equal(nextContainerChange(backingOff, e), T0 + 4000 + 10_000);
    const restarted = cs(advanceContainers(backingOff, { ...e, now: T0 + 14_000 })?.status);
    assert.equal(restarted.restartCount, 2);
    assert.ok(restarted.state.running);
  });

  test('Never and OnFailure with exit 0: the pod finishes; the phase follows the exit codes', () => {
    for (const [policy, code, phase] of [
      ['Never', '0', 'Succeeded'],
      ['Never', '2', 'Failed'],
      ['OnFailure', '0', 'Succeeded'],
    ] as const) {
      const pod = runningPod({
        restartPolicy: policy,
        annotations: { 'troupe.dev/run-duration': '1s', 'troupe.dev/exit-code': code },
      });
      const s = advanceContainers(pod, env(T0 + 1000))?.status;
      assert.equal(s?.phase, phase, `${policy} exit ${code}`);
      assert.equal(cs(s).state.terminated?.exitCode, Number(code));
      assert.equal(cond(s, 'Ready')?.reason, 'PodCompleted');
    }
  });

  test('pod conditions that disagree with the containers are put right at once', () => {
    // Ready=False written by someone else (the node lifecycle controller) while the containers run ready.
    const pod = runningPod({ status: { ready: true } });
    (pod.status as { conditions: unknown[] }).conditions = [
      { type: 'ContainersReady', status: 'True' },
      { type: 'Ready', status: 'False', reason: 'NodeNotReady' },
    ];
    assert.equal(nextContainerChange(pod, env(T0 + 60_000)), T0 + 60_000);
    const s = advanceContainers(pod, env(T0 + 60_000))?.status;
    assert.equal(cond(s, 'Ready')?.status, 'True');
    assert.equal(cs(s).ready, true);
  });

  test('a server never changes by itself', () => {
    const pod = runningPod({ status: { ready: true } });
    assert.equal(nextContainerChange(pod, env(T0)), undefined);
    assert.equal(advanceContainers(pod, env(T0 + 3_600_000)), undefined);
  });
});

describe('stopping containers', () => {
  test('killed servers exit 0, killed work exits 137; completing exits 0', () => {
    const server = stopAllContainers(runningPod({}), 'kill', env(T0)).status;
    assert.equal(server.phase, 'Succeeded');
    const work = stopAllContainers(
      runningPod({ annotations: { 'troupe.dev/run-duration': '1h' } }),
      'kill',
      env(T0),
    );
    assert.equal(work.status.phase, 'Failed');
    assert.equal(cs(work.status).state.terminated?.exitCode, 137);
    const job = stopAllContainers(runningPod({ ownerKind: 'Job' }), 'kill', env(T0)).status;
    assert.equal(cs(job).state.terminated?.exitCode, 137);
    const done = stopAllContainers(runningPod({ ownerKind: 'Job' }), 'complete', env(T0)).status;
    assert.equal(done.phase, 'Succeeded');
    assert.equal(cs(done).state.terminated?.reason, 'Completed');
    assert.equal(cs(done).state.terminated?.startedAt, iso(T0).replace('.000', ''));
  });
});
