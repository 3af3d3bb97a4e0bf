import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { START_TIMEOUT_MS } from '../support/troupe-process.ts';
import { waitFor } from '../support/wait.ts';

const run = promisify(execFile);
const MAIN = resolve(import.meta.dirname, '../../src/cli/main.ts');

test('troupe cluster serves kubectl until SIGTERM', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-cli-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const child = spawn(
    process.execPath,
    [MAIN, 'cluster', '--port', '0', '--data-dir', dir, '--kubeconfig-out', kubeconfig],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  try {
    await waitFor('the cluster to print its address', () => out.includes('Press Ctrl+C'), {
      timeoutMs: START_TIMEOUT_MS,
    });
    assert.match(out, /API server at https:\/\/127\.0\.0\.1:\d+/);
    const kc = await readFile(kubeconfig, 'utf8');
    assert.match(kc, /certificate-authority-data/);
    const { stdout } = await run('kubectl', ['--kubeconfig', kubeconfig, 'get', 'namespaces', '-o', 'name']);
    assert.match(stdout, /namespace\/kube-system/);
  } finally {
    child.kill('SIGTERM');
    const code = await new Promise((r) => child.once('exit', r));
    assert.equal(code, 0);
    await rm(dir, { recursive: true, force: true });
  }
});

test('troupe cluster refuses a bad flag with a clear message', async () => {
  const r = await run(process.execPath, [MAIN, 'cluster', '--port', 'abc']).catch(
    (e: { code: number; stderr: string }) => e,
  );
  assert.notEqual((r as { code?: number }).code ?? 0, 0);
  assert.match((r as { stderr: string }).stderr, /"abc" is not a port number/);
});

test('a SIGTERM while troupe cluster is still starting shuts it down gracefully', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-cli-'));
  const child = spawn(
    process.execPath,
    [MAIN, 'cluster', '--port', '0', '--data-dir', dir, '--kubeconfig-out', join(dir, 'kubeconfig')],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  try {
    // The first line comes once the API server serves, before the nodes run and before the
    // banner: the signal lands mid-start, which used to kill the process by default action.
    await waitFor('the API server to serve', () => out.includes('API server at'), {
      timeoutMs: START_TIMEOUT_MS,
    });
    child.kill('SIGTERM');
    const code = await new Promise((r) => child.once('exit', r));
    assert.equal(code, 0, out);
    assert.match(out, /SIGTERM received, shutting down/);
  } finally {
    child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
});
