/**
 * `troupe run --appwrapper-webhooks`, as a process against the embedded API server: its
 * webhook server answers AdmissionReviews on both AppWrapper paths, over TLS with the
 * certificate from --cert-dir, configured by the `--appwrapper-config` ConfigMap upstream
 * deploys; and the flag is refused, before anything starts, when --controllers leaves the
 * appwrapper capability out.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { generateServingCert } from '../../src/runtime/certs.ts';
import { startTestServer } from '../support/apiserver.ts';
import { START_TIMEOUT_MS } from '../support/troupe-process.ts';
import { waitFor } from '../support/wait.ts';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const MAIN = join(ROOT, 'src/cli/main.ts');
// The paths config/appwrapper-webhook's configurations call.
const MUTATE = '/mutate-workload-codeflare-dev-v1beta2-appwrapper';
const VALIDATE = '/validate-workload-codeflare-dev-v1beta2-appwrapper';

interface AdmissionResponse {
  allowed: boolean;
  patch?: string;
  status?: { message?: string };
}

/** POSTs one AdmissionReview to the webhook server, trusting `ca`. */
function review(
  port: number,
  path: string,
  ca: string,
  req: Record<string, unknown>,
): Promise<AdmissionResponse> {
  const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: req });
  return new Promise((done, fail) => {
    const r = request(
      { host: '127.0.0.1', port, path, method: 'POST', ca, headers: { 'content-type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) fail(new Error(`${path}: ${res.statusCode} ${text}`));
          else done(JSON.parse(text).response);
        });
      },
    );
    r.on('error', fail);
    r.end(body);
  });
}

test('troupe run --appwrapper-webhooks answers AdmissionReviews on both AppWrapper paths, as --appwrapper-config says', async () => {
  const t = await startTestServer();
  const certDir = await mkdtemp(join(tmpdir(), 'troupe-run-certs-'));
  const certs = await generateServingCert(['127.0.0.1']);
  const ca = certs.ca;
  assert.ok(ca);
  await writeFile(join(certDir, 'tls.crt'), certs.cert);
  await writeFile(join(certDir, 'tls.key'), certs.key);
  // Upstream's appwrapper-operator-config ConfigMap, with a default queue for AppWrappers
  // that name none.
  const configFile = join(certDir, 'appwrapper-operator-config.yaml');
  await writeFile(
    configFile,
    [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: {name: appwrapper-operator-config, namespace: appwrapper-system}',
      'data:',
      '  config.yaml: |',
      '    appwrapper:',
      '      defaultQueueName: team-queue',
      '',
    ].join('\n'),
  );
  await t.kubectl(['apply', '-f', join(ROOT, 'config/crd/appwrapper-crd.yaml')]);
  const child = spawn(
    process.execPath,
    [
      MAIN,
      'run',
      `--kubeconfig=${t.kubeconfigPath}`,
      '--controllers=appwrapper',
      '--appwrapper-webhooks',
      `--appwrapper-config=${configFile}`,
      '--webhook-port=0',
      `--cert-dir=${certDir}`,
      '--health-probe-bind-address=127.0.0.1:0',
      '--metrics-bind-address=0',
      '--log-format=json',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // Listened for from the start, so an early exit is seen too.
  const exited = new Promise<number | null>((r) => child.once('exit', r));
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
  });
  let code: number | null;
  try {
    const serving = await waitFor(
      'the webhook server to listen',
      () =>
        out
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { msg: string; port?: number; paths?: string[] })
          .find((l) => l.msg === 'serving webhooks') ??
        (child.exitCode !== null && 'exited'),
      { timeoutMs: START_TIMEOUT_MS },
    );
    if (serving === 'exited') assert.fail(`troupe run exited ${child.exitCode}: ${err}`);
    assert.deepEqual(serving.paths, [MUTATE, VALIDATE]);
    const port = serving.port ?? 0;
    const aw = {
      apiVersion: 'workload.codeflare.dev/v1beta2',
      kind: 'AppWrapper',
      metadata: { name: 'sample', namespace: 'default' },
      spec: {
        components: [{ template: { apiVersion: 'v1', kind: 'Pod', spec: { containers: [{ name: 'c' }] } } }],
      },
    };
    const admission = {
      uid: 'u1',
      kind: { group: 'workload.codeflare.dev', version: 'v1beta2', kind: 'AppWrapper' },
      resource: { group: 'workload.codeflare.dev', version: 'v1beta2', resource: 'appwrappers' },
      namespace: 'default',
      operation: 'CREATE',
      userInfo: { username: 'alice', uid: 'a-1' },
      object: aw,
    };

    const mutate = await review(port, MUTATE, ca, admission);
    assert.equal(mutate.allowed, true);
    const ops = JSON.parse(Buffer.from(mutate.patch ?? '', 'base64').toString('utf8')) as {
      path: string;
      value: unknown;
    }[];
    const labels = ops.find((o) => o.path === '/metadata/labels')?.value as
      | Record<string, string>
      | undefined;
    assert.equal(labels?.['workload.codeflare.dev/user'], 'alice');
    // The config file's defaultQueueName (empty by default) on an AppWrapper without one.
    assert.equal(labels?.['kueue.x-k8s.io/queue-name'], 'team-queue');

    // alice holds no RBAC binding, so the SubjectAccessReview the webhook asks the API
    // server denies her the wrapped Pod.
    const validate = await review(port, VALIDATE, ca, admission);
    assert.equal(validate.allowed, false);
    assert.match(validate.status?.message ?? '', /User alice is not authorized to create pods in default/);
  } finally {
    child.kill('SIGTERM');
    code = await exited;
    await t.close();
    await rm(certDir, { recursive: true, force: true });
  }
  // After the cleanup, and only if the test got that far (an assertion in `finally` would
  // replace the error that ended it, and skip the cleanup after it).
  assert.equal(code, 0, err);
});

test('troupe run refuses --appwrapper-webhooks (flag or environment) without the appwrapper capability', async () => {
  // No kubeconfig is given: the flags are refused before the cluster is looked for.
  const failing = (args: string[], env: Record<string, string> = {}) =>
    run(process.execPath, [MAIN, 'run', ...args], { env: { ...process.env, KUBECONFIG: '', ...env } }).then(
      () => assert.fail(`troupe run ${args.join(' ')} succeeded`),
      (e: { code: number; stderr: string }) => e,
    );
  const byFlag = await failing(['--controllers=podgroup,podsequence', '--appwrapper-webhooks']);
  assert.equal(byFlag.code, 1);
  assert.equal(
    byFlag.stderr,
    `troupe: --appwrapper-webhooks serves the appwrapper capability's webhooks, but --controllers "podgroup,podsequence" does not select it\n`,
  );
  const byEnv = await failing([], { TROUPE_CONTROLLERS: 'podgroup', TROUPE_APPWRAPPER_WEBHOOKS: 'true' });
  assert.equal(byEnv.code, 1);
  assert.match(byEnv.stderr, /--appwrapper-webhooks serves .* --controllers "podgroup" does not select it/);
});

test('switches read their environment variable: false turns them off, anything else but true is refused', async () => {
  const failing = (env: Record<string, string>) =>
    run(process.execPath, [MAIN, 'run', '--controllers=podgroup'], {
      env: { ...process.env, KUBECONFIG: '', HOME: '/nonexistent', ...env },
    }).then(
      () => assert.fail('troupe run succeeded without a cluster'),
      (e: { code: number; stderr: string }) => e,
    );
  // Off: the appwrapper check passes, and the run stops only for want of a cluster.
  const off = await failing({ TROUPE_APPWRAPPER_WEBHOOKS: 'false' });
  assert.equal(off.code, 1);
  assert.match(off.stderr, /^troupe: no cluster configuration/);
  const bad = await failing({ TROUPE_LEADER_ELECT: 'maybe' });
  assert.equal(bad.code, 1);
  assert.equal(
    bad.stderr,
    'troupe: TROUPE_LEADER_ELECT="maybe" is not a switch value: use true or false (--leader-elect)\n',
  );
});
