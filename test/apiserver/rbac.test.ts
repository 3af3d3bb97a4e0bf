import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startTestServer, type TestServer } from '../support/apiserver.ts';

const ROLE = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: pod-reader, namespace: default}
rules:
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: read-pods, namespace: default}
subjects:
- kind: ServiceAccount
  name: reader
  namespace: default
roleRef: {kind: Role, name: pod-reader, apiGroup: rbac.authorization.k8s.io}
`;

describe('RBAC', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ authorizationMode: 'RBAC' });
    await t.kubectl(['create', 'serviceaccount', 'reader']);
    await t.kubectl(['apply', '-f', '-'], ROLE);
  });
  after(() => t.close());

  test('kubectl auth can-i --as answers from the stored RBAC objects', async () => {
    const sa = 'system:serviceaccount:default:reader';
    assert.equal(
      (await t.kubectlResult(['auth', 'can-i', 'list', 'pods', `--as=${sa}`])).stdout.trim(),
      'yes',
    );
    const no = await t.kubectlResult(['auth', 'can-i', 'delete', 'pods', `--as=${sa}`]);
    assert.equal(no.stdout.trim(), 'no');
    assert.equal(
      (
        await t.kubectlResult(['auth', 'can-i', 'list', 'pods', '-n', 'kube-system', `--as=${sa}`])
      ).stdout.trim(),
      'no',
    );
    assert.equal((await t.kubectlResult(['auth', 'can-i', 'delete', 'nodes'])).stdout.trim(), 'yes');
  });

  test('an access review is validated by its kind, as kube-apiserver does', async () => {
    const review = (spec: Record<string, unknown>) =>
      JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec });
    const path = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
    const none = await t.request('POST', path, { body: review({}) });
    assert.equal(none.status, 422);
    assert.match(
      String(none.json().message),
      /spec\.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified/,
    );
    const both = await t.request('POST', path, {
      body: review({
        resourceAttributes: { verb: 'get', resource: 'pods' },
        nonResourceAttributes: { path: '/healthz', verb: 'get' },
      }),
    });
    assert.equal(both.status, 422);
    assert.match(String(both.json().message), /cannot be specified in combination with resourceAttributes/);
  });

  test('with --authorization-mode=RBAC a service-account token gets exactly its permissions', async () => {
    const token = t.server.mintServiceAccountToken('default', 'reader');
    const kc = new KubeConfig();
    kc.loadFromString(t.server.kubeconfigFor(token));
    const core = kc.makeApiClient(CoreV1Api);
    const list = await core.listNamespacedPod({ namespace: 'default' });
    assert.ok(Array.isArray(list.items));
    try {
      await core.createNamespacedPod({
        namespace: 'default',
        body: { metadata: { name: 'x' }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      });
      assert.fail('expected 403');
    } catch (err) {
      assert.ok(err instanceof ApiException);
      assert.equal(err.code, 403);
      assert.match(
        String(err.body),
        /pods is forbidden: User \\"system:serviceaccount:default:reader\\" cannot create resource \\"pods\\" in API group \\"\\" in the namespace \\"default\\"/,
      );
    }
  });
});
