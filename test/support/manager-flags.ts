/**
 * The manager's flags as `troupe run` parses them from `args`, with nothing served on a
 * port (health, metrics, dashboard off; webhooks on any free port): for tests that build
 * troupe's manager in process, as the virtual-clock tests do.
 */
import { Command } from 'commander';
import { addManagerOptions, type ManagerFlags } from '../../src/cli/manager-flags.ts';

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
