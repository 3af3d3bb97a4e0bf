import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FieldSet, namesToPath } from '../../../../src/cluster/apiserver/patch/fieldset.ts';
import {
  builtinListSemantics,
  type ListSemanticsLookup,
  listSemanticsFromSchema,
  type TrackUpdateOptions,
  trackUpdate,
} from '../../../../src/cluster/apiserver/patch/index.ts';
import { STRIPPED } from '../../../../src/cluster/apiserver/patch/ssa.ts';
import { compare } from '../../../../src/cluster/apiserver/patch/ssa-walk.ts';
import type { KubeObject } from '../../../../src/cluster/apiserver/types.ts';
import { deepFreeze } from './freeze.ts';

// biome-ignore lint/suspicious/noExplicitAny: fixtures navigate free-form JSON objects.
type Obj = Record<string, any>;
const T0 = '2024-05-01T10:00:00Z';
const T1 = '2024-05-01T10:05:00Z';

const pod = (spec: Obj, metadata: Obj = {}): KubeObject =>
  deepFreeze({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default', ...metadata },
    spec,
  }) as KubeObject;

/** `manager` creates a pod with `spec` through v1 at T0. */
const create = (spec: Obj, manager: string) =>
  trackUpdate({ old: undefined, updated: pod(spec), manager, apiVersion: 'v1', now: T0 });

/** `manager` writes `updated` over `old`, through v1 at T1 unless `over` says otherwise. */
const update = (
  old: KubeObject,
  updated: KubeObject,
  manager: string,
  over: Partial<TrackUpdateOptions> = {},
) => trackUpdate({ old, updated, manager, apiVersion: 'v1', now: T1, ...over });

const fields = (obj: KubeObject, manager: string, apiVersion?: string) =>
  obj.metadata.managedFields?.find(
    (e) => e.manager === manager && (!apiVersion || e.apiVersion === apiVersion),
  )?.fieldsV1;

describe('trackUpdate', () => {
  test('a create records every field as the real server does for kubectl run', () => {
    const obj = trackUpdate({
      old: undefined,
      updated: pod(
        {
          containers: [{ name: 'nginx', image: 'nginx', resources: {}, env: [{ name: 'A', value: '1' }] }],
          restartPolicy: 'Always',
          securityContext: {},
        },
        { labels: { run: 'nginx' } },
      ),
      manager: 'kubectl-run',
      apiVersion: 'v1',
      now: T0,
    });
    assert.deepEqual(obj.metadata.managedFields, [
      {
        manager: 'kubectl-run',
        operation: 'Update',
        apiVersion: 'v1',
        time: T0,
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { '.': {}, 'f:run': {} } },
          'f:spec': {
            'f:containers': {
              'k:{"name":"nginx"}': {
                '.': {},
                'f:env': { '.': {}, 'k:{"name":"A"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
                'f:image': {},
                'f:name': {},
                'f:resources': {},
              },
            },
            'f:restartPolicy': {},
            'f:securityContext': {},
          },
        },
      },
    ]);
  });

  test('custom resources own their new top-level objects too (no typed defaults)', () => {
    const obj = trackUpdate({
      old: undefined,
      updated: { apiVersion: 'example.com/v1', kind: 'Pool', metadata: { name: 'x' }, spec: { size: 1 } },
      manager: 'kubectl-create',
      apiVersion: 'example.com/v1',
      now: T0,
      listSemantics: listSemanticsFromSchema({ type: 'object' }),
    });
    assert.deepEqual(fields(obj, 'kubectl-create'), { 'f:spec': { '.': {}, 'f:size': {} } });
  });

  test('an update takes the fields it changes from their previous owner', () => {
    const created = create({ containers: [{ name: 'c', image: 'i1' }], nodeName: '' }, 'creator');
    const updated = update(
      created,
      { ...created, spec: { containers: [{ name: 'c', image: 'i2' }], nodeName: '' } } as KubeObject,
      'editor',
    );
    assert.deepEqual(fields(updated, 'creator'), {
      'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:name': {} } }, 'f:nodeName': {} },
    });
    assert.deepEqual(fields(updated, 'editor'), {
      'f:spec': { 'f:containers': { 'k:{"name":"c"}': { 'f:image': {} } } },
    });
    assert.deepEqual(
      updated.metadata.managedFields?.map((e) => [e.manager, e.time]),
      [
        ['creator', T0],
        ['editor', T1],
      ],
    );
  });

  test('removed fields leave every owner; a write that changes nothing keeps the timestamp', () => {
    const created = create({ nodeName: 'n1', hostname: 'h' }, 'creator');
    const removed = update(created, { ...created, spec: { hostname: 'h' } } as KubeObject, 'editor');
    assert.deepEqual(fields(removed, 'creator'), { 'f:spec': { 'f:hostname': {} } });
    assert.equal(fields(removed, 'editor'), undefined);
    const same = update(removed, removed, 'creator');
    assert.equal(same.metadata.managedFields?.[0]?.time, T0);
  });

  test('the same manager writing through another version is a separate entry; repeated writes accumulate', () => {
    const created = create({ nodeName: 'n1' }, 'm');
    const again = update(created, { ...created, spec: { nodeName: 'n1', hostname: 'h' } } as KubeObject, 'm');
    assert.deepEqual(fields(again, 'm'), { 'f:spec': { 'f:hostname': {}, 'f:nodeName': {} } });
    const other = update(again, { ...again, spec: { nodeName: 'n1', hostname: 'h2' } } as KubeObject, 'm', {
      apiVersion: 'v2',
    });
    assert.deepEqual(fields(other, 'm', 'v1'), { 'f:spec': { 'f:nodeName': {} } });
    assert.deepEqual(fields(other, 'm', 'v2'), { 'f:spec': { 'f:hostname': {} } });
  });

  test('a status write records its subresource and ignores managedFields in the body', () => {
    const created = create({ nodeName: 'n' }, 'c');
    const status = update(
      created,
      {
        ...created,
        metadata: {
          ...created.metadata,
          managedFields: [{ manager: 'forged', operation: 'Update', fieldsV1: { 'f:x': {} } }],
        },
        status: { phase: 'Running' },
      } as KubeObject,
      'kubelet',
      { subresource: 'status' },
    );
    assert.deepEqual(
      status.metadata.managedFields?.map((e) => [e.manager, e.subresource]),
      [
        ['c', undefined],
        ['kubelet', 'status'],
      ],
    );
    assert.deepEqual(fields(status, 'kubelet'), { 'f:status': { 'f:phase': {} } });
  });

  test('clients may replace managedFields on the main resource, and [{}] clears them', () => {
    const created = create({ nodeName: 'n' }, 'c');
    const cleared = update(
      created,
      { ...created, metadata: { ...created.metadata, managedFields: [{}] } } as KubeObject,
      'kubectl-edit',
    );
    assert.equal(cleared.metadata.managedFields, undefined);
    const rewritten = update(
      created,
      {
        ...created,
        metadata: {
          ...created.metadata,
          managedFields: [
            {
              manager: 'x',
              operation: 'Apply',
              apiVersion: 'v1',
              fieldsType: 'FieldsV1',
              fieldsV1: { 'f:spec': { 'f:nodeName': {} } },
            },
          ],
        },
      } as KubeObject,
      'kubectl-edit',
    );
    assert.deepEqual(
      rewritten.metadata.managedFields?.map((e) => e.manager),
      ['x'],
    );
  });

  test("FieldsV1 a client wrote out of the encoder's form is written back in it; in form, as it was", () => {
    const created = create({ nodeName: 'n', priority: 1 }, 'c');
    const entry = (fieldsV1: Obj) => ({
      manager: 'x',
      operation: 'Apply',
      apiVersion: 'v1',
      fieldsType: 'FieldsV1',
      fieldsV1,
    });
    const withFields = (fieldsV1: Obj) =>
      update(
        created,
        { ...created, metadata: { ...created.metadata, managedFields: [entry(fieldsV1)] } } as KubeObject,
        'kubectl-edit',
      );
    // Unsorted keys, a member spelled {".":{}}, a value that is not an object.
    const out = withFields({ 'f:spec': { 'f:priority': {}, 'f:nodeName': { '.': {} }, 'f:x': 1 } });
    assert.equal(
      JSON.stringify(fields(out, 'x')),
      JSON.stringify({ 'f:spec': { 'f:nodeName': {}, 'f:priority': {} } }),
    );
    const canonical = { 'f:spec': { 'f:nodeName': {}, 'f:priority': {} } };
    assert.equal(JSON.stringify(fields(withFields(canonical), 'x')), JSON.stringify(canonical));
  });

  test('a manager writing its own fields again keeps its set, and its FieldsV1, as they were', () => {
    const created = deepFreeze(create({ nodeName: 'n', priority: 1 }, 'c'));
    const once = deepFreeze(update(created, pod({ nodeName: 'm', priority: 1 }, { uid: 'u' }), 'x'));
    const twice = update(once, pod({ nodeName: 'k', priority: 1 }, { uid: 'u' }), 'x');
    const entryOf = (o: KubeObject) => o.metadata.managedFields!.find((m) => m.manager === 'x')!;
    // The same object, not an equal one: decoded once, unchanged, encoded back as it was.
    assert.equal(entryOf(twice).fieldsV1, entryOf(once).fieldsV1);
    assert.equal(
      FieldSet.fromFieldsV1(entryOf(once).fieldsV1),
      FieldSet.fromFieldsV1(entryOf(once).fieldsV1),
    );
  });

  test('union gives a set itself back when the other adds nothing, a new set otherwise', () => {
    const big = FieldSet.of(['f:spec', 'f:a'], ['f:spec', 'f:b'], ['f:metadata']);
    assert.equal(big.union(FieldSet.of(['f:spec', 'f:a'])), big);
    assert.equal(big.union(FieldSet.of(['f:metadata'])), big);
    const grown = big.union(FieldSet.of(['f:spec', 'f:c']));
    assert.notEqual(grown, big);
    assert.equal(grown.has(['f:spec', 'f:c']), true);
    assert.equal(big.has(['f:spec', 'f:c']), false);
    // A path that is a member in the other only: the union differs.
    assert.notEqual(big.union(FieldSet.of(['f:spec'])), big);
  });

  test('an existing object without managedFields stays untracked', () => {
    const old = pod({ nodeName: 'n' }, { uid: 'u' });
    const out = update(old, pod({ nodeName: 'm' }, { uid: 'u' }), 'x');
    assert.equal(out.metadata.managedFields, undefined);
    assert.equal((out.spec as Obj).nodeName, 'm');
  });
});

describe('trackUpdate of a create: the one-walk path agrees with compare against nothing', () => {
  /** What the general path owns for a create: compare({}, obj), less reset and stripped fields. */
  const reference = (obj: Obj, sem: ListSemanticsLookup, ignored: string[][] = []) => {
    const c = compare({}, obj, sem);
    const owned = c.added
      .union(c.modified)
      .recursiveDifference(FieldSet.of(...ignored.map(namesToPath)))
      .difference(STRIPPED);
    return owned.isEmpty() ? undefined : owned.toFieldsV1();
  };
  const cases: { name: string; obj: Obj; sem: ListSemanticsLookup; ignored?: string[][] }[] = [
    {
      name: 'a pod with typed always-present fields, empty values, nulls and a duplicate key',
      sem: builtinListSemantics('v1/Pod'),
      obj: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: 'p',
          labels: { a: '1' },
          annotations: {},
          finalizers: ['x', 'x'],
          managedFields: [],
        },
        spec: {
          containers: [
            { name: 'c', image: 'i', resources: {}, ports: [{ containerPort: 80 }, { containerPort: 80 }] },
            { name: 'c', image: 'dup' },
            { image: 'no-name' },
            'not an object',
          ],
          initContainers: [],
          volumes: [{ name: 'v', emptyDir: {} }],
          nodeSelector: { disk: 'ssd' },
          tolerations: [{ key: 'k', operator: 'Exists' }],
          securityContext: {},
          affinity: null,
          hostname: '',
        },
        status: { phase: 'Pending', conditions: [{ type: 'Ready', status: 'False' }] },
      },
      ignored: [['status']],
    },
    {
      name: 'a deployment whose template holds the pod spec; a scalar where an object is typed',
      sem: builtinListSemantics('apps/v1/Deployment'),
      obj: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'd' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'x' } },
          template: {
            metadata: { labels: { app: 'x' } },
            spec: {
              containers: [
                {
                  name: 'z',
                  image: 'i',
                  env: [
                    { name: 'B', value: '2' },
                    { name: 'A', value: '1' },
                  ],
                },
                { name: 'a', image: 'j' },
              ],
              securityContext: 5,
            },
          },
          strategy: {},
        },
        status: {},
      },
      ignored: [['status']],
    },
    {
      name: 'a service with keyed ports (key defaults) and status reset at a deeper path',
      sem: builtinListSemantics('v1/Service'),
      obj: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 's' },
        spec: {
          ports: [{ port: 80 }, { port: 80, protocol: 'UDP' }],
          selector: { app: 'x' },
          clusterIPs: ['10.0.0.1'],
        },
        status: { loadBalancer: {} },
      },
      ignored: [['spec', 'clusterIPs']],
    },
    {
      name: 'a custom resource typed by its schema (map, set and atomic lists)',
      sem: listSemanticsFromSchema({
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            properties: {
              byName: {
                type: 'array',
                'x-kubernetes-list-type': 'map',
                'x-kubernetes-list-map-keys': ['name'],
                items: { type: 'object', properties: { name: { type: 'string' } } },
              },
              tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
              plain: { type: 'array', items: { type: 'string' } },
              whole: { type: 'object', 'x-kubernetes-map-type': 'atomic' },
            },
          },
        },
      }),
      obj: {
        apiVersion: 'example.com/v1',
        kind: 'Pool',
        metadata: { name: 'x', labels: {} },
        spec: {
          byName: [{ name: 'a', size: 1 }, { name: 'b' }, {}],
          tags: ['x', 'y', 'x'],
          plain: ['a'],
          whole: { a: { b: 1 } },
          empty: {},
          nothing: null,
        },
      },
    },
    {
      name: 'an object with only stripped fields',
      sem: builtinListSemantics('v1/ConfigMap'),
      obj: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const obj = trackUpdate({
        old: undefined,
        updated: deepFreeze(structuredClone(c.obj)) as KubeObject,
        manager: 'm',
        apiVersion: String(c.obj.apiVersion),
        now: T0,
        listSemantics: c.sem,
        ignoredFields: c.ignored,
      });
      // As JSON: FieldsV1 is written in structured-merge-diff's order, which deepEqual does not see.
      assert.equal(
        JSON.stringify(obj.metadata.managedFields?.[0]?.fieldsV1),
        JSON.stringify(reference(c.obj, c.sem, c.ignored)),
      );
      const { managedFields: _, ...meta } = obj.metadata;
      const { managedFields: __, ...inputMeta } = c.obj.metadata;
      assert.deepEqual({ ...obj, metadata: meta }, { ...c.obj, metadata: inputMeta });
    });
  }
});
