/**
 * One error style for the first things that go wrong: what failed, which file or address,
 * what to do; one line on stderr, no stack trace, exit code 1. `run` and `status` say the
 * same thing about the same kubeconfig.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { MAIN, ROOT } from '../support/troupe-process.ts';

const run = promisify(execFile);

/** Runs the command expecting failure; its exit code and stderr. */
async function failing(file: string, args: string[]): Promise<{ code: number; stderr: string }> {
  return run(process.execPath, [file, ...args], { env: { ...process.env, KUBECONFIG: '' } }).then(
    () => assert.fail(`${args.join(' ')} succeeded`),
    (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
  );
}

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'troupe-errors-'));
});
after(() => rm(dir, { recursive: true, force: true }));

test('the installed entry point before npm run build says to build', async () => {
  // bin/troupe.js as in a fresh checkout: no build/ next to it.
  await mkdir(join(dir, 'bin'), { recursive: true });
  await copyFile(join(ROOT, 'bin/troupe.js'), join(dir, 'bin/troupe.js'));
  const r = await failing(join(dir, 'bin/troupe.js'), ['run', '--help']);
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    `troupe: ${join(dir, 'build/cli/main.js')} is missing: run \`npm run build\` first, or from a checkout run \`npm run troupe -- <command>\` (no build needed)\n`,
  );
});

test('a malformed kubeconfig is named, with the fix, by run and by status alike', async () => {
  const file = join(dir, 'broken-kubeconfig');
  await writeFile(file, 'apiVersion: v1\nclusters:\n- cluster:\n  server: x\n   bad: [\n');
  for (const command of ['run', 'status']) {
    const r = await failing(MAIN, [command, `--kubeconfig=${file}`]);
    assert.equal(r.code, 1, command);
    assert.match(
      r.stderr,
      new RegExp(
        `^troupe: kubeconfig ${file} is not a valid kubeconfig: .+; fix the file, or point --kubeconfig or KUBECONFIG at another\\n$`,
      ),
      command,
    );
  }
});

test('an unreachable API server is said the same way by run and by status', async () => {
  const file = join(dir, 'unreachable-kubeconfig');
  await writeFile(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
      'users: [{name: u, user: {token: t}}]',
      'contexts: [{name: c, context: {cluster: c, user: u}}]',
      'current-context: c',
      '',
    ].join('\n'),
  );
  for (const command of ['run', 'status']) {
    const r = await failing(MAIN, [command, `--kubeconfig=${file}`]);
    assert.equal(r.code, 1, command);
    assert.equal(
      r.stderr,
      `troupe: cannot reach the API server at https://127.0.0.1:1: connect ECONNREFUSED 127.0.0.1:1; is the cluster running, and does ${file} name the right server?\n`,
      command,
    );
  }
});

test('a malformed --appwrapper-config names the file and the field, as a bad flag', async () => {
  const file = join(dir, 'appwrapper-config.yaml');
  await writeFile(file, 'appwrapper:\n  enableKueueIntegrations: true\n');
  const r = await failing(MAIN, ['run', `--appwrapper-config=${file}`]);
  assert.notEqual(r.code, 0);
  assert.match(
    r.stderr,
    new RegExp(
      `option '--appwrapper-config <file>' argument '${file}' is invalid\\. ${file}: appwrapper\\.enableKueueIntegrations was removed in AppWrapper v1\\.1\\.0`,
    ),
  );
  const missing = await failing(MAIN, ['run', `--appwrapper-config=${join(dir, 'nope.yaml')}`]);
  assert.match(missing.stderr, /cannot read .*nope\.yaml: ENOENT/);
});

test('a malformed --kueue-config names the file, the field and the fix, for up and cluster alike', async () => {
  const file = join(dir, 'kueue-config.yaml');
  await writeFile(
    file,
    'apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nwaitForPodsReady:\n  enable: true\n  timeout: 5 minutes\n',
  );
  for (const command of ['up', 'cluster']) {
    const r = await failing(MAIN, [command, '--ephemeral', `--kueue-config=${file}`]);
    assert.equal(r.code, 1, command);
    assert.equal(
      r.stderr,
      `troupe: --kueue-config ${file}: unknown field "waitForPodsReady.enable" (v1beta2 has no enable: the section turns waitForPodsReady on; featureGates: {DisableWaitForPodsReady: true} turns it off)\n`,
      command,
    );
  }
  const missing = await failing(MAIN, ['cluster', '--ephemeral', `--kueue-config=${join(dir, 'nope.yaml')}`]);
  assert.match(missing.stderr, /^troupe: --kueue-config: cannot read .*nope\.yaml: ENOENT/);
});
