/** Builds the controller manager from flags: shared by `troupe run` and `troupe up`. */
import type { KubeConfig } from '@kubernetes/client-node';
import { createLogger, type Logger, Manager } from '../runtime/index.ts';
import { type Capability, capabilities, selectControllers } from './capabilities.ts';
import type { ManagerFlags } from './manager-flags.ts';

export interface BuiltManager {
  manager: Manager;
  log: Logger;
  capabilities: Capability[];
}

export function buildManager(kubeConfig: KubeConfig, flags: ManagerFlags): BuiltManager {
  const log = createLogger({ level: flags.logLevel, format: flags.logFormat, name: 'troupe' });
  const selected = selectControllers(capabilities(), flags.controllers);
  const metrics = flags.metricsBindAddress === '0' ? false : flags.metricsBindAddress;
  const manager = new Manager({
    kubeConfig,
    namespace: flags.namespace,
    leaderElection: flags.leaderElect
      ? {
          name: flags.leaderElectionId,
          ...(flags.leaderElectionNamespace ? { namespace: flags.leaderElectionNamespace } : {}),
        }
      : false,
    healthProbeAddress: flags.healthProbeBindAddress === '0' ? false : flags.healthProbeBindAddress,
    metricsAddress: metrics === flags.healthProbeBindAddress ? undefined : metrics,
    resyncMs: flags.resyncPeriod * 1000,
    logger: log,
  });
  for (const def of selected.controllers) manager.add(def);
  return { manager, log, capabilities: selected.capabilities };
}
