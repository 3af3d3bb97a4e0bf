/**
 * serviceaccounts/token, TokenReview, SelfSubjectReview and pods/log, through kubectl and
 * @kubernetes/client-node.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AuthenticationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';

const TWO_CONTAINERS = `apiVersion: v1
kind: Pod
metadata: {name: two, namespace: default}
spec:
  initContainers: [{name: setup, image: busybox}]
  containers:
  - {name: app, image: busybox}
  - {name: sidecar, image: busybox}
`;

describe('tokens, reviews and logs', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({
      podLogs: (pod, container) => `${pod.metadata.name}/${container} line 1\nline 2\nline 3\n`,
    });
  });
  after(() => t.close());

  test('kubectl create token issues a token the server accepts and TokenReview names', async () => {
    await t.kubectl(['create', 'serviceaccount', 'bot']);
    const out = await t.kubectl(['create', 'token', 'bot', '--duration=15m']);
    const token = out.stdout.trim();
    assert.ok(token.length > 20);
    const ok = await t.request('GET', '/api/v1/namespaces/default/pods', { token });
    assert.equal(ok.status, 200);

    const auth = t.kc.makeApiClient(AuthenticationV1Api);
    const review = await auth.createTokenReview({ body: { spec: { token } } });
    assert.equal(review.status?.authenticated, true);
    assert.equal(review.status?.user?.username, 'system:serviceaccount:default:bot');
    assert.ok(review.status?.user?.groups?.includes('system:serviceaccounts:default'));
    const bad = await auth.createTokenReview({ body: { spec: { token: 'not-a-token' } } });
    assert.equal(bad.status?.authenticated, false);
    const denied = await t.request('GET', '/api/v1/namespaces', { token: 'not-a-token' });
    assert.equal(denied.status, 401);
  });

  test('token requests are validated as kube-apiserver does', async () => {
    const short = await t.kubectlResult(['create', 'token', 'bot', '--duration=5m']);
    assert.notEqual(short.code, 0);
    assert.match(
      short.stderr,
      /spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes/,
    );
    const missing = await t.kubectlResult(['create', 'token', 'ghost']);
    assert.match(missing.stderr, /serviceaccounts "ghost" not found/);
    const empty = await t.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: {} }),
    });
    assert.equal(empty.status, 400);
    assert.equal(empty.json().message, 'token is required for TokenReview in authentication');
  });

  test('kubectl auth whoami reads a SelfSubjectReview, also for a service-account token', async () => {
    const me = await t.kubectl(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    assert.equal(me.stdout, 'troupe-admin');
    const token = (await t.kubectl(['create', 'token', 'bot'])).stdout.trim();
    const asBot = await t.kubectl(['auth', 'whoami', '--token', token]);
    assert.match(asBot.stdout, /Username\s+system:serviceaccount:default:bot/);
  });

  test('a LocalSubjectAccessReview is answered in its namespace', async () => {
    const res = await t.request(
      'POST',
      '/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews',
      {
        body: JSON.stringify({
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'LocalSubjectAccessReview',
          spec: {
            user: 'someone',
            resourceAttributes: { namespace: 'default', verb: 'get', resource: 'pods' },
          },
        }),
      },
    );
    assert.equal(res.status, 201);
    assert.equal((res.json().status as { allowed: boolean }).allowed, false);
    const other = await t.request(
      'POST',
      '/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews',
      {
        body: JSON.stringify({
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'LocalSubjectAccessReview',
          spec: {
            user: 'someone',
            resourceAttributes: { namespace: 'kube-system', verb: 'get', resource: 'pods' },
          },
        }),
      },
    );
    assert.equal(other.status, 422);
    assert.match(
      String(other.json().message),
      /spec.resourceAttributes.namespace: Invalid value: "kube-system": must match metadata.namespace/,
    );
  });

  test('kubectl logs picks the container as LogLocation does and reads the kubelet log', async () => {
    await t.kubectl(['apply', '-f', '-'], TWO_CONTAINERS);
    const pending = await t.kubectl(['logs', 'two', '-c', 'app']);
    assert.equal(pending.stdout, '', 'no node yet: an empty log');
    // kubectl picks the first container itself; the server's own answer to no container:
    const choose = await t.request('GET', '/api/v1/namespaces/default/pods/two/log');
    assert.equal(choose.status, 400);
    assert.equal(
      choose.json().message,
      'a container name must be specified for pod two, choose one of: [app sidecar] or one of the init containers: [setup]',
    );
    const wrong = await t.kubectlResult(['logs', 'two', '-c', 'nope']);
    assert.match(wrong.stderr, /container nope is not valid for pod two/);

    const core = t.kc.makeApiClient(CoreV1Api);
    await core.createNamespacedBinding({
      namespace: 'default',
      body: { metadata: { name: 'two' }, target: { kind: 'Node', name: 'node-a' } },
    });
    const waiting = await t.kubectlResult(['logs', 'two', '-c', 'app']);
    assert.match(waiting.stderr, /container "app" in pod "two" is waiting to start: ContainerCreating/);
    const running = { running: { startedAt: '2026-01-01T00:00:00Z' } };
    const patched = await t.request('PATCH', '/api/v1/namespaces/default/pods/two/status', {
      contentType: 'application/merge-patch+json',
      body: JSON.stringify({
        status: {
          phase: 'Running',
          containerStatuses: ['app', 'sidecar'].map((name) => ({
            name,
            ready: true,
            restartCount: 0,
            image: 'busybox',
            imageID: '',
            state: running,
          })),
        },
      }),
    });
    assert.equal(patched.status, 200);
    const log = await t.kubectl(['logs', 'two', '-c', 'app']);
    assert.equal(log.stdout, 'two/app line 1\nline 2\nline 3\n');
    const tail = await t.kubectl(['logs', 'two', '-c', 'sidecar', '--tail=1']);
    assert.equal(tail.stdout, 'line 3\n');
    const viaClient = await core.readNamespacedPodLog({
      name: 'two',
      namespace: 'default',
      container: 'sidecar',
    });
    assert.equal(viaClient, 'two/sidecar line 1\nline 2\nline 3\n');
  });
});
