/** Flags of the embedded cluster, shared by `troupe cluster` and `troupe up`. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { EmbeddedClusterOptions } from '../cluster/index.ts';
import { parseKueueConfiguration } from '../cluster/kueue/config.ts';
import { parseNodeConfig } from '../cluster/nodes/config.ts';
import { parseGoDuration } from '../kube/duration.ts';
import { parseNonNegativeInt, parsePort, parsePositiveNumber } from './options.ts';

export interface ClusterFlags {
  port: number;
  host: string;
  /** Defaults to <data-dir>/kubeconfig. */
  kubeconfigOut?: string;
  dataDir: string;
  ephemeral?: boolean;
  reset?: boolean;
  /** kube-apiserver's --event-ttl, in milliseconds. */
  eventTtl?: number;
  tls: boolean;
  authorizationMode: 'AlwaysAllow' | 'RBAC';
  nodes: number;
  nodeConfig?: string;
  timeScale: number;
  scoring: 'LeastAllocated' | 'MostAllocated';
  dataPlane: boolean;
  gangScheduling?: boolean;
  /** The coscheduling plugin's args (CoschedulingArgs), in seconds as upstream reads them. */
  podGroupBackoffSeconds?: number;
  permitWaitingTimeSeconds?: number;
  /** Kueue's own Configuration file; the stand-in reads its waitForPodsReady section. */
  kueueConfig?: string;
}

export function addClusterOptions(cmd: Command): Command {
  return cmd
    .option('--port <n>', 'API server port (0 picks a free one)', parsePort, 0)
    .option('--host <addr>', 'address to listen on (loopback unless told otherwise)', '127.0.0.1')
    .option('--data-dir <dir>', 'where the cluster keeps its state (SQLite) and kubeconfig', '.troupe')
    .option('--ephemeral', 'keep the cluster in memory only: nothing is stored, a restart starts empty')
    .option('--reset', 'delete the state stored in --data-dir and start an empty cluster (asks nothing)')
    .option(
      '--event-ttl <duration>',
      "how long an Event is kept after its last write, as kube-apiserver's --event-ttl (default 1h)",
      parseEventTtl,
    )
    .option('--kubeconfig-out <file>', 'where to write the kubeconfig (default: <data-dir>/kubeconfig)')
    .option('--no-tls', 'serve plain HTTP instead of HTTPS with a generated self-signed certificate')
    .addOption(
      new Option(
        '--authorization-mode <mode>',
        'AlwaysAllow, or RBAC to enforce RBAC for service-account tokens',
      )
        .choices(['AlwaysAllow', 'RBAC'])
        .default('AlwaysAllow'),
    )
    .option('--nodes <n>', 'number of simulated nodes (32 CPU, 256Gi, 110 pods each)', parseNonNegativeInt, 3)
    .option('--node-config <file>', 'YAML node pools (count, capacity, labels, taints); overrides --nodes')
    .option(
      '--no-data-plane',
      'serve the API server alone: no nodes, scheduler, kubelet or workload controllers',
    )
    .option('--time-scale <x>', 'speed simulated time up (10 = ten times faster)', parsePositiveNumber, 1)
    .addOption(
      new Option(
        '--scoring <strategy>',
        'scheduler scoring: LeastAllocated (spread) or MostAllocated (bin packing)',
      )
        .choices(['LeastAllocated', 'MostAllocated'])
        .default('LeastAllocated'),
    )
    .option(
      '--gang-scheduling',
      "coscheduling: a PodGroup's pods are placed all or none (scheduler-plugins' coscheduling plugin)",
    )
    .option(
      '--permit-waiting-time-seconds <s>',
      'with --gang-scheduling: how long placed members wait for the rest of their gang when its PodGroup sets no scheduleTimeoutSeconds (default 60)',
      parseNonNegativeInt,
    )
    .option(
      '--pod-group-backoff-seconds <s>',
      'with --gang-scheduling: how long a gang rejected as a unit is not tried again (default 0: no backoff)',
      parseNonNegativeInt,
    )
    .option(
      '--kueue-config <file>',
      "Kueue's Configuration (config.kueue.x-k8s.io/v1beta2) for the Kueue stand-in: its waitForPodsReady section",
    );
}

/** A Go duration (`1h`, `90s`, `1h30m`), as kube-apiserver reads --event-ttl; more than zero. */
function parseEventTtl(value: string): number {
  const ms = parseGoDuration(value);
  if (ms === undefined || ms <= 0)
    throw new InvalidArgumentError(`expected a duration above zero, such as 1h, 30m or 90s; got "${value}"`);
  return ms;
}

/**
 * A commit to the state database failed: the server has stopped serving and released the
 * directory. Ends the process at once, as a crash would (a graceful stop would go on writing),
 * with what happened to the data and what to do, and no stack trace.
 */
function exitOnStateFailure(err: Error): never {
  process.stderr.write(
    `troupe: ${err.message}.\ntroupe stopped at once: every write acknowledged before is on disk; ` +
      'the writes of the failed commit were never acknowledged and are not kept. Free disk space, ' +
      'make the data directory writable, or stop the program that locks state.db, then start again.\n',
  );
  process.exit(1);
}

/** Where the kubeconfig goes: --kubeconfig-out, or the data directory. */
export function kubeconfigPath(flags: ClusterFlags): string {
  return flags.kubeconfigOut ?? join(flags.dataDir, 'kubeconfig');
}

export function clusterOptions(flags: ClusterFlags): EmbeddedClusterOptions {
  if (flags.ephemeral && flags.reset) {
    throw new Error('--reset deletes stored state and --ephemeral stores none: give one of them');
  }
  for (const [flag, value] of [
    ['--permit-waiting-time-seconds', flags.permitWaitingTimeSeconds],
    ['--pod-group-backoff-seconds', flags.podGroupBackoffSeconds],
  ] as const) {
    if (value !== undefined && !flags.gangScheduling)
      throw new Error(`${flag} sets coscheduling, which is off: add --gang-scheduling`);
  }
  // Flags that configure a part of the data plane: with --no-data-plane they would be read and
  // then silently unused.
  for (const [flag, given] of [
    ['--gang-scheduling', flags.gangScheduling],
    ['--node-config', flags.nodeConfig],
    ['--kueue-config', flags.kueueConfig],
  ] as const) {
    if (given && !flags.dataPlane)
      throw new Error(
        `${flag} configures the data plane, which --no-data-plane leaves out: give one of them`,
      );
  }
  let nodes: EmbeddedClusterOptions['nodes'] = flags.nodes;
  if (flags.nodeConfig) {
    let text: string;
    try {
      text = readFileSync(flags.nodeConfig, 'utf8');
    } catch (err) {
      throw new Error(
        `--node-config: cannot read ${flags.nodeConfig}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    nodes = parseNodeConfig(text);
  }
  let kueue: EmbeddedClusterOptions['kueue'];
  if (flags.kueueConfig) {
    const file = flags.kueueConfig;
    const why = (err: unknown) => (err instanceof Error ? err.message : String(err));
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new Error(`--kueue-config: cannot read ${file}: ${why(err)}`);
    }
    try {
      kueue = parseKueueConfiguration(text);
    } catch (err) {
      throw new Error(`--kueue-config ${file}: ${why(err)}`);
    }
  }
  return {
    host: flags.host,
    port: flags.port,
    tls: flags.tls,
    authorizationMode: flags.authorizationMode,
    nodes,
    timeScale: flags.timeScale,
    scoring: flags.scoring,
    gangScheduling: flags.gangScheduling === true,
    permitWaitingTimeSeconds: flags.permitWaitingTimeSeconds,
    podGroupBackoffSeconds: flags.podGroupBackoffSeconds,
    dataPlane: flags.dataPlane,
    kueue,
    // --ephemeral still holds the directory: its kubeconfig is written there.
    dataDir: flags.dataDir,
    ephemeral: flags.ephemeral,
    reset: flags.reset,
    eventTtlMs: flags.eventTtl,
    kubeconfigPath: kubeconfigPath(flags),
    onStateFailure: exitOnStateFailure,
  };
}
