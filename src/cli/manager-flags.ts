/** The options of the controller manager, shared by `troupe run` and `troupe up`. */
import { type Command, Option } from 'commander';
import { parsePositiveNumber } from './options.ts';

export interface ManagerFlags {
  controllers: string;
  namespace?: string;
  leaderElect: boolean;
  leaderElectionId: string;
  leaderElectionNamespace?: string;
  healthProbeBindAddress: string;
  metricsBindAddress: string;
  webhookPort: number;
  certDir?: string;
  logLevel: string;
  logFormat: 'json' | 'pretty' | 'auto';
  resyncPeriod: number;
}

export function addManagerOptions(
  cmd: Command,
  defaults: { healthProbeBindAddress: string; metricsBindAddress: string },
): Command {
  const port = (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`"${v}" is not a port number (0-65535).`);
    return n;
  };
  return cmd
    .addOption(
      new Option('--config <file>', 'YAML file of option values (keys as flag names)').env('TROUPE_CONFIG'),
    )
    .addOption(
      new Option('--controllers <list>', 'comma-separated controllers to run, or * for all')
        .env('TROUPE_CONTROLLERS')
        .default('*'),
    )
    .addOption(
      new Option('--namespace <ns>', 'watch and reconcile only this namespace').env('TROUPE_NAMESPACE'),
    )
    .addOption(
      new Option('--leader-elect', 'elect a leader through a Lease before reconciling')
        .env('TROUPE_LEADER_ELECT')
        .default(false),
    )
    .addOption(
      new Option('--leader-election-id <name>', 'name of the leader election Lease')
        .env('TROUPE_LEADER_ELECTION_ID')
        .default('troupe-controller-manager'),
    )
    .addOption(
      new Option('--leader-election-namespace <ns>', 'namespace of the leader election Lease').env(
        'TROUPE_LEADER_ELECTION_NAMESPACE',
      ),
    )
    .addOption(
      new Option('--health-probe-bind-address <addr>', 'address of /healthz and /readyz')
        .env('TROUPE_HEALTH_PROBE_BIND_ADDRESS')
        .default(defaults.healthProbeBindAddress),
    )
    .addOption(
      new Option('--metrics-bind-address <addr>', 'address of /metrics ("0" disables)')
        .env('TROUPE_METRICS_BIND_ADDRESS')
        .default(defaults.metricsBindAddress),
    )
    .addOption(
      new Option('--webhook-port <port>', 'port of the HTTPS admission webhook server')
        .env('TROUPE_WEBHOOK_PORT')
        .argParser(port)
        .default(9443),
    )
    .addOption(
      new Option(
        '--cert-dir <dir>',
        'directory with tls.crt and tls.key for the webhook server (generated when absent)',
      ).env('TROUPE_CERT_DIR'),
    )
    .addOption(
      new Option('--log-level <level>', 'trace, debug, info, warn, error')
        .env('TROUPE_LOG_LEVEL')
        .choices(['trace', 'debug', 'info', 'warn', 'error', 'silent'])
        .default('info'),
    )
    .addOption(
      new Option('--log-format <format>', 'json, pretty, or auto (pretty on a terminal)')
        .env('TROUPE_LOG_FORMAT')
        .choices(['json', 'pretty', 'auto'])
        .default('auto'),
    )
    .addOption(
      new Option('--resync-period <seconds>', 'informer resync period')
        .env('TROUPE_RESYNC_PERIOD')
        .argParser(parsePositiveNumber)
        .default(600),
    );
}
