/**
 * ValidatingAdmissionPolicy with bindings: CEL validations over the object, params from a
 * ConfigMap, matchConditions, Deny versus Warn, and upstream's message.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AppsV1Api } from '@kubernetes/client-node';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';

const POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replica-limit}
spec:
  failurePolicy: Fail
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments]
  matchConditions:
  - name: not-exempt
    expression: "!has(object.metadata.labels) || !('exempt' in object.metadata.labels)"
  validations:
  - expression: "object.spec.replicas <= int(params.data.maxReplicas)"
    messageExpression: "'replicas must be at most ' + params.data.maxReplicas"
  - expression: "object.metadata.name.startsWith('app-')"
---
apiVersion: v1
kind: ConfigMap
metadata: {name: limits, namespace: default}
data: {maxReplicas: "3"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: replica-limit-default}
spec:
  policyName: replica-limit
  validationActions: [Deny]
  paramRef: {name: limits, namespace: default, parameterNotFoundAction: Deny}
  matchResources:
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: default}
`;

function deployment(name: string, replicas: number, labels = ''): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: default${labels}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec: {containers: [{name: c, image: busybox}]}
`;
}

describe('ValidatingAdmissionPolicy', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
    await t.kubectl(['apply', '-f', '-'], POLICY);
  });
  after(() => t.close());

  test('a failed validation under Deny refuses the write with the message expression', async () => {
    const out = await t.kubectlResult(['apply', '-f', '-'], deployment('app-big', 5));
    assert.notEqual(out.code, 0);
    assert.match(
      out.stderr,
      /ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-default' denied request: replicas must be at most 3/,
    );
    const ok = await t.kubectl(['apply', '-f', '-'], deployment('app-small', 2));
    assert.match(ok.stdout, /deployment.apps\/app-small created/);
  });

  test('the default message is the failed expression; matchConditions exempt objects', async () => {
    const apps = t.kc.makeApiClient(AppsV1Api);
    const err = await apps
      .createNamespacedDeployment({
        namespace: 'default',
        body: {
          metadata: { name: 'web' },
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: 'x' } },
            template: {
              metadata: { labels: { app: 'x' } },
              spec: { containers: [{ name: 'c', image: 'busybox' }] },
            },
          },
        },
      })
      .then(
        () => undefined,
        (e: { code?: number; body?: string }) => e,
      );
    assert.equal(err?.code, 422);
    assert.equal(
      JSON.parse(err!.body!).message,
      `deployments.apps "web" is invalid: : ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-default' denied request: failed expression: object.metadata.name.startsWith('app-')`,
    );
    const exempt = await t.kubectl(['apply', '-f', '-'], deployment('web', 9, ', labels: {exempt: "yes"}'));
    assert.match(exempt.stdout, /deployment.apps\/web created/);
  });

  test('Warn does not refuse; other namespaces are outside the binding', async () => {
    await t.kubectl(['create', 'namespace', 'other']);
    const other = await t.kubectl(
      ['apply', '-f', '-'],
      deployment('big', 9).replace('namespace: default', 'namespace: other'),
    );
    assert.match(other.stdout, /deployment.apps\/big created/);
    await t.kubectl([
      'patch',
      'validatingadmissionpolicybinding',
      'replica-limit-default',
      '--type=merge',
      '-p',
      '{"spec":{"validationActions":["Warn"]}}',
    ]);
    const warned = await t.kubectl(['apply', '-f', '-'], deployment('app-huge', 7));
    assert.match(warned.stdout, /deployment.apps\/app-huge created/);
    assert.match(
      warned.stderr,
      /Warning: Validation failed for ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-default': replicas must be at most 3/,
    );
  });

  test('paramRef.selector: every matching param is checked; none found follows parameterNotFoundAction', async () => {
    await t.kubectl(['create', 'namespace', 'sel']);
    await t.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: entry-limit}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
    objectSelector: {matchLabels: {role: app}}
  validations:
  - expression: "size(object.data) <= int(params.data.max)"
    messageExpression: "'at most ' + params.data.max + ' entries (' + params.metadata.name + ')'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: entry-limit-sel}
spec:
  policyName: entry-limit
  validationActions: [Deny]
  paramRef: {namespace: sel, selector: {matchLabels: {limits: "yes"}}, parameterNotFoundAction: Deny}
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: sel}}
`,
    );
    const app = (name: string, n: number) =>
      `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}","namespace":"sel","labels":{"role":"app"}},"data":{${Array.from({ length: n }, (_, i) => `"k${i}":"v"`).join(',')}}}`;
    const none = await t.kubectlResult(['create', '-f', '-'], app('a', 1));
    assert.match(none.stderr, /no params found for policy binding with `Deny` parameterNotFoundAction/);
    await t.kubectl(['create', 'configmap', 'loose', '-n', 'sel', '--from-literal=max=5']);
    await t.kubectl(['create', 'configmap', 'tight', '-n', 'sel', '--from-literal=max=1']);
    await t.kubectl(['label', 'configmap', 'loose', 'tight', '-n', 'sel', 'limits=yes']);
    const two = await t.kubectlResult(['create', '-f', '-'], app('b', 2));
    assert.match(two.stderr, /denied request: at most 1 entries \(tight\)/);
    assert.match((await t.kubectl(['create', '-f', '-'], app('c', 1))).stdout, /configmap\/c created/);
  });

  test('policies and bindings are validated as upstream: compile errors, required fields, actions', async () => {
    const bad = await t.kubectlResult(
      ['apply', '-f', '-'],
      `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: broken}
spec:
  matchConstraints: {}
  validations:
  - expression: "object.spec.replicas <"
    reason: Teapot
`,
    );
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /spec\.matchConstraints\.resourceRules: Required value/);
    assert.match(
      bad.stderr,
      /spec\.validations\[0\]\.expression: Invalid value: "object\.spec\.replicas <": compilation failed: ERROR: <input>:1:\d+: Syntax error/,
    );
    assert.match(bad.stderr, /spec\.validations\[0\]\.reason: Unsupported value: "Teapot"/);
    const binding = await t.kubectlResult(
      ['apply', '-f', '-'],
      `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: broken}
spec:
  policyName: replica-limit
  validationActions: [Deny, Warn]
  paramRef: {name: limits, selector: {}}
`,
    );
    assert.notEqual(binding.code, 0);
    assert.match(binding.stderr, /spec\.paramRef\.name: Forbidden: name and selector are mutually exclusive/);
    assert.match(
      binding.stderr,
      /spec\.validationActions: Invalid value: .*must not contain both Deny and Warn/,
    );
  });

  test('authorizer: checks for the request user, requestResource and serviceAccount', async () => {
    await t.kubectl(['create', 'namespace', 'authz']);
    await t.kubectl(
      ['apply', '-f', '-'],
      `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: secret-readers}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
  validations:
  - expression: "authorizer.group('').resource('secrets').namespace(request.namespace).check('list').allowed()"
    messageExpression: "'only secret readers: ' + string(authorizer.requestResource.check('create').allowed()) + ' ' + string(authorizer.serviceAccount('authz', 'reader').group('').resource('secrets').namespace('authz').check('list').allowed())"
  - expression: "!authorizer.path('/healthz').check('get').errored()"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: secret-readers}
spec:
  policyName: secret-readers
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: authz}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: read-secrets, namespace: authz}
rules: [{apiGroups: [""], resources: [secrets], verbs: [list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader, namespace: authz}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: read-secrets}
subjects: [{kind: ServiceAccount, name: reader, namespace: authz}]
`,
    );
    // The admin (system:masters) may list secrets.
    await t.kubectl(['create', 'configmap', 'by-admin', '-n', 'authz']);
    const bot = await t.kubectlResult([
      'create',
      'configmap',
      'by-bot',
      '-n',
      'authz',
      '--as=system:serviceaccount:authz:bot',
    ]);
    assert.notEqual(bot.code, 0);
    // The bot may not list secrets nor create configmaps (RBAC); the reader may list them.
    assert.match(bot.stderr, /denied request: only secret readers: false true/);
    const reader = await t.kubectl([
      'create',
      'configmap',
      'by-reader',
      '-n',
      'authz',
      '--as=system:serviceaccount:authz:reader',
    ]);
    assert.match(reader.stdout, /configmap\/by-reader created/);
  });
});
