/**
 * config/overlays/appwrapper-webhooks installed as docs/install.md says, on the embedded API
 * server with RBAC enforced: generate-certs.sh creates the serving certificate, the overlay
 * is applied, the caBundle patches the script prints are run, and the manager starts as the
 * overlay's Deployment starts it (its args and environment, its ServiceAccount's rights, the
 * script's certificate as its --cert-dir). The API server then calls both webhooks through
 * troupe-webhook-service, verifying the certificate against the patched CA, while AppWrappers
 * are created with kubectl. Endpoints written by the test stand in for the endpoints
 * controller, pointing the Service at the manager's loopback port.
 */

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { kustomize, parseManifests, ROOT } from '../../scripts/gen-install.ts';
import { type BuiltManager, buildManager } from '../../src/cli/manager.ts';
import { kubeConfigFromString } from '../../src/runtime/index.ts';
import { startTestServer, type TestServer } from '../support/apiserver.ts';
import { type Deployment, deploymentFlags } from './deployment-flags.ts';

const run = promisify(execFile);
const NAMESPACE = 'troupe-system';
const SERVICE = 'troupe-webhook-service';
const SECRET = 'troupe-webhook-server-cert';
const CONFIGS = [
  'mutatingwebhookconfiguration/appwrapper-mutating-webhook-configuration',
  'validatingwebhookconfiguration/appwrapper-validating-webhook-configuration',
];

const appWrapper = (name: string, template: Record<string, unknown>) => ({
  apiVersion: 'workload.codeflare.dev/v1beta2',
  kind: 'AppWrapper',
  metadata: { name, namespace: 'default' },
  spec: { components: [{ template }] },
});
const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'sleeper' },
  spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: ['sleep', '5'] }] },
};

describe('config/overlays/appwrapper-webhooks installed with generate-certs.sh', () => {
  let t: TestServer;
  let certDir: string;
  let built: BuiltManager | undefined;
  const forbidden: string[] = [];

  before(async () => {
    t = await startTestServer({
      authorizationMode: 'RBAC',
      // kubectl is the admin here and never forbidden: every 403 is the manager's.
      log: (msg, f) => {
        if (msg === 'request' && f.code === 403) forbidden.push(`${f.method} ${f.path}`);
      },
    });
    certDir = await mkdtemp(join(tmpdir(), 'troupe-aw-certs-'));
  });

  after(async () => {
    await built?.stop();
    await t?.close();
    await rm(certDir, { recursive: true, force: true });
  });

  test('the API server reaches both webhooks through the Service with the patched CA', async () => {
    const kubeconfigEnv = { ...process.env, KUBECONFIG: t.kubeconfigPath };
    const { stdout: printed } = await run(join(ROOT, 'config/webhook/generate-certs.sh'), [], {
      env: { ...kubeconfigEnv, NAMESPACE, SERVICE, SECRET, CERT_DIR: certDir },
    });
    const bundle = /^CA_BUNDLE=(\S+)$/m.exec(printed)?.[1];
    assert.ok(bundle, printed);

    const rendering = await kustomize(join(ROOT, 'config/overlays/appwrapper-webhooks'));
    await t.kubectl(['apply', '--server-side', '-f', '-'], rendering);
    const patches = printed
      .split('\n')
      .filter((l) => /^kubectl patch \S*webhookconfiguration\/appwrapper-/.test(l));
    assert.equal(patches.length, CONFIGS.length, printed);
    for (const line of patches) await run('bash', ['-c', line], { env: kubeconfigEnv });
    for (const config of CONFIGS) {
      const { stdout } = await t.kubectl([
        'get',
        config,
        '-o',
        'jsonpath={.webhooks[0].clientConfig.caBundle}',
      ]);
      assert.equal(stdout, bundle, config);
    }

    const rendered = parseManifests(rendering);
    const dep = rendered.find((d) => d.kind === 'Deployment') as Deployment;
    const sa = dep.spec.template.spec.serviceAccountName;
    const flags = deploymentFlags(dep, ['--webhook-port=0', `--cert-dir=${certDir}`], rendered);
    assert.equal(flags.appwrapperWebhooks, true);
    const token = t.server.mintServiceAccountToken(NAMESPACE, sa);
    built = buildManager(kubeConfigFromString(t.server.kubeconfigFor(token)), flags, {
      webhookHost: '127.0.0.1',
    });
    await built.manager.start();
    const endpoints = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: SERVICE, namespace: NAMESPACE },
      subsets: [
        {
          addresses: [{ ip: '127.0.0.1' }],
          ports: [{ name: 'webhook', port: built.manager.webhooks!.port }],
        },
      ],
    };
    await t.kubectl(['apply', '-f', '-'], stringify(endpoints));
    // The validating webhook asks whether the creator may create each wrapped kind. The
    // embedded API server passes webhooks only system:authenticated as the admin's groups,
    // not system:masters, so the admin is given the right by name.
    await t.kubectl([
      'create',
      'clusterrolebinding',
      'aw-creator',
      '--clusterrole=cluster-admin',
      '--user=troupe-admin',
    ]);

    const { stdout } = await t.kubectl(
      ['create', '-o', 'json', '-f', '-'],
      JSON.stringify(appWrapper('sample', pod)),
    );
    const created = JSON.parse(stdout);
    // The creator's label only the defaulting webhook can know; suspend, with no queue name,
    // because the default namespace's labels (read by the webhook) make it managed.
    assert.equal(created.metadata.labels['workload.codeflare.dev/user'], 'troupe-admin');
    assert.deepEqual(created.metadata.finalizers, ['workload.codeflare.dev/finalizer']);
    assert.equal(created.spec.suspend, true);
    assert.deepEqual(forbidden, [], 'requests the overlay RBAC forbade');

    const nested = await t.kubectlResult(
      ['create', '-f', '-'],
      JSON.stringify(appWrapper('nest', appWrapper('inner', pod))),
    );
    assert.notEqual(nested.code, 0);
    assert.match(
      nested.stderr,
      /admission webhook "vappwrapper.kb.io" denied the request: .*Nested AppWrappers are forbidden/,
    );
    // The denial is a 403 of its own, the webhook's answer relayed; nothing else was forbidden.
    assert.deepEqual(forbidden, ['POST /apis/workload.codeflare.dev/v1beta2/namespaces/default/appwrappers']);
  });
});
