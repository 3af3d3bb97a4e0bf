/** Builds the controller manager from flags: shared by `troupe run` and `troupe up`. */
import type { KubeConfig } from '@kubernetes/client-node';
import { createLogger, type Logger, Manager } from '../runtime/index.ts';
import { type Capability, capabilities, selectControllers } from './capabilities.ts';
import { type ManagerFlags, offloadOptions } from './manager-flags.ts';
import type { OffloadOptions } from '../controllers/offload/index.ts';

export interface BuiltManager {
  manager: Manager;
  log: Logger;
  capabilities: Capability[];
  /** Stops the manager, then what the capabilities hold (provider clients, timers). */
  stop(): Promise<void>;
}

export function buildManager(
  kubeConfig: KubeConfig,
  flags: ManagerFlags,
  extra: { offload?: Partial<OffloadOptions>; webhookHost?: string; appwrapperWebhooks?: boolean } = {},
): BuiltManager {
  const log = createLogger({ level: flags.logLevel, format: flags.logFormat, name: 'troupe' });
  const selected = selectControllers(
    capabilities({
      offload: { ...offloadOptions(flags), ...extra.offload },
      podsequence: { mode: flags.podsequenceMode },
      appwrapperWebhooks: flags.appwrapperWebhooks || extra.appwrapperWebhooks,
    }),
    flags.controllers,
  );
  const metrics = flags.metricsBindAddress === '0' ? false : flags.metricsBindAddress;
  const probes = flags.healthServerAddress ?? flags.healthProbeBindAddress;
  const needsWebhooks = selected.capabilities.some((c) => c.webhooks);
  const manager = new Manager({
    kubeConfig,
    webhook: needsWebhooks
      ? {
          port: flags.webhookPort,
          ...(extra.webhookHost ? { host: extra.webhookHost, hosts: [extra.webhookHost, 'localhost'] } : {}),
          ...(flags.certDir ? { certDir: flags.certDir } : {}),
        }
      : false,
    namespace: flags.namespace,
    leaderElection: flags.leaderElect
      ? {
          name: flags.leaderElectionId,
          ...(flags.leaderElectionNamespace ? { namespace: flags.leaderElectionNamespace } : {}),
        }
      : false,
    healthProbeAddress: probes === '0' ? false : probes,
    metricsAddress: metrics === probes ? undefined : metrics,
    resyncMs: flags.resyncPeriod * 1000,
    logger: log,
  });
  for (const def of selected.controllers) manager.add(def);
  for (const cap of selected.capabilities) cap.webhooks?.register(manager);
  for (const cap of selected.capabilities)
    for (const [name, check] of cap.readyChecks ?? []) manager.addReadyzCheck(name, check);
  return {
    manager,
    log,
    capabilities: selected.capabilities,
    stop: async () => {
      await manager.stop();
      for (const cap of selected.capabilities) await cap.stop?.();
    },
  };
}
