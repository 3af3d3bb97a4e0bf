/**
 * Client-side to server-side apply (staging/src/k8s.io/apimachinery/pkg/util/managedfields/
 * internal/lastappliedmanager.go and lastappliedupdater.go): after `kubectl apply`, the
 * `kubectl` manager's server-side apply takes over the fields the last-applied annotation
 * records without conflicts, and keeps the annotation in step.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApiException, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';

const CM = (value: string, extra = '') => `apiVersion: v1
kind: ConfigMap
metadata:
  name: upgraded
  namespace: default
data:
  color: ${value}${extra}
`;

describe('client-side to server-side apply upgrade', () => {
  let t: TestServer;
  let core: CoreV1Api;
  before(async () => {
    t = await startTestServer();
    core = t.kc.makeApiClient(CoreV1Api);
  });
  after(() => t.close());

  test('kubectl apply --server-side after kubectl apply takes the fields over without conflicts', async () => {
    await t.kubectl(['apply', '-f', '-'], CM('blue'));
    const diff = await t.kubectlResult(['diff', '--server-side', '-f', '-'], CM('green'));
    // kubectl diff exits 1 when there are differences, >1 on errors.
    assert.equal(diff.code, 1, diff.stderr);
    assert.match(diff.stdout, /\+ {2}color: green/);
    const out = await t.kubectl(['apply', '--server-side', '-f', '-'], CM('green'));
    assert.match(out.stdout, /configmap\/upgraded serverside-applied/);
    const cm = await core.readNamespacedConfigMap({ name: 'upgraded', namespace: 'default' });
    assert.equal(cm.data?.color, 'green');
    const last = cm.metadata?.annotations?.['kubectl.kubernetes.io/last-applied-configuration'];
    assert.equal(
      last,
      '{"apiVersion":"v1","data":{"color":"green"},"kind":"ConfigMap","metadata":{"name":"upgraded","namespace":"default"}}\n',
    );
    const managers = (cm.metadata?.managedFields ?? []).map((m) => `${m.manager}/${m.operation}`);
    assert.ok(managers.includes('kubectl/Apply'), managers.join(','));
    // A later client-side apply diffs against the annotation the server kept in step.
    await t.kubectl(['apply', '-f', '-'], CM('green', '\n  size: large'));
    const again = await core.readNamespacedConfigMap({ name: 'upgraded', namespace: 'default' });
    assert.deepEqual(again.data, { color: 'green', size: 'large' });
  });

  test('a field another writer changed since the client-side apply still conflicts', async () => {
    await t.kubectl(['apply', '-f', '-'], CM('red').replace('upgraded', 'contested'));
    await core.patchNamespacedConfigMap(
      {
        name: 'contested',
        namespace: 'default',
        body: { data: { color: 'yellow' } },
        fieldManager: 'editor',
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const r = await t.kubectlResult(
      ['apply', '--server-side', '-f', '-'],
      CM('green').replace('upgraded', 'contested'),
    );
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /conflict with "editor" using v1: \.data\.color/);
    try {
      await core.patchNamespacedConfigMap(
        {
          name: 'contested',
          namespace: 'default',
          body: {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'contested' },
            data: { color: 'green' },
          },
          fieldManager: 'other',
        },
        setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply),
      );
      assert.fail('a manager other than kubectl is not upgraded');
    } catch (err) {
      assert.ok(err instanceof ApiException);
      assert.equal(err.code, 409, String(err.body));
    }
  });
});
