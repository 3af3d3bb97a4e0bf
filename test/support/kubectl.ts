/**
 * Test support: the kubectl binary against one kubeconfig, with the kubeconfig file and
 * kubectl's discovery cache in a folder of its own so parallel test files never share a cache.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Kubectl {
  kubeconfigPath: string;
  /** Runs kubectl and returns its exit code and output without rejecting. */
  result(args: string[], input?: string): Promise<KubectlResult>;
  /** Runs kubectl; rejects with its stderr on a non-zero exit. */
  run(args: string[], input?: string): Promise<KubectlResult>;
  /** Removes the kubeconfig file and the cache. */
  cleanup(): Promise<void>;
}

export async function kubectlFor(kubeconfigYaml: string): Promise<Kubectl> {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-kubectl-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  await writeFile(kubeconfigPath, kubeconfigYaml, { mode: 0o600 });
  const result = (args: string[], input?: string) =>
    new Promise<KubectlResult>((resolve) => {
      const child = execFile(
        'kubectl',
        ['--kubeconfig', kubeconfigPath, '--cache-dir', join(dir, 'cache'), ...args],
        { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
      child.stdin?.end(input);
    });
  return {
    kubeconfigPath,
    result,
    run: async (args, input) => {
      const r = await result(args, input);
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
      return r;
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
