import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { listSemanticsFromSchema, trackUpdate } from '../../../src/cluster/apiserver/patch/index.ts';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
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
    const created = trackUpdate({
      old: undefined,
      updated: pod({ containers: [{ name: 'c', image: 'i1' }], nodeName: '' }),
      manager: 'creator',
      apiVersion: 'v1',
      now: T0,
    });
    const updated = trackUpdate({
      old: created,
      updated: { ...created, spec: { containers: [{ name: 'c', image: 'i2' }], nodeName: '' } } as KubeObject,
      manager: 'editor',
      apiVersion: 'v1',
      now: T1,
    });
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
    const created = trackUpdate({
      old: undefined,
      updated: pod({ nodeName: 'n1', hostname: 'h' }),
      manager: 'creator',
      apiVersion: 'v1',
      now: T0,
    });
    const removed = trackUpdate({
      old: created,
      updated: { ...created, spec: { hostname: 'h' } } as KubeObject,
      manager: 'editor',
      apiVersion: 'v1',
      now: T1,
    });
    assert.deepEqual(fields(removed, 'creator'), { 'f:spec': { 'f:hostname': {} } });
    assert.equal(fields(removed, 'editor'), undefined);
    const same = trackUpdate({
      old: removed,
      updated: removed,
      manager: 'creator',
      apiVersion: 'v1',
      now: T1,
    });
    assert.equal(same.metadata.managedFields?.[0]?.time, T0);
  });

  test('the same manager writing through another version is a separate entry; repeated writes accumulate', () => {
    const created = trackUpdate({
      old: undefined,
      updated: pod({ nodeName: 'n1' }),
      manager: 'm',
      apiVersion: 'v1',
      now: T0,
    });
    const again = trackUpdate({
      old: created,
      updated: { ...created, spec: { nodeName: 'n1', hostname: 'h' } } as KubeObject,
      manager: 'm',
      apiVersion: 'v1',
      now: T1,
    });
    assert.deepEqual(fields(again, 'm'), { 'f:spec': { 'f:hostname': {}, 'f:nodeName': {} } });
    const other = trackUpdate({
      old: again,
      updated: { ...again, spec: { nodeName: 'n1', hostname: 'h2' } } as KubeObject,
      manager: 'm',
      apiVersion: 'v2',
      now: T1,
    });
    assert.deepEqual(fields(other, 'm', 'v1'), { 'f:spec': { 'f:nodeName': {} } });
    assert.deepEqual(fields(other, 'm', 'v2'), { 'f:spec': { 'f:hostname': {} } });
  });

  test('a status write records its subresource and ignores managedFields in the body', () => {
    const created = trackUpdate({
      old: undefined,
      updated: pod({ nodeName: 'n' }),
      manager: 'c',
      apiVersion: 'v1',
      now: T0,
    });
    const status = trackUpdate({
      old: created,
      updated: {
        ...created,
        metadata: {
          ...created.metadata,
          managedFields: [{ manager: 'forged', operation: 'Update', fieldsV1: { 'f:x': {} } }],
        },
        status: { phase: 'Running' },
      } as KubeObject,
      manager: 'kubelet',
      apiVersion: 'v1',
      subresource: 'status',
      now: T1,
    });
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
    const created = trackUpdate({
      old: undefined,
      updated: pod({ nodeName: 'n' }),
      manager: 'c',
      apiVersion: 'v1',
      now: T0,
    });
    const cleared = trackUpdate({
      old: created,
      updated: { ...created, metadata: { ...created.metadata, managedFields: [{}] } } as KubeObject,
      manager: 'kubectl-edit',
      apiVersion: 'v1',
      now: T1,
    });
    assert.equal(cleared.metadata.managedFields, undefined);
    const rewritten = trackUpdate({
      old: created,
      updated: {
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
      manager: 'kubectl-edit',
      apiVersion: 'v1',
      now: T1,
    });
    assert.deepEqual(
      rewritten.metadata.managedFields?.map((e) => e.manager),
      ['x'],
    );
  });

  test('an existing object without managedFields stays untracked', () => {
    const old = pod({ nodeName: 'n' }, { uid: 'u' });
    const out = trackUpdate({
      old,
      updated: pod({ nodeName: 'm' }, { uid: 'u' }),
      manager: 'x',
      apiVersion: 'v1',
      now: T1,
    });
    assert.equal(out.metadata.managedFields, undefined);
    assert.equal((out.spec as Obj).nodeName, 'm');
  });
});
