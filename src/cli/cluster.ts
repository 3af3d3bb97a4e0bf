import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Command } from 'commander';
import { startEmbeddedCluster } from '../cluster/index.ts';
import { addClusterOptions, type ClusterFlags, clusterOptions } from './cluster-flags.ts';
import { untilSignal } from './options.ts';

export async function writeKubeconfig(path: string, content: string): Promise<string> {
  const file = resolve(path);
  await mkdir(dirname(file), { recursive: true });
  // The kubeconfig holds the admin token: readable by its owner only.
  await writeFile(file, content, { mode: 0o600 });
  return file;
}

export function clusterCommand(): Command {
  const cmd = new Command('cluster').description(
    'Run the embedded Kubernetes-compatible cluster (API server and simulated nodes) until interrupted',
  );
  return addClusterOptions(cmd).action(async (flags: ClusterFlags) => {
    const cluster = await startEmbeddedCluster(clusterOptions(flags));
    const file = await writeKubeconfig(flags.kubeconfigOut, cluster.server.kubeconfig);
    process.stdout.write(
      `troupe cluster: API server at ${cluster.server.url}\n` +
        `kubeconfig written to ${file}\n` +
        `  export KUBECONFIG=${file}\n  kubectl get nodes\n` +
        `Press Ctrl+C to stop.\n`,
    );
    const sig = await untilSignal();
    process.stdout.write(`troupe cluster: ${sig} received, shutting down\n`);
    await cluster.stop();
  });
}
