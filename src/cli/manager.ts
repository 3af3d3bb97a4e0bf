/** Builds the controller manager from flags: shared by `troupe run` and `troupe up`. */
import type { KubeConfig } from '@kubernetes/client-node';
import { type DashboardHandle, startDashboard } from '../dashboard/index.ts';
import type { Clock } from '../lib/clock.ts';
import { createLogger, type Logger, Manager } from '../runtime/index.ts';
import {
  askedByName,
  type Capability,
  type CapabilityValues,
  capabilities,
  dashboardParts,
  selectControllers,
} from './capabilities.ts';
import type { ManagerFlags } from './manager-flags.ts';

export interface BuiltManager {
  manager: Manager;
  log: Logger;
  capabilities: Capability[];
  /** Stops the manager, then what the capabilities hold (provider clients, timers). */
  stop(): Promise<void>;
}

/** The logger of the manager and of the command around it, as the flags ask. */
export function managerLogger(flags: Pick<ManagerFlags, 'logLevel' | 'logFormat'>): Logger {
  return createLogger({ level: flags.logLevel, format: flags.logFormat, name: 'troupe' });
}

export function buildManager(
  kubeConfig: KubeConfig,
  flags: ManagerFlags,
  extra: {
    /** Capability values beyond the flags, over them (`troupe up`: the RunPod stand-in, webhooks on). */
    values?: CapabilityValues;
    webhookHost?: string;
    /** The logger the command already made (see managerLogger). */
    log?: Logger;
    /** Only these of the capabilities `--controllers` selects (`run` leaves out those whose CRDs are missing). */
    only?: string[];
    /** The time controllers decide by (a simulation's clock); default the real clock. */
    clock?: Clock;
  } = {},
): BuiltManager {
  const log = extra.log ?? managerLogger(flags);
  const chosen = selectControllers(
    capabilities({ ...flags, ...extra.values }, { clock: extra.clock }),
    flags.controllers,
  );
  const kept = chosen.capabilities.filter((c) => !extra.only || extra.only.includes(c.name));
  const selected = {
    capabilities: kept,
    controllers: chosen.controllers.filter((d) => kept.some((c) => c.controllers.includes(d))),
  };
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
    metricsAddress: metrics === probes && !flags.metricsSecure ? undefined : metrics,
    metricsSecure: flags.metricsSecure,
    resyncMs: flags.resyncPeriod * 1000,
    logger: log,
    ...(extra.clock ? { clock: extra.clock } : {}),
  });
  for (const def of selected.controllers) manager.add(def);
  for (const cap of selected.capabilities) cap.webhooks?.register(manager);
  for (const cap of selected.capabilities) {
    // A capability without credentials runs (it keeps its objects' status honest) but only
    // holds readiness back when the user asked for it by name.
    const missing = cap.unconfigured?.();
    const byName = askedByName(cap, flags.controllers);
    if (missing) {
      log.warn(
        { capability: cap.name },
        byName
          ? `${cap.name}: ${missing}; /readyz fails until it is configured`
          : `${cap.name}: ${missing}; it runs without effect and does not hold /readyz back (name it in --controllers to make readiness wait for it)`,
      );
      if (!byName) continue;
    }
    for (const [name, check] of cap.readyChecks ?? []) manager.addReadyzCheck(name, check);
  }
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

/** The dashboard `--dashboard-address` asks for ("0": none), showing the capabilities' tables. */
export function startManagerDashboard(
  flags: Pick<ManagerFlags, 'dashboardAddress' | 'dashboardToken'>,
  manager: Manager,
  caps: Capability[],
): Promise<DashboardHandle | undefined> {
  if (flags.dashboardAddress === '0') return Promise.resolve(undefined);
  return startDashboard({
    manager,
    address: flags.dashboardAddress,
    token: flags.dashboardToken,
    ...dashboardParts(caps),
  });
}
