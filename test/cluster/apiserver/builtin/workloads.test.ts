import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create, created, messages, mutate, rtFor, update } from './harness.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests reach into loose JSON
type Any = any;

const template = {
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] },
};

function workload(kind: string, spec: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind,
    metadata: { name: 'w' },
    spec: { selector: { matchLabels: { app: 'web' } }, template, ...spec },
  };
}

describe('deployments', () => {
  const deployments = rtFor('deployments', 'apps');

  test('defaults replicas, strategy, history and progress deadline, and the template', () => {
    const d = created(deployments, workload('Deployment')) as Any;
    assert.equal(d.spec.replicas, 1);
    assert.deepEqual(d.spec.strategy, {
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' },
    });
    assert.equal(d.spec.revisionHistoryLimit, 10);
    assert.equal(d.spec.progressDeadlineSeconds, 600);
    assert.equal(d.spec.template.spec.restartPolicy, 'Always');
    assert.equal(d.spec.template.spec.containers[0].imagePullPolicy, 'IfNotPresent');
    assert.equal(d.spec.template.spec.enableServiceLinks, undefined, 'pod-only defaults stay off templates');
    assert.deepEqual(d.status, {});
    assert.equal(d.metadata.generation, 1);
  });

  test('selector is required and must match the template labels', () => {
    const missing = create(deployments, workload('Deployment', { selector: undefined }));
    assert.deepEqual(messages(missing.errors), ['spec.selector: Required value']);
    const mismatch = create(
      deployments,
      workload('Deployment', { selector: { matchLabels: { app: 'db' } } }),
    );
    assert.deepEqual(messages(mismatch.errors), [
      'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`',
    ]);
    const empty = create(deployments, workload('Deployment', { selector: {} }));
    assert.deepEqual(messages(empty.errors), [
      'spec.selector: Invalid value: {}: empty selector is invalid for deployment',
    ]);
  });

  test('template restartPolicy must be Always', () => {
    const r = create(
      deployments,
      workload('Deployment', { template: mutate(template, (t: Any) => (t.spec.restartPolicy = 'Never')) }),
    );
    assert.deepEqual(messages(r.errors), [
      'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
    ]);
  });

  test('template pod spec errors carry the template path', () => {
    const r = create(
      deployments,
      workload('Deployment', { template: mutate(template, (t: Any) => delete t.spec.containers[0].image) }),
    );
    assert.deepEqual(messages(r.errors), [
      'spec.template.spec.containers[0].image: Required value',
      'spec.template.spec.containers[0].imagePullPolicy: Required value',
    ]);
  });

  test('strategy rules', () => {
    const zero = create(
      deployments,
      workload('Deployment', { strategy: { rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } } }),
    );
    assert.deepEqual(messages(zero.errors), [
      'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0',
    ]);
    const recreate = create(
      deployments,
      workload('Deployment', { strategy: { type: 'Recreate', rollingUpdate: { maxSurge: 1 } } }),
    );
    assert.deepEqual(messages(recreate.errors), [
      "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'",
    ]);
    const pct = create(
      deployments,
      workload('Deployment', { strategy: { rollingUpdate: { maxSurge: '5x' } } }),
    );
    assert.match(
      messages(pct.errors)[0]!,
      /^spec\.strategy\.rollingUpdate\.maxSurge: Invalid value: "5x": a valid percent string must be a numeric string followed by an ending '%'/,
    );
  });

  test('selector is immutable, spec changes bump generation, status changes do not', () => {
    const d = created(deployments, workload('Deployment'));
    const sel = update(
      deployments,
      d,
      mutate(d, (x: Any) => {
        x.spec.selector.matchLabels.tier = 'fe';
        x.spec.template.metadata.labels.tier = 'fe';
      }),
    );
    assert.deepEqual(messages(sel.errors), [
      'spec.selector: Invalid value: {"matchLabels":{"app":"web","tier":"fe"}}: field is immutable',
    ]);
    const scaled = update(
      deployments,
      d,
      mutate(d, (x: Any) => (x.spec.replicas = 3)),
    );
    assert.deepEqual(scaled.errors, []);
    assert.equal(scaled.obj.metadata.generation, 2);
    const status = update(deployments, d, { ...d, status: { replicas: 1, readyReplicas: 1 } }, 'status');
    assert.deepEqual(status.errors, []);
    assert.equal(status.obj.metadata.generation, 1);
    assert.equal((status.obj as Any).status.readyReplicas, 1);
  });

  test('table cells', () => {
    const d = mutate(created(deployments, workload('Deployment', { replicas: 3 })), (x: Any) => {
      x.status = { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 };
    });
    assert.deepEqual(
      deployments.strategy.table!.columns.map((c) => c.name),
      ['Name', 'Ready', 'Up-to-date', 'Available', 'Age', 'Containers', 'Images', 'Selector'],
    );
    assert.deepEqual(deployments.strategy.table!.cells(d, new Date('2025-01-02T00:00:00Z')), [
      'w',
      '2/3',
      3,
      2,
      '24h',
      'c',
      'nginx:1.25',
      'app=web',
    ]);
  });
});

describe('replicasets', () => {
  const rs = rtFor('replicasets', 'apps');

  test('defaults replicas and validates like a deployment', () => {
    const r = created(rs, workload('ReplicaSet')) as Any;
    assert.equal(r.spec.replicas, 1);
    const neg = create(rs, workload('ReplicaSet', { replicas: -1 }));
    assert.deepEqual(messages(neg.errors), [
      'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    ]);
  });

  test('table and field selector', () => {
    const r = mutate(
      created(rs, workload('ReplicaSet', { replicas: 2 })),
      (x: Any) => (x.status = { replicas: 2, readyReplicas: 1 }),
    );
    assert.deepEqual(rs.strategy.table!.cells(r, new Date('2025-01-01T00:00:30Z')), [
      'w',
      2,
      2,
      1,
      '30s',
      'c',
      'nginx:1.25',
      'app=web',
    ]);
    assert.deepEqual(rs.strategy.selectableFields!(r), { 'status.replicas': '2' });
  });
});

describe('statefulsets', () => {
  const sts = rtFor('statefulsets', 'apps');

  test('defaults', () => {
    const s = created(sts, workload('StatefulSet', { serviceName: 'web' })) as Any;
    assert.equal(s.spec.podManagementPolicy, 'OrderedReady');
    assert.deepEqual(s.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
    assert.equal(s.spec.replicas, 1);
    assert.equal(s.spec.revisionHistoryLimit, 10);
    assert.deepEqual(s.spec.persistentVolumeClaimRetentionPolicy, {
      whenDeleted: 'Retain',
      whenScaled: 'Retain',
    });
  });

  test('only some spec fields may change', () => {
    const s = created(sts, workload('StatefulSet', { serviceName: 'web' }));
    const scaled = update(
      sts,
      s,
      mutate(s, (x: Any) => (x.spec.replicas = 5)),
    );
    assert.deepEqual(scaled.errors, []);
    const renamed = update(
      sts,
      s,
      mutate(s, (x: Any) => (x.spec.serviceName = 'other')),
    );
    assert.deepEqual(messages(renamed.errors), [
      "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    ]);
  });

  test('bad podManagementPolicy and table', () => {
    const bad = create(sts, workload('StatefulSet', { podManagementPolicy: 'Random' }));
    assert.deepEqual(messages(bad.errors), [
      'spec.podManagementPolicy: Unsupported value: "Random": supported values: "OrderedReady", "Parallel"',
    ]);
    const s = mutate(
      created(sts, workload('StatefulSet', { replicas: 3 })),
      (x: Any) => (x.status = { readyReplicas: 3 }),
    );
    assert.deepEqual(sts.strategy.table!.cells(s, new Date('2025-01-01T00:00:30Z')), [
      'w',
      '3/3',
      '30s',
      'c',
      'nginx:1.25',
    ]);
  });
});

describe('daemonsets', () => {
  const ds = rtFor('daemonsets', 'apps');

  test('defaults and has no scale subresource', () => {
    const d = created(ds, workload('DaemonSet')) as Any;
    assert.deepEqual(d.spec.updateStrategy, {
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 1, maxSurge: 0 },
    });
    assert.equal(d.spec.revisionHistoryLimit, 10);
    assert.deepEqual(ds.subresources, ['status']);
  });

  test('surge and unavailable may not both be set', () => {
    const r = create(
      ds,
      workload('DaemonSet', { updateStrategy: { rollingUpdate: { maxUnavailable: 1, maxSurge: 1 } } }),
    );
    assert.deepEqual(messages(r.errors), [
      'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero',
    ]);
  });

  test('table shows the node selector', () => {
    const d = mutate(
      created(
        ds,
        workload('DaemonSet', {
          template: mutate(template, (t: Any) => (t.spec.nodeSelector = { 'kubernetes.io/os': 'linux' })),
        }),
      ),
      (x: Any) => {
        x.status = {
          desiredNumberScheduled: 2,
          currentNumberScheduled: 2,
          numberReady: 1,
          updatedNumberScheduled: 2,
          numberAvailable: 1,
        };
      },
    );
    assert.deepEqual(ds.strategy.table!.cells(d, new Date('2025-01-01T00:00:30Z')), [
      'w',
      2,
      2,
      1,
      2,
      1,
      'kubernetes.io/os=linux',
      '30s',
      'c',
      'nginx:1.25',
      'app=web',
    ]);
  });
});
