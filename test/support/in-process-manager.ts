/**
 * troupe's manager built in process, as the virtual-clock tests run it beside an embedded
 * cluster on one clock: the flags as `troupe run` parses them, with nothing served on a port
 * (health, metrics, dashboard off; webhooks on any free port).
 */
import { Command } from 'commander';
import { type BuiltManager, buildManager } from '../../src/cli/manager.ts';
import { addManagerOptions, type ManagerFlags } from '../../src/cli/manager-flags.ts';
import type { Clock } from '../../src/lib/clock.ts';
import { kubeConfigFromString } from '../../src/runtime/index.ts';

export function quietManagerFlags(args: string[]): ManagerFlags {
  const cmd = addManagerOptions(new Command('run').exitOverride(), {
    healthProbeBindAddress: '0',
    metricsBindAddress: '0',
    webhookPort: 0,
    dashboardAddress: '0',
  });
  // An action, so that commander runs the preAction checks as it does for `troupe run`.
  cmd.action(() => {});
  cmd.parse(args, { from: 'user' });
  return cmd.opts<ManagerFlags>();
}

/**
 * The manager `args` select, against the cluster of `kubeconfig` on `clock`: its capabilities'
 * CRDs applied, started. One that fails to start is stopped before the error is thrown, so
 * the caller has only a started manager to stop.
 */
export async function startQuietManager(
  kubeconfig: string,
  clock: Clock,
  args: string[],
): Promise<BuiltManager> {
  const built = buildManager(kubeConfigFromString(kubeconfig), quietManagerFlags(args), { clock });
  try {
    for (const cap of built.capabilities) {
      for (const crd of cap.crds) await built.manager.client.apply(crd, { force: true });
    }
    await built.manager.start();
  } catch (err) {
    await built.stop().catch(() => {});
    throw err;
  }
  return built;
}
