/**
 * Test support: `troupe cluster` as a real process on a data directory, with kubectl against the
 * kubeconfig it writes there (and a kubectl cache of its own), for restart and crash tests.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { START_TIMEOUT_MS } from './troupe-process.ts';
import { waitFor } from './wait.ts';

const MAIN = resolve(import.meta.dirname, '../../src/cli/main.ts');

export interface ClusterProcess {
  child: ChildProcess;
  readonly stdout: string;
  readonly stderr: string;
  /** Exit code (or signal name) once exited. */
  exited: Promise<number | string>;
  kubeconfigPath: string;
  /** Stops with a signal and waits for the exit; SIGTERM must exit 0. */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/** Starts `troupe cluster --data-dir dir ...args` and waits until it serves (or exits). */
export async function startClusterProcess(dir: string, args: string[] = []): Promise<ClusterProcess> {
  const child = spawn(process.execPath, [MAIN, 'cluster', '--data-dir', dir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  let done = false;
  const exited = new Promise<number | string>((r) =>
    child.once('exit', (code, sig) => {
      done = true;
      r(code ?? sig ?? -1);
    }),
  );
  const proc: ClusterProcess = {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    exited,
    kubeconfigPath: join(dir, 'kubeconfig'),
    async stop(signal = 'SIGTERM') {
      if (!done) child.kill(signal);
      return exited;
    },
  };
  await waitFor('the cluster process to serve or exit', () => done || stdout.includes('Press Ctrl+C'), {
    timeoutMs: START_TIMEOUT_MS,
  });
  return proc;
}

/** Runs a troupe CLI command to its end. */
export function troupe(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((r) => {
    execFile(process.execPath, [MAIN, ...args], { timeout: START_TIMEOUT_MS }, (err, stdout, stderr) => {
      r({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

/** kubectl against a kubeconfig file; rejects with stderr on failure. */
export function kubectlAt(
  kubeconfig: string,
  cacheDir: string,
  args: string[],
  input?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((r) => {
    const c = execFile(
      'kubectl',
      ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, ...args],
      { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) =>
        r({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
    c.stdin?.end(input);
  });
}
