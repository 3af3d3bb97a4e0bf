import { Command } from 'commander';
import { startEmbeddedCluster } from '../cluster/index.ts';
import { installCrds, kubeConfigFromString } from '../runtime/index.ts';
import { stateLines, writeKubeconfig } from './cluster.ts';
import { addClusterOptions, type ClusterFlags, clusterOptions, kubeconfigPath } from './cluster-flags.ts';
import { addManagerOptions, type ManagerFlags } from './manager-flags.ts';
import { exitStopped, untilSignal } from './options.ts';

type UpFlags = ClusterFlags & ManagerFlags;

/**
 * troupe's main job on a laptop: the embedded cluster and the controller manager in one
 * process. The manager reaches the cluster over HTTPS with the kubeconfig it is given,
 * exactly as `troupe run` reaches a real one.
 */
export function upCommand(): Command {
  const cmd = new Command('up').description(
    "Start the embedded cluster with troupe's controllers running against it (what `npm start` runs)",
  );
  addClusterOptions(cmd);
  // Everything troupe serves in embedded mode stays on loopback.
  addManagerOptions(cmd, {
    healthProbeBindAddress: '127.0.0.1:0',
    metricsBindAddress: '127.0.0.1:0',
    webhookPort: 0,
    dashboardAddress: '127.0.0.1:0',
  });
  return cmd.action(async (flags: UpFlags) => {
    // Before anything starts: a SIGTERM during startup then shuts down gracefully.
    const signalled = untilSignal();
    // Loaded when run: every troupe command imports this file, and startup time counts.
    const [{ startRunPodStandIn }, { buildManager, startManagerDashboard }] = await Promise.all([
      import('../cluster/runpod/index.ts'),
      import('./manager.ts'),
    ]);
    const cluster = await startEmbeddedCluster(clusterOptions(flags));
    // Offloading talks to the RunPod stand-in unless a real endpoint is configured.
    const runpod = flags.runpodBaseUrl ? undefined : await startRunPodStandIn({ timeScale: flags.timeScale });
    const { manager, log, capabilities, stop } = buildManager(
      kubeConfigFromString(cluster.server.kubeconfig),
      flags,
      {
        values: {
          ...(runpod ? { runpodBaseUrl: runpod.url, runpodKey: runpod.apiKey } : {}),
          appwrapperWebhooks: true,
        },
        webhookHost: '127.0.0.1',
      },
    );
    // Served before the manager starts: its informers need the kinds.
    await installCrds(
      manager.client,
      capabilities.flatMap((c) => c.crds),
    );
    await manager.start();
    // Register the manager's webhooks with the embedded API server, on loopback.
    for (const cap of capabilities) {
      if (!cap.webhooks || !manager.webhooks) continue;
      const url = `https://127.0.0.1:${manager.webhooks.port}`;
      for (const cfg of cap.webhooks.configurations(url, manager.webhooks.caBundle ?? '')) {
        await manager.client.apply(cfg, { force: true });
      }
    }
    const dashboard = await startManagerDashboard(flags, manager, capabilities);
    // Written only once everything serves: a start that fails leaves a running instance's
    // kubeconfig alone.
    const file = await writeKubeconfig(kubeconfigPath(flags), cluster.server.kubeconfig);
    process.stdout.write(
      [
        '',
        `troupe is up: embedded cluster at ${cluster.server.url} with ${cluster.nodes?.names().length ?? 0} simulated nodes`,
        ...stateLines(cluster.server, file),
        `controllers: ${capabilities.map((c) => `${c.name} (${c.summary})`).join(', ')}`,
        ...(runpod ? [`RunPod stand-in for offloading at ${runpod.url}`] : []),
        ...(dashboard ? ['', `Dashboard: ${dashboard.url}`] : []),
        '',
        'Point kubectl at it:',
        `  export KUBECONFIG=${file}`,
        '  kubectl get nodes',
        '',
        'Try a sample:',
        '  kubectl apply -f config/samples/podgroups-example.yaml   # PodSequence: tiers start in order',
        '  kubectl get podseq -w                                    # Ctrl+C when the last tier is Ready',
        '  kubectl apply -f config/samples/podgroup/                # gang readiness and PodGroup status',
        '  kubectl get podgroups -w',
        "  kubectl apply -f samples/appwrapper.yaml                 # AppWrapper admitted through Kueue's stand-in",
        '  kubectl get appwrappers -w',
        '  kubectl apply -f samples/offload/gpu-job.yaml            # a GPU Job offloaded to the RunPod stand-in',
        '  kubectl get pods -l runpod.io/managed=true -w',
        '',
        'Press Ctrl+C to stop.',
        '',
      ].join('\n'),
    );
    const sig = await signalled;
    log.info({ signal: sig }, 'shutting down');
    await dashboard?.stop();
    await stop();
    await runpod?.stop();
    await cluster.stop();
    exitStopped();
  });
}
