import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { connect } from 'node:tls';
import { generateServingCert } from '../../src/runtime/certs.ts';
import type { KubeObject } from '../../src/runtime/types.ts';
import { allowed, denied, patched, WebhookServer } from '../../src/runtime/webhook.ts';
import { waitFor } from '../support/wait.ts';

function post(
  port: number,
  path: string,
  body: string,
  ca: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', ca, headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function review(obj: KubeObject, operation = 'CREATE'): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'req-1',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      operation,
      namespace: 'default',
      name: obj.metadata.name,
      object: obj,
    },
  });
}

const pod: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'default', labels: {} },
};

describe('WebhookServer with a generated certificate', () => {
  const server = new WebhookServer({ port: 0, host: '127.0.0.1' });

  before(async () => {
    server.register('/mutate', (req) => {
      const obj = structuredClone(req.object) as KubeObject;
      obj.metadata.labels = { ...obj.metadata.labels, mutated: 'yes' };
      return patched(req.object, obj, ['labelled']);
    });
    server.register('/validate', (req) =>
      req.object?.metadata.name === 'bad' ? denied('name "bad" is not allowed', 422, 'Invalid') : allowed(),
    );
    server.register('/boom', () => {
      throw new Error('kaput');
    });
    await server.start();
  });
  after(() => server.stop());

  test('is serving and exposes a CA that verifies its certificate for 127.0.0.1', async () => {
    assert.equal(server.serving, true);
    assert.ok(server.caBundle?.includes('BEGIN CERTIFICATE'));
    const res = await post(server.port, '/validate', review(pod), server.caBundle!);
    assert.equal(res.status, 200);
  });

  test('mutating handlers answer with a base64 JSONPatch', async () => {
    const res = await post(server.port, '/mutate', review(pod), server.caBundle!);
    const out = JSON.parse(res.body);
    assert.equal(out.apiVersion, 'admission.k8s.io/v1');
    assert.equal(out.kind, 'AdmissionReview');
    assert.equal(out.response.uid, 'req-1');
    assert.equal(out.response.allowed, true);
    assert.equal(out.response.patchType, 'JSONPatch');
    assert.deepEqual(JSON.parse(Buffer.from(out.response.patch, 'base64').toString()), [
      { op: 'add', path: '/metadata/labels/mutated', value: 'yes' },
    ]);
    assert.deepEqual(out.response.warnings, ['labelled']);
  });

  test('validating handlers deny with a status', async () => {
    const bad = { ...pod, metadata: { ...pod.metadata, name: 'bad' } };
    const out = JSON.parse((await post(server.port, '/validate', review(bad), server.caBundle!)).body);
    assert.equal(out.response.allowed, false);
    assert.deepEqual(out.response.status, {
      code: 422,
      message: 'name "bad" is not allowed',
      reason: 'Invalid',
    });
  });

  test('a throwing handler denies with 500 instead of crashing', async () => {
    const out = JSON.parse((await post(server.port, '/boom', review(pod), server.caBundle!)).body);
    assert.equal(out.response.allowed, false);
    assert.equal(out.response.status.code, 500);
    assert.match(out.response.status.message, /kaput/);
  });

  test('rejects unknown paths and malformed reviews', async () => {
    assert.equal((await post(server.port, '/nope', review(pod), server.caBundle!)).status, 404);
    assert.equal((await post(server.port, '/validate', 'not json', server.caBundle!)).status, 400);
    assert.equal((await post(server.port, '/validate', '{"kind":"Other"}', server.caBundle!)).status, 400);
  });

  test('refuses a second handler on the same path', () => {
    assert.throws(() => server.register('/mutate', () => allowed()), /already registered/);
  });
});

function servedFingerprint(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
      const cert = socket.getPeerX509Certificate();
      socket.end();
      resolve(cert?.fingerprint256 ?? '');
    });
    socket.on('error', reject);
  });
}

describe('WebhookServer with a certificate directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-certs-'));
  const server = new WebhookServer({ port: 0, host: '127.0.0.1', certDir: dir });
  let first: Awaited<ReturnType<typeof generateServingCert>>;
  let second: Awaited<ReturnType<typeof generateServingCert>>;

  before(async () => {
    [first, second] = await Promise.all([generateServingCert(), generateServingCert()]);
    writeFileSync(join(dir, 'tls.crt'), first.cert);
    writeFileSync(join(dir, 'tls.key'), first.key);
    writeFileSync(join(dir, 'ca.crt'), first.ca!);
    server.register('/validate', () => allowed());
    await server.start();
  });
  after(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('serves the directory certificate and reports its ca.crt', async () => {
    assert.equal(server.caBundle, first.ca);
    assert.equal(
      await servedFingerprint(server.port, first.ca!),
      new X509Certificate(first.cert).fingerprint256,
    );
  });

  test('picks up a rotated certificate without restarting', async () => {
    // Write the new pair atomically, as kubelet does for mounted Secrets.
    writeFileSync(join(dir, 'tls.key.new'), second.key);
    writeFileSync(join(dir, 'tls.crt.new'), second.cert);
    writeFileSync(join(dir, 'ca.crt.new'), second.ca!);
    renameSync(join(dir, 'tls.key.new'), join(dir, 'tls.key'));
    renameSync(join(dir, 'tls.crt.new'), join(dir, 'tls.crt'));
    renameSync(join(dir, 'ca.crt.new'), join(dir, 'ca.crt'));
    const want = new X509Certificate(second.cert).fingerprint256;
    await waitFor(
      'the rotated certificate served',
      async () => (await servedFingerprint(server.port, second.ca!)) === want,
    );
    const res = await post(server.port, '/validate', review(pod), second.ca!);
    assert.equal(res.status, 200);
  });
});
