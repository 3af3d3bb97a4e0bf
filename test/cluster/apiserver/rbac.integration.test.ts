import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';
import { type Kubectl, kubectlFor } from '../../support/kubectl.ts';

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
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: dangling, namespace: default}
subjects:
- kind: ServiceAccount
  name: reader
  namespace: default
roleRef: {kind: ClusterRole, name: not-there, apiGroup: rbac.authorization.k8s.io}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: dangling-too, namespace: default}
subjects:
- kind: ServiceAccount
  name: reader
  namespace: default
roleRef: {kind: ClusterRole, name: not-there, apiGroup: rbac.authorization.k8s.io}
`;

/** kubectl auth can-i --list rows, whitespace collapsed, header first. */
function rows(stdout: string): string[] {
  return stdout
    .trim()
    .split('\n')
    .map((l) => l.trim().replace(/\s+/g, ' '));
}

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

  test('SelfSubjectRulesReview is discovered and lists what RBAC grants (kubectl auth can-i --list)', async () => {
    const resources = await t.kubectl(['api-resources', '--api-group=authorization.k8s.io', '-o', 'wide']);
    assert.match(
      resources.stdout,
      /selfsubjectrulesreviews\s+authorization\.k8s\.io\/v1\s+false\s+SelfSubjectRulesReview\s+create/,
    );
    const admin = rows((await t.kubectl(['auth', 'can-i', '--list'])).stdout);
    assert.equal(admin[0], 'Resources Non-Resource URLs Resource Names Verbs');
    assert.equal(admin[1], '*.* [] [] [*]');
    assert.equal(admin[2], '[*] [] [*]');
    let reader: Kubectl | undefined;
    try {
      reader = await kubectlFor(
        t.server.kubeconfigFor(t.server.mintServiceAccountToken('default', 'reader')),
      );
      const inDefault = rows((await reader.run(['auth', 'can-i', '--list'])).stdout);
      assert.deepEqual(inDefault.slice(0, 4), [
        'Resources Non-Resource URLs Resource Names Verbs',
        'selfsubjectaccessreviews.authorization.k8s.io [] [] [create]',
        'selfsubjectrulesreviews.authorization.k8s.io [] [] [create]',
        'pods [] [] [get list watch]',
      ]);
      assert.ok(inDefault.includes('[/healthz] [] [get]'));
      assert.ok(!inDefault.some((r) => r.startsWith('*')));
      const elsewhere = rows((await reader.run(['auth', 'can-i', '--list', '-n', 'kube-system'])).stdout);
      assert.ok(!elsewhere.some((r) => r.startsWith('pods ')));
      assert.ok(elsewhere.includes('selfsubjectrulesreviews.authorization.k8s.io [] [] [create]'));
    } finally {
      await reader?.cleanup();
    }
  });

  test('a rules review answers the caller, names missing roles and needs a namespace', async () => {
    const path = '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews';
    const review = (spec: Record<string, unknown>) =>
      JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec });
    const token = t.server.mintServiceAccountToken('default', 'reader');
    const answer = await t.request('POST', path, { body: review({ namespace: 'default' }), token });
    assert.equal(answer.status, 201);
    const body = answer.json() as { spec: unknown; status: Record<string, unknown> };
    assert.deepEqual(body.spec, {});
    assert.equal(body.status.incomplete, false);
    // Two bindings to the missing role: the message once, unbracketed, as an error aggregate prints it.
    assert.equal(body.status.evaluationError, 'clusterrole.rbac.authorization.k8s.io "not-there" not found');
    assert.deepEqual((body.status.resourceRules as unknown[]).at(-1), {
      verbs: ['get', 'list', 'watch'],
      apiGroups: [''],
      resources: ['pods'],
    });
    assert.ok((body.status.nonResourceRules as unknown[]).length > 0);
    const none = await t.request('POST', path, { body: review({}) });
    assert.equal(none.status, 400);
    assert.equal(none.json().message, 'no namespace on request');
    const typed = await t.request('POST', path, { body: review({ namespace: 7 }) });
    assert.equal(typed.status, 400);
    assert.match(
      String(typed.json().message),
      /cannot unmarshal number into Go struct field .*namespace of type string/,
    );
    const get = await t.request('GET', path);
    assert.equal(get.status, 405);
  });
});
