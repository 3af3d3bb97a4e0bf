/**
 * Discovery parity with kube-apiserver 1.32 and its default flags (GA group versions only):
 * every resource with its short names, group version, scope, kind, verbs and categories, as
 * kubernetes/kubernetes api/discovery/*.json lists them for the v1 (and autoscaling/v2)
 * groups enabled by default. kubectl prints the list sorted by group, then name.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { KubernetesObjectApi } from '@kubernetes/client-node';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';

const ZERO_MIN = `apiVersion: autoscaling/v1
kind: HorizontalPodAutoscaler
metadata: {name: zero, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 0
  maxReplicas: 3
`;

const RW = 'create,delete,deletecollection,get,list,patch,update,watch';
const NS_VERBS = 'create,delete,get,list,patch,update,watch';

// name, short names, apiVersion, namespaced, kind, verbs, categories
const KUBE_1_32: Array<[string, string, string, boolean, string, string, string]> = [
  ['bindings', '', 'v1', true, 'Binding', 'create', ''],
  ['componentstatuses', 'cs', 'v1', false, 'ComponentStatus', 'get,list', ''],
  ['configmaps', 'cm', 'v1', true, 'ConfigMap', RW, ''],
  ['endpoints', 'ep', 'v1', true, 'Endpoints', RW, ''],
  ['events', 'ev', 'v1', true, 'Event', RW, ''],
  ['limitranges', 'limits', 'v1', true, 'LimitRange', RW, ''],
  ['namespaces', 'ns', 'v1', false, 'Namespace', NS_VERBS, ''],
  ['nodes', 'no', 'v1', false, 'Node', RW, ''],
  ['persistentvolumeclaims', 'pvc', 'v1', true, 'PersistentVolumeClaim', RW, ''],
  ['persistentvolumes', 'pv', 'v1', false, 'PersistentVolume', RW, ''],
  ['pods', 'po', 'v1', true, 'Pod', RW, 'all'],
  ['podtemplates', '', 'v1', true, 'PodTemplate', RW, ''],
  ['replicationcontrollers', 'rc', 'v1', true, 'ReplicationController', RW, 'all'],
  ['resourcequotas', 'quota', 'v1', true, 'ResourceQuota', RW, ''],
  ['secrets', '', 'v1', true, 'Secret', RW, ''],
  ['serviceaccounts', 'sa', 'v1', true, 'ServiceAccount', RW, ''],
  ['services', 'svc', 'v1', true, 'Service', RW, 'all'],
  [
    'mutatingwebhookconfigurations',
    '',
    'admissionregistration.k8s.io/v1',
    false,
    'MutatingWebhookConfiguration',
    RW,
    'api-extensions',
  ],
  [
    'validatingadmissionpolicies',
    '',
    'admissionregistration.k8s.io/v1',
    false,
    'ValidatingAdmissionPolicy',
    RW,
    'api-extensions',
  ],
  [
    'validatingadmissionpolicybindings',
    '',
    'admissionregistration.k8s.io/v1',
    false,
    'ValidatingAdmissionPolicyBinding',
    RW,
    'api-extensions',
  ],
  [
    'validatingwebhookconfigurations',
    '',
    'admissionregistration.k8s.io/v1',
    false,
    'ValidatingWebhookConfiguration',
    RW,
    'api-extensions',
  ],
  [
    'customresourcedefinitions',
    'crd,crds',
    'apiextensions.k8s.io/v1',
    false,
    'CustomResourceDefinition',
    RW,
    'api-extensions',
  ],
  ['apiservices', '', 'apiregistration.k8s.io/v1', false, 'APIService', RW, 'api-extensions'],
  ['controllerrevisions', '', 'apps/v1', true, 'ControllerRevision', RW, ''],
  ['daemonsets', 'ds', 'apps/v1', true, 'DaemonSet', RW, 'all'],
  ['deployments', 'deploy', 'apps/v1', true, 'Deployment', RW, 'all'],
  ['replicasets', 'rs', 'apps/v1', true, 'ReplicaSet', RW, 'all'],
  ['statefulsets', 'sts', 'apps/v1', true, 'StatefulSet', RW, 'all'],
  ['selfsubjectreviews', '', 'authentication.k8s.io/v1', false, 'SelfSubjectReview', 'create', ''],
  ['tokenreviews', '', 'authentication.k8s.io/v1', false, 'TokenReview', 'create', ''],
  [
    'localsubjectaccessreviews',
    '',
    'authorization.k8s.io/v1',
    true,
    'LocalSubjectAccessReview',
    'create',
    '',
  ],
  ['selfsubjectaccessreviews', '', 'authorization.k8s.io/v1', false, 'SelfSubjectAccessReview', 'create', ''],
  ['selfsubjectrulesreviews', '', 'authorization.k8s.io/v1', false, 'SelfSubjectRulesReview', 'create', ''],
  ['subjectaccessreviews', '', 'authorization.k8s.io/v1', false, 'SubjectAccessReview', 'create', ''],
  ['horizontalpodautoscalers', 'hpa', 'autoscaling/v2', true, 'HorizontalPodAutoscaler', RW, 'all'],
  ['cronjobs', 'cj', 'batch/v1', true, 'CronJob', RW, 'all'],
  ['jobs', '', 'batch/v1', true, 'Job', RW, 'all'],
  ['certificatesigningrequests', 'csr', 'certificates.k8s.io/v1', false, 'CertificateSigningRequest', RW, ''],
  ['leases', '', 'coordination.k8s.io/v1', true, 'Lease', RW, ''],
  ['endpointslices', '', 'discovery.k8s.io/v1', true, 'EndpointSlice', RW, ''],
  ['events', 'ev', 'events.k8s.io/v1', true, 'Event', RW, ''],
  ['flowschemas', '', 'flowcontrol.apiserver.k8s.io/v1', false, 'FlowSchema', RW, ''],
  [
    'prioritylevelconfigurations',
    '',
    'flowcontrol.apiserver.k8s.io/v1',
    false,
    'PriorityLevelConfiguration',
    RW,
    '',
  ],
  ['ingressclasses', '', 'networking.k8s.io/v1', false, 'IngressClass', RW, ''],
  ['ingresses', 'ing', 'networking.k8s.io/v1', true, 'Ingress', RW, ''],
  ['networkpolicies', 'netpol', 'networking.k8s.io/v1', true, 'NetworkPolicy', RW, ''],
  ['runtimeclasses', '', 'node.k8s.io/v1', false, 'RuntimeClass', RW, ''],
  ['poddisruptionbudgets', 'pdb', 'policy/v1', true, 'PodDisruptionBudget', RW, ''],
  ['clusterrolebindings', '', 'rbac.authorization.k8s.io/v1', false, 'ClusterRoleBinding', RW, ''],
  ['clusterroles', '', 'rbac.authorization.k8s.io/v1', false, 'ClusterRole', RW, ''],
  ['rolebindings', '', 'rbac.authorization.k8s.io/v1', true, 'RoleBinding', RW, ''],
  ['roles', '', 'rbac.authorization.k8s.io/v1', true, 'Role', RW, ''],
  ['priorityclasses', 'pc', 'scheduling.k8s.io/v1', false, 'PriorityClass', RW, ''],
  ['csidrivers', '', 'storage.k8s.io/v1', false, 'CSIDriver', RW, ''],
  ['csinodes', '', 'storage.k8s.io/v1', false, 'CSINode', RW, ''],
  ['csistoragecapacities', '', 'storage.k8s.io/v1', true, 'CSIStorageCapacity', RW, ''],
  ['storageclasses', 'sc', 'storage.k8s.io/v1', false, 'StorageClass', RW, ''],
  ['volumeattachments', '', 'storage.k8s.io/v1', false, 'VolumeAttachment', RW, ''],
];

/** Splits kubectl's column-aligned table by the header's column starts. */
function parseTable(text: string): Record<string, string>[] {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const header = lines[0]!;
  const starts = [...header.matchAll(/\S+/g)].map((m) => m.index!);
  const names = [...header.matchAll(/\S+/g)].map((m) => m[0]);
  return lines.slice(1).map((line) => {
    const row: Record<string, string> = {};
    names.forEach((n, i) => {
      row[n] = line.slice(starts[i], i + 1 < starts.length ? starts[i + 1] : undefined).trim();
    });
    return row;
  });
}

describe('discovery parity with kube-apiserver 1.32', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(() => t.close());

  test('kubectl api-resources lists the default 1.32 resources, nothing more', async () => {
    const out = await t.kubectl(['api-resources', '-o', 'wide']);
    const rows = parseTable(out.stdout).map((r) => [
      r.NAME,
      r.SHORTNAMES,
      r.APIVERSION,
      r.NAMESPACED === 'true',
      r.KIND,
      r.VERBS,
      r.CATEGORIES,
    ]);
    assert.deepEqual(rows, KUBE_1_32);
  });

  test('aggregated discovery carries the subresources kubectl and clients use', async () => {
    const res = await t.request('GET', '/api');
    assert.equal(res.status, 200);
    const agg = await t.request('GET', '/apis/autoscaling');
    assert.equal((agg.json().preferredVersion as { version: string }).version, 'v2');
    const core = await t.request('GET', '/api/v1');
    const names = (core.json().resources as Array<{ name: string }>).map((r) => r.name);
    for (const sub of [
      'pods/log',
      'pods/eviction',
      'serviceaccounts/token',
      'namespaces/finalize',
      'replicationcontrollers/scale',
    ]) {
      assert.ok(names.includes(sub), `/api/v1 lists ${sub}`);
    }
  });

  test('a kind: List of every catalog kind applies and each prints upstream columns', async () => {
    // kubectl validates the List's items client-side against /openapi/v2, then the server again.
    const apply = await t.kubectl(['apply', '-f', 'test/cluster/apiserver/fixtures/catalog-kinds.yaml']);
    assert.match(apply.stdout, /priorityclass.scheduling.k8s.io\/high created/);
    assert.match(apply.stdout, /runtimeclass.node.k8s.io\/gvisor created/);
    const expectColumns: Record<string, string[]> = {
      pv: [
        'NAME',
        'CAPACITY',
        'ACCESS MODES',
        'RECLAIM POLICY',
        'STATUS',
        'CLAIM',
        'STORAGECLASS',
        'VOLUMEATTRIBUTESCLASS',
        'REASON',
        'AGE',
      ],
      pdb: ['NAME', 'MIN AVAILABLE', 'MAX UNAVAILABLE', 'ALLOWED DISRUPTIONS', 'AGE'],
      pc: ['NAME', 'VALUE', 'GLOBAL-DEFAULT', 'AGE', 'PREEMPTIONPOLICY'],
      cj: ['NAME', 'SCHEDULE', 'TIMEZONE', 'SUSPEND', 'ACTIVE', 'LAST SCHEDULE', 'AGE'],
      hpa: ['NAME', 'REFERENCE', 'TARGETS', 'MINPODS', 'MAXPODS', 'REPLICAS', 'AGE'],
      sc: ['NAME', 'PROVISIONER', 'RECLAIMPOLICY', 'VOLUMEBINDINGMODE', 'ALLOWVOLUMEEXPANSION', 'AGE'],
      runtimeclasses: ['NAME', 'HANDLER', 'AGE'],
      quota: ['NAME', 'AGE', 'REQUEST', 'LIMIT'],
      limits: ['NAME', 'CREATED AT'],
      ing: ['NAME', 'CLASS', 'HOSTS', 'ADDRESS', 'PORTS', 'AGE'],
      netpol: ['NAME', 'POD-SELECTOR', 'AGE'],
      endpointslices: ['NAME', 'ADDRESSTYPE', 'PORTS', 'ENDPOINTS', 'AGE'],
      validatingadmissionpolicies: ['NAME', 'VALIDATIONS', 'PARAMKIND', 'AGE'],
      cs: ['NAME', 'STATUS', 'MESSAGE', 'ERROR'],
      apiservices: ['NAME', 'SERVICE', 'AVAILABLE', 'AGE'],
    };
    for (const [resource, columns] of Object.entries(expectColumns)) {
      const out = await t.kubectl(['get', resource, '-A']);
      const header = out.stdout
        .split('\n')[0]!
        .split(/\s{2,}/)
        .filter((c) => c !== 'NAMESPACE');
      assert.deepEqual(header, columns, `kubectl get ${resource} columns`);
    }
    const hpa = await t.kubectl(['get', 'hpa', 'web', '--no-headers']);
    assert.match(hpa.stdout, /^web\s+Deployment\/web\s+cpu: <unknown>\/80%\s+1\s+5\s+0\s+/);
    const pcs = await t.kubectl(['get', 'pc', '-o', 'name']);
    assert.deepEqual(pcs.stdout.trim().split('\n').sort(), [
      'priorityclass.scheduling.k8s.io/high',
      'priorityclass.scheduling.k8s.io/system-cluster-critical',
      'priorityclass.scheduling.k8s.io/system-node-critical',
    ]);
  });

  test('the RunPod controller manifest applies together with its RuntimeClass', async () => {
    const manifest = await readFile('deploy/runpod-controller.yaml', 'utf8');
    const runtimeClass =
      'apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: runpod\nhandler: runpod\n';
    const out = await t.kubectl(['apply', '-f', '-'], `${runtimeClass}---\n${manifest}`);
    assert.match(out.stdout, /runtimeclass.node.k8s.io\/runpod created/);
    assert.match(out.stdout, /deployment.apps\/runpod-controller created/);
  });

  test('HorizontalPodAutoscalers are validated as kube-apiserver validates them', async () => {
    const bad = await t.kubectlResult(
      ['create', '-f', '-'],
      `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: bad, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 3
  maxReplicas: 2
`,
    );
    assert.notEqual(bad.code, 0);
    assert.match(
      bad.stderr,
      /spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`/,
    );
    const zero = await t.kubectlResult(['create', '--dry-run=server', '-f', '-'], ZERO_MIN);
    assert.match(zero.stderr, /spec.minReplicas: Invalid value: 0: must be greater than or equal to 1/);
  });

  test('@kubernetes/client-node reads HorizontalPodAutoscalers at v1 and v2 from one storage', async () => {
    const client = KubernetesObjectApi.makeApiClient(t.kc);
    await client.create({
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'api', namespace: 'default' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'api' },
        maxReplicas: 3,
        targetCPUUtilizationPercentage: 60,
      },
    } as never);
    const v2 = (await client.read({
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'api', namespace: 'default' },
    })) as unknown as { spec: { metrics: unknown[] } };
    assert.deepEqual(JSON.parse(JSON.stringify(v2.spec.metrics)), [
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } },
      },
    ]);
    const pc = (await client.read({
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name: 'system-node-critical' },
    })) as unknown as { value: number };
    assert.equal(pc.value, 2_000_001_000);
  });
});
