import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyJsonPatch, PatchError } from '../../../../src/cluster/apiserver/patch/index.ts';
import { deepFreeze } from './freeze.ts';

const pod = () =>
  deepFreeze({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', resourceVersion: '5', labels: { app: 'web' } },
    spec: { containers: [{ name: 'c', image: 'nginx' }] },
  });

function rejects(fn: () => unknown): PatchError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof PatchError, `expected PatchError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a PatchError');
}

describe('applyJsonPatch', () => {
  test('applies add, replace, remove, move and copy without touching the input', () => {
    const doc = pod();
    const out = applyJsonPatch(doc, [
      { op: 'add', path: '/metadata/labels/tier', value: 'front' },
      { op: 'replace', path: '/spec/containers/0/image', value: 'nginx:2' },
      { op: 'add', path: '/spec/containers/-', value: { name: 'side', image: 'busybox' } },
      { op: 'copy', from: '/metadata/labels/app', path: '/metadata/labels/copy' },
      { op: 'move', from: '/metadata/labels/copy', path: '/metadata/labels/moved' },
      { op: 'remove', path: '/metadata/resourceVersion' },
    ]);
    assert.deepEqual(out.metadata, { name: 'p', labels: { app: 'web', tier: 'front', moved: 'web' } });
    assert.deepEqual(out.spec.containers, [
      { name: 'c', image: 'nginx:2' },
      { name: 'side', image: 'busybox' },
    ]);
    assert.equal(doc.metadata.resourceVersion, '5');
  });

  test('a passing test op lets the following ops apply (optimistic locking)', () => {
    const out = applyJsonPatch(pod(), [
      { op: 'test', path: '/metadata/resourceVersion', value: '5' },
      { op: 'replace', path: '/metadata/labels/app', value: 'api' },
    ]);
    assert.equal(out.metadata.labels.app, 'api');
  });

  test('a failed test op is a 422 with the generic apiserver message', () => {
    const err = rejects(() =>
      applyJsonPatch(pod(), [
        { op: 'test', path: '/metadata/labels/app', value: 'other' },
        { op: 'remove', path: '/metadata/labels' },
      ]),
    );
    assert.equal(err.status, 422);
    assert.equal(err.reason, 'Invalid');
    assert.equal(err.message, 'the server rejected our request due to an error in our request');
    assert.equal(err.detail, 'testing value /metadata/labels/app failed: test failed');
  });

  test('test compares whole values and treats a missing location as null', () => {
    assert.ok(
      applyJsonPatch(pod(), [
        { op: 'test', path: '/spec/containers/0', value: { image: 'nginx', name: 'c' } },
      ]),
    );
    assert.ok(applyJsonPatch(pod(), [{ op: 'test', path: '/metadata/annotations', value: null }]));
    assert.equal(
      rejects(() => applyJsonPatch(pod(), [{ op: 'test', path: '/metadata/annotations', value: {} }])).status,
      422,
    );
  });

  test('operations on missing paths and unknown ops are 422', () => {
    for (const op of [
      { op: 'replace', path: '/spec/nodeName', value: 'n1' },
      { op: 'remove', path: '/metadata/annotations' },
      { op: 'add', path: '/status/phase', value: 'Running' },
      { op: 'move', from: '/nope', path: '/x' },
      { op: 'frobnicate', path: '/x' },
    ]) {
      const err = rejects(() => applyJsonPatch(pod(), [op]));
      assert.equal(err.status, 422, JSON.stringify(op));
    }
  });

  test('a body that is not a list of operations is a 400 in the handler decoder’s words', () => {
    const message = (body: unknown, strict?: boolean) => {
      const err = rejects(() => applyJsonPatch(pod(), body, strict));
      assert.equal(err.status, 400);
      return err.message;
    };
    // fieldValidation Warn (the default) and Strict decode into the handler's jsonPatchOp first.
    assert.equal(
      message({ op: 'add' }),
      'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp',
    );
    assert.equal(
      message(true),
      'error decoding patch: json: cannot unmarshal bool into Go value of type []handlers.jsonPatchOp',
    );
    assert.equal(
      message(['add']),
      'error decoding patch: json: cannot unmarshal string into Go value of type handlers.jsonPatchOp',
    );
    assert.equal(
      message([{ op: 'add', path: 5 }, 1.5]),
      'error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.path of type string',
    );
    // fieldValidation Ignore goes straight to evanphx/json-patch's types.
    assert.equal(message(false, false), 'json: cannot unmarshal bool into Go value of type jsonpatch.Patch');
    assert.equal(
      message([[]], false),
      'json: cannot unmarshal array into Go value of type jsonpatch.Operation',
    );
  });

  test('a null body patches nothing; a null or kindless operation is an unknown kind', () => {
    assert.deepEqual(applyJsonPatch(pod(), null), pod());
    for (const [ops, strict] of [
      [[null], true],
      [[{ path: '/x' }], true],
      [[{ op: 5, path: '/x' }], false],
    ] as const) {
      const err = rejects(() => applyJsonPatch(pod(), ops, strict));
      assert.equal(err.status, 422);
      assert.equal(err.detail, 'Unexpected kind: unknown');
    }
  });

  test('more than 10000 operations is 413', () => {
    const ops = Array.from({ length: 10001 }, () => ({ op: 'test', path: '/kind', value: 'Pod' }));
    const err = rejects(() => applyJsonPatch(pod(), ops));
    assert.equal(err.status, 413);
    assert.match(err.message, /The allowed maximum operations in a JSON patch is 10000, got 10001/);
  });
});
