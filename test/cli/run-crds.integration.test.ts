/**
 * `troupe run` on a cluster that lacks troupe's CRDs, and with a capability that has no
 * credentials: it names what is missing and how to install it, offers --install-crds,
 * runs what it can when asked for everything, and keeps /readyz for what was asked by name.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestServer, type TestServer } from '../support/apiserver.ts';
import { START_TIMEOUT_MS, spawnTroupe, type TroupeProcess } from '../support/troupe-process.ts';
import { waitFor } from '../support/wait.ts';

interface LogLine {
  level: number;
  msg: string;
  address?: string;
  capabilities?: string[];
  skipped?: string[];
  capability?: string;
}

function logLines(p: TroupeProcess): LogLine[] {
  return p
    .stdout()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
}

/** `troupe run` against `t` without RUNPOD_KEY, every port picked free. */
function troupeRun(t: TestServer, args: string[]): TroupeProcess {
  const env = { ...process.env };
  delete env.RUNPOD_KEY;
  return spawnTroupe(
    [
      'run',
      `--kubeconfig=${t.kubeconfigPath}`,
      '--health-probe-bind-address=127.0.0.1:0',
      '--metrics-bind-address=0',
      '--webhook-port=0',
      '--log-format=json',
      ...args,
    ],
    { env },
  );
}

/** Waits for the log line `msg` (as long as for a start), failing at once if the process exits. */
async function logged(p: TroupeProcess, msg: string): Promise<LogLine> {
  const found = await waitFor(
    `troupe run to log "${msg}"`,
    () => logLines(p).find((l) => l.msg.startsWith(msg)) ?? (p.child.exitCode !== null && 'exited'),
    { timeoutMs: START_TIMEOUT_MS },
  );
  if (found === 'exited') assert.fail(`exited ${p.child.exitCode} before logging "${msg}": ${p.stderr()}`);
  return found;
}

/** GET /readyz?verbose on the manager's probe address. */
async function readyz(p: TroupeProcess): Promise<{ status: number; text: string }> {
  const { address = '' } = await logged(p, 'serving health probes');
  const base = /^https?:\/\//.test(address) ? address : `http://${address}`;
  const res = await fetch(`${base}/readyz?verbose`);
  return { status: res.status, text: await res.text() };
}

test('a capability asked for by name whose CRD is missing stops run with the CRD and the fix', async () => {
  const t = await startTestServer();
  const p = troupeRun(t, ['--controllers=podsequence']);
  try {
    assert.equal(await p.exited, 1);
    assert.equal(
      p.stderr(),
      `troupe: the cluster at ${t.server.url} does not serve the kinds these capabilities watch:\n` +
        '  podsequence: PodSequence (scheduling.example.com/v1alpha1, CRD podsequences.scheduling.example.com)\n' +
        "To fix: install troupe's CRDs with `make install` (or `kubectl apply --server-side -k config/crd` from a checkout, " +
        'or the CRDs in dist/install.yaml), or start with --install-crds (development clusters); or leave them out with --controllers.\n',
    );
  } finally {
    await p.stop();
    await t.close();
  }
});

test('with *, run starts the capabilities whose CRDs exist and warns about the rest', async () => {
  const t = await startTestServer();
  await t.kubectl(['apply', '--server-side', '-f', 'config/crd/podgroup-crd.yaml']);
  const p = troupeRun(t, []);
  let code: number | null;
  try {
    const warning = await logged(p, 'not starting capabilities');
    assert.equal(warning.level, 40);
    assert.deepEqual(warning.skipped, ['podsequence', 'appwrapper']);
    assert.match(warning.msg, /CRD podsequences\.scheduling\.example\.com/);
    assert.match(warning.msg, /make install/);
    const started = await logged(p, 'starting troupe controller manager');
    assert.deepEqual(started.capabilities, ['podgroup', 'offload']);
    // Offloading has no RUNPOD_KEY and was not named: it warns and does not hold readiness.
    const offload = await logged(p, 'offload: no provider credentials');
    assert.equal(offload.level, 40);
    const ready = await waitFor('/readyz to pass', async () => {
      const r = await readyz(p);
      return r.status === 200 && r;
    });
    assert.doesNotMatch(ready.text, /offload/);
  } finally {
    code = await p.stop();
    await t.close();
  }
  // After the cleanup, and only if the test got that far: an assertion in `finally` would
  // replace the error that ended the test.
  assert.equal(code, 0, `exit ${code} (${p.child.signalCode}): ${p.stderr()}`);
});

test('--install-crds installs the missing CRDs and runs', async () => {
  const t = await startTestServer();
  const p = troupeRun(t, ['--controllers=podgroup,podsequence', '--install-crds']);
  let code: number | null;
  try {
    const started = await logged(p, 'starting troupe controller manager');
    assert.deepEqual(started.capabilities, ['podgroup', 'podsequence']);
    const { stdout } = await t.kubectl(['get', 'crd', '-o', 'name']);
    assert.equal(
      stdout,
      'customresourcedefinition.apiextensions.k8s.io/podgroups.scheduling.incubator.k8s.io\n' +
        'customresourcedefinition.apiextensions.k8s.io/podsequences.scheduling.example.com\n',
    );
    await waitFor('/readyz to pass', async () => (await readyz(p)).status === 200);
  } finally {
    code = await p.stop();
    await t.close();
  }
  // After the cleanup, and only if the test got that far: an assertion in `finally` would
  // replace the error that ended the test.
  assert.equal(code, 0, `exit ${code} (${p.child.signalCode}): ${p.stderr()}`);
});

test('offloading asked for by name without credentials holds /readyz back, saying why', async () => {
  const t = await startTestServer();
  const p = troupeRun(t, ['--controllers=offload']);
  let code: number | null;
  try {
    const warning = await logged(p, 'offload: no provider credentials');
    assert.match(warning.msg, /\/readyz fails until it is configured/);
    // Once the caches have synced, the only failing check is the provider's.
    const r = await waitFor('the informers to sync', async () => {
      const res = await readyz(p);
      return res.text.includes('[+]informers ok') && res;
    });
    assert.equal(r.status, 500);
    assert.match(r.text, /\[-\]offload-runpod failed: no provider credentials are configured \(RUNPOD_KEY\)/);
  } finally {
    code = await p.stop();
    await t.close();
  }
  // After the cleanup, and only if the test got that far: an assertion in `finally` would
  // replace the error that ended the test.
  assert.equal(code, 0, `exit ${code} (${p.child.signalCode}): ${p.stderr()}`);
});
