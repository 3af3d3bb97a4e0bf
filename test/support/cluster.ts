/**
 * Test support: the whole embedded cluster (API server and simulated data plane) with a
 * kubeconfig file for kubectl.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type EmbeddedCluster,
  type EmbeddedClusterOptions,
  startEmbeddedCluster,
} from '../../src/cluster/index.ts';

export interface TestCluster {
  cluster: EmbeddedCluster;
  kubeconfigPath: string;
  kubectl(args: string[], input?: string): Promise<string>;
  kubectlResult(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }>;
  close(): Promise<void>;
}

export async function startTestCluster(opts: EmbeddedClusterOptions = {}): Promise<TestCluster> {
  const cluster = await startEmbeddedCluster({ port: 0, ...opts });
  const dir = await mkdtemp(join(tmpdir(), 'troupe-cluster-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  await writeFile(kubeconfigPath, cluster.server.kubeconfig, { mode: 0o600 });
  const kubectlResult = (args: string[], input?: string) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        'kubectl',
        ['--kubeconfig', kubeconfigPath, '--cache-dir', join(dir, 'cache'), ...args],
        { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
        (err, stdout, stderr) => {
          const code = err
            ? typeof (err as { code?: unknown }).code === 'number'
              ? (err as { code: number }).code
              : 1
            : 0;
          resolve({ code, stdout, stderr });
        },
      );
      child.stdin?.end(input);
    });
  return {
    cluster,
    kubeconfigPath,
    kubectlResult,
    kubectl: async (args, input) => {
      const r = await kubectlResult(args, input);
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
      return r.stdout;
    },
    close: async () => {
      await cluster.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
