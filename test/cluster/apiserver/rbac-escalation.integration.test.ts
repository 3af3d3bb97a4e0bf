/**
 * RBAC escalation prevention (pkg/registry/rbac/*\/policybased): who may only create bindings
 * cannot bind cluster-admin to itself, who may only create roles cannot write rules it does not
 * hold; the `bind` and `escalate` verbs lift exactly that.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { KubeConfig, RbacAuthorizationV1Api } from '@kubernetes/client-node';
import { statusOf } from '../../support/api-error.ts';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';
import { type Kubectl, kubectlFor } from '../../support/kubectl.ts';

const SETUP = `apiVersion: v1
kind: Namespace
metadata: {name: esc}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: binder, namespace: esc}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: rbac-writer, namespace: esc}
rules:
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles, rolebindings]
  verbs: [create, get, update, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: rbac-writer, namespace: esc}
subjects: [{kind: ServiceAccount, name: binder, namespace: esc}]
roleRef: {kind: Role, name: rbac-writer, apiGroup: rbac.authorization.k8s.io}
`;

const GROUPS = '(groups=["system:serviceaccounts" "system:serviceaccounts:esc" "system:authenticated"])';

describe('RBAC escalation and bind checks', () => {
  let t: TestServer;
  let binder: Kubectl;
  let rbac: RbacAuthorizationV1Api;
  before(async () => {
    t = await startTestServer({ authorizationMode: 'RBAC' });
    await t.kubectl(['apply', '-f', '-'], SETUP);
    const kubeconfig = t.server.kubeconfigFor(t.server.mintServiceAccountToken('esc', 'binder'));
    binder = await kubectlFor(kubeconfig);
    const kc = new KubeConfig();
    kc.loadFromString(kubeconfig);
    rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  });
  after(async () => {
    await binder.cleanup();
    await t.close();
  });

  test('binding cluster-admin to oneself is forbidden with the missing rules', async () => {
    const r = await binder.result([
      'create',
      'rolebinding',
      'grab',
      '-n',
      'esc',
      '--clusterrole=cluster-admin',
      '--serviceaccount=esc:binder',
    ]);
    assert.notEqual(r.code, 0);
    assert.equal(
      r.stderr.trim(),
      `error: failed to create rolebinding: rolebindings.rbac.authorization.k8s.io "grab" is forbidden: user "system:serviceaccount:esc:binder" ${GROUPS} is attempting to grant RBAC permissions not currently held:\n{APIGroups:["*"], Resources:["*"], Verbs:["*"]}\n{NonResourceURLs:["*"], Verbs:["*"]}`,
    );
    const secrets = await binder.result(['get', 'secrets', '-n', 'esc']);
    assert.notEqual(secrets.code, 0);
    assert.match(secrets.stderr, /cannot list resource "secrets"/);
  });

  test('a role may only hold rules its writer holds', async () => {
    const refused = await statusOf(
      rbac.createNamespacedRole({
        namespace: 'esc',
        body: {
          metadata: { name: 'readers' },
          rules: [{ apiGroups: [''], resources: ['secrets', 'pods'], verbs: ['get', 'list'] }],
        },
      }),
    );
    assert.equal(refused.code, 403);
    assert.equal(refused.body.reason, 'Forbidden');
    assert.match(
      String(refused.body.message),
      /\n\{APIGroups:\[""\], Resources:\["pods"\], Verbs:\["get" "list"\]\}\n\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["get" "list"\]\}$/,
    );
    // Rules it holds are fine, and so is binding a role made of them.
    await rbac.createNamespacedRole({
      namespace: 'esc',
      body: {
        metadata: { name: 'subset' },
        rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['get'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: 'esc',
      body: {
        metadata: { name: 'subset' },
        subjects: [{ kind: 'User', name: 'someone' }],
        roleRef: { kind: 'Role', name: 'subset', apiGroup: 'rbac.authorization.k8s.io' },
      },
    });
  });

  test('*/<subresource> covers that subresource of every resource; there is no <resource>/* form', async () => {
    await t.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: status-writer, namespace: esc}
rules:
- apiGroups: [apps]
  resources: ['*/status']
  verbs: [update]
- apiGroups: ['']
  resources: ['pods/*']
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: status-writer, namespace: esc}
subjects: [{kind: ServiceAccount, name: binder, namespace: esc}]
roleRef: {kind: Role, name: status-writer, apiGroup: rbac.authorization.k8s.io}
`,
    );
    const canI = async (...args: string[]) =>
      (await binder.result(['auth', 'can-i', ...args, '-n', 'esc'])).stdout.trim();
    assert.equal(await canI('update', 'deployments.apps', '--subresource=status'), 'yes');
    assert.equal(await canI('update', 'deployments.apps'), 'no');
    assert.equal(
      await canI('get', 'pods', '--subresource=log'),
      'no',
      'pods/* names only a subresource called *',
    );
    // The escalation check (policy_comparator.go resourceCoversAll) agrees with the authorizer.
    await rbac.createNamespacedRole({
      namespace: 'esc',
      body: {
        metadata: { name: 'status-only' },
        rules: [
          {
            apiGroups: ['apps'],
            resources: ['deployments/status', 'statefulsets/status'],
            verbs: ['update'],
          },
        ],
      },
    });
    const refused = await statusOf(
      rbac.createNamespacedRole({
        namespace: 'esc',
        body: {
          metadata: { name: 'more' },
          rules: [
            { apiGroups: ['apps'], resources: ['deployments/status', 'deployments'], verbs: ['update'] },
            { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
          ],
        },
      }),
    );
    assert.equal(refused.code, 403);
    assert.match(
      String(refused.body.message),
      /not currently held:\n\{APIGroups:\[""\], Resources:\["pods\/log"\], Verbs:\["get"\]\}\n\{APIGroups:\["apps"\], Resources:\["deployments"\], Verbs:\["update"\]\}$/,
    );
  });

  test('the bind verb allows binding a role one does not hold; escalate allows writing one', async () => {
    await t.kubectl([
      'create',
      'role',
      'may-bind-admin',
      '-n',
      'esc',
      '--verb=bind',
      '--resource=clusterroles.rbac.authorization.k8s.io',
      '--resource-name=admin',
    ]);
    await t.kubectl([
      'create',
      'rolebinding',
      'may-bind-admin',
      '-n',
      'esc',
      '--role=may-bind-admin',
      '--serviceaccount=esc:binder',
    ]);
    await t.kubectl(['create', 'clusterrole', 'admin', '--verb=*', '--resource=*']);
    const bound = await binder.run([
      'create',
      'rolebinding',
      'admin-for-someone',
      '-n',
      'esc',
      '--clusterrole=admin',
      '--user=someone',
    ]);
    assert.match(bound.stdout, /rolebinding.rbac.authorization.k8s.io\/admin-for-someone created/);
    await t.kubectl(['create', 'role', 'escalator', '-n', 'esc', '--verb=escalate', '--resource=roles']);
    await t.kubectl([
      'create',
      'rolebinding',
      'escalator',
      '-n',
      'esc',
      '--role=escalator',
      '--serviceaccount=esc:binder',
    ]);
    const escalated = await binder.run([
      'create',
      'role',
      'secret-reader',
      '-n',
      'esc',
      '--verb=get',
      '--resource=secrets',
    ]);
    assert.match(escalated.stdout, /role.rbac.authorization.k8s.io\/secret-reader created/);
  });
});
