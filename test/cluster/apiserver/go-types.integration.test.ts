/**
 * The built-in kinds as their Go types make them in kube-apiserver: bodies that do not decode
 * are refused with the decoder's words on every write path, stored objects carry the fields
 * Go always encodes, SetDefaults_* apply, and admission runs again on update.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { statusOf } from '../../support/api-error.ts';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      volumes:
      - name: scratch
      containers:
      - name: c
        image: nginx:1.27
        livenessProbe:
          httpGet: {port: 80}
`;

const POD = `apiVersion: v1
kind: Pod
metadata:
  name: replaced
  namespace: default
spec:
  serviceAccountName: default
  containers:
  - name: c
    image: nginx:1.27
`;

describe('built-in kinds decode, encode and default as their Go types', () => {
  let t: TestServer;
  let core: CoreV1Api;
  let apps: AppsV1Api;
  before(async () => {
    t = await startTestServer();
    core = t.kc.makeApiClient(CoreV1Api);
    apps = t.kc.makeApiClient(AppsV1Api);
  });
  after(() => t.close());

  test('create and update bodies of the wrong type are 400 with the JSON decoder words', async () => {
    const create = await t.request('POST', '/api/v1/namespaces/default/configmaps', {
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: 'x' }),
    });
    assert.equal(create.status, 400);
    assert.equal(create.json().reason, 'BadRequest');
    assert.equal(
      create.json().message,
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ConfigMap.data of type map[string]string',
    );
    const r = await t.kubectlResult(
      ['apply', '-f', '-'],
      DEPLOYMENT.replace('replicas: 1', 'replicas: three'),
    );
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32/,
    );
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'cm' }, data: { a: 'b' } },
    });
    const put = await t.request('PUT', '/api/v1/namespaces/default/configmaps/cm', {
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: 1 } }),
    });
    assert.equal(put.status, 400);
    assert.match(String(put.json().message), /Go struct field ConfigMap.data of type string$/);
  });

  test('every patch type refuses a result of the wrong type with 422 on the patch field', async () => {
    await apps.createNamespacedDeployment({
      namespace: 'default',
      body: {
        metadata: { name: 'patched' },
        spec: {
          selector: { matchLabels: { app: 'p' } },
          template: { metadata: { labels: { app: 'p' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
        },
      },
    });
    const path = '/apis/apps/v1/namespaces/default/deployments/patched';
    const merge = await t.request('PATCH', path, {
      body: JSON.stringify({ spec: { replicas: 'three' } }),
      contentType: 'application/merge-patch+json',
    });
    assert.equal(merge.status, 422);
    const cause = (merge.json().details as { causes: Array<{ field: string; message: string }> }).causes[0]!;
    assert.equal(cause.field, 'patch');
    assert.match(
      cause.message,
      /json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32$/,
    );
    const json = await t.request('PATCH', path, {
      body: JSON.stringify([{ op: 'replace', path: '/spec/replicas', value: true }]),
      contentType: 'application/json-patch+json',
    });
    assert.equal(json.status, 422);
    assert.match(
      String(json.json().message),
      /cannot unmarshal bool into Go struct field DeploymentSpec.spec.replicas of type int32$/,
    );
    const smp = await statusOf(
      apps.patchNamespacedDeployment(
        { name: 'patched', namespace: 'default', body: { spec: { replicas: 'three' } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      ),
    );
    assert.equal(smp.code, 422);
    assert.equal(
      smp.body.message,
      ' "" is invalid: patch: Invalid value: "map[spec:map[replicas:three]]": unrecognized type: int32',
    );
    const kubectl = await t.kubectlResult([
      'patch',
      'deployment',
      'patched',
      '-p',
      '{"spec":{"template":"x"}}',
    ]);
    assert.notEqual(kubectl.code, 0);
    assert.match(kubectl.stderr, /cannot restore struct from: string/);
    const stored = await apps.readNamespacedDeployment({ name: 'patched', namespace: 'default' });
    assert.equal(stored.spec?.replicas, 1);
  });

  test('subresource bodies are decoded as their own kinds (Scale, Eviction)', async () => {
    const scale = await t.request('PUT', '/apis/apps/v1/namespaces/default/deployments/patched/scale', {
      body: JSON.stringify({
        apiVersion: 'autoscaling/v1',
        kind: 'Scale',
        metadata: { name: 'patched', namespace: 'default' },
        spec: { replicas: '3' },
      }),
    });
    assert.equal(scale.status, 400);
    assert.equal(
      scale.json().message,
      'Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32',
    );
    const patched = await t.request('PATCH', '/apis/apps/v1/namespaces/default/deployments/patched/scale', {
      body: JSON.stringify({ spec: { replicas: 'three' } }),
      contentType: 'application/merge-patch+json',
    });
    assert.equal(patched.status, 422);
    assert.match(String(patched.json().message), /Go struct field ScaleSpec.spec.replicas of type int32$/);
    const evict = await t.request('POST', '/api/v1/namespaces/default/pods/nobody/eviction', {
      body: JSON.stringify({
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: 'nobody' },
        deleteOptions: { gracePeriodSeconds: 'soon' },
      }),
    });
    assert.equal(evict.status, 400);
    assert.match(
      String(evict.json().message),
      /^Eviction in version "v1" cannot be handled as a Eviction: json: cannot unmarshal string into Go struct field DeleteOptions.deleteOptions.gracePeriodSeconds of type int64$/,
    );
  });

  test('status writes are decoded too', async () => {
    const r = await t.request('PUT', '/apis/apps/v1/namespaces/default/deployments/patched/status', {
      body: JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'patched' },
        status: { readyReplicas: '1' },
      }),
    });
    assert.equal(r.status, 400);
    assert.match(
      String(r.json().message),
      /Go struct field DeploymentStatus.status.readyReplicas of type int32$/,
    );
  });

  test('stored objects carry every field their Go type always encodes', async () => {
    await apps.createNamespacedDaemonSet({
      namespace: 'default',
      body: {
        metadata: { name: 'ds' },
        spec: {
          selector: { matchLabels: { app: 'ds' } },
          template: {
            metadata: { labels: { app: 'ds' } },
            spec: { containers: [{ name: 'c', image: 'x' }] },
          },
        },
      },
    });
    const ds = await t.request('GET', '/apis/apps/v1/namespaces/default/daemonsets/ds');
    const status = ds.json().status as Record<string, unknown>;
    for (const f of [
      'currentNumberScheduled',
      'numberMisscheduled',
      'desiredNumberScheduled',
      'numberReady',
    ]) {
      assert.equal(status[f], 0, f);
    }
    const template = (ds.json().spec as { template: { metadata: Record<string, unknown> } }).template;
    assert.equal(template.metadata.creationTimestamp, null);
    // A pod status written without the fields a ContainerStatus always has reads back with them.
    await core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    });
    await core.replaceNamespacedPodStatus({
      name: 'p',
      namespace: 'default',
      body: {
        metadata: { name: 'p' },
        spec: { containers: [{ name: 'c', image: 'x' }] },
        status: { phase: 'Pending', containerStatuses: [{ name: 'c' }] } as never,
      },
    });
    const pod = await t.request('GET', '/api/v1/namespaces/default/pods/p');
    const cs = (pod.json().status as { containerStatuses: Array<Record<string, unknown>> })
      .containerStatuses[0]!;
    assert.deepEqual(
      { image: cs.image, imageID: cs.imageID, ready: cs.ready, restartCount: cs.restartCount },
      { image: '', imageID: '', ready: false, restartCount: 0 },
    );
  });

  test('SetDefaults_*: a volume without a source is an emptyDir, an httpGet probe gets its path', async () => {
    await t.kubectl(['apply', '-f', '-'], DEPLOYMENT);
    const d = await apps.readNamespacedDeployment({ name: 'web', namespace: 'default' });
    const spec = d.spec!.template.spec!;
    assert.equal(JSON.stringify(spec.volumes![0]!.emptyDir), '{}');
    assert.equal(spec.containers[0]!.livenessProbe!.httpGet!.path, '/');
    assert.equal(spec.containers[0]!.livenessProbe!.httpGet!.scheme, 'HTTP');
    // The `+default=` markers of the Go types (declarative defaults) apply too.
    const pod = await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'volumes' },
        spec: {
          containers: [{ name: 'c', image: 'x' }],
          volumes: [
            { name: 'rbd', rbd: { monitors: ['10.0.0.1:6789'], image: 'img' } },
            { name: 'disk', azureDisk: { diskName: 'd', diskURI: 'https://example/d' } },
          ],
        },
      },
    });
    const rbd = pod.spec!.volumes![0]!.rbd!;
    assert.deepEqual([rbd.pool, rbd.user, rbd.keyring], ['rbd', 'admin', '/etc/ceph/keyring']);
    const disk = pod.spec!.volumes![1]!.azureDisk!;
    assert.deepEqual(
      [disk.cachingMode, disk.fsType, disk.readOnly, disk.kind],
      ['ReadWrite', 'ext4', false, 'Shared'],
    );
  });

  test('SetDefaults_* of the kinds without strategies apply wherever their Go types occur', async () => {
    await t.kubectl(['create', 'cronjob', 'nightly', '--image=busybox', '--schedule=0 0 * * *']);
    const cj = JSON.parse((await t.kubectl(['get', 'cronjob', 'nightly', '-o', 'json'])).stdout);
    assert.deepEqual(
      [
        cj.spec.concurrencyPolicy,
        cj.spec.suspend,
        cj.spec.successfulJobsHistoryLimit,
        cj.spec.failedJobsHistoryLimit,
      ],
      ['Allow', false, 3, 1],
    );
    assert.equal(cj.spec.jobTemplate.spec.template.spec.dnsPolicy, 'ClusterFirst');
    await t.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: example.com/fast
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny, namespace: default}
spec:
  podSelector: {}
  egress:
  - ports: [{port: 53}]
---
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: batch}
spec:
  type: Limited
  limited:
    limitResponse:
      type: Queue
      queuing: {}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: b}
spec:
  policyName: p
  validationActions: [Deny]
  matchResources: {}
`,
    );
    const sc = JSON.parse((await t.kubectl(['get', 'storageclass', 'fast', '-o', 'json'])).stdout);
    assert.deepEqual([sc.reclaimPolicy, sc.volumeBindingMode], ['Delete', 'Immediate']);
    const np = JSON.parse((await t.kubectl(['get', 'networkpolicy', 'deny', '-o', 'json'])).stdout);
    assert.deepEqual(np.spec.policyTypes, ['Ingress', 'Egress']);
    assert.equal(np.spec.egress[0].ports[0].protocol, 'TCP');
    const plc = JSON.parse(
      (await t.kubectl(['get', 'prioritylevelconfiguration', 'batch', '-o', 'json'])).stdout,
    );
    assert.deepEqual(plc.spec.limited, {
      limitResponse: { type: 'Queue', queuing: { handSize: 8, queues: 64, queueLengthLimit: 50 } },
      nominalConcurrencyShares: 30,
      lendablePercent: 0,
    });
    const vapb = JSON.parse(
      (await t.kubectl(['get', 'validatingadmissionpolicybinding', 'b', '-o', 'json'])).stdout,
    );
    assert.deepEqual(vapb.spec.matchResources, {
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
    });
  });

  test('kubectl replace -f of the manifest a pod was created from keeps what admission added', async () => {
    await t.kubectl(['create', '-f', '-'], POD);
    const created = await core.readNamespacedPod({ name: 'replaced', namespace: 'default' });
    assert.equal(created.spec?.priority, 0);
    assert.equal(created.spec?.preemptionPolicy, 'PreemptLowerPriority');
    const out = await t.kubectl(
      ['replace', '-f', '-'],
      POD.replace('  name: replaced\n', '  name: replaced\n  labels: {v: "2"}\n'),
    );
    assert.match(out.stdout, /pod\/replaced replaced/);
    const replaced = await core.readNamespacedPod({ name: 'replaced', namespace: 'default' });
    assert.equal(replaced.metadata?.labels?.v, '2');
    assert.deepEqual(replaced.spec?.tolerations, created.spec?.tolerations);
    assert.equal(replaced.spec?.priority, 0);
    assert.equal(replaced.spec?.preemptionPolicy, 'PreemptLowerPriority');
  });
});
