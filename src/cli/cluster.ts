import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Command } from 'commander';
import type { ApiServerHandle } from '../cluster/apiserver/server.ts';
import { startEmbeddedCluster } from '../cluster/index.ts';
import { addClusterOptions, type ClusterFlags, clusterOptions, kubeconfigPath } from './cluster-flags.ts';
import { exitStopped, untilSignal } from './options.ts';

export async function writeKubeconfig(path: string, content: string): Promise<string> {
  const file = resolve(path);
  await mkdir(dirname(file), { recursive: true });
  // The kubeconfig holds the admin token: readable by its owner only.
  await writeFile(file, content, { mode: 0o600 });
  return file;
}

/** What the CLI says about the stored state: where it is, what was restored, a port that moved. */
export function stateLines(server: ApiServerHandle, kubeconfigFile: string): string[] {
  const dir = server.dataDir?.dir;
  const r = server.restart;
  if (!dir) return [];
  if (!r) return [`state: in memory only (--ephemeral); nothing is kept when it stops`];
  const lines = [
    r.restored
      ? `state: restored ${r.objects} objects from ${dir} (resourceVersion ${r.rv}); --reset starts afresh`
      : `state: kept in ${dir} (a restart keeps the cluster; --reset starts afresh)`,
  ];
  if (r.portTakenWas !== undefined) {
    lines.push(
      `note: port ${r.portTakenWas} of the previous run is taken; serving on ${new URL(server.url).port}, ` +
        `kubeconfig ${kubeconfigFile} rewritten (clients using the old one must reload it)`,
    );
  }
  return lines;
}

export function clusterCommand(): Command {
  const cmd = new Command('cluster').description(
    'Run the embedded Kubernetes-compatible cluster (API server and simulated nodes) until interrupted',
  );
  return addClusterOptions(cmd).action(async (flags: ClusterFlags) => {
    // Before anything starts: a SIGTERM during startup then shuts down gracefully.
    const signalled = untilSignal();
    // Written as soon as the API server serves (a restart of a large cluster serves before its
    // data plane has caught up); a start that fails before leaves a running instance's alone.
    const cluster = await startEmbeddedCluster({
      ...clusterOptions(flags),
      onServing: async (server) => {
        const file = await writeKubeconfig(kubeconfigPath(flags), server.kubeconfig);
        process.stdout.write(
          `troupe cluster: API server at ${server.url}\n` +
            stateLines(server, file)
              .map((l) => `${l}\n`)
              .join('') +
            `kubeconfig written to ${file}\n` +
            `  export KUBECONFIG=${file}\n  kubectl get nodes\n`,
        );
      },
    });
    // Once the data plane runs too: what scripts waiting for the cluster wait for.
    process.stdout.write(
      `${cluster.nodes ? `troupe cluster: ${cluster.nodes.names().length} nodes running\n` : ''}Press Ctrl+C to stop.\n`,
    );
    const sig = await signalled;
    process.stdout.write(`troupe cluster: ${sig} received, shutting down\n`);
    await cluster.stop();
    exitStopped();
  });
}
