/** The options of the controller manager, shared by `troupe run` and `troupe up`. */
import { readFileSync } from 'node:fs';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { parse as parseYaml } from 'yaml';
import { type AppWrapperConfigInput, configFromOperatorFile } from '../controllers/appwrapper/index.ts';
import { capabilities, selectControllers } from './capabilities.ts';
import { parseNonNegativeInt, parseNonNegativeNumber, parsePositiveNumber } from './options.ts';

export interface ManagerFlags {
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
  /** The RunPod controller seed's flags (burst offloading). */
  healthServerAddress?: string;
  reconcileInterval: number;
  pendingJobThreshold: number;
  maxPendingTime: number;
  maxGpuPrice: number;
  maxHourlySpend: number;
  runpodBaseUrl?: string;
  remoteClusterSecret?: string;
  podsequenceMode: 'lite' | 'full';
  appwrapperWebhooks: boolean;
  /** Upstream AppWrapper's operator configuration, read from `--appwrapper-config`. */
  appwrapperConfig?: AppWrapperConfigInput;
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
): Command {
  const port = (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`"${v}" is not a port number (0-65535).`);
    return n;
  };
  return (
    cmd
      .hook('preAction', (_, action) => {
        readSwitchesFromEnv(action);
        checkManagerFlags(action.opts<ManagerFlags>());
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
        new Option(
          '--podsequence-mode <mode>',
          'PodSequence: lite (gates only) or full (per-node taints and a mutating webhook)',
        )
          .env('TROUPE_PODSEQUENCE_MODE')
          .choices(['lite', 'full'])
          .default('lite'),
      )
      .addOption(
        new Option(
          '--appwrapper-webhooks',
          'serve the AppWrapper defaulting and validating webhooks (needs the appwrapper capability; `up` serves them whenever it runs)',
        )
          .env('TROUPE_APPWRAPPER_WEBHOOKS')
          .default(false),
      )
      .addOption(
        new Option(
          '--appwrapper-config <file>',
          "upstream AppWrapper's operator configuration (its config.yaml, or the appwrapper-operator-config ConfigMap)",
        )
          .env('TROUPE_APPWRAPPER_CONFIG')
          .argParser(readAppWrapperConfig),
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
      )
      .addOption(
        new Option('--reconcile-interval <seconds>', 'offload: periodic resync of managed Jobs')
          .env('TROUPE_RECONCILE_INTERVAL')
          .argParser(parsePositiveNumber)
          .default(30),
      )
      .addOption(
        new Option(
          '--pending-job-threshold <n>',
          'offload: offload when more managed Jobs than this are pending',
        )
          .env('TROUPE_PENDING_JOB_THRESHOLD')
          .argParser(parseNonNegativeInt)
          .default(1),
      )
      .addOption(
        new Option(
          '--max-pending-time <seconds>',
          'offload: offload a Job pending longer than this (0: at once)',
        )
          .env('TROUPE_MAX_PENDING_TIME')
          .argParser(parseNonNegativeNumber)
          .default(0),
      )
      .addOption(
        new Option('--max-gpu-price <usd>', 'offload: highest hourly GPU price to rent')
          .env('TROUPE_MAX_GPU_PRICE')
          .argParser(parsePositiveNumber)
          .default(0.5),
      )
      .addOption(
        new Option(
          '--max-hourly-spend <usd>',
          'offload: cap on the summed hourly price of running remote pods (0: no cap)',
        )
          .env('TROUPE_MAX_HOURLY_SPEND')
          .argParser(parseNonNegativeNumber)
          .default(0),
      )
      .addOption(
        new Option(
          '--runpod-base-url <url>',
          'offload: RunPod REST v2 endpoint (the API key comes from RUNPOD_KEY)',
        ).env('TROUPE_RUNPOD_BASE_URL'),
      )
      .addOption(
        new Option(
          '--remote-cluster-secret <ns/name>',
          'offload to a second Kubernetes cluster instead of RunPod: a Secret whose key `kubeconfig` reaches it',
        ).env('TROUPE_REMOTE_CLUSTER_SECRET'),
      )
  );
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
 * anything (`up` would otherwise start the embedded cluster first).
 */
function checkManagerFlags(flags: ManagerFlags): void {
  if (!flags.appwrapperWebhooks) return;
  const { capabilities: selected } = selectControllers(capabilities(), flags.controllers);
  if (!selected.some((c) => c.name === 'appwrapper')) {
    throw new Error(
      `--appwrapper-webhooks serves the appwrapper capability's webhooks, but --controllers "${flags.controllers}" does not select it`,
    );
  }
}

/** The offload capability's options from the flags. */
export function offloadOptions(flags: ManagerFlags): Record<string, unknown> {
  return {
    reconcileInterval: flags.reconcileInterval,
    pendingJobThreshold: flags.pendingJobThreshold,
    maxPendingTime: flags.maxPendingTime,
    maxGpuPrice: flags.maxGpuPrice,
    maxHourlySpend: flags.maxHourlySpend,
    ...(flags.runpodBaseUrl ? { runpodBaseUrl: flags.runpodBaseUrl } : {}),
    ...(flags.remoteClusterSecret ? { remoteClusterSecret: flags.remoteClusterSecret } : {}),
    ...(flags.healthServerAddress ? { healthServerAddress: flags.healthServerAddress } : {}),
  };
}

/** Reads and checks `--appwrapper-config`; a bad file reads like a bad flag, naming the file and the field. */
export function readAppWrapperConfig(file: string): AppWrapperConfigInput {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new InvalidArgumentError(`cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    return configFromOperatorFile(parseYaml(text));
  } catch (err) {
    throw new InvalidArgumentError(`${file}: ${(err as Error).message}`);
  }
}
