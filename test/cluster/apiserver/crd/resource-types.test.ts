import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { crdStrategy, resourceTypesFromCRD } from '../../../../src/cluster/apiserver/crd/index.ts';
import { type JSONSchema, unknownFieldsForCRD } from '../../../../src/cluster/apiserver/openapi/index.ts';
import type { KubeObject, RequestContext } from '../../../../src/cluster/apiserver/types.ts';
import { podSequence, podSequenceCRD } from './fixtures.ts';

const main: RequestContext = { subresource: '', dryRun: false, user: 'admin' };
const status: RequestContext = { subresource: 'status', dryRun: false, user: 'admin' };

function seq(spec: Record<string, unknown>, extra: Record<string, unknown> = {}): KubeObject {
  return { ...podSequence(spec), ...extra } as KubeObject;
}

describe('resourceTypesFromCRD', () => {
  test('one ResourceType per served version with names, scope, verbs and subresources', () => {
    const crd = podSequenceCRD();
    const v2 = structuredClone(crd.spec!.versions![0]!);
    v2.name = 'v1alpha2';
    v2.storage = false;
    v2.subresources = {
      status: {},
      scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
    };
    crd.spec!.versions!.push(v2, { name: 'v0', served: false, storage: false });
    crd.spec!.names!.categories = ['all'];
    const types = resourceTypesFromCRD(crd);
    assert.equal(types.length, 2);
    const [a, b] = types;
    assert.deepEqual(
      { ...a!, strategy: undefined },
      {
        group: 'scheduling.example.com',
        version: 'v1alpha1',
        resource: 'podsequences',
        singular: 'podsequence',
        kind: 'PodSequence',
        listKind: 'PodSequenceList',
        namespaced: true,
        shortNames: ['podseq'],
        categories: ['all'],
        verbs: ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'],
        subresources: ['status'],
        strategy: undefined,
        storage: true,
      },
    );
    assert.deepEqual(b!.subresources, ['status', 'scale']);
    assert.deepEqual(b!.scale, {
      specReplicasPath: '.spec.replicas',
      statusReplicasPath: '.status.replicas',
    });
    assert.equal(b!.storage, false);
    assert.equal(a!.strategy.tracksGeneration, true);
  });

  test('singular and listKind default from kind; Cluster scope', () => {
    const crd = podSequenceCRD();
    delete crd.spec!.names!.singular;
    delete crd.spec!.names!.listKind;
    crd.spec!.scope = 'Cluster';
    const [rt] = resourceTypesFromCRD(crd);
    assert.equal(rt!.singular, 'podsequence');
    assert.equal(rt!.listKind, 'PodSequenceList');
    assert.equal(rt!.namespaced, false);
  });
});

describe('custom resource strategy', () => {
  const [rt] = resourceTypesFromCRD(podSequenceCRD());
  const s = rt!.strategy;

  test('create: prunes, defaults, drops status, sets generation 1', () => {
    const obj = seq({ podGroups: [{ pods: ['pod-1'] }], bogus: true }, { status: { phase: 'Completed' } });
    // What fieldValidation=Strict/Warn reports for this object, from the same CRD version.
    const openAPIV3Schema = podSequenceCRD().spec!.versions![0]!.schema!.openAPIV3Schema as JSONSchema;
    assert.deepEqual(
      unknownFieldsForCRD({ group: rt!.group, version: rt!.version, kind: rt!.kind }, openAPIV3Schema, obj),
      ['spec.bogus'],
    );
    s.prepareForCreate!(obj, main);
    assert.equal('status' in obj, false);
    assert.equal(obj.metadata.generation, 1);
    assert.deepEqual(obj.spec, {
      podGroups: [{ pods: ['pod-1'] }],
      scope: 'Cluster',
      schedulingGateName: 'podsequence.example.com/sequence-gate',
    });
    assert.deepEqual(s.validateCreate!(obj, main), []);
  });

  test('main endpoint keeps the stored status and bumps generation on spec changes only', () => {
    const old = seq({ podGroups: [{ pods: ['a'] }], scope: 'Cluster' }, { status: { phase: 'InProgress' } });
    s.default!(old);
    old.metadata.generation = 4;
    const next = structuredClone(old);
    next.status = { phase: 'Completed' };
    next.metadata.labels = { touched: 'yes' };
    s.prepareForUpdate!(next, old, main);
    assert.deepEqual(next.status, { phase: 'InProgress' });
    assert.equal(next.metadata.generation, 4);
    (next.spec as Record<string, unknown>).namespace = 'other';
    s.prepareForUpdate!(next, old, main);
    assert.equal(next.metadata.generation, 5);
  });

  test('/status keeps everything but status', () => {
    const old = seq({ podGroups: [{ pods: ['a'] }] }, { status: { phase: 'Pending' } });
    s.default!(old);
    old.metadata.generation = 2;
    const next = structuredClone(old);
    next.spec = { podGroups: [{ pods: ['changed'] }] };
    next.metadata.labels = { ignored: 'yes' };
    next.status = { phase: 'InProgress', currentIndex: 1 };
    s.prepareForUpdate!(next, old, status);
    assert.deepEqual(next.spec, old.spec);
    assert.equal(next.metadata.labels, undefined);
    assert.deepEqual(next.status, { phase: 'InProgress', currentIndex: 1 });
    assert.deepEqual(s.validateUpdate!(next, old, status), []);
    next.status = { phase: 'Sleeping' };
    assert.deepEqual(s.validateUpdate!(next, old, status), [
      {
        reason: 'FieldValueNotSupported',
        field: 'status.phase',
        message:
          'Unsupported value: "Sleeping": supported values: "Pending", "InProgress", "Completed", "Failed"',
      },
      {
        reason: 'FieldValueInvalid',
        field: '<nil>',
        message:
          'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
      },
    ]);
  });

  test('validation covers TypeMeta, metadata.name, namespace, schema and CEL', () => {
    const wrongKind = seq({ podGroups: [{ pods: ['a'] }] });
    wrongKind.kind = 'PodSeq';
    assert.deepEqual(s.validateCreate!(wrongKind, main), [
      { reason: 'FieldValueInvalid', field: 'kind', message: 'Invalid value: "PodSeq": must be PodSequence' },
    ]);
    const badName = seq({ podGroups: [{ pods: ['a'] }] });
    badName.metadata.name = 'Bad_Name';
    badName.metadata.namespace = undefined;
    s.default!(badName);
    const errs = s.validateCreate!(badName, main);
    assert.equal(errs[0]!.field, 'metadata.name');
    assert.match(
      errs[0]!.message,
      /^Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of/,
    );
    assert.deepEqual(errs[1], {
      reason: 'FieldValueRequired',
      field: 'metadata.namespace',
      message: 'Required value',
    });

    const missing = seq({});
    s.default!(missing);
    assert.deepEqual(s.validateCreate!(missing, main)[0], {
      reason: 'FieldValueRequired',
      field: 'spec.podGroups',
      message: 'Required value',
    });
  });

  test('transition rule on update: scope is immutable', () => {
    const old = seq({ podGroups: [{ pods: ['a'] }], scope: 'Cluster' });
    s.default!(old);
    const next = structuredClone(old);
    (next.spec as Record<string, unknown>).scope = 'Node';
    assert.deepEqual(s.validateUpdate!(next, old, main), [
      { reason: 'FieldValueInvalid', field: 'spec', message: 'Invalid value: scope is immutable' },
    ]);
  });

  test('table uses the printer columns', () => {
    const obj = seq(
      { podGroups: [{ pods: ['a'] }], scope: 'Node' },
      { status: { phase: 'InProgress', currentIndex: 1 } },
    );
    obj.metadata.creationTimestamp = '2025-01-10T10:00:00Z';
    const t = s.table!;
    assert.deepEqual(
      t.columns.map((c) => c.name),
      ['Name', 'Phase', 'Current', 'Scope', 'Age'],
    );
    assert.deepEqual(t.cells(obj, new Date('2025-01-10T12:00:00Z')), [
      'example-sequence',
      'InProgress',
      1,
      'Node',
      '120m',
    ]);
  });

  test('scale paths must hold non-negative integers', () => {
    const crd = podSequenceCRD();
    const v = crd.spec!.versions![0]!;
    v.schema!.openAPIV3Schema!.properties!.spec!.properties!.replicas = { type: 'integer' };
    v.subresources = {
      status: {},
      scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.currentIndex' },
    };
    const [withScale] = resourceTypesFromCRD(crd);
    const obj = seq({ podGroups: [{ pods: ['a'] }], replicas: -1 });
    withScale!.strategy.default!(obj);
    assert.deepEqual(withScale!.strategy.validateCreate!(obj, main), [
      {
        reason: 'FieldValueInvalid',
        field: '.spec.replicas',
        message: 'Invalid value: -1: should be a non-negative integer',
      },
    ]);
  });
});

describe('CustomResourceDefinition strategy', () => {
  test('create fills storedVersions and validates', () => {
    const crd = podSequenceCRD() as unknown as KubeObject;
    crdStrategy.prepareForCreate!(crd, main);
    assert.deepEqual(crd.status, { storedVersions: ['v1alpha1'] });
    assert.deepEqual(crdStrategy.validateCreate!(crd, main), []);
  });

  test('update keeps server status and adds the new storage version', () => {
    const old = podSequenceCRD() as unknown as KubeObject;
    old.status = { storedVersions: ['v1alpha1'] };
    const next = structuredClone(old);
    const versions = (next.spec as { versions: Record<string, unknown>[] }).versions;
    versions[0]!.storage = false;
    versions.push({ ...structuredClone(versions[0]!), name: 'v1beta1', storage: true });
    next.status = { storedVersions: [] };
    crdStrategy.prepareForUpdate!(next, old, main);
    assert.deepEqual(next.status, { storedVersions: ['v1alpha1', 'v1beta1'] });
    assert.deepEqual(crdStrategy.validateUpdate!(next, old, main), []);
  });
});
