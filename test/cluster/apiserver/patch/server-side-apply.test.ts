import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  BEFORE_FIRST_APPLY,
  builtinListSemantics,
  listSemanticsFromSchema,
  PatchError,
  type ServerSideApplyOptions,
  serverSideApply,
  trackUpdate,
} from '../../../../src/cluster/apiserver/patch/index.ts';
import type { KubeObject } from '../../../../src/cluster/apiserver/types.ts';
import { deepFreeze } from './freeze.ts';

// biome-ignore lint/suspicious/noExplicitAny: fixtures navigate free-form JSON objects.
type Obj = Record<string, any>;
const T0 = '2024-05-01T10:00:00Z';
const T1 = new Date('2024-05-01T11:30:00.250Z');
const deploySem = builtinListSemantics('apps/v1/Deployment');

type ApplyOptions = Partial<ServerSideApplyOptions> & Pick<ServerSideApplyOptions, 'applied' | 'manager'>;

/** Applies to a Deployment, by default a new one at T0; the result may be refused. */
function tryApply(opts: ApplyOptions) {
  return serverSideApply({
    live: undefined,
    apiVersion: 'apps/v1',
    now: T0,
    listSemantics: deploySem,
    ...opts,
  });
}

function apply(opts: ApplyOptions): KubeObject {
  const r = tryApply(opts);
  assert.ok(r.ok, r.ok ? '' : r.message);
  return r.object;
}

function entry(obj: KubeObject, manager: string, operation = 'Apply') {
  const e = obj.metadata.managedFields?.find((m) => m.manager === manager && m.operation === operation);
  assert.ok(e, `no ${operation} entry for ${manager}`);
  return e;
}

const deployment = (spec: Obj, metadata: Obj = {}) =>
  deepFreeze({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', ...metadata }, spec });
const deploymentStatus = (status: Obj) =>
  deepFreeze({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, status });

describe('serverSideApply: managedFields', () => {
  test('creating by apply stores the configuration and records it in FieldsV1', () => {
    const obj = apply({
      manager: 'kubectl',
      applied: deployment(
        {
          replicas: 2,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: {
              containers: [{ name: 'nginx', image: 'nginx:1', ports: [{ containerPort: 80 }] }],
              tolerations: [{ key: 'k', operator: 'Exists' }],
            },
          },
        },
        { labels: { app: 'web' }, finalizers: ['x.io/f'] },
      ),
    });
    assert.equal(obj.spec && (obj.spec as Obj).replicas, 2);
    assert.deepEqual(obj.metadata.managedFields, [
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        time: T0,
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:finalizers': { 'v:"x.io/f"': {} }, 'f:labels': { 'f:app': {} } },
          'f:spec': {
            'f:replicas': {},
            'f:selector': {},
            'f:template': {
              'f:metadata': { 'f:labels': { 'f:app': {} } },
              'f:spec': {
                'f:containers': {
                  'k:{"name":"nginx"}': {
                    '.': {},
                    'f:image': {},
                    'f:name': {},
                    'f:ports': {
                      'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} },
                    },
                  },
                },
                'f:tolerations': {},
              },
            },
          },
        },
      },
    ]);
  });

  test('apply through a subresource is its own manager entry', () => {
    const live = apply({ manager: 'kubectl', applied: deployment({ replicas: 1 }) });
    const r = tryApply({
      live,
      applied: deploymentStatus({ replicas: 1 }),
      manager: 'kubectl',
      subresource: 'status',
      now: T1,
    });
    assert.ok(r.ok);
    const mf = r.object.metadata.managedFields!;
    assert.equal(mf.length, 2);
    assert.deepEqual(mf[1], {
      manager: 'kubectl',
      operation: 'Apply',
      apiVersion: 'apps/v1',
      time: '2024-05-01T11:30:00Z',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:status': { 'f:replicas': {} } },
      subresource: 'status',
    });
  });

  test('ignored fields (status on the main endpoint) are merged but not owned', () => {
    const obj = apply({
      manager: 'kubectl',
      applied: { ...deployment({ replicas: 1 }), status: { replicas: 5 } },
      ignoredFields: [['status']],
    });
    assert.deepEqual(entry(obj, 'kubectl').fieldsV1, { 'f:spec': { 'f:replicas': {} } });
  });

  test('a no-op apply keeps the entry and its time', () => {
    const live = apply({ manager: 'kubectl', applied: deployment({ replicas: 1 }) });
    const again = apply({ live, manager: 'kubectl', applied: deployment({ replicas: 1 }), now: T1 });
    assert.equal(entry(again, 'kubectl').time, T0);
    const changed = apply({ live, manager: 'kubectl', applied: deployment({ replicas: 2 }), now: T1 });
    assert.equal(entry(changed, 'kubectl').time, '2024-05-01T11:30:00Z');
  });
});

describe('serverSideApply: conflicts', () => {
  const created = () =>
    deepFreeze(
      trackUpdate({
        old: undefined,
        updated: deployment({ replicas: 1, paused: false }, { labels: { app: 'web' } }) as KubeObject,
        manager: 'kubectl-client-side-apply',
        apiVersion: 'apps/v1',
        now: T0,
      }),
    );

  test('changing a field another manager owns conflicts, like the real server says it', () => {
    const r = tryApply({
      live: created(),
      applied: deployment({ replicas: 3 }),
      manager: 'kubectl',
      now: T1,
    });
    assert.equal(r.ok, false);
    assert.ok(!r.ok);
    assert.deepEqual(r.conflicts, [
      {
        reason: 'FieldManagerConflict',
        field: '.spec.replicas',
        message: 'conflict with "kubectl-client-side-apply" using apps/v1',
      },
    ]);
    assert.equal(
      r.message,
      'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas',
    );
  });

  test('several conflicts are listed per manager', () => {
    const r = tryApply({
      live: created(),
      applied: deployment({ replicas: 3, paused: true }, { labels: { app: 'api' } }),
      manager: 'kubectl',
      now: T1,
    });
    assert.ok(!r.ok);
    assert.deepEqual(
      r.conflicts.map((c) => c.field),
      ['.metadata.labels.app', '.spec.paused', '.spec.replicas'],
    );
    assert.equal(
      r.message,
      'Apply failed with 3 conflicts: conflicts with "kubectl-client-side-apply" using apps/v1:\n- .metadata.labels.app\n- .spec.paused\n- .spec.replicas',
    );
  });

  test('applying the value already there is not a conflict: the field becomes co-owned', () => {
    const obj = apply({ live: created(), manager: 'kubectl', applied: deployment({ replicas: 1 }) });
    assert.deepEqual(entry(obj, 'kubectl').fieldsV1, { 'f:spec': { 'f:replicas': {} } });
    assert.deepEqual(entry(obj, 'kubectl-client-side-apply', 'Update').fieldsV1, {
      'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
      'f:spec': { 'f:paused': {}, 'f:replicas': {} },
    });
  });

  test('force takes the conflicting fields away from their owner', () => {
    const obj = apply({
      live: created(),
      manager: 'kubectl',
      applied: deployment({ replicas: 3 }),
      force: true,
    });
    assert.equal((obj.spec as Obj).replicas, 3);
    assert.deepEqual(entry(obj, 'kubectl').fieldsV1, { 'f:spec': { 'f:replicas': {} } });
    assert.deepEqual(entry(obj, 'kubectl-client-side-apply', 'Update').fieldsV1, {
      'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
      'f:spec': { 'f:paused': {} },
    });
  });

  test('two appliers conflict with each other, and the message names an applier without version', () => {
    const live = apply({ manager: 'alice', applied: deployment({ replicas: 1 }) });
    const r = tryApply({
      live,
      applied: deployment({ replicas: 2 }),
      manager: 'bob',
      subresource: '',
      now: T1,
    });
    assert.ok(!r.ok);
    assert.equal(r.conflicts[0]?.message, 'conflict with "alice"');
  });

  test('an object without managedFields is first charged to before-first-apply', () => {
    const live = deepFreeze({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm', uid: 'u' },
      data: { a: '1' },
    }) as KubeObject;
    const r = serverSideApply({
      live,
      applied: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: '2' } },
      manager: 'kubectl',
      apiVersion: 'v1',
      now: T1,
      listSemantics: builtinListSemantics('v1/ConfigMap'),
    });
    assert.ok(!r.ok);
    assert.deepEqual(r.conflicts, [
      {
        reason: 'FieldManagerConflict',
        field: '.data.a',
        message: `conflict with "${BEFORE_FIRST_APPLY}" using v1`,
      },
    ]);
  });

  test('a conflict through a subresource names it', () => {
    const live = apply({
      manager: 'controller',
      subresource: 'status',
      applied: deploymentStatus({ replicas: 1 }),
    });
    const r = tryApply({
      live,
      applied: deploymentStatus({ replicas: 2 }),
      manager: 'other',
      subresource: 'status',
      now: T1,
    });
    assert.ok(!r.ok);
    assert.equal(r.conflicts[0]?.message, 'conflict with "controller" with subresource "status"');
  });
});

describe('serverSideApply: removing fields an applier stops applying', () => {
  test('a field only this applier owned is removed', () => {
    const live = apply({
      manager: 'kubectl',
      applied: deployment({ replicas: 1, paused: true }, { labels: { a: '1', b: '2' } }),
    });
    const obj = apply({
      live,
      manager: 'kubectl',
      applied: deployment({ replicas: 1 }, { labels: { a: '1' } }),
    });
    assert.deepEqual(obj.metadata.labels, { a: '1' });
    assert.deepEqual(obj.spec, { replicas: 1 });
    assert.deepEqual(entry(obj, 'kubectl').fieldsV1, {
      'f:metadata': { 'f:labels': { 'f:a': {} } },
      'f:spec': { 'f:replicas': {} },
    });
  });

  test('a field another applier also owns is kept', () => {
    let live = apply({ manager: 'alice', applied: deployment({ replicas: 1 }, { labels: { shared: 'x' } }) });
    live = apply({ live, manager: 'bob', applied: deployment({}, { labels: { shared: 'x' } }) });
    const obj = apply({ live, manager: 'alice', applied: deployment({ replicas: 1 }) });
    assert.deepEqual(obj.metadata.labels, { shared: 'x' });
    assert.deepEqual(entry(obj, 'alice').fieldsV1, { 'f:spec': { 'f:replicas': {} } });
  });

  test('a field an Update manager also owns is kept', () => {
    const live = trackUpdate({
      old: undefined,
      updated: deployment({ replicas: 1, minReadySeconds: 5 }) as KubeObject,
      manager: 'kubectl-create',
      apiVersion: 'apps/v1',
      now: T0,
    });
    // Applying the same values co-owns them without conflict...
    const coOwned = apply({
      live,
      manager: 'alice',
      applied: deployment({ replicas: 1, minReadySeconds: 5 }),
    });
    // ...so dropping them from the configuration leaves them to kubectl-create.
    const obj = apply({ live: coOwned, manager: 'alice', applied: deployment({ minReadySeconds: 5 }) });
    assert.deepEqual(obj.spec, { replicas: 1, minReadySeconds: 5 });
    assert.deepEqual(entry(obj, 'alice').fieldsV1, { 'f:spec': { 'f:minReadySeconds': {} } });
  });

  test('fields nobody applied (server defaults) survive an applier dropping its own', () => {
    const live = deepFreeze({
      ...apply({ manager: 'kubectl', applied: deployment({ replicas: 1, paused: true }) }),
    }) as KubeObject;
    const withDefault = { ...live, spec: { ...(live.spec as Obj), revisionHistoryLimit: 10 } } as KubeObject;
    const obj = apply({ live: withDefault, manager: 'kubectl', applied: deployment({ replicas: 1 }) });
    assert.deepEqual(obj.spec, { replicas: 1, revisionHistoryLimit: 10 });
  });
});

describe('serverSideApply: list semantics', () => {
  const tpl = (containers: Obj[]) => deployment({ template: { spec: { containers } } });

  test('keyed lists merge item by item; new items follow the live ones', () => {
    let live = apply({ manager: 'alice', applied: tpl([{ name: 'a', image: 'a:1' }]) });
    live = apply({ live, manager: 'bob', applied: tpl([{ name: 'b', image: 'b:1' }]) });
    const containers = (live.spec as Obj).template.spec.containers;
    assert.deepEqual(containers, [
      { name: 'a', image: 'a:1' },
      { name: 'b', image: 'b:1' },
    ]);
    assert.deepEqual(entry(live, 'bob').fieldsV1, {
      'f:spec': {
        'f:template': {
          'f:spec': { 'f:containers': { 'k:{"name":"b"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
        },
      },
    });
    const dropped = apply({ live, manager: 'bob', applied: tpl([]) });
    assert.deepEqual((dropped.spec as Obj).template.spec.containers, [{ name: 'a', image: 'a:1' }]);
  });

  test('an applier can change a field inside another applier item only with force', () => {
    const live = apply({ manager: 'alice', applied: tpl([{ name: 'a', image: 'a:1' }]) });
    const r = tryApply({ live, applied: tpl([{ name: 'a', image: 'a:2' }]), manager: 'bob', now: T1 });
    assert.ok(!r.ok);
    assert.equal(r.conflicts[0]?.field, '.spec.template.spec.containers[name="a"].image');
  });

  test('sets merge by value and atomic lists are replaced and owned whole', () => {
    let live = apply({
      manager: 'alice',
      applied: deployment(
        { template: { spec: { tolerations: [{ key: 'a' }] } } },
        { finalizers: ['a.io/x'] },
      ),
    });
    live = apply({
      live,
      manager: 'bob',
      force: true,
      applied: deployment(
        { template: { spec: { tolerations: [{ key: 'b' }] } } },
        { finalizers: ['b.io/y'] },
      ),
    });
    assert.deepEqual(live.metadata.finalizers, ['a.io/x', 'b.io/y']);
    assert.deepEqual((live.spec as Obj).template.spec.tolerations, [{ key: 'b' }]);
    assert.deepEqual(entry(live, 'alice').fieldsV1, {
      'f:metadata': { 'f:finalizers': { 'v:"a.io/x"': {} } },
    });
  });

  test('custom resources follow x-kubernetes-list-type from their schema', () => {
    const schema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            workers: {
              type: 'array',
              'x-kubernetes-list-type': 'map',
              'x-kubernetes-list-map-keys': ['name'],
              items: { type: 'object', properties: { name: { type: 'string' }, size: { type: 'integer' } } },
            },
            tags: { type: 'array', items: { type: 'string' } },
          },
        },
      },
    };
    const sem = listSemanticsFromSchema(schema);
    const cr = (spec: Obj) => ({ apiVersion: 'example.com/v1', kind: 'Pool', metadata: { name: 'p' }, spec });
    const opts = { apiVersion: 'example.com/v1', now: T0, listSemantics: sem };
    const first = serverSideApply({
      ...opts,
      live: undefined,
      manager: 'a',
      applied: cr({ workers: [{ name: 'w1', size: 1 }], tags: ['x'] }),
    });
    assert.ok(first.ok);
    const second = serverSideApply({
      ...opts,
      live: first.object,
      manager: 'b',
      applied: cr({ workers: [{ name: 'w2', size: 2 }] }),
    });
    assert.ok(second.ok);
    assert.deepEqual((second.object.spec as Obj).workers, [
      { name: 'w1', size: 1 },
      { name: 'w2', size: 2 },
    ]);
    const third = serverSideApply({
      ...opts,
      live: second.object,
      manager: 'b',
      applied: cr({ tags: ['y'] }),
    });
    assert.ok(!third.ok, 'atomic tags owned by a');
    assert.equal(third.conflicts[0]?.field, '.spec.tags');
  });
});

describe('serverSideApply: refused configurations', () => {
  const base = { live: undefined, manager: 'm', apiVersion: 'apps/v1', now: T0, listSemantics: deploySem };

  test('a configuration of another version is a 400', () => {
    assert.throws(
      () => serverSideApply({ ...base, applied: { ...deployment({}), apiVersion: 'apps/v1beta1' } }),
      (e: unknown) =>
        e instanceof PatchError &&
        e.status === 400 &&
        e.message ===
          'Incorrect version specified in apply patch. Specified patch version: apps/v1beta1, expected: apps/v1',
    );
  });

  test('managedFields in the configuration is a 400', () => {
    assert.throws(
      () => serverSideApply({ ...base, applied: deployment({}, { managedFields: [{ manager: 'x' }] }) }),
      (e: unknown) =>
        e instanceof PatchError && e.status === 400 && e.message === 'metadata.managedFields must be nil',
    );
  });

  test('duplicate or unkeyed list items are refused like the real server', () => {
    assert.throws(
      () =>
        serverSideApply({
          ...base,
          applied: deployment({ template: { spec: { containers: [{ name: 'a' }, { name: 'a' }] } } }),
        }),
      (e: unknown) =>
        e instanceof PatchError &&
        e.status === 500 &&
        e.message ===
          'failed to create typed patch object (apps/v1, Kind=Deployment): .spec.template.spec.containers: duplicate entries for key [name="a"]',
    );
    assert.throws(
      () =>
        serverSideApply({
          ...base,
          applied: deployment({ template: { spec: { containers: [{ image: 'x' }] } } }),
        }),
      /element 0: associative list with keys has an element that omits key field "name"/,
    );
  });

  test('inputs are never mutated', () => {
    const live = deepFreeze(apply({ manager: 'a', applied: deployment({ replicas: 1, paused: true }) }));
    const applied = deployment({ replicas: 2 });
    const r = serverSideApply({ ...base, live, applied, manager: 'a', force: true });
    assert.ok(r.ok);
    (r.object.spec as Obj).replicas = 99;
    assert.equal((live.spec as Obj).replicas, 1);
  });
});
