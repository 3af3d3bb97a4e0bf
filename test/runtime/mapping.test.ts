import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  enqueueByLabel,
  enqueueConst,
  enqueueObject,
  enqueueOwner,
  generationChanged,
  labelsChanged,
  resourceVersionChanged,
  type WatchEvent,
} from '../../src/runtime/controller.ts';
import type { KubeObject } from '../../src/runtime/types.ts';

const owned: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'p',
    namespace: 'ns',
    labels: { 'podgroup.jhwagner.github.io/name': 'g1' },
    ownerReferences: [
      { apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: '1', controller: true },
      { apiVersion: 'batch/v2', kind: 'Job', name: 'other', uid: '2' },
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: '3', controller: false },
    ],
  },
};
const ev: WatchEvent = { type: 'add', obj: owned };

describe('event to key mapping', () => {
  test('enqueueOwner maps to the controlling owner of the kind, any version of its group', () => {
    assert.deepEqual(enqueueOwner({ apiVersion: 'batch/v1', kind: 'Job' })(owned, ev), ['ns/j']);
    assert.deepEqual(
      enqueueOwner({ apiVersion: 'batch/v1', kind: 'Job' }, { controllerOnly: false })(owned, ev),
      ['ns/j', 'ns/other'],
    );
    assert.deepEqual(enqueueOwner({ apiVersion: 'apps/v1', kind: 'ReplicaSet' })(owned, ev), []);
  });

  test('enqueueByLabel maps to the label value in the object namespace', () => {
    assert.deepEqual(enqueueByLabel('podgroup.jhwagner.github.io/name')(owned, ev), ['ns/g1']);
    assert.deepEqual(enqueueByLabel('podgroup.jhwagner.github.io/name', { clusterScoped: true })(owned, ev), [
      'g1',
    ]);
    assert.deepEqual(enqueueByLabel('missing')(owned, ev), []);
  });

  test('enqueueObject and enqueueConst', () => {
    assert.deepEqual(enqueueObject(owned, ev), ['ns/p']);
    assert.deepEqual(enqueueConst('singleton')(owned, ev), ['singleton']);
  });
});

describe('predicates', () => {
  const base: KubeObject = {
    apiVersion: 'v1',
    kind: 'X',
    metadata: { name: 'a', generation: 1, resourceVersion: '5', labels: { a: '1' } },
  };
  const statusOnly: KubeObject = { ...base, metadata: { ...base.metadata, resourceVersion: '6' } };
  const specChange: KubeObject = {
    ...base,
    metadata: { ...base.metadata, generation: 2, resourceVersion: '7' },
  };
  const relabel: KubeObject = {
    ...base,
    metadata: { ...base.metadata, labels: { a: '2' }, resourceVersion: '8' },
  };

  test('generationChanged passes spec changes, creates and deletes', () => {
    assert.equal(generationChanged({ type: 'update', old: base, obj: statusOnly }), false);
    assert.equal(generationChanged({ type: 'update', old: base, obj: specChange }), true);
    assert.equal(generationChanged({ type: 'add', obj: base }), true);
    assert.equal(generationChanged({ type: 'delete', obj: base }), true);
  });

  test('resourceVersionChanged filters resyncs', () => {
    assert.equal(resourceVersionChanged({ type: 'update', old: base, obj: base }), false);
    assert.equal(resourceVersionChanged({ type: 'update', old: base, obj: statusOnly }), true);
  });

  test('labelsChanged', () => {
    assert.equal(labelsChanged({ type: 'update', old: base, obj: statusOnly }), false);
    assert.equal(labelsChanged({ type: 'update', old: base, obj: relabel }), true);
  });
});
