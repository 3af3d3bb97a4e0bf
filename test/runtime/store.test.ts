import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  indexByLabel,
  indexByNamespace,
  indexByNodeName,
  indexByOwnerUid,
  labelIndexName,
  NODE_NAME_INDEX,
  OWNER_UID_INDEX,
  Store,
} from '../../src/runtime/store.ts';
import { LAST_APPLIED_ANNOTATION, stripForCache } from '../../src/runtime/transform.ts';
import type { KubeObject } from '../../src/runtime/types.ts';
import { objectKey, parseKey } from '../../src/runtime/types.ts';
import { pod as buildPod } from '../support/objects.ts';

function pod(
  name: string,
  opts: { ns?: string; node?: string; group?: string; owners?: string[] } = {},
): KubeObject {
  return buildPod<KubeObject>(name, {
    namespace: opts.ns ?? 'default',
    labels: opts.group ? { group: opts.group } : {},
    ownerReferences: (opts.owners ?? []).map((uid) => ({ apiVersion: 'v1', kind: 'X', name: uid, uid })),
    ...(opts.node ? { node: opts.node } : {}),
  });
}

describe('Store', () => {
  test('keeps indexes current through set and delete', () => {
    const s = new Store();
    s.addIndexer(NODE_NAME_INDEX, indexByNodeName);
    s.addIndexer(labelIndexName('group'), indexByLabel('group'));
    s.set('default/a', pod('a', { node: 'n1', group: 'g' }));
    s.set('default/b', pod('b', { node: 'n1' }));
    s.set('default/c', pod('c', { node: 'n2', group: 'g' }));
    assert.deepEqual(s.indexKeys(NODE_NAME_INDEX, 'n1').sort(), ['default/a', 'default/b']);
    assert.deepEqual(s.indexKeys(labelIndexName('group'), 'g').sort(), ['default/a', 'default/c']);
    // Moving a pod moves its index entry.
    s.set('default/b', pod('b', { node: 'n2' }));
    assert.deepEqual(s.indexKeys(NODE_NAME_INDEX, 'n1'), ['default/a']);
    assert.deepEqual(s.indexKeys(NODE_NAME_INDEX, 'n2').sort(), ['default/b', 'default/c']);
    s.delete('default/a');
    assert.deepEqual(s.indexKeys(NODE_NAME_INDEX, 'n1'), []);
    assert.deepEqual(s.indexValues(NODE_NAME_INDEX), ['n2']);
    assert.equal(s.size, 2);
  });

  test('indexes objects already present when an index is added', () => {
    const s = new Store();
    s.set('x/a', pod('a', { ns: 'x', owners: ['u1', 'u2'] }));
    s.set('y/b', pod('b', { ns: 'y', owners: ['u2'] }));
    s.addIndexer(OWNER_UID_INDEX, indexByOwnerUid);
    s.addIndexer('namespace', indexByNamespace);
    assert.deepEqual(
      s
        .byIndex(OWNER_UID_INDEX, 'u2')
        .map((o) => o.metadata.name)
        .sort(),
      ['a', 'b'],
    );
    assert.deepEqual(s.indexKeys('namespace', 'x'), ['x/a']);
  });

  test('unknown index names are an error', () => {
    assert.throws(() => new Store().byIndex('nope', 'v'), /no index named nope/);
  });
});

describe('stripForCache', () => {
  test('drops managedFields and the last-applied annotation, keeps the rest', () => {
    const obj: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'a',
        managedFields: [{ manager: 'kubectl' }],
        annotations: { [LAST_APPLIED_ANNOTATION]: '{}', keep: 'me' },
      },
    };
    stripForCache(obj);
    assert.equal(obj.metadata.managedFields, undefined);
    assert.deepEqual(obj.metadata.annotations, { keep: 'me' });
  });

  test('removes an annotation map left empty', () => {
    const obj: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'a', annotations: { [LAST_APPLIED_ANNOTATION]: '{}' } },
    };
    stripForCache(obj);
    assert.equal('annotations' in obj.metadata, false);
  });
});

describe('keys', () => {
  test('namespace/name for namespaced objects, name for cluster-scoped ones', () => {
    assert.equal(objectKey({ metadata: { name: 'a', namespace: 'ns' } }), 'ns/a');
    assert.equal(objectKey({ metadata: { name: 'node-1' } }), 'node-1');
    assert.deepEqual(parseKey('ns/a'), { namespace: 'ns', name: 'a' });
    assert.deepEqual(parseKey('node-1'), { name: 'node-1' });
  });
});
