/**
 * The compiled-in admission plugins: Priority, RuntimeClass, LimitRanger, DefaultStorageClass
 * and ResourceQuota (with the quota controller's status), through kubectl and
 * @kubernetes/client-node, with kube-apiserver's messages.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';
import { waitFor } from '../../support/wait.ts';

function pod(name: string, extra = '', ns = 'default'): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${ns}}
spec:
${extra}  containers:
  - name: app
    image: busybox
`;
}

describe('compiled-in admission plugins', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(() => t.close());

  test('Priority: value from the class, the global default, the system classes, 403 for an unknown class', async () => {
    await t.kubectl(['create', 'priorityclass', 'high', '--value=1000', '--description=first']);
    await t.kubectl(['apply', '-f', '-'], pod('p-high', '  priorityClassName: high\n'));
    const high = await t.kubectl([
      'get',
      'pod',
      'p-high',
      '-o',
      'jsonpath={.spec.priority} {.spec.preemptionPolicy}',
    ]);
    assert.equal(high.stdout, '1000 PreemptLowerPriority');
    await t.kubectl(['apply', '-f', '-'], pod('p-system', '  priorityClassName: system-node-critical\n'));
    const sys = await t.kubectl(['get', 'pod', 'p-system', '-o', 'jsonpath={.spec.priority}']);
    assert.equal(sys.stdout, '2000001000');
    const unknown = await t.kubectlResult(['apply', '-f', '-'], pod('p-x', '  priorityClassName: nope\n'));
    assert.match(unknown.stderr, /pods "p-x" is forbidden: no PriorityClass with name nope was found/);

    await t.kubectl([
      'create',
      'priorityclass',
      'normal',
      '--value=10',
      '--global-default=true',
      '--preemption-policy=Never',
    ]);
    const second = await t.kubectlResult([
      'create',
      'priorityclass',
      'other',
      '--value=5',
      '--global-default=true',
    ]);
    assert.match(
      second.stderr,
      /PriorityClass normal is already marked as default. Only one default can exist/,
    );
    const core = t.kc.makeApiClient(CoreV1Api);
    const created = await core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'p-default' }, spec: { containers: [{ name: 'app', image: 'busybox' }] } },
    });
    assert.equal(created.spec?.priorityClassName, 'normal');
    assert.equal(created.spec?.priority, 10);
    assert.equal(created.spec?.preemptionPolicy, 'Never');
    const forged = await t.kubectlResult(
      ['apply', '-f', '-'],
      pod('p-forged', '  priorityClassName: high\n  priority: 5\n'),
    );
    assert.match(
      forged.stderr,
      /the integer value of priority \(5\) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name/,
    );
    const reserved = await t.kubectlResult(['create', 'priorityclass', 'system-mine', '--value=1']);
    assert.match(
      reserved.stderr,
      /priority class names with 'system-' prefix are reserved for system use only/,
    );
    const changed = await t.kubectlResult(['patch', 'pc', 'high', '--type=merge', '-p', '{"value":7}']);
    assert.match(changed.stderr, /value: Invalid value: 7: field is immutable/);
    await t.kubectl(['delete', 'pc', 'normal']);
  });

  test('RuntimeClass: overhead and scheduling from the class; 403 for an unknown class', async () => {
    await t.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: kata}
handler: kata
overhead: {podFixed: {cpu: 250m, memory: 120Mi}}
scheduling:
  nodeSelector: {runtime: kata}
  tolerations: [{key: kata, operator: Exists, effect: NoSchedule}]
`,
    );
    await t.kubectl(['apply', '-f', '-'], pod('p-kata', '  runtimeClassName: kata\n'));
    const out = await t.kubectl(['get', 'pod', 'p-kata', '-o', 'json']);
    const spec = JSON.parse(out.stdout).spec;
    assert.deepEqual(spec.overhead, { cpu: '250m', memory: '120Mi' });
    assert.deepEqual(spec.nodeSelector, { runtime: 'kata' });
    assert.ok(spec.tolerations.some((x: { key: string }) => x.key === 'kata'));
    const missing = await t.kubectlResult(['apply', '-f', '-'], pod('p-gv', '  runtimeClassName: gvisor\n'));
    assert.match(missing.stderr, /pods "p-gv" is forbidden: pod rejected: RuntimeClass "gvisor" not found/);
  });

  test('LimitRanger: container defaults with the annotation, then min/max refused with upstream messages', async () => {
    await t.kubectl(['create', 'namespace', 'limited']);
    await t.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: v1
kind: LimitRange
metadata: {name: limits, namespace: limited}
spec:
  limits:
  - type: Container
    default: {cpu: 500m}
    defaultRequest: {cpu: 200m}
    max: {cpu: "1"}
    min: {cpu: 100m}
`,
    );
    await t.kubectl(['apply', '-f', '-'], pod('plain', '', 'limited'));
    const out = JSON.parse((await t.kubectl(['get', 'pod', 'plain', '-n', 'limited', '-o', 'json'])).stdout);
    assert.deepEqual(out.spec.containers[0].resources, {
      requests: { cpu: '200m' },
      limits: { cpu: '500m' },
    });
    assert.equal(
      out.metadata.annotations['kubernetes.io/limit-ranger'],
      'LimitRanger plugin set: cpu request for container app; cpu limit for container app',
    );
    const big = `  containers:\n  - name: app\n    image: busybox\n    resources: {limits: {cpu: "2"}}\n`;
    const refused = await t.kubectlResult(
      ['apply', '-f', '-'],
      `apiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: limited}\nspec:\n${big}`,
    );
    assert.match(
      refused.stderr,
      /pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2/,
    );
  });

  test('DefaultStorageClass: a claim without a class gets the default one', async () => {
    await t.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: troupe.dev/simulated
`,
    );
    const sc = await t.kubectl(['get', 'sc', '--no-headers']);
    assert.match(sc.stdout, /^standard \(default\)\s+troupe.dev\/simulated/m);
    await t.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`,
    );
    const cls = await t.kubectl(['get', 'pvc', 'data', '-o', 'jsonpath={.spec.storageClassName}']);
    assert.equal(cls.stdout, 'standard');
  });

  test('ResourceQuota: status.used kept by the quota controller; 403 exceeded quota', async () => {
    await t.kubectl(['create', 'namespace', 'quoted']);
    await t.kubectl(['create', 'quota', 'compute', '-n', 'quoted', '--hard=pods=2,count/configmaps=5']);
    await t.kubectl(['apply', '-f', '-'], pod('one', '', 'quoted'));
    await t.kubectl(['apply', '-f', '-'], pod('two', '', 'quoted'));
    const core = t.kc.makeApiClient(CoreV1Api);
    const q = await waitFor('quota used pods=2', async () => {
      const r = await core.readNamespacedResourceQuota({ name: 'compute', namespace: 'quoted' });
      return r.status?.used?.pods === '2' ? r : undefined;
    });
    assert.deepEqual(q.status?.hard, { pods: '2', 'count/configmaps': '5' });
    const third = await t.kubectlResult(['apply', '-f', '-'], pod('three', '', 'quoted'));
    assert.match(
      third.stderr,
      /pods "three" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2/,
    );
    const row = await t.kubectl(['get', 'quota', 'compute', '-n', 'quoted', '--no-headers']);
    assert.match(row.stdout, /compute\s+\S+\s+count\/configmaps: \d\/5, pods: 2\/2/);
    await t.kubectl(['delete', 'pod', 'one', '-n', 'quoted', '--wait=false']);
    await waitFor('quota used pods=1', async () => {
      const r = await core.readNamespacedResourceQuota({ name: 'compute', namespace: 'quoted' });
      return r.status?.used?.pods === '1' ? r : undefined;
    });
    await t.kubectl(['create', 'quota', 'cpu', '-n', 'quoted', '--hard=requests.cpu=1']);
    const noCpu = await t.kubectlResult(['apply', '-f', '-'], pod('four', '', 'quoted'));
    assert.match(noCpu.stderr, /pods "four" is forbidden: failed quota: cpu: must specify requests.cpu/);
  });

  test('the plugins read what was just written: LimitRanges (not dry runs), quota usage after a pod ends', async () => {
    await t.kubectl(['create', 'namespace', 'cached']);
    const limits = `apiVersion: v1
kind: LimitRange
metadata: {name: cpu, namespace: cached}
spec:
  limits:
  - type: Container
    defaultRequest: {cpu: 600m}
    default: {cpu: 700m}
`;
    const request = (name: string) =>
      t.kubectl([
        'get',
        'pod',
        name,
        '-n',
        'cached',
        '-o',
        'jsonpath={.spec.containers[0].resources.requests.cpu}',
      ]);
    await t.kubectl(['apply', '-f', '-'], pod('before', '', 'cached'));
    assert.equal((await request('before')).stdout, '');
    await t.kubectl(['create', '--dry-run=server', '-f', '-'], limits);
    await t.kubectl(['apply', '-f', '-'], pod('dry', '', 'cached'));
    assert.equal((await request('dry')).stdout, '');
    await t.kubectl(['create', '-f', '-'], limits);
    await t.kubectl(['apply', '-f', '-'], pod('a', '', 'cached'));
    assert.equal((await request('a')).stdout, '600m');
    await t.kubectl(['delete', 'limitrange', 'cpu', '-n', 'cached']);
    await t.kubectl(['delete', 'pod', 'before', 'dry', '-n', 'cached', '--wait=false']);
    await t.kubectl(['create', 'quota', 'cpu', '-n', 'cached', '--hard=requests.cpu=1']);
    const resources = '  containers:\n  - {name: app, image: busybox, resources: {requests: {cpu: 600m}}}\n';
    const b = `apiVersion: v1\nkind: Pod\nmetadata: {name: b, namespace: cached}\nspec:\n${resources}`;
    const refused = await t.kubectlResult(['apply', '-f', '-'], b);
    assert.match(
      refused.stderr,
      /exceeded quota: cpu, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1/,
    );
    // A pod that has ended uses nothing (pkg/quota/v1/evaluator/core/pods.go): its status write frees its share.
    await t.kubectl([
      'patch',
      'pod',
      'a',
      '-n',
      'cached',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Succeeded"}}',
    ]);
    await t.kubectl(['apply', '-f', '-'], b);
    const core = t.kc.makeApiClient(CoreV1Api);
    await waitFor('quota used requests.cpu=600m with b', async () => {
      const r = await core.readNamespacedResourceQuota({ name: 'cpu', namespace: 'cached' });
      return r.status?.used?.['requests.cpu'] === '600m' ? r : undefined;
    });
  });
});
