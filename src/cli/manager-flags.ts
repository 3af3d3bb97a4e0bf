/** The options of the controller manager, shared by `troupe run` and `troupe up`. */
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { CapabilityFlag, CapabilityValues } from '../controllers/capabilities.ts';
import { type Capability, capabilities, selectControllers } from './capabilities.ts';
import { parseNonNegativeInt, parseNonNegativeNumber, parsePositiveNumber } from './options.ts';

/**
 * The manager's own flags, and the values of the capabilities' flags (each capability declares
 * its own: `flags` of its Capability), under their camelCase names.
 */
export type ManagerFlags = ManagerOwnFlags & CapabilityValues;

interface ManagerOwnFlags {
  controllers: string;
  namespace?: string;
  leaderElect: boolean;
  leaderElectionId: string;
  leaderElectionNamespace?: string;
  healthProbeBindAddress: string;
  metricsBindAddress: string;
  metricsSecure: boolean;
  webhookPort: number;
  certDir?: string;
  logLevel: string;
  logFormat: 'json' | 'pretty' | 'auto';
  resyncPeriod: number;
  /** The RunPod controller seed's alias of --health-probe-bind-address (burst offloading). */
  healthServerAddress?: string;
  dashboardAddress: string;
  dashboardToken?: string;
}

export function addManagerOptions(
  cmd: Command,
  defaults: {
    healthProbeBindAddress: string;
    metricsBindAddress: string;
    /** kubebuilder's --metrics-secure: HTTPS with TokenReview/SubjectAccessReview (`run`); `up` serves loopback HTTP. */
    metricsSecure?: boolean;
    webhookPort: number;
    dashboardAddress: string;
  },
  /** Whose flags to add: the one list (a test passes its own). */
  all: Capability[] = capabilities(),
): Command {
  const port = (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`"${v}" is not a port number (0-65535).`);
    return n;
  };
  cmd
    .hook('preAction', (_, action) => {
      readSwitchesFromEnv(action);
      checkManagerFlags(action.opts<ManagerFlags>(), all);
    })
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
      new Option(
        '--metrics-secure [bool]',
        'serve /metrics over HTTPS to callers a TokenReview authenticates and a SubjectAccessReview allows (the metrics-reader role); --metrics-secure=false serves plain HTTP to anyone',
      )
        .env('TROUPE_METRICS_SECURE')
        .preset('true')
        .argParser(switchValue('--metrics-secure'))
        .default(defaults.metricsSecure ?? false),
    )
    .addOption(
      new Option('--webhook-port <port>', 'port of the HTTPS admission webhook server')
        .env('TROUPE_WEBHOOK_PORT')
        .argParser(port)
        .default(defaults.webhookPort),
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
    )
    .addOption(
      new Option('--dashboard-address <addr>', 'address of the read-only web dashboard ("0" disables)')
        .env('TROUPE_DASHBOARD_ADDRESS')
        .default(defaults.dashboardAddress),
    )
    .addOption(
      new Option(
        '--dashboard-token <token>',
        'dashboard access token (default: random, printed with the URL)',
      ).env('TROUPE_DASHBOARD_TOKEN'),
    )
    // Burst offloading keeps the RunPod controller seed's flags verbatim.
    .addOption(
      new Option(
        '--health-server-address <addr>',
        'alias of --health-probe-bind-address (RunPod controller seed)',
      ).env('TROUPE_HEALTH_SERVER_ADDRESS'),
    );
  for (const cap of all) for (const f of cap.flags ?? []) cmd.addOption(capabilityOption(f));
  return cmd;
}

const NUMBER_PARSERS = {
  positive: parsePositiveNumber,
  'non-negative': parseNonNegativeNumber,
  'non-negative-int': parseNonNegativeInt,
};

/** A capability's flag as a commander option, read also from TROUPE_<FLAG_NAME>. */
function capabilityOption(f: CapabilityFlag): Option {
  const opt = new Option(f.flag, f.description);
  opt.env(`TROUPE_${opt.name().toUpperCase().replaceAll('-', '_')}`);
  if (f.choices) opt.choices(f.choices);
  const read = f.value;
  if (typeof read === 'string') opt.argParser(NUMBER_PARSERS[read]);
  else if (read)
    opt.argParser((raw: string) => {
      // A capability's Error, reported by commander as a bad value of this flag.
      try {
        return read(raw);
      } catch (err) {
        throw new InvalidArgumentError((err as Error).message);
      }
    });
  if (f.default !== undefined) opt.default(f.default);
  return opt;
}

const TRUE_WORDS = ['true', '1', 'yes', 'on'];
const FALSE_WORDS = ['false', '0', 'no', 'off', ''];

/** A switch that takes an explicit value, as Go's boolean flags do (`--metrics-secure=false`). */
function switchValue(flag: string): (v: string) => boolean {
  return (v) => {
    const raw = v.trim().toLowerCase();
    if (TRUE_WORDS.includes(raw)) return true;
    if (FALSE_WORDS.includes(raw)) return false;
    throw new Error(`${flag}="${v}" is not a switch value: use true or false`);
  };
}

/**
 * Switches set from the environment (`TROUPE_LEADER_ELECT`, …) read the variable's value:
 * commander turns a switch on whenever its variable is set, so `TROUPE_LEADER_ELECT=false`
 * would elect a leader. A value that is neither true nor false is refused.
 */
function readSwitchesFromEnv(cmd: Command): void {
  for (const option of cmd.options) {
    if (option.required || option.optional || !option.envVar) continue;
    const key = option.attributeName();
    if (cmd.getOptionValueSource(key) !== 'env') continue;
    const raw = (process.env[option.envVar] ?? '').trim().toLowerCase();
    if (TRUE_WORDS.includes(raw)) continue;
    if (!FALSE_WORDS.includes(raw)) {
      throw new Error(
        `${option.envVar}="${process.env[option.envVar]}" is not a switch value: use true or false (${option.long})`,
      );
    }
    cmd.setOptionValueWithSource(key, false, 'env');
  }
}

/**
 * Combinations of flags that commander cannot check, refused before the command starts
 * anything (`up` would otherwise start the embedded cluster first): a flag that needs its
 * capability selected, set while `--controllers` leaves it out.
 */
function checkManagerFlags(flags: ManagerFlags, all: Capability[]): void {
  let selected: Capability[] | undefined;
  for (const cap of all) {
    for (const f of cap.flags ?? []) {
      if (!f.needsSelection) continue;
      const opt = new Option(f.flag);
      const v = flags[opt.attributeName()];
      if (v === undefined || v === false || v === f.default) continue;
      selected ??= selectControllers(all, flags.controllers).capabilities;
      if (!selected.includes(cap))
        throw new Error(
          `${opt.long} ${f.needsSelection}, but --controllers "${flags.controllers}" does not select it`,
        );
    }
  }
}
