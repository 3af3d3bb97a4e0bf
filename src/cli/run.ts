import { Command } from 'commander';
import { loadKubeConfig } from '../runtime/index.ts';
import { buildManager } from './manager.ts';
import { addManagerOptions, type ManagerFlags } from './manager-flags.ts';
import { untilSignal } from './options.ts';

interface RunFlags extends ManagerFlags {
  kubeconfig?: string;
}

export function runCommand(): Command {
  const cmd = new Command('run')
    .description("Run troupe's controllers against a cluster (kubeconfig, $KUBECONFIG or in-cluster config)")
    .option('--kubeconfig <file>', 'kubeconfig to use (default: $KUBECONFIG, in-cluster, ~/.kube/config)');
  addManagerOptions(cmd, { healthProbeBindAddress: ':8081', metricsBindAddress: ':8080', webhookPort: 9443 });
  return cmd.action(async (flags: RunFlags) => {
    const { kubeConfig, source } = loadKubeConfig({ kubeconfig: flags.kubeconfig });
    const { manager, log, capabilities, stop } = buildManager(kubeConfig, flags);
    log.info(
      { kubeconfig: source, capabilities: capabilities.map((c) => c.name) },
      'starting troupe controller manager',
    );
    await manager.start();
    const sig = await untilSignal();
    log.info({ signal: sig }, 'shutting down');
    await stop();
  });
}
