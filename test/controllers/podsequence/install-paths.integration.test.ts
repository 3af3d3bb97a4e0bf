/**
 * The README's install paths, command for command, against the embedded API server:
 * lite (CRD + rbac-lite.yaml) and full (CRD, generate-certs.sh, webhook.yaml, the caBundle
 * patch, rbac.yaml), checked with `kubectl auth can-i` as the troubleshooting section does.
 */

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';

const root = new URL('../../../', import.meta.url).pathname;
const SA = 'system:serviceaccount:pod-sequence-system:pod-sequence-controller';

let t: TestServer;
before(async () => {
  t = await startTestServer({ authorizationMode: 'RBAC' });
});
after(() => t?.close());

const canI = async (verb: string, resource: string) =>
  (await t.kubectlResult(['auth', 'can-i', verb, resource, `--as=${SA}`])).stdout.trim();

test('lite mode: CRD and rbac-lite.yaml; no node permissions, no webhook', async () => {
  await t.kubectl(['apply', '-f', `${root}config/crd/podsequence-crd.yaml`]);
  const out = (await t.kubectl(['apply', '-f', `${root}config/rbac/rbac-lite.yaml`])).stdout;
  assert.match(out, /deployment.apps\/pod-sequence-controller created/);
  assert.equal(await canI('update', 'pods'), 'yes');
  assert.equal(await canI('patch', 'podsequences.scheduling.example.com/status'), 'yes');
  assert.equal(await canI('patch', 'nodes'), 'no');
  const hooks = (await t.kubectl(['get', 'mutatingwebhookconfigurations', '-o', 'name'])).stdout;
  assert.doesNotMatch(hooks, /podsequence/);
});

test('full mode: certificates, webhook configuration, caBundle patch, rbac.yaml', async () => {
  const certDir = await mkdtemp(join(tmpdir(), 'podseq-certs-'));
  try {
    const script = await new Promise<string>((resolve, reject) =>
      execFile(
        `${root}config/webhook/generate-certs.sh`,
        [],
        { env: { ...process.env, KUBECONFIG: t.kubeconfigPath, CERT_DIR: certDir }, timeout: 60_000 },
        (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)),
      ),
    );
    const bundle = /^CA_BUNDLE=(\S+)$/m.exec(script)?.[1];
    assert.ok(bundle, script);
    const secret = JSON.parse(
      (
        await t.kubectl([
          '-n',
          'pod-sequence-system',
          'get',
          'secret',
          'podsequence-webhook-certs',
          '-o',
          'json',
        ])
      ).stdout,
    );
    assert.equal(secret.type, 'kubernetes.io/tls');
    assert.deepEqual(Object.keys(secret.data).sort(), ['ca.crt', 'tls.crt', 'tls.key']);
    assert.equal(Buffer.from(secret.data['ca.crt'], 'base64').toString('base64'), bundle);

    await t.kubectl(['apply', '-f', `${root}config/webhook/webhook.yaml`]);
    // Step 4, as printed by the script.
    const patch = /^kubectl patch .*$/m.exec(script)?.[0];
    assert.ok(patch?.includes(`"value":"${bundle}"`));
    await t.kubectl([
      'patch',
      'mutatingwebhookconfiguration',
      'podsequence-mutating-webhook',
      '--type=json',
      `-p=[{"op": "replace", "path": "/webhooks/0/clientConfig/caBundle", "value":"${bundle}"}]`,
    ]);
    const cfg = JSON.parse(
      (await t.kubectl(['get', 'mutatingwebhookconfiguration', 'podsequence-mutating-webhook', '-o', 'json']))
        .stdout,
    );
    assert.equal(cfg.webhooks[0].clientConfig.caBundle, bundle);
    assert.deepEqual(
      cfg.webhooks[0].rules.map((r: { resources: string[] }) => r.resources[0]),
      ['pods', 'daemonsets'],
    );

    await t.kubectl(['apply', '-f', `${root}config/rbac/rbac.yaml`]);
    assert.equal(await canI('patch', 'nodes'), 'yes');
    assert.equal(await canI('update', 'pods'), 'yes');
    const dep = JSON.parse(
      (
        await t.kubectl([
          '-n',
          'pod-sequence-system',
          'get',
          'deployment',
          'pod-sequence-controller',
          '-o',
          'json',
        ])
      ).stdout,
    );
    assert.ok(dep.spec.template.spec.containers[0].args.includes('--podsequence-mode=full'));
    assert.equal(dep.spec.template.spec.volumes[0].secret.secretName, 'podsequence-webhook-certs');
    const svc = JSON.parse(
      (
        await t.kubectl([
          '-n',
          'pod-sequence-system',
          'get',
          'service',
          'pod-sequence-webhook-service',
          '-o',
          'json',
        ])
      ).stdout,
    );
    assert.equal(svc.spec.ports[0].port, 443);
  } finally {
    await rm(certDir, { recursive: true, force: true });
  }
});
