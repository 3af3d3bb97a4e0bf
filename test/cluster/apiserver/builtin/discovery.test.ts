import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ALL_VERBS, builtinResourceTypes } from '../../../../src/cluster/apiserver/builtin/index.ts';

const types = builtinResourceTypes();
const byKey = new Map(types.map((t) => [`${t.group}/${t.resource}`, t]));

function get(group: string, resource: string) {
  const t = byKey.get(`${group}/${resource}`);
  assert.ok(t, `${group}/${resource} missing`);
  return t;
}

describe('builtinResourceTypes', () => {
  test('serves every resource of the brief exactly once', () => {
    const expected = [
      '/namespaces',
      '/pods',
      '/nodes',
      '/events',
      '/configmaps',
      '/secrets',
      '/services',
      '/serviceaccounts',
      '/endpoints',
      'apps/deployments',
      'apps/replicasets',
      'apps/statefulsets',
      'apps/daemonsets',
      'batch/jobs',
      'coordination.k8s.io/leases',
      'events.k8s.io/events',
      'rbac.authorization.k8s.io/roles',
      'rbac.authorization.k8s.io/clusterroles',
      'rbac.authorization.k8s.io/rolebindings',
      'rbac.authorization.k8s.io/clusterrolebindings',
      'admissionregistration.k8s.io/mutatingwebhookconfigurations',
      'admissionregistration.k8s.io/validatingwebhookconfigurations',
      'apiextensions.k8s.io/customresourcedefinitions',
      'authorization.k8s.io/selfsubjectaccessreviews',
      'authorization.k8s.io/selfsubjectrulesreviews',
      'authorization.k8s.io/subjectaccessreviews',
      // The kinds registered as data (builtin/catalog.ts).
      '/componentstatuses',
      '/limitranges',
      '/persistentvolumeclaims',
      '/persistentvolumes',
      '/podtemplates',
      '/replicationcontrollers',
      '/resourcequotas',
      'admissionregistration.k8s.io/validatingadmissionpolicies',
      'admissionregistration.k8s.io/validatingadmissionpolicybindings',
      'apiregistration.k8s.io/apiservices',
      'apps/controllerrevisions',
      'authentication.k8s.io/selfsubjectreviews',
      'authentication.k8s.io/tokenreviews',
      'authorization.k8s.io/localsubjectaccessreviews',
      'autoscaling/horizontalpodautoscalers',
      'batch/cronjobs',
      'certificates.k8s.io/certificatesigningrequests',
      'discovery.k8s.io/endpointslices',
      'flowcontrol.apiserver.k8s.io/flowschemas',
      'flowcontrol.apiserver.k8s.io/prioritylevelconfigurations',
      'networking.k8s.io/ingressclasses',
      'networking.k8s.io/ingresses',
      'networking.k8s.io/networkpolicies',
      'node.k8s.io/runtimeclasses',
      'policy/poddisruptionbudgets',
      'scheduling.k8s.io/priorityclasses',
      'storage.k8s.io/csidrivers',
      'storage.k8s.io/csinodes',
      'storage.k8s.io/csistoragecapacities',
      'storage.k8s.io/storageclasses',
      'storage.k8s.io/volumeattachments',
    ];
    assert.deepEqual([...byKey.keys()].sort(), expected.sort());
    // HorizontalPodAutoscalers are served at autoscaling/v1 and v2.
    assert.equal(types.length, expected.length + 1);
  });

  test('short names, singulars and categories as discovery shows them', () => {
    const shorts: [string, string, string[]][] = [
      ['', 'pods', ['po']],
      ['', 'nodes', ['no']],
      ['', 'namespaces', ['ns']],
      ['', 'configmaps', ['cm']],
      ['', 'services', ['svc']],
      ['', 'serviceaccounts', ['sa']],
      ['', 'events', ['ev']],
      ['', 'endpoints', ['ep']],
      ['', 'secrets', []],
      ['apps', 'deployments', ['deploy']],
      ['apps', 'replicasets', ['rs']],
      ['apps', 'statefulsets', ['sts']],
      ['apps', 'daemonsets', ['ds']],
      ['batch', 'jobs', []],
      ['events.k8s.io', 'events', ['ev']],
      ['apiextensions.k8s.io', 'customresourcedefinitions', ['crd', 'crds']],
    ];
    for (const [g, r, s] of shorts) assert.deepEqual(get(g, r).shortNames, s, `${g}/${r}`);
    const all = types
      .filter((t) => t.categories.includes('all'))
      .map((t) => `${t.group}/${t.resource}`)
      .sort();
    assert.deepEqual(all, [
      '/pods',
      '/replicationcontrollers',
      '/services',
      'apps/daemonsets',
      'apps/deployments',
      'apps/replicasets',
      'apps/statefulsets',
      'autoscaling/horizontalpodautoscalers',
      'autoscaling/horizontalpodautoscalers',
      'batch/cronjobs',
      'batch/jobs',
    ]);
    assert.equal(get('', 'endpoints').singular, 'endpoints');
    assert.equal(get('apps', 'deployments').singular, 'deployment');
    for (const t of types) {
      assert.equal(t.listKind, `${t.kind}List`);
      assert.match(t.singular, /^[a-z]+$/);
    }
  });

  test('verbs and scope', () => {
    assert.deepEqual(get('', 'pods').verbs, ALL_VERBS);
    assert.ok(!get('', 'namespaces').verbs.includes('deletecollection'));
    assert.deepEqual(get('authorization.k8s.io', 'selfsubjectaccessreviews').verbs, ['create']);
    assert.deepEqual(get('authorization.k8s.io', 'selfsubjectrulesreviews').verbs, ['create']);
    const clusterScoped = types
      .filter((t) => !t.namespaced)
      .map((t) => t.resource)
      .sort();
    assert.deepEqual(clusterScoped, [
      'apiservices',
      'certificatesigningrequests',
      'clusterrolebindings',
      'clusterroles',
      'componentstatuses',
      'csidrivers',
      'csinodes',
      'customresourcedefinitions',
      'flowschemas',
      'ingressclasses',
      'mutatingwebhookconfigurations',
      'namespaces',
      'nodes',
      'persistentvolumes',
      'priorityclasses',
      'prioritylevelconfigurations',
      'runtimeclasses',
      'selfsubjectaccessreviews',
      'selfsubjectreviews',
      'selfsubjectrulesreviews',
      'storageclasses',
      'subjectaccessreviews',
      'tokenreviews',
      'validatingadmissionpolicies',
      'validatingadmissionpolicybindings',
      'validatingwebhookconfigurations',
      'volumeattachments',
    ]);
  });

  test('subresources and scale paths', () => {
    assert.deepEqual(get('', 'pods').subresources, [
      'status',
      'binding',
      'eviction',
      'log',
      'exec',
      'attach',
      'portforward',
      'proxy',
      'ephemeralcontainers',
    ]);
    assert.deepEqual(get('', 'serviceaccounts').subresources, ['token']);
    assert.deepEqual(get('', 'nodes').subresources, ['status', 'proxy']);
    assert.deepEqual(get('', 'services').subresources, ['status', 'proxy']);
    assert.deepEqual(get('batch', 'jobs').subresources, ['status']);
    for (const r of ['deployments', 'replicasets', 'statefulsets']) {
      const t = get('apps', r);
      assert.deepEqual(t.subresources, ['status', 'scale']);
      assert.deepEqual(t.scale, {
        specReplicasPath: '.spec.replicas',
        statusReplicasPath: '.status.replicas',
        labelSelectorPath: '.spec.selector',
      });
    }
    assert.equal(get('apps', 'daemonsets').scale, undefined);
  });

  test('every listable kind has a table whose first column is NAME or LAST SEEN', () => {
    for (const t of types.filter((x) => x.verbs.includes('list'))) {
      const table = t.strategy.table;
      assert.ok(table, `${t.resource} has no table`);
      assert.ok(['Name', 'Last Seen'].includes(table.columns[0]!.name), t.resource);
    }
  });

  test('each call returns fresh records', () => {
    const a = builtinResourceTypes();
    a[0]!.shortNames.push('zz');
    assert.ok(!builtinResourceTypes()[0]!.shortNames.includes('zz'));
  });
});
