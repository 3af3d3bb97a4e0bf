import { Command } from 'commander';
import { loadKubeConfig } from '../runtime/index.ts';
import { capabilities as allCapabilities, selectControllers } from './capabilities.ts';
import { checkCapabilityKinds } from './crds.ts';
import { addManagerOptions, type ManagerFlags } from './manager-flags.ts';
import { exitStopped, untilSignal } from './options.ts';

interface RunFlags extends ManagerFlags {
  kubeconfig?: string;
  installCrds?: boolean;
}

export function runCommand(): Command {
  const cmd = new Command('run')
    .description("Run troupe's controllers against a cluster (kubeconfig, $KUBECONFIG or in-cluster config)")
    .option('--kubeconfig <file>', 'kubeconfig to use (default: $KUBECONFIG, in-cluster, ~/.kube/config)');
  addManagerOptions(cmd, {
    healthProbeBindAddress: ':8081',
    // kubebuilder's scaffold: metrics on :8443 over HTTPS, for authenticated and authorized callers.
    metricsBindAddress: ':8443',
    metricsSecure: true,
    webhookPort: 9443,
    dashboardAddress: '0',
  });
  cmd.option(
    '--install-crds',
    'install the CRDs of the selected capabilities when the cluster lacks them (development clusters; production installs them with `make install`)',
  );
  return cmd.action(async (flags: RunFlags) => {
    // Before anything starts: a SIGTERM during startup then shuts down gracefully.
    const signalled = untilSignal();
    // Loaded when run: every troupe command imports this file, and startup time counts.
    const { buildManager, managerLogger, startManagerDashboard } = await import('./manager.ts');
    const { kubeConfig, source, origin } = loadKubeConfig({ kubeconfig: flags.kubeconfig });
    const log = managerLogger(flags);
    const wanted = selectControllers(allCapabilities(), flags.controllers).capabilities;
    const runnable = await checkCapabilityKinds({
      kubeConfig,
      origin,
      capabilities: wanted,
      selector: flags.controllers,
      installCrds: flags.installCrds ?? false,
      log,
    });
    // With `*`, the capabilities whose kinds are missing were left out (and said so).
    const { manager, capabilities, stop } = buildManager(kubeConfig, flags, {
      log,
      only: runnable.map((c) => c.name),
    });
    log.info(
      { kubeconfig: source, capabilities: capabilities.map((c) => c.name) },
      'starting troupe controller manager',
    );
    await manager.start();
    const dashboard = await startManagerDashboard(flags, manager, capabilities);
    if (dashboard)
      log.info(
        { url: dashboard.baseUrl },
        'dashboard serving (the access token is in the URL printed on stdout)',
      );
    if (dashboard) process.stdout.write(`Dashboard: ${dashboard.url}\n`);
    const sig = await signalled;
    log.info({ signal: sig }, 'shutting down');
    await dashboard?.stop();
    await stop();
    exitStopped();
  });
}
