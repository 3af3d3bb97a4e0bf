import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { configFromUpstream, effective, resolveConfig } from '../../../src/controllers/appwrapper/config.ts';
import { RenderError, renderComponent } from '../../../src/controllers/appwrapper/inject.ts';
import {
  checkPodSpecAt,
  expectedPodCount,
  inferPodSets,
  initialComponentStatus,
  validatePodSets,
} from '../../../src/controllers/appwrapper/podsets.ts';
import { formatGoDuration, parseGoDuration } from '../../../src/kube/duration.ts';
import { appWrapper, jobTemplate, podTemplate } from './fixtures.ts';

const podSpec = { containers: [{ name: 'c', image: 'busybox' }] };
const tmpl = { spec: podSpec };

describe('pod-set inference', () => {
  test('Pod: the template itself, one replica', () => {
    assert.deepEqual(inferPodSets(podTemplate()), [{ replicas: 1, path: 'template' }]);
  });

  test('Deployment and StatefulSet: spec.template with spec.replicas (1 when absent)', () => {
    for (const kind of ['Deployment', 'StatefulSet']) {
      assert.deepEqual(inferPodSets({ apiVersion: 'apps/v1', kind, spec: { replicas: 3, template: tmpl } }), [
        { replicas: 3, path: 'template.spec.template' },
      ]);
      assert.deepEqual(inferPodSets({ apiVersion: 'apps/v1', kind, spec: { template: tmpl } }), [
        { replicas: 1, path: 'template.spec.template' },
      ]);
    }
  });

  test('batch/v1 Job: the smaller of parallelism and completions', () => {
    const ps = inferPodSets(jobTemplate('j', 4, 2));
    assert.equal(ps[0]?.replicas, 2);
    assert.equal(ps[0]?.path, 'template.spec.template');
    assert.deepEqual(ps[0]?.annotations, {
      'workload.codeflare.dev.appwrapper/tas-pod-index-label': 'batch.kubernetes.io/job-completion-index',
    });
    assert.equal(
      inferPodSets({ apiVersion: 'batch/v1', kind: 'Job', spec: { template: tmpl } })[0]?.replicas,
      1,
    );
    assert.equal(
      inferPodSets({ apiVersion: 'batch/v1', kind: 'Job', spec: { parallelism: 5, template: tmpl } })[0]
        ?.replicas,
      5,
    );
  });

  test('JobSet: one pod set per replicated job, replicas x pods per job', () => {
    const js = {
      apiVersion: 'jobset.x-k8s.io/v1alpha2',
      kind: 'JobSet',
      spec: {
        replicatedJobs: [
          { name: 'leader', template: { spec: { template: tmpl } } },
          {
            name: 'workers',
            replicas: 2,
            template: { spec: { parallelism: 3, completions: 3, template: tmpl } },
          },
        ],
      },
    };
    const ps = inferPodSets(js);
    assert.deepEqual(
      ps.map((p) => [
        p.path,
        p.replicas,
        p.annotations?.['workload.codeflare.dev.appwrapper/tas-sub-group-count'],
      ]),
      [
        ['template.spec.replicatedJobs[0].template.spec.template', 1, '1'],
        ['template.spec.replicatedJobs[1].template.spec.template', 6, '2'],
      ],
    );
  });

  test('PyTorchJob: Master and Worker', () => {
    const pt = {
      apiVersion: 'kubeflow.org/v1',
      kind: 'PyTorchJob',
      spec: {
        pytorchReplicaSpecs: {
          Master: { replicas: 1, template: tmpl },
          Worker: { replicas: 4, template: tmpl },
        },
      },
    };
    assert.deepEqual(
      inferPodSets(pt).map((p) => [p.path, p.replicas]),
      [
        ['template.spec.pytorchReplicaSpecs.Master.template', 1],
        ['template.spec.pytorchReplicaSpecs.Worker.template', 4],
      ],
    );
    const workersOnly = {
      apiVersion: 'kubeflow.org/v1',
      kind: 'PyTorchJob',
      spec: { pytorchReplicaSpecs: { Worker: { template: tmpl } } },
    };
    assert.deepEqual(
      inferPodSets(workersOnly).map((p) => p.replicas),
      [1],
    );
  });

  test('RayCluster and RayJob: head plus each worker group', () => {
    const cluster = {
      headGroupSpec: { template: tmpl },
      workerGroupSpecs: [{ replicas: 2, template: tmpl }, { template: tmpl }],
    };
    assert.deepEqual(
      inferPodSets({ apiVersion: 'ray.io/v1', kind: 'RayCluster', spec: cluster }).map((p) => [
        p.path,
        p.replicas,
      ]),
      [
        ['template.spec.headGroupSpec.template', 1],
        ['template.spec.workerGroupSpecs[0].template', 2],
        ['template.spec.workerGroupSpecs[1].template', 1],
      ],
    );
    assert.deepEqual(
      inferPodSets({ apiVersion: 'ray.io/v1', kind: 'RayJob', spec: { rayClusterSpec: cluster } }).map(
        (p) => p.path,
      ),
      [
        'template.spec.rayClusterSpec.headGroupSpec.template',
        'template.spec.rayClusterSpec.workerGroupSpecs[0].template',
        'template.spec.rayClusterSpec.workerGroupSpecs[1].template',
      ],
    );
  });

  test('other kinds: nothing inferred', () => {
    assert.deepEqual(inferPodSets({ apiVersion: 'v1', kind: 'Service', spec: {} }), []);
    assert.deepEqual(
      inferPodSets({ apiVersion: 'example.com/v1', kind: 'Thing', spec: { template: tmpl } }),
      [],
    );
  });

  test('a known kind whose pod template is not a PodSpec is an error', () => {
    assert.throws(
      () =>
        inferPodSets({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          spec: { template: { spec: { containers: 'x' } } },
        }),
      /template.spec.template does not refer to a v1.PodSpecTemplate: .*containers must be of type array/,
    );
    assert.throws(
      () =>
        inferPodSets({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          spec: { replicas: 'two', template: tmpl },
        }),
      /non-int value "two"/,
    );
  });
});

describe('pod-spec paths', () => {
  test('paths walk fields and indexes from "template"', () => {
    const t = { spec: { list: [{ template: tmpl }] } };
    assert.equal(checkPodSpecAt(t, 'template.spec.list[0].template').spec, podSpec);
  });

  test('bad paths and non-PodSpecs are rejected with upstream-style messages', () => {
    const t = { spec: { list: [{ template: tmpl }] } };
    assert.throws(() => checkPodSpecAt(t, 'spec.list'), /first element of the path must be 'template'/);
    assert.throws(() => checkPodSpecAt(t, 'template.spec.list[3].template'), /out of bounds index '3'/);
    assert.throws(() => checkPodSpecAt(t, 'template.spec.nope'), /missing field 'nope'/);
    assert.throws(() => checkPodSpecAt(t, 'template.spec.list[x]'), /invalid index expression 'x'/);
    assert.throws(
      () => checkPodSpecAt({ spec: { template: {} } }, 'template.spec.template'),
      /does not contain a spec/,
    );
    assert.throws(
      () => checkPodSpecAt({ spec: { containers: [], bogus: 1 } }, 'template'),
      /not parseable as a v1.PodSpec: unknown field "bogus"/,
    );
    assert.throws(
      () =>
        checkPodSpecAt(
          { spec: { containers: [{ name: 'c', resources: { requests: { cpu: 'lots' } } }] } },
          'template',
        ),
      /containers\[0\].resources.requests.cpu must be a quantity/,
    );
  });

  test('declared pod sets must match the inferred ones', () => {
    const inferred = [{ replicas: 2, path: 'template.spec.template' }];
    assert.equal(validatePodSets([], inferred), undefined);
    assert.equal(validatePodSets([{ replicas: 2, path: 'template.spec.template' }], inferred), undefined);
    assert.match(
      validatePodSets([{ replicas: 3, path: 'template.spec.template' }], inferred) ?? '',
      /replica count 3 differs from inferred count 2/,
    );
    assert.match(
      validatePodSets([{ path: 'template' }], inferred) ?? '',
      /PodSet with path 'template.spec.template' is missing/,
    );
    assert.match(
      validatePodSets([{ path: 'a' }, { path: 'a' }], []) ?? '',
      /multiple DeclaredPodSets with path 'a'/,
    );
  });

  test('componentStatus: declared pod sets win; expected pods are their sum', () => {
    const aw = appWrapper({
      components: [
        { template: jobTemplate('j', 3, 3) },
        {
          template: { apiVersion: 'example.com/v1', kind: 'Thing', spec: { a: { template: tmpl } } },
          podSets: [{ replicas: 4, path: 'template.spec.a.template' }],
        },
      ],
    });
    const cs = initialComponentStatus(aw)!;
    assert.equal(expectedPodCount(cs), 7);
    assert.equal(initialComponentStatus({ ...aw, status: { componentStatus: cs } }), undefined);
  });
});

describe('rendering components (PodSetInfo injection)', () => {
  test('labels, annotations, tolerations, scheduling gates (deduplicated) and the scheduler name', () => {
    const t = jobTemplate();
    const inner = (t.spec as { template: { spec: Record<string, unknown> } }).template;
    inner.spec.schedulingGates = [{ name: 'g1' }];
    inner.spec.tolerations = [{ key: 'mine', operator: 'Exists' }];
    const aw = appWrapper({
      components: [
        {
          template: t,
          podSetInfos: [
            {
              labels: { 'kueue.x-k8s.io/podset': 'main' },
              annotations: { note: 'x' },
              nodeSelector: { flavor: 'a' },
              tolerations: [{ key: 'spot', operator: 'Exists', effect: 'NoSchedule' }],
              schedulingGates: [{ name: 'g1' }, { name: 'g2' }],
            },
          ],
        },
      ],
    });
    const obj = renderComponent(aw, 0, initialComponentStatus(aw)!, {
      schedulerName: 'my-scheduler',
    }) as unknown as {
      metadata: { labels: Record<string, string> };
      spec: { template: { metadata: Record<string, unknown>; spec: Record<string, unknown> } };
    };
    assert.deepEqual(obj.metadata.labels, { 'workload.codeflare.dev/appwrapper': 'sample' });
    const pt = obj.spec.template;
    assert.deepEqual(pt.metadata.labels, {
      'kueue.x-k8s.io/podset': 'main',
      'workload.codeflare.dev/appwrapper': 'sample',
    });
    assert.deepEqual(pt.metadata.annotations, { note: 'x' });
    assert.deepEqual(pt.spec.nodeSelector, { flavor: 'a' });
    assert.deepEqual(pt.spec.tolerations, [
      { key: 'mine', operator: 'Exists' },
      { key: 'spot', operator: 'Exists', effect: 'NoSchedule' },
    ]);
    assert.deepEqual(pt.spec.schedulingGates, [{ name: 'g1' }, { name: 'g2' }]);
    assert.equal(pt.spec.schedulerName, 'my-scheduler');
  });

  test('an existing scheduler name and equal values are kept; a foreign namespace is refused', () => {
    const t = podTemplate();
    (t.spec as Record<string, unknown>).schedulerName = 'custom';
    (t.spec as Record<string, unknown>).nodeSelector = { zone: 'a' };
    const aw = appWrapper({ components: [{ template: t, podSetInfos: [{ nodeSelector: { zone: 'a' } }] }] });
    const obj = renderComponent(aw, 0, initialComponentStatus(aw)!, { schedulerName: 'x' }) as unknown as {
      spec: Record<string, unknown>;
    };
    assert.equal(obj.spec.schedulerName, 'custom');
    (t.metadata as Record<string, unknown>).namespace = 'other';
    const aw2 = appWrapper({ components: [{ template: t }] });
    assert.throws(() => renderComponent(aw2, 0, initialComponentStatus(aw2)!), RenderError);
  });

  test('a template already controlled by another owner cannot be wrapped', () => {
    const t = podTemplate();
    (t.metadata as Record<string, unknown>).ownerReferences = [
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u', controller: true },
    ];
    const aw = appWrapper({ components: [{ template: t }] });
    assert.throws(
      () => renderComponent(aw, 0, initialComponentStatus(aw)!),
      /already controlled by ReplicaSet rs/,
    );
  });
});

describe('configuration', () => {
  test('Go durations', () => {
    assert.equal(parseGoDuration('90s'), 90_000);
    assert.equal(parseGoDuration('1h30m'), 5_400_000);
    assert.equal(parseGoDuration('1.5m'), 90_000);
    assert.equal(parseGoDuration('500ms'), 500);
    assert.equal(parseGoDuration('0'), 0);
    assert.equal(parseGoDuration('-2s'), -2000);
    for (const bad of ['', '5', '1d', '1 m', 'abc', '1m '])
      assert.equal(parseGoDuration(bad), undefined, bad);
    assert.equal(formatGoDuration(90_000), '1m30s');
    assert.equal(formatGoDuration(2 * 60_000), '2m0s');
    assert.equal(formatGoDuration(7 * 24 * 3_600_000), '168h0m0s');
  });

  test("defaults are upstream's; invalid combinations are refused", () => {
    const ft = resolveConfig().faultTolerance;
    assert.deepEqual(
      [
        ft.admissionGracePeriodMs,
        ft.warmupGracePeriodMs,
        ft.failureGracePeriodMs,
        ft.retryPausePeriodMs,
        ft.retryLimit,
        ft.forcefulDeletionGracePeriodMs,
        ft.gracePeriodCeilingMs,
        ft.successTTLCeilingMs,
      ],
      [60_000, 300_000, 60_000, 90_000, 3, 600_000, 86_400_000, 604_800_000],
    );
    assert.throws(
      () => resolveConfig({ faultTolerance: { warmupGracePeriodMs: 48 * 3_600_000 } }),
      /exceeds gracePeriodCeiling/,
    );
    assert.throws(
      () => resolveConfig({ faultTolerance: { admissionGracePeriodMs: 10 * 60_000 } }),
      /exceeds warmupGracePeriod/,
    );
  });

  test('upstream config files: Go durations or nanoseconds', () => {
    const input = configFromUpstream({
      defaultQueueName: 'user-queue',
      faultTolerance: { admissionGracePeriod: '30s', warmupGracePeriod: 120e9, retryLimit: 5 },
    });
    const c = resolveConfig(input);
    assert.equal(c.defaultQueueName, 'user-queue');
    assert.equal(c.faultTolerance.admissionGracePeriodMs, 30_000);
    assert.equal(c.faultTolerance.warmupGracePeriodMs, 120_000);
    assert.equal(c.faultTolerance.retryLimit, 5);
  });

  test('annotations: negative durations are zero, exit code lists skip junk', () => {
    const aw = appWrapper({
      annotations: {
        'workload.codeflare.dev.appwrapper/retryPausePeriodDuration': '-1m',
        'workload.codeflare.dev.appwrapper/terminalExitCodes': '1, 2,3,x',
        'workload.codeflare.dev.appwrapper/retryLimit': 'many',
      },
    });
    const e = effective(aw, resolveConfig());
    assert.equal(e.retryPauseMs, 0);
    assert.deepEqual(e.terminalExitCodes, [1, 3]);
    assert.equal(e.retryLimit, 3);
    assert.deepEqual(
      e.problems.map((p) => p.value),
      ['many'],
    );
  });
});
