import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { AdmissionregistrationV1Api, ApiException, CoreV1Api } from '@kubernetes/client-node';
import { selfSignedCert } from '../../../src/cluster/apiserver/tls.ts';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';

interface Review {
  request: {
    uid: string;
    operation: string;
    object: { metadata: { name: string; labels?: Record<string, string> } };
  };
}

describe('admission webhooks', () => {
  let t: TestServer;
  let hook: Server;
  let port: number;
  let ca: string;
  const calls: string[] = [];
  before(async () => {
    t = await startTestServer();
    const cert = await selfSignedCert('webhook', ['localhost', 'hooks.default.svc']);
    ca = cert.ca;
    hook = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => {
        body += d.toString();
      });
      req.on('end', () => {
        const review = JSON.parse(body) as Review;
        calls.push(`${req.url} ${review.request.operation} ${review.request.object.metadata.name}`);
        let response: Record<string, unknown> = { uid: review.request.uid, allowed: true };
        if (req.url === '/mutate' && !review.request.object.metadata.labels) {
          const patch = [{ op: 'add', path: '/metadata/labels', value: { mutated: 'yes' } }];
          response = {
            ...response,
            patchType: 'JSONPatch',
            patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
          };
        } else if (req.url === '/mutate') {
          const patch = [{ op: 'add', path: '/metadata/labels/mutated', value: 'yes' }];
          response = {
            ...response,
            patchType: 'JSONPatch',
            patch: Buffer.from(JSON.stringify(patch)).toString('base64'),
          };
        }
        if (req.url === '/validate' && review.request.object.metadata.name.startsWith('forbidden')) {
          response = {
            uid: review.request.uid,
            allowed: false,
            status: { code: 403, message: 'names starting with forbidden are not allowed' },
          };
        }
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    port = (hook.address() as AddressInfo).port;
  });
  after(async () => {
    await t.close();
    hook.close();
  });

  test('mutating then validating webhooks are called with AdmissionReview v1', async () => {
    const adm = t.kc.makeApiClient(AdmissionregistrationV1Api);
    const caBundle = Buffer.from(ca).toString('base64');
    const rules = [
      { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] },
    ];
    await adm.createMutatingWebhookConfiguration({
      body: {
        metadata: { name: 'm' },
        webhooks: [
          {
            name: 'm.example.com',
            clientConfig: { url: `https://127.0.0.1:${port}/mutate`, caBundle },
            rules,
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
          },
        ],
      },
    });
    await adm.createValidatingWebhookConfiguration({
      body: {
        metadata: { name: 'v' },
        webhooks: [
          {
            name: 'v.example.com',
            clientConfig: { url: `https://127.0.0.1:${port}/validate`, caBundle },
            rules,
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
          },
        ],
      },
    });
    const core = t.kc.makeApiClient(CoreV1Api);
    const cm = await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'hello' } },
    });
    assert.equal(cm.metadata!.labels!.mutated, 'yes');
    assert.deepEqual(calls.slice(-2), ['/mutate CREATE hello', '/validate CREATE hello']);
    try {
      await core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: 'forbidden-1' } },
      });
      assert.fail('expected a rejection');
    } catch (err) {
      assert.ok(err instanceof ApiException);
      assert.equal(err.code, 403);
      assert.match(
        String(err.body),
        /admission webhook \\"v.example.com\\" denied the request: names starting with forbidden are not allowed/,
      );
    }
    // Objects not matched by the rules are not sent.
    const before = calls.length;
    await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 's' } } });
    assert.equal(calls.length, before);
  });

  test('an unreachable webhook fails closed by default and is skipped with failurePolicy Ignore', async () => {
    const adm = t.kc.makeApiClient(AdmissionregistrationV1Api);
    const rules = [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['secrets'] }];
    await adm.createValidatingWebhookConfiguration({
      body: {
        metadata: { name: 'down' },
        webhooks: [
          {
            name: 'down.example.com',
            clientConfig: { url: 'https://127.0.0.1:1/x' },
            rules,
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
            timeoutSeconds: 1,
          },
        ],
      },
    });
    const core = t.kc.makeApiClient(CoreV1Api);
    try {
      await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 's2' } } });
      assert.fail('expected failure');
    } catch (err) {
      assert.ok(err instanceof ApiException);
      assert.equal(err.code, 500);
      assert.match(String(err.body), /failed calling webhook \\"down.example.com\\"/);
    }
    await adm.patchValidatingWebhookConfiguration({
      name: 'down',
      body: [{ op: 'replace', path: '/webhooks/0/failurePolicy', value: 'Ignore' }],
    });
    const s = await core.createNamespacedSecret({ namespace: 'default', body: { metadata: { name: 's3' } } });
    assert.equal(s.metadata!.name, 's3');
  });
});
