import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  AlreadyOwnedError,
  addFinalizer,
  getControllerOf,
  hasFinalizer,
  isControlledBy,
  removeFinalizer,
  removeOwnerReference,
  setControllerReference,
  setOwnerReference,
} from '../../src/runtime/objects.ts';
import type { KubeObject } from '../../src/runtime/types.ts';

function obj(kind: string, name: string, uid: string, namespace: string | null = 'default'): KubeObject {
  return {
    apiVersion: kind === 'PodGroup' ? 'scheduling.x-k8s.io/v1alpha1' : 'v1',
    kind,
    metadata: namespace ? { name, uid, namespace } : { name, uid },
  };
}

describe('owner references', () => {
  test('setControllerReference marks the controller and blocks owner deletion', () => {
    const owner = obj('PodGroup', 'g', 'u-g');
    const pod = obj('Pod', 'p', 'u-p');
    setControllerReference(owner, pod);
    assert.deepEqual(pod.metadata.ownerReferences, [
      {
        apiVersion: 'scheduling.x-k8s.io/v1alpha1',
        kind: 'PodGroup',
        name: 'g',
        uid: 'u-g',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.equal(isControlledBy(pod, owner), true);
    assert.equal(getControllerOf(pod)?.name, 'g');
    // Idempotent.
    setControllerReference(owner, pod);
    assert.equal(pod.metadata.ownerReferences?.length, 1);
  });

  test('refuses a second controller', () => {
    const pod = obj('Pod', 'p', 'u-p');
    setControllerReference(obj('PodGroup', 'g1', 'u1'), pod);
    assert.throws(() => setControllerReference(obj('PodGroup', 'g2', 'u2'), pod), AlreadyOwnedError);
  });

  test('refuses cross-namespace owners but allows cluster-scoped ones', () => {
    const pod = obj('Pod', 'p', 'u-p', 'a');
    assert.throws(() => setOwnerReference(obj('ConfigMap', 'c', 'u-c', 'b'), pod), /cross-namespace/);
    setOwnerReference(obj('Node', 'n', 'u-n', null), pod);
    assert.equal(pod.metadata.ownerReferences?.[0]?.kind, 'Node');
  });

  test('setOwnerReference adds a non-controller reference and can be removed', () => {
    const cm = obj('ConfigMap', 'c', 'u-c');
    const pod = obj('Pod', 'p', 'u-p');
    setOwnerReference(cm, pod);
    assert.equal(pod.metadata.ownerReferences?.[0]?.controller, undefined);
    assert.equal(getControllerOf(pod), undefined);
    assert.equal(removeOwnerReference(cm, pod), true);
    assert.deepEqual(pod.metadata.ownerReferences, []);
    assert.equal(removeOwnerReference(cm, pod), false);
  });

  test('an owner without uid is rejected', () => {
    const owner: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', namespace: 'default' },
    };
    assert.throws(() => setControllerReference(owner, obj('Pod', 'p', 'u')), /name and uid/);
  });
});

describe('finalizers', () => {
  test('add and remove report whether anything changed', () => {
    const o = obj('Pod', 'p', 'u');
    assert.equal(addFinalizer(o, 'troupe.dev/cleanup'), true);
    assert.equal(addFinalizer(o, 'troupe.dev/cleanup'), false);
    assert.equal(hasFinalizer(o, 'troupe.dev/cleanup'), true);
    assert.equal(removeFinalizer(o, 'troupe.dev/cleanup'), true);
    assert.equal(removeFinalizer(o, 'troupe.dev/cleanup'), false);
    assert.deepEqual(o.metadata.finalizers, []);
  });
});
