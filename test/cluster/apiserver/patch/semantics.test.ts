import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  acceptedPatchTypes,
  builtinListSemantics,
  checkPatchContentType,
  FieldSet,
  gvkKey,
  listSemanticsFromSchema,
  PatchError,
  pathToString,
  SMP_TABLE,
  supportsStrategicMerge,
} from '../../../../src/cluster/apiserver/patch/index.ts';

describe('SMP table', () => {
  test('is keyed by group/version/Kind and only covers built-in kinds', () => {
    assert.equal(gvkKey({ group: '', version: 'v1', kind: 'Pod' }), 'v1/Pod');
    assert.equal(gvkKey({ group: 'apps', version: 'v1', kind: 'Deployment' }), 'apps/v1/Deployment');
    assert.ok(supportsStrategicMerge({ group: 'batch', version: 'v1', kind: 'Job' }));
    assert.ok(supportsStrategicMerge('coordination.k8s.io/v1/Lease'));
    assert.ok(
      !supportsStrategicMerge({ group: 'scheduling.example.com', version: 'v1alpha1', kind: 'PodSequence' }),
    );
  });

  test('records merge keys as data per path', () => {
    const pod = SMP_TABLE['v1/Pod']!;
    assert.equal(pod['spec.containers']?.patchMergeKey, 'name');
    assert.equal(pod['spec.containers.ports']?.patchMergeKey, 'containerPort');
    assert.equal(pod['spec.initContainers.volumeMounts']?.patchMergeKey, 'mountPath');
    assert.equal(pod['metadata.ownerReferences']?.patchMergeKey, 'uid');
    assert.equal(pod['spec.tolerations'], undefined);
    assert.equal(
      SMP_TABLE['apps/v1/StatefulSet']!['spec.template.spec.containers.env']?.patchMergeKey,
      'name',
    );
    assert.equal(SMP_TABLE['v1/Service']!['spec.ports']?.patchMergeKey, 'port');
  });
});

describe('list semantics', () => {
  test('built-in kinds read listType from the table; unknown lists are atomic', () => {
    const sem = builtinListSemantics('v1/Pod');
    assert.deepEqual(sem(['spec', 'containers', 'ports']), {
      type: 'map',
      keys: ['containerPort', 'protocol'],
      keyDefaults: { protocol: 'TCP' },
    });
    assert.deepEqual(sem(['metadata', 'finalizers']), { type: 'set' });
    assert.deepEqual(sem(['metadata', 'ownerReferences']), { type: 'map', keys: ['uid'], atomicItems: true });
    assert.deepEqual(sem(['status', 'hostIPs']), { type: 'atomic' });
    assert.equal(sem(['spec', 'tolerations']), undefined);
    assert.equal(sem.alwaysPresent?.(['spec']), true);
    assert.deepEqual(builtinListSemantics('example.com/v1/Thing')(['metadata', 'finalizers']), {
      type: 'set',
    });
  });

  test('custom resources read x-kubernetes-list-type, list-map-keys and map-type', () => {
    const sem = listSemanticsFromSchema({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            ports: {
              type: 'array',
              'x-kubernetes-list-type': 'map',
              'x-kubernetes-list-map-keys': ['port', 'protocol'],
              items: {
                type: 'object',
                'x-kubernetes-map-type': 'atomic',
                properties: { port: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' } },
              },
            },
            tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
            args: { type: 'array', items: { type: 'string' } },
            selector: { type: 'object', 'x-kubernetes-map-type': 'atomic' },
            byName: {
              type: 'object',
              additionalProperties: {
                type: 'object',
                properties: {
                  items: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
                },
              },
            },
          },
        },
      },
    });
    assert.deepEqual(sem(['spec', 'ports']), {
      type: 'map',
      keys: ['port', 'protocol'],
      keyDefaults: { protocol: 'TCP' },
      atomicItems: true,
    });
    assert.deepEqual(sem(['spec', 'tags']), { type: 'set' });
    assert.deepEqual(sem(['spec', 'args']), { type: 'atomic' });
    assert.deepEqual(sem(['spec', 'selector']), { type: 'atomic' });
    assert.deepEqual(sem(['spec', 'byName', 'anyKey', 'items']), { type: 'set' });
    assert.equal(sem(['spec', 'unknown']), undefined);
    assert.deepEqual(sem(['metadata', 'ownerReferences']), { type: 'map', keys: ['uid'], atomicItems: true });
  });
});

describe('FieldSet', () => {
  test('round-trips FieldsV1 and orders fields before keys before values', () => {
    const v1 = {
      'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } },
      'f:spec': {
        'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {} } },
        'f:finalizers': { 'v:"x"': {} },
      },
    };
    const set = FieldSet.fromFieldsV1(v1);
    assert.deepEqual(set.toFieldsV1(), v1);
    assert.ok(set.has(['f:metadata', 'f:labels']));
    assert.ok(!set.has(['f:metadata']));
    assert.deepEqual(FieldSet.of(['v:"b"'], ['k:{"a":1}'], ['f:z'], ['i:2']).paths(), [
      ['f:z'],
      ['k:{"a":1}'],
      ['v:"b"'],
      ['i:2'],
    ]);
  });

  test('set algebra: difference is exact, recursiveDifference drops subtrees', () => {
    const a = FieldSet.of(['f:a'], ['f:a', 'f:b'], ['f:c']);
    const b = FieldSet.of(['f:a']);
    assert.deepEqual(a.difference(b).paths(), [['f:a', 'f:b'], ['f:c']]);
    assert.deepEqual(a.recursiveDifference(b).paths(), [['f:c']]);
    assert.deepEqual(a.intersection(FieldSet.of(['f:a', 'f:b'])).paths(), [['f:a', 'f:b']]);
  });

  test('paths print like fieldpath.Path.String()', () => {
    assert.equal(
      pathToString([
        'f:spec',
        'f:containers',
        'k:{"name":"c"}',
        'f:ports',
        'k:{"containerPort":80,"protocol":"TCP"}',
      ]),
      '.spec.containers[name="c"].ports[containerPort=80,protocol="TCP"]',
    );
    assert.equal(
      pathToString(['f:metadata', 'f:finalizers', 'v:"x.io/y"']),
      '.metadata.finalizers[="x.io/y"]',
    );
  });
});

describe('patch content types', () => {
  test('built-in kinds accept strategic merge; custom resources and CBOR apply get 415', () => {
    assert.equal(
      checkPatchContentType('application/strategic-merge-patch+json; charset=utf-8', 'v1/Pod'),
      'application/strategic-merge-patch+json',
    );
    assert.deepEqual(acceptedPatchTypes('example.com/v1/Thing'), [
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/apply-patch+yaml',
    ]);
    for (const [type, gvk] of [
      ['application/strategic-merge-patch+json', 'example.com/v1/Thing'],
      ['application/apply-patch+cbor', 'v1/Pod'],
      ['text/plain', 'v1/Pod'],
    ] as const) {
      assert.throws(
        () => checkPatchContentType(type, gvk),
        (e: unknown) =>
          e instanceof PatchError &&
          e.status === 415 &&
          e.reason === 'UnsupportedMediaType' &&
          e.message.startsWith(
            'the body of the request was in an unknown format - accepted media types include: ',
          ),
      );
    }
  });
});
