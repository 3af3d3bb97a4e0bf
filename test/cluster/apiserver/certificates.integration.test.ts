/**
 * CertificateSigningRequests: `/approval` takes the conditions only, `/status` everything but
 * them, the main endpoint neither; Approved and Denied exclude each other and stay.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CertificatesV1Api, type V1CertificateSigningRequest } from '@kubernetes/client-node';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';

// An ECDSA certificate request for CN=alice, O=dev (public data; made with openssl req).
const REQUEST =
  'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIWk1JR0FBZ0VBTUI0eERqQU1CZ05WQkFNTUJXRnNhV05sTVF3d0NnWURWUVFLREFOa1pYWXdXVEFUQmdjcQpoa2pPUFFJQkJnZ3Foa2pPUFFNQkJ3TkNBQVRrb1VxSmprajIrcjkwN1l4TnMxdlE4MDN5NFVLSlNZRXN4anJsCjl5eDArVURGcUlYQXVMZUNGRmFEcHl1WTBBVTByWko2aUlIa3RVTFVvSTBTZkpYdm9BQXdDZ1lJS29aSXpqMEUKQXdJRFNBQXdSUUlnTzh0NHNEVlVNSW5ucjQzaGhlaTVVNUMzTWw3V200NmFpRkR4TERrQktrQUNJUURRTGcyWQpwbE1QQ2RJWXp4R1hobmpJZHFLdEhjY0d6K01yd2J4R3JrV3NOdz09Ci0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo=';

const csr = (name: string) => `apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: ${name}}
spec:
  request: ${REQUEST}
  signerName: kubernetes.io/kube-apiserver-client
  expirationSeconds: 86400
  usages: [client auth]
`;

describe('CertificateSigningRequest subresources', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(() => t.close());

  test('kubectl certificate approve writes only the Approved condition; a Denied one is then refused', async () => {
    await t.kubectl(['create', '-f', '-'], csr('alice'));
    const api = t.kc.makeApiClient(CertificatesV1Api);
    const created = await api.readCertificateSigningRequest({ name: 'alice' });
    assert.equal(created.spec.username, 'troupe-admin', 'the requester is recorded');
    assert.match((await t.kubectl(['get', 'csr', 'alice', '--no-headers'])).stdout, /\bPending\b/);
    await t.kubectl(['certificate', 'approve', 'alice']);
    const approved = await api.readCertificateSigningRequest({ name: 'alice' });
    const cond = approved.status?.conditions?.[0];
    assert.equal(cond?.type, 'Approved');
    assert.equal(cond?.reason, 'KubectlApprove');
    assert.ok(cond?.lastTransitionTime, 'timestamps filled in');
    assert.match((await t.kubectl(['get', 'csr', 'alice', '--no-headers'])).stdout, /\bApproved\b/);
    const deny = await t.kubectlResult([
      'patch',
      'csr',
      'alice',
      '--subresource=approval',
      '--type=json',
      '-p',
      '[{"op":"add","path":"/status/conditions/-","value":{"type":"Denied","status":"True"}}]',
    ]);
    assert.notEqual(deny.code, 0);
    assert.match(deny.stderr, /Approved and Denied conditions are mutually exclusive/);
  });

  test('/approval takes the conditions only, /status all but Approved/Denied; no condition is removed', async () => {
    await t.kubectl(['create', '-f', '-'], csr('bob'));
    const api = t.kc.makeApiClient(CertificatesV1Api);
    const cur = await api.readCertificateSigningRequest({ name: 'bob' });
    const body: V1CertificateSigningRequest = {
      ...cur,
      spec: { ...cur.spec, usages: ['server auth'] },
      status: {
        certificate: 'Zm9v',
        conditions: [{ type: 'Approved', status: 'True', reason: 'Test', message: 'ok' }],
      },
    };
    const out = await api.replaceCertificateSigningRequestApproval({ name: 'bob', body });
    assert.deepEqual(out.spec.usages, ['client auth'], 'spec untouched');
    assert.equal(out.status?.certificate, undefined, 'certificate not taken from /approval');
    assert.equal(out.status?.conditions?.[0]?.type, 'Approved');

    await t.kubectl(['create', '-f', '-'], csr('carol'));
    // /status keeps Approved and Denied as they were (a signer cannot approve) but takes Failed.
    await t.kubectl([
      'patch',
      'csr',
      'carol',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"conditions":[{"type":"Approved","status":"True"},{"type":"Failed","status":"True","reason":"SignerDown"}]}}',
    ]);
    const carol = await api.readCertificateSigningRequest({ name: 'carol' });
    assert.deepEqual(
      carol.status?.conditions?.map((c) => c.type),
      ['Failed'],
    );
    const removed = await t.kubectlResult([
      'patch',
      'csr',
      'bob',
      '--subresource=approval',
      '--type=merge',
      '-p',
      '{"status":{"conditions":[]}}',
    ]);
    assert.match(removed.stderr, /updates may not remove a condition of type "Approved"/);
  });
});
