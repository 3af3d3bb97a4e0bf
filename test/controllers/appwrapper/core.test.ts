import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AppWrapper } from '../../../src/apis/workload.codeflare.dev/v1beta2.ts';
import { resolveConfig } from '../../../src/controllers/appwrapper/config.ts';
import {
  afterDeploy,
  type CoreInput,
  type Decision,
  decide,
} from '../../../src/controllers/appwrapper/core.ts';
import {
  appWrapper,
  at,
  component,
  cond,
  condOf,
  iso,
  jobTemplate,
  pod,
  podTemplate,
  runningStatus,
} from './fixtures.ts';

const config = resolveConfig();

function run(aw: AppWrapper, ms: number, extra: Partial<CoreInput> = {}): Decision {
  return decide({ aw, now: at(ms), config, ...extra });
}

/** The AppWrapper after the decision's writes (status and metadata) landed. */
function applied(aw: AppWrapper, d: Decision): AppWrapper {
  const next = structuredClone(aw);
  if (d.update?.finalizers) next.metadata.finalizers = d.update.finalizers;
  if (d.update?.labels) next.metadata.labels = d.update.labels;
  if (d.update?.suspend !== undefined) next.spec.suspend = d.update.suspend;
  if (d.status) next.status = structuredClone(d.status);
  return next;
}

describe('phase Empty', () => {
  test('without the webhook: finalizer, default queue and suspend are applied, pod sets inferred', () => {
    const aw = appWrapper({ finalizer: false, labels: {} });
    const d = decide({
      aw,
      now: at(0),
      config: resolveConfig({ defaultQueueName: 'user-queue' }),
      namespaceLabels: { 'kubernetes.io/metadata.name': 'default' },
    });
    assert.deepEqual(d.update, {
      finalizers: ['workload.codeflare.dev/finalizer'],
      labels: { 'kueue.x-k8s.io/queue-name': 'user-queue' },
      suspend: true,
    });
    assert.equal(d.status?.phase, 'Suspended');
    assert.deepEqual(d.status?.componentStatus, [
      { name: '', kind: '', apiVersion: '', podSets: [{ replicas: 1, path: 'template' }] },
    ]);
  });

  test('no queue name in an excluded namespace: not suspended', () => {
    const aw = appWrapper({ finalizer: false, labels: {} });
    const d = decide({
      aw,
      now: at(0),
      config,
      namespaceLabels: { 'kubernetes.io/metadata.name': 'kube-system' },
    });
    assert.equal(d.update?.suspend, undefined);
  });

  test('with the webhook (finalizer present): only the status changes', () => {
    const d = run(appWrapper({ suspend: true }), 0);
    assert.equal(d.update, undefined);
    assert.equal(d.status?.phase, 'Suspended');
  });

  test('a template whose pod sets cannot be inferred fails with the reason', () => {
    const bad = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'x' },
      spec: { template: { spec: 'nope' } },
    };
    const d = run(appWrapper({ components: [{ template: bad }] }), 0);
    assert.equal(d.status?.phase, 'Failed');
    const u = condOf(d.status, 'Unhealthy');
    assert.equal(u?.status, 'True');
    assert.equal(u?.reason, 'CreateFailed');
    assert.match(u?.message ?? '', /does not contain a spec|not parseable/);
  });
});

describe('phases Suspended and Resuming', () => {
  const suspended = () =>
    appWrapper({
      suspend: true,
      status: {
        phase: 'Suspended',
        componentStatus: [
          { name: '', kind: '', apiVersion: '', podSets: [{ replicas: 1, path: 'template' }] },
        ],
      },
    });

  test('stays Suspended while spec.suspend is true', () => {
    const d = run(suspended(), 0);
    assert.equal(d.status, undefined);
    assert.equal(d.deploy, undefined);
  });

  test('unsuspending sets the four conditions and moves to Resuming', () => {
    const aw = suspended();
    aw.spec.suspend = false;
    const d = run(aw, 0);
    assert.equal(d.status?.phase, 'Resuming');
    assert.deepEqual(
      d.status?.conditions?.map((c) => [c.type, c.status, c.reason, c.message]),
      [
        ['QuotaReserved', 'True', 'Resuming', 'Suspend is false'],
        ['ResourcesDeployed', 'True', 'Resuming', 'Suspend is false'],
        ['PodsReady', 'False', 'Resuming', 'Suspend is false'],
        ['Unhealthy', 'False', 'Resuming', 'Suspend is false'],
      ],
    );
  });

  test('Resuming renders the components and marks their creation as initiated', () => {
    const aw = suspended();
    aw.spec.suspend = false;
    aw.spec.components[0]!.podSetInfos = [
      {
        labels: { flavor: 'a' },
        nodeSelector: { zone: 'z1' },
        tolerations: [{ key: 't', operator: 'Exists' }],
      },
    ];
    const resuming = applied(aw, run(aw, 0));
    const d = run(resuming, 1000);
    assert.equal(d.deploy?.length, 1);
    const obj = d.deploy![0]!.obj as unknown as {
      metadata: Record<string, unknown>;
      spec: Record<string, unknown>;
    };
    assert.equal(obj.metadata.namespace, 'default');
    assert.deepEqual(obj.metadata.labels, { flavor: 'a', 'workload.codeflare.dev/appwrapper': 'sample' });
    assert.deepEqual(obj.spec.nodeSelector, { zone: 'z1' });
    assert.deepEqual(obj.spec.tolerations, [{ key: 't', operator: 'Exists' }]);
    assert.deepEqual(obj.metadata.ownerReferences, [
      {
        apiVersion: 'workload.codeflare.dev/v1beta2',
        kind: 'AppWrapper',
        name: 'sample',
        uid: 'aw-uid-1',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    const cs = d.status?.componentStatus?.[0];
    assert.equal(cs?.name, 'sample');
    assert.equal(cs?.kind, 'Pod');
    assert.equal(condOf(cs, 'ResourcesDeployed')?.status, 'Unknown');
    assert.equal(condOf(cs, 'ResourcesDeployed')?.reason, 'ComponentCreationInitiated');
    assert.equal(d.status?.phase, 'Resuming');
  });

  test('Resuming with suspend set again aborts to Suspending', () => {
    const aw = suspended();
    aw.spec.suspend = false;
    const resuming = applied(aw, run(aw, 0));
    resuming.spec.suspend = true;
    assert.equal(run(resuming, 10).status?.phase, 'Suspending');
  });

  test('a PodSetInfo that conflicts with the template fails the AppWrapper (fatal, no retry)', () => {
    const t = podTemplate();
    (t.spec as Record<string, unknown>).nodeSelector = { zone: 'mine' };
    const aw = appWrapper({
      components: [{ template: t, podSetInfos: [{ nodeSelector: { zone: 'kueue' } }] }],
    });
    aw.status = { phase: 'Resuming', conditions: [cond('ResourcesDeployed', 'True', 'Resuming')] };
    const d = run(aw, 0);
    assert.equal(d.deploy, undefined);
    assert.equal(d.status?.phase, 'Failed');
    assert.match(
      condOf(d.status, 'Unhealthy')?.message ?? '',
      /conflict for nodeSelector: conflict for key=zone, value1=mine, value2=kueue/,
    );
    assert.deepEqual(
      d.events.map((e) => e.reason),
      ['Unhealthy'],
    );
  });

  test('label and annotation conflicts are detected too', () => {
    const t = podTemplate();
    (t.metadata as Record<string, unknown>).labels = { a: '1' };
    (t.metadata as Record<string, unknown>).annotations = { b: '1' };
    for (const info of [{ labels: { a: '2' } }, { annotations: { b: '2' } }]) {
      const aw = appWrapper({ components: [{ template: t, podSetInfos: [info] }] });
      aw.status = { phase: 'Resuming', conditions: [cond('ResourcesDeployed', 'True', 'Resuming')] };
      const msg = condOf(run(aw, 0).status, 'Unhealthy')?.message ?? '';
      assert.match(msg, info.labels ? /conflict for labels/ : /conflict for annotations/);
    }
  });
});

describe('after deploying', () => {
  function resuming(): AppWrapper {
    const aw = appWrapper({ status: { phase: 'Suspended' } });
    const r = applied(aw, run(aw, 0));
    return applied(r, run(r, 0));
  }

  test('all created: Running, component deployed under its real name', () => {
    const aw = resuming();
    const d = afterDeploy({ aw, now: at(1000), config }, [{ index: 0, outcome: 'created', name: 'sample' }]);
    assert.equal(d.status?.phase, 'Running');
    assert.equal(
      condOf(d.status?.componentStatus?.[0], 'ResourcesDeployed')?.reason,
      'ComponentCreatedSuccessfully',
    );
  });

  test('an existing object we control counts as created', () => {
    const d = afterDeploy({ aw: resuming(), now: at(1000), config }, [
      { index: 0, outcome: 'exists', controlledByUs: true },
    ]);
    assert.equal(d.status?.phase, 'Running');
  });

  test('an existing object someone else controls: Failed, and never counted as ours', () => {
    const d = afterDeploy({ aw: resuming(), now: at(1000), config }, [
      { index: 0, outcome: 'exists', controlledByUs: false },
    ]);
    assert.equal(d.status?.phase, 'Failed');
    assert.equal(condOf(d.status?.componentStatus?.[0], 'ResourcesDeployed')?.status, 'False');
    assert.match(condOf(d.status, 'Unhealthy')?.message ?? '', /exists, but is not controlled by appwrapper/);
  });

  test('a transient error is retried within the admission grace period, then the AppWrapper resets', () => {
    const aw = resuming();
    const fail = [{ index: 0, outcome: 'failed' as const, message: 'etcd timeout', fatal: false }];
    const early = afterDeploy({ aw, now: at(30_000), config }, fail);
    assert.equal(early.status?.phase, 'Resuming');
    assert.equal(early.requeueAfterMs, 1000);
    assert.equal(
      condOf(early.status?.componentStatus?.[0], 'ResourcesDeployed')?.reason,
      'ComponentCreationErrored',
    );
    const late = afterDeploy({ aw, now: at(61_000), config }, fail);
    assert.equal(late.status?.phase, 'Resetting');
    assert.equal(late.status?.resettingCount, 1);
    assert.equal(condOf(late.status, 'Unhealthy')?.message, 'error creating components: etcd timeout');
  });

  test('a fatal error (no such kind, invalid object) fails at once', () => {
    const d = afterDeploy({ aw: resuming(), now: at(1000), config }, [
      {
        index: 0,
        outcome: 'failed',
        message: 'no resource served for kind PyTorchJob in kubeflow.org/v1',
        fatal: true,
      },
    ]);
    assert.equal(d.status?.phase, 'Failed');
    assert.equal(condOf(d.status, 'Unhealthy')?.reason, 'CreateFailed');
  });
});

describe('phase Running', () => {
  const running = (opts: Parameters<typeof runningStatus>[0] = {}, annotations?: Record<string, string>) =>
    appWrapper({ status: runningStatus(opts), annotations });

  test('suspend set by Kueue: Suspending, with upstream\'s "externally suspended" event', () => {
    const aw = running();
    aw.spec.suspend = true;
    const d = run(aw, 10);
    assert.equal(d.status?.phase, 'Suspending');
    assert.deepEqual(d.events, [
      { type: 'Normal', reason: 'Suspending', message: 'Externally suspended while in the Running phase' },
    ]);
  });

  test('suspended while Resuming or Resetting: the event names that phase', () => {
    for (const phase of ['Resuming', 'Resetting'] as const) {
      const aw = running();
      aw.status!.phase = phase;
      aw.spec.suspend = true;
      const d = run(aw, 10);
      assert.equal(d.status?.phase, 'Suspending', phase);
      assert.deepEqual(
        d.events.map((e) => e.message),
        [`Externally suspended while in the ${phase} phase`],
      );
    }
  });

  test('a component deleted behind our back: Failed with MissingComponent, no retry', () => {
    const d = run(running(), 10_000, { components: [undefined], pods: [] });
    assert.equal(d.status?.phase, 'Failed');
    assert.equal(condOf(d.status, 'Unhealthy')?.reason, 'MissingComponent');
    assert.equal(
      condOf(d.status, 'Unhealthy')?.message,
      'Only found 0 deployed components, but was expecting 1',
    );
  });

  test('a namesake component that is not ours does not count as deployed', () => {
    const d = run(running(), 10_000, { components: [component('Pod', { owner: 'someone-else' })], pods: [] });
    assert.equal(condOf(d.status, 'Unhealthy')?.reason, 'MissingComponent');
  });

  test('a failed batch/v1 Job: reset at once (no grace period)', () => {
    const aw = appWrapper({
      components: [{ template: jobTemplate() }],
      status: runningStatus({ kind: 'Job' }),
    });
    const d = run(aw, 10_000, { components: [component('Job', { failed: true })], pods: [] });
    assert.equal(d.status?.phase, 'Resetting');
    assert.equal(d.status?.resettingCount, 1);
    assert.equal(condOf(d.status, 'Unhealthy')?.message, 'Found 1 failed components');
  });

  test('every expected pod succeeded: Succeeded, quota released, resources kept', () => {
    const d = run(running(), 10_000, { components: [component('Pod')], pods: [pod('sample', 'Succeeded')] });
    assert.equal(d.status?.phase, 'Succeeded');
    assert.equal(condOf(d.status, 'QuotaReserved')?.status, 'False');
    assert.equal(
      condOf(d.status, 'QuotaReserved')?.message,
      '1 pods succeeded and no running, pending, or failed pods',
    );
    assert.equal(condOf(d.status, 'ResourcesDeployed')?.status, 'True');
  });

  test('all pods running: PodsReady, checked again in a minute', () => {
    const d = run(running(), 10_000, { components: [component('Pod')], pods: [pod('sample', 'Running')] });
    assert.equal(condOf(d.status, 'PodsReady')?.status, 'True');
    assert.equal(condOf(d.status, 'PodsReady')?.message, '1 pods running; 0 pods succeeded');
    assert.equal(d.requeueAfterMs, 60_000);
  });

  test('a terminating running pod does not count as running', () => {
    const d = run(running(), 10_000, {
      components: [component('Pod')],
      pods: [pod('sample', 'Running', { deleting: true })],
    });
    assert.notEqual(condOf(d.status, 'PodsReady')?.status, 'True');
  });

  test('pods still pending: warmup grace period, then a reset', () => {
    const inputs = { components: [component('Pod')], pods: [pod('sample', 'Pending')] };
    const early = run(running(), 4 * 60_000, inputs);
    assert.equal(early.status, undefined);
    assert.equal(early.requeueAfterMs, 5000);
    const late = run(running(), 5 * 60_000 + 1000, inputs);
    assert.equal(late.status?.phase, 'Resetting');
    assert.equal(condOf(late.status, 'Unhealthy')?.reason, 'InsufficientPodsReady');
    assert.equal(
      condOf(late.status, 'Unhealthy')?.message,
      '1 pods pending; 0 pods running; 0 pods succeeded',
    );
  });

  test('fewer pods than expected: only the admission grace period applies', () => {
    const inputs = { components: [component('Pod')], pods: [] };
    assert.equal(run(running(), 59_000, inputs).status?.phase, undefined);
    assert.equal(run(running(), 59_000, inputs).requeueAfterMs, 1000);
    assert.equal(run(running(), 61_000, inputs).status?.phase, 'Resetting');
  });

  test('a failed pod: Unhealthy FoundFailedPods, reset after the failure grace period', () => {
    const inputs = { components: [component('Pod')], pods: [pod('sample', 'Failed', { exitCode: 1 })] };
    const first = run(running(), 10_000, inputs);
    assert.equal(condOf(first.status, 'Unhealthy')?.reason, 'FoundFailedPods');
    assert.equal(first.status?.phase, 'Running');
    assert.equal(first.requeueAfterMs, 60_000);
    const aw = applied(running(), first);
    const mid = run(aw, 40_000, inputs);
    assert.equal(mid.status, undefined);
    assert.equal(mid.requeueAfterMs, 30_000);
    const last = run(aw, 71_000, inputs);
    assert.equal(last.status?.phase, 'Resetting');
    assert.equal(last.status?.resettingCount, 1);
    assert.deepEqual(last.events, [
      { type: 'Normal', reason: 'Unhealthy', message: 'FoundFailedPods: 1 failed pods' },
    ]);
  });

  test('the failure grace period comes from the annotation, capped by the ceiling', () => {
    const inputs = { components: [component('Pod')], pods: [pod('sample', 'Failed', { exitCode: 1 })] };
    const aw = applied(
      running({}, { 'workload.codeflare.dev.appwrapper/failureGracePeriodDuration': '10s' }),
      run(running({}, { 'workload.codeflare.dev.appwrapper/failureGracePeriodDuration': '10s' }), 0, inputs),
    );
    assert.equal(run(aw, 11_000, inputs).status?.phase, 'Resetting');
    const capped = resolveConfig({
      faultTolerance: {
        gracePeriodCeilingMs: 60_000,
        failureGracePeriodMs: 5_000,
        admissionGracePeriodMs: 5_000,
        warmupGracePeriodMs: 5_000,
        retryPausePeriodMs: 5_000,
        forcefulDeletionGracePeriodMs: 5_000,
      },
    });
    const big = running({}, { 'workload.codeflare.dev.appwrapper/failureGracePeriodDuration': '100h' });
    const d = decide({ aw: big, now: at(0), config: capped, ...inputs });
    assert.equal(d.requeueAfterMs, 60_000);
  });

  test('the retry limit turns the next failure into Failed', () => {
    const inputs = { components: [component('Pod')], pods: [pod('sample', 'Failed', { exitCode: 1 })] };
    const aw = applied(running({ resettingCount: 3 }), run(running({ resettingCount: 3 }), 0, inputs));
    assert.equal(run(aw, 61_000, inputs).status?.phase, 'Failed');
    const limited = running({ resettingCount: 1 }, { 'workload.codeflare.dev.appwrapper/retryLimit': '1' });
    const aw2 = applied(limited, run(limited, 0, inputs));
    assert.equal(run(aw2, 61_000, inputs).status?.phase, 'Failed');
  });

  test('a terminal exit code fails without retry', () => {
    const ann = { 'workload.codeflare.dev.appwrapper/terminalExitCodes': '3,10' };
    const inputs = { components: [component('Pod')], pods: [pod('sample', 'Failed', { exitCode: 10 })] };
    const aw = applied(running({}, ann), run(running({}, ann), 0, inputs));
    assert.equal(run(aw, 61_000, inputs).status?.phase, 'Failed');
    const other = { components: [component('Pod')], pods: [pod('sample', 'Failed', { exitCode: 1 })] };
    assert.equal(run(aw, 61_000, other).status?.phase, 'Resetting');
  });

  test('with retryable exit codes, any other non-zero code is terminal', () => {
    const ann = { 'workload.codeflare.dev.appwrapper/retryableExitCodes': '137' };
    const aw = applied(
      running({}, ann),
      run(running({}, ann), 0, {
        components: [component('Pod')],
        pods: [pod('sample', 'Failed', { exitCode: 1 })],
      }),
    );
    assert.equal(
      run(aw, 61_000, { components: [component('Pod')], pods: [pod('sample', 'Failed', { exitCode: 1 })] })
        .status?.phase,
      'Failed',
    );
    assert.equal(
      run(aw, 61_000, { components: [component('Pod')], pods: [pod('sample', 'Failed', { exitCode: 137 })] })
        .status?.phase,
      'Resetting',
    );
  });

  test('Autopilot NoExecute on a pod’s node: Resetting with AutopilotNoExecute, resettingCount kept', () => {
    // A GPU pod running on gpu-1, which Autopilot labelled for NoExecute (EVICT).
    const gpuPod = () => {
      const p = pod('sample', 'Running');
      p.spec = {
        ...p.spec,
        nodeName: 'gpu-1',
        containers: [{ name: 'c', resources: { requests: { 'nvidia.com/gpu': '1' } } }],
      } as typeof p.spec;
      return p;
    };
    const noExecuteNodes = new Map([['gpu-1', new Set(['nvidia.com/gpu'])]]);
    const inputs = { components: [component('Pod')], pods: [gpuPod()], noExecuteNodes };
    const d = run(running({ resettingCount: 2 }), 10_000, inputs);
    assert.equal(d.status?.phase, 'Resetting');
    assert.equal(condOf(d.status, 'Unhealthy')?.reason, 'AutopilotNoExecute');
    assert.equal(
      condOf(d.status, 'Unhealthy')?.message,
      'Workload contains pods using NoExecute resources on Nodes: map[gpu-1:{}]',
    );
    // Upstream's resetOrFail(…, retryIncrement 0): a migration does not spend a retry.
    assert.equal(d.status?.resettingCount, 2);
    // From a count of 0 it stays 0 (which the controller omits, as Go's omitempty does).
    assert.equal(run(running(), 10_000, inputs).status?.resettingCount ?? 0, 0);
    // A failure reset from the same count does spend one.
    const failed = { components: [component('Pod')], pods: [pod('sample', 'Failed', { exitCode: 1 })] };
    const aw = applied(running({ resettingCount: 2 }), run(running({ resettingCount: 2 }), 0, failed));
    assert.equal(run(aw, 61_000, failed).status?.resettingCount, 3);
    // At the retry limit (3), upstream fails rather than resets, Autopilot or not.
    assert.equal(run(running({ resettingCount: 3 }), 10_000, inputs).status?.phase, 'Failed');
  });

  test('a malformed annotation is reported and the default used', () => {
    const d = run(
      running({}, { 'workload.codeflare.dev.appwrapper/warmupGracePeriodDuration': 'five minutes' }),
      0,
      {
        components: [component('Pod')],
        pods: [],
      },
    );
    assert.deepEqual(d.problems, [
      { annotation: 'workload.codeflare.dev.appwrapper/warmupGracePeriodDuration', value: 'five minutes' },
    ]);
  });
});

describe('deleting components (Resetting, Suspending, Failed, Succeeded, deletion)', () => {
  test('Resetting: delete, wait for components and pods, pause, then redeploy', () => {
    const aw = appWrapper({ status: { ...runningStatus(), phase: 'Resetting', resettingCount: 1 } });
    condOf(aw.status, 'Unhealthy')!.status = 'True';
    condOf(aw.status, 'Unhealthy')!.lastTransitionTime = iso(0);
    const d1 = run(aw, 1000, { components: [component('Pod')], pods: [pod('sample', 'Failed')] });
    assert.deepEqual(d1.deletes, [
      {
        apiVersion: 'v1',
        kind: 'Pod',
        name: 'sample',
        namespace: 'default',
        uid: 'uid-component-Pod',
        propagationPolicy: 'Background',
        componentIndex: 0,
      },
    ]);
    assert.equal(condOf(d1.status, 'DeletingResources')?.status, 'True');
    assert.equal(d1.requeueAfterMs, 5000);
    const aw2 = applied(aw, d1);
    // Gone: the component is marked deleted and the pause starts counting from Unhealthy.
    const d2 = run(aw2, 2000, { components: [undefined], pods: [] });
    assert.equal(condOf(d2.status, 'ResourcesDeployed')?.status, 'False');
    assert.equal(condOf(d2.status, 'ResourcesDeployed')?.reason, 'Resetting');
    assert.equal(condOf(d2.status, 'DeletingResources')?.reason, 'DeletionComplete');
    assert.equal(condOf(d2.status?.componentStatus?.[0], 'ResourcesDeployed')?.reason, 'CompononetDeleted');
    assert.equal(d2.status?.phase, 'Resetting');
    assert.equal(d2.requeueAfterMs, 88_000);
    const aw3 = applied(aw2, d2);
    const d3 = run(aw3, 90_000, { components: [undefined], pods: [] });
    assert.equal(d3.status?.phase, 'Resuming');
    assert.equal(condOf(d3.status, 'ResourcesDeployed')?.message, 'Reset complete; resuming');
    // Redeploying recreates the deleted component.
    const d4 = run(applied(aw3, d3), 91_000);
    assert.equal(d4.deploy?.length, 1);
  });

  test('deletion turns forceful after the grace period: pods first, then components', () => {
    const aw = appWrapper({ status: { ...runningStatus(), phase: 'Suspending' } });
    aw.spec.suspend = true;
    const d1 = run(aw, 0, {
      components: [component('Pod', { deleting: true })],
      pods: [pod('sample', 'Running', { deleting: true })],
    });
    assert.deepEqual(d1.deletes, []);
    const aw2 = applied(aw, d1);
    const d2 = run(aw2, 10 * 60_000 + 1000, {
      components: [component('Pod', { deleting: true })],
      pods: [pod('sample', 'Running', { deleting: true })],
    });
    assert.deepEqual(
      d2.deletes.map((x) => [x.kind, x.gracePeriodSeconds]),
      [['Pod', 0]],
    );
    const d3 = run(aw2, 10 * 60_000 + 2000, { components: [component('Pod', { deleting: true })], pods: [] });
    assert.deepEqual(
      d3.deletes.map((x) => [x.kind, x.gracePeriodSeconds, x.componentIndex]),
      [['Pod', 0, 0]],
    );
  });

  test('Suspending ends Suspended with the quota released', () => {
    const aw = appWrapper({ suspend: true, status: { ...runningStatus(), phase: 'Suspending' } });
    condOf(aw.status, 'PodsReady')!.status = 'True';
    const d = run(aw, 1000, { components: [undefined], pods: [] });
    assert.equal(d.status?.phase, 'Suspended');
    assert.deepEqual(
      ['QuotaReserved', 'ResourcesDeployed', 'PodsReady'].map((t) => [
        condOf(d.status, t)?.status,
        condOf(d.status, t)?.reason,
      ]),
      [
        ['False', 'Suspended'],
        ['False', 'Suspended'],
        ['False', 'Suspended'],
      ],
    );
  });

  test('Failed: resources deleted, then the quota released', () => {
    const aw = appWrapper({ status: { ...runningStatus(), phase: 'Failed' } });
    const d1 = run(aw, 1000, { components: [component('Pod')], pods: [] });
    assert.equal(d1.deletes.length, 1);
    const d2 = run(applied(aw, d1), 2000, { components: [undefined], pods: [] });
    assert.equal(condOf(d2.status, 'ResourcesDeployed')?.message, 'Resources deleted for failed AppWrapper');
    assert.equal(condOf(d2.status, 'QuotaReserved')?.status, 'False');
    assert.equal(condOf(d2.status, 'QuotaReserved')?.reason, 'Failed');
  });

  test('Failed with deletionOnFailureGracePeriodDuration: resources kept for debugging, then deleted', () => {
    const ann = { 'workload.codeflare.dev.appwrapper/deletionOnFailureGracePeriodDuration': '2m' };
    const aw = appWrapper({ annotations: ann, status: { ...runningStatus(), phase: 'Failed' } });
    const d1 = run(aw, 0, { components: [component('Pod')], pods: [] });
    assert.equal(d1.deletes.length, 0);
    assert.equal(condOf(d1.status, 'DeletingResources')?.reason, 'DeletionPaused');
    assert.equal(
      condOf(d1.status, 'DeletingResources')?.message,
      'workload.codeflare.dev.appwrapper/deletionOnFailureGracePeriodDuration has value 2m0s',
    );
    assert.equal(d1.requeueAfterMs, 120_000);
    const aw2 = applied(aw, d1);
    const d2 = run(aw2, 121_000, { components: [component('Pod')], pods: [] });
    assert.equal(d2.deletes.length, 1);
    // Once deletion has begun it is not paused again.
    const d3 = run(applied(aw2, d2), 125_000, {
      components: [component('Pod', { deleting: true })],
      pods: [],
    });
    assert.equal(condOf(d3.status ?? applied(aw2, d2).status, 'DeletingResources')?.status, 'True');
    // Kueue suspending a failed AppWrapper forces the deletion.
    aw.spec.suspend = true;
    const forced = run(aw, 0, { components: [undefined], pods: [] });
    assert.equal(
      condOf(forced.status, 'ResourcesDeployed')?.message,
      'Kueue forced resource deletion by suspending AppWrapper',
    );
  });

  test('Succeeded: resources kept for the success TTL, then deleted', () => {
    const ann = { 'workload.codeflare.dev.appwrapper/successTTLDuration': '30s' };
    const aw = appWrapper({ annotations: ann, status: { ...runningStatus(), phase: 'Succeeded' } });
    const early = run(aw, 10_000, { components: [component('Pod')], pods: [pod('sample', 'Succeeded')] });
    assert.equal(early.status, undefined);
    assert.equal(early.requeueAfterMs, 20_000);
    const d1 = run(aw, 31_000, { components: [component('Pod')], pods: [pod('sample', 'Succeeded')] });
    assert.equal(d1.deletes.length, 1);
    const d2 = run(applied(aw, d1), 32_000, { components: [undefined], pods: [] });
    assert.equal(
      condOf(d2.status, 'ResourcesDeployed')?.message,
      'Time to live after success of 30s expired',
    );
  });

  test('a success TTL above the ceiling (or not positive) means the ceiling', () => {
    const aw = appWrapper({
      annotations: { 'workload.codeflare.dev.appwrapper/successTTLDuration': '-5s' },
      status: { ...runningStatus(), phase: 'Succeeded' },
    });
    assert.equal(run(aw, 0, { components: [component('Pod')], pods: [] }).requeueAfterMs, 7 * 24 * 3_600_000);
  });

  test('deletion of the AppWrapper: Terminating until the components are gone, then the finalizer goes', () => {
    const aw = appWrapper({ deleting: true, status: runningStatus() });
    const d1 = run(aw, 1000, { components: [component('Pod')], pods: [pod('sample', 'Running')] });
    assert.equal(d1.status?.phase, 'Terminating');
    assert.equal(d1.statusBestEffort, true);
    assert.equal(d1.removeFinalizer, undefined);
    assert.equal(d1.deletes.length, 1);
    const d2 = run(applied(aw, d1), 2000, { components: [undefined], pods: [] });
    assert.equal(d2.removeFinalizer, true);
    assert.equal(condOf(d2.status, 'ResourcesDeployed')?.message, 'Resources successfully deleted');
    assert.equal(condOf(d2.status, 'QuotaReserved')?.reason, 'Terminating');
  });

  test('a component that exists is deleted even if its creation was never recorded; a namesake is not', () => {
    const aw = appWrapper({ deleting: true, status: runningStatus() });
    const cs = aw.status!.componentStatus![0]!;
    cs.conditions = [cond('ResourcesDeployed', 'False', 'CompononetDeleted')];
    const d = run(aw, 1000, { components: [component('Pod')], pods: [pod('sample', 'Running')] });
    assert.deepEqual(
      d.deletes.map((x) => x.name),
      ['sample'],
    );
    const stranger = component('Pod');
    stranger.metadata.ownerReferences = [];
    const d2 = run(aw, 1000, { components: [stranger], pods: [] });
    assert.deepEqual(d2.deletes, []);
    assert.equal(d2.removeFinalizer, true);
  });

  test('deletion of an AppWrapper that never deployed just drops the finalizer', () => {
    const d = run(appWrapper({ deleting: true, status: { phase: 'Suspended' } }), 0, {
      components: [],
      pods: [],
    });
    assert.equal(d.removeFinalizer, true);
    assert.deepEqual(d.deletes, []);
  });

  test('a component of a kind that vanished (CRD removed) does not block deletion', () => {
    const aw = appWrapper({ deleting: true, status: runningStatus() });
    aw.status!.componentStatus![0]!.kind = 'PyTorchJob';
    aw.status!.componentStatus![0]!.apiVersion = 'kubeflow.org/v1';
    const d = run(aw, 0, { components: [undefined], pods: [] });
    assert.equal(d.removeFinalizer, true);
  });
});
