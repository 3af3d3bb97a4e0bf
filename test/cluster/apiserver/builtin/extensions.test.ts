import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create, created, messages, mutate, rtFor, update } from './harness.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests reach into loose JSON
type Any = any;

describe('rbac', () => {
  const roles = rtFor('roles', 'rbac.authorization.k8s.io');
  const clusterRoles = rtFor('clusterroles', 'rbac.authorization.k8s.io');
  const bindings = rtFor('rolebindings', 'rbac.authorization.k8s.io');
  const clusterBindings = rtFor('clusterrolebindings', 'rbac.authorization.k8s.io');

  test('rules need verbs, groups and resources; namespaced rules cannot name URLs', () => {
    const r = create(roles, {
      metadata: { name: 'r' },
      rules: [{ resources: ['pods'] }, { verbs: ['get'], nonResourceURLs: ['/healthz'] }],
    });
    assert.deepEqual(messages(r.errors), [
      'rules[0].verbs: Required value: verbs must contain at least one value',
      'rules[0].apiGroups: Required value: resource rules must supply at least one api group',
      'rules[1].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs',
    ]);
    assert.deepEqual(
      create(clusterRoles, {
        metadata: { name: 'system:metrics' },
        rules: [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }],
      }).errors,
      [],
    );
  });

  test('names are path segments', () => {
    const r = create(roles, { metadata: { name: 'a/b' }, rules: [] });
    assert.deepEqual(messages(r.errors), [`metadata.name: Invalid value: "a/b": may not contain '/'`]);
  });

  test('bindings default apiGroups and refuse roleRef changes', () => {
    const b = created(bindings, {
      metadata: { name: 'b' },
      roleRef: { kind: 'Role', name: 'r' },
      subjects: [
        { kind: 'User', name: 'alice' },
        { kind: 'ServiceAccount', name: 'robot', namespace: 'default' },
      ],
    }) as Any;
    assert.equal(b.roleRef.apiGroup, 'rbac.authorization.k8s.io');
    assert.equal(b.subjects[0].apiGroup, 'rbac.authorization.k8s.io');
    assert.equal(b.subjects[1].apiGroup, '');
    const r = update(
      bindings,
      b,
      mutate(b, (o: Any) => (o.roleRef.name = 'other')),
    );
    assert.deepEqual(messages(r.errors), [
      'roleRef: Invalid value: {"kind":"Role","name":"other","apiGroup":"rbac.authorization.k8s.io"}: cannot change roleRef',
    ]);
    assert.deepEqual(bindings.strategy.table!.cells(b, new Date('2025-01-01T00:00:01Z')), [
      'b',
      'Role/r',
      '1s',
      'alice',
      '',
      'default/robot',
    ]);
  });

  test('cluster bindings need ClusterRoles and namespaced service accounts', () => {
    const r = create(clusterBindings, {
      metadata: { name: 'b' },
      roleRef: { kind: 'Role', name: 'r' },
      subjects: [
        { kind: 'ServiceAccount', name: 'robot' },
        { kind: 'Robot', name: 'x' },
      ],
    });
    assert.deepEqual(messages(r.errors), [
      'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
      'subjects[0].namespace: Required value',
      'subjects[1].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"',
    ]);
  });

  test('roles use the default Name / Created At table', () => {
    const r = created(roles, { metadata: { name: 'r' }, rules: [] });
    assert.deepEqual(
      roles.strategy.table!.columns.map((c) => [c.name, c.type]),
      [
        ['Name', 'string'],
        ['Created At', 'date'],
      ],
    );
    assert.deepEqual(roles.strategy.table!.cells(r, new Date()), ['r', '2025-01-01T00:00:00Z']);
  });
});

describe('webhook configurations', () => {
  const mutating = rtFor('mutatingwebhookconfigurations', 'admissionregistration.k8s.io');
  const validating = rtFor('validatingwebhookconfigurations', 'admissionregistration.k8s.io');
  const hook = {
    name: 'pods.example.com',
    clientConfig: { service: { name: 'svc', namespace: 'sys', path: '/mutate' }, caBundle: 'Q0E=' },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
  };

  test('defaults', () => {
    const m = created(mutating, { metadata: { name: 'm' }, webhooks: [hook] }) as Any;
    const w = m.webhooks[0];
    assert.equal(w.failurePolicy, 'Fail');
    assert.equal(w.matchPolicy, 'Equivalent');
    assert.deepEqual(w.namespaceSelector, {});
    assert.deepEqual(w.objectSelector, {});
    assert.equal(w.timeoutSeconds, 10);
    assert.equal(w.reinvocationPolicy, 'Never');
    assert.equal(w.rules[0].scope, '*');
    assert.equal(w.clientConfig.service.port, 443);
    assert.equal(m.metadata.generation, 1);
  });

  test('validation', () => {
    const r = create(validating, {
      metadata: { name: 'v' },
      webhooks: [
        { ...hook, name: 'short', sideEffects: undefined, admissionReviewVersions: [], clientConfig: {} },
        { ...hook },
        { ...hook },
      ],
    });
    assert.deepEqual(messages(r.errors), [
      'webhooks[0].name: Invalid value: "short": should be a domain with at least three segments separated by dots',
      'webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun',
      'webhooks[0].clientConfig: Required value: exactly one of url or service is required',
      'webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1',
      'webhooks[2].name: Duplicate value: "pods.example.com"',
    ]);
    const url = create(validating, {
      metadata: { name: 'v' },
      webhooks: [{ ...hook, clientConfig: { url: 'http://x.example.com/hook' } }],
    });
    assert.deepEqual(messages(url.errors), [
      `webhooks[0].clientConfig.url: Invalid value: "http://x.example.com/hook": 'https' is the only allowed URL scheme`,
    ]);
  });

  test('generation follows webhook changes only', () => {
    const m = created(mutating, { metadata: { name: 'm' }, webhooks: [hook] });
    const labels = update(
      mutating,
      m,
      mutate(m, (o: Any) => (o.metadata.labels = { a: 'b' })),
    );
    assert.equal(labels.obj.metadata.generation, 1);
    const changed = update(
      mutating,
      m,
      mutate(m, (o: Any) => (o.webhooks[0].timeoutSeconds = 5)),
    );
    assert.deepEqual(changed.errors, []);
    assert.equal(changed.obj.metadata.generation, 2);
    assert.deepEqual(mutating.strategy.table!.cells(m, new Date('2025-01-01T00:00:00Z')), ['m', 1, '0s']);
  });
});

describe('customresourcedefinitions', () => {
  const crds = rtFor('customresourcedefinitions', 'apiextensions.k8s.io');
  const crd = {
    metadata: { name: 'podsequences.scheduling.example.com' },
    spec: {
      group: 'scheduling.example.com',
      scope: 'Namespaced',
      names: { plural: 'podsequences', kind: 'PodSequence', shortNames: ['ps'] },
      versions: [
        { name: 'v1alpha1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
      ],
    },
  };

  test('defaults names and conversion, records the storage version', () => {
    const c = created(crds, crd) as Any;
    assert.equal(c.spec.names.singular, 'podsequence');
    assert.equal(c.spec.names.listKind, 'PodSequenceList');
    assert.deepEqual(c.spec.conversion, { strategy: 'None' });
    assert.deepEqual(c.status, { storedVersions: ['v1alpha1'] });
  });

  test('name must be plural.group; exactly one storage version; schema required', () => {
    const r = create(
      crds,
      mutate(crd, (o: Any) => {
        o.metadata.name = 'wrong.example.com';
        o.spec.versions.push({ name: 'v1', served: true, storage: true });
      }),
    );
    const m = messages(r.errors);
    assert.ok(
      m.includes(
        'metadata.name: Invalid value: "wrong.example.com": must be spec.names.plural+"."+spec.group',
      ),
      m.join('\n'),
    );
    assert.ok(
      m.some(
        (x) =>
          x.startsWith('spec.versions: Invalid value: ') &&
          x.endsWith(': must have exactly one version marked as storage version'),
      ),
    );
    assert.ok(m.includes('spec.versions[1].schema.openAPIV3Schema: Required value: schemas are required'));
  });

  test('group is immutable; a new storage version joins storedVersions', () => {
    const c = created(crds, crd);
    const g = update(
      crds,
      c,
      mutate(c, (o: Any) => (o.spec.group = 'other.example.com')),
    );
    assert.ok(
      messages(g.errors).includes('spec.group: Invalid value: "other.example.com": field is immutable'),
    );
    const v2 = update(
      crds,
      c,
      mutate(c, (o: Any) => {
        o.spec.versions[0].storage = false;
        o.spec.versions.push({
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object' } },
        });
      }),
    );
    assert.deepEqual(v2.errors, []);
    assert.deepEqual((v2.obj as Any).status.storedVersions, ['v1alpha1', 'v1']);
    assert.equal(v2.obj.metadata.generation, 2);
  });

  test('default table', () => {
    assert.deepEqual(
      crds.strategy.table!.columns.map((c) => c.name),
      ['Name', 'Created At'],
    );
  });
});

describe('leases and access reviews', () => {
  test('lease durations must be positive; table shows the holder', () => {
    const leases = rtFor('leases', 'coordination.k8s.io');
    const r = create(leases, { metadata: { name: 'l' }, spec: { leaseDurationSeconds: 0 } });
    assert.deepEqual(messages(r.errors), [
      'spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0',
    ]);
    const l = created(leases, {
      metadata: { name: 'l' },
      spec: { holderIdentity: 'mgr-1', leaseDurationSeconds: 15 },
    });
    assert.deepEqual(leases.strategy.table!.cells(l, new Date('2025-01-01T00:00:03Z')), ['l', 'mgr-1', '3s']);
  });

  test('access reviews need exactly one attribute kind, and SAR a user or group', () => {
    const ssar = rtFor('selfsubjectaccessreviews', 'authorization.k8s.io');
    const sar = rtFor('subjectaccessreviews', 'authorization.k8s.io');
    assert.deepEqual(
      messages(
        ssar.strategy.validateCreate!(
          { apiVersion: '', kind: '', metadata: {}, spec: {} },
          { subresource: '', dryRun: false, user: 'u' },
        ),
      ),
      [
        'spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified',
      ],
    );
    assert.deepEqual(
      messages(
        sar.strategy.validateCreate!(
          { apiVersion: '', kind: '', metadata: {}, spec: { resourceAttributes: { verb: 'get' } } },
          { subresource: '', dryRun: false, user: 'u' },
        ),
      ),
      ['spec.user: Invalid value: "": at least one of user or group must be specified'],
    );
  });
});
