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
  paramRef: {name: limits, namespace: default}
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
  });
});
