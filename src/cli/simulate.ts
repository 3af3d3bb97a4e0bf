/**
 * `troupe simulate SCENARIO.yaml`: runs each policy of a scenario on a fresh in-memory
 * embedded cluster with troupe's controllers, all on one shared clock, and reports the
 * policies side by side (terminal table; JSON and HTML with --out). `--record FILE` writes a
 * trace of a live cluster instead. This file composes the embedded cluster and the
 * controllers, as `troupe up` does; src/simulate knows neither.
 */

import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, Option } from 'commander';
import { type ClusterClient, GVR, type Gvr } from '../cluster/client.ts';
import { startEmbeddedCluster } from '../cluster/index.ts';
import {
  KUEUE_CONFIG_API_VERSION,
  type KueueConfiguration,
  kueueConfiguration,
} from '../cluster/kueue/config.ts';
import { NodeConfigError, validateNodeConfig } from '../cluster/nodes/config.ts';
import { quantityValue } from '../kube/quantity.ts';
import type { Clock } from '../lib/clock.ts';
import { endSimulation, runUntil, startSimulation } from '../lib/virtual-clock.ts';
import { installCrds, kubeConfigFromString, sleep } from '../runtime/index.ts';
import { type Report, reportJson, reportTable } from '../simulate/report.ts';
import { reportHtml } from '../simulate/report-html.ts';
import { runPolicy, type SimCluster } from '../simulate/run.ts';
import { ScaledClock } from '../simulate/scaled-clock.ts';
import { type Policy, parseScenario, type Scenario, ScenarioError } from '../simulate/scenario.ts';
import { addManagerOptions, type ManagerFlags } from './manager-flags.ts';
import { parsePositiveNumber } from './options.ts';

interface SimulateFlags {
  out?: string;
  policy?: string[];
  timeScale?: number;
  record?: string;
  kubeconfig?: string;
  duration?: string;
  namespace?: string;
  quiet?: boolean;
  logLevel: string;
}

export function simulateCommand(): Command {
  return new Command('simulate')
    .description(
      'Run a workload scenario under several scheduling policies on fresh embedded clusters and compare them (see docs/simulate.md)',
    )
    .argument('[scenario]', 'scenario file (YAML or JSON): node pools, workload trace, policies')
    .option('--out <dir>', 'also write report.json and report.html to this directory')
    .addOption(
      new Option('--policy <name>', 'run only this policy of the scenario (repeat for several)').argParser(
        (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
      ),
    )
    .option(
      '--time-scale <x>',
      'run on the wall clock sped up x times instead of the virtual clock (not deterministic)',
      parsePositiveNumber,
    )
    .option(
      '--record <file>',
      'record a trace of a live cluster (see --kubeconfig) into a scenario file instead',
    )
    .option(
      '--kubeconfig <file>',
      'with --record: the cluster to record (default: $KUBECONFIG, ~/.kube/config)',
    )
    .option(
      '--duration <d>',
      'with --record: stop after this long (Go duration, e.g. 10m; default: until Ctrl+C)',
    )
    .option('--namespace <ns>', 'with --record: record only this namespace')
    .option('--quiet', 'print only the report')
    .addOption(
      new Option('--log-level <level>', "the controllers' log on stderr (as troupe up's --log-level)")
        .choices(['silent', 'fatal', 'error', 'warn', 'info', 'debug', 'trace'])
        .default('silent'),
    )
    .action(async (file: string | undefined, flags: SimulateFlags) => {
      if (flags.record) {
        const { recordTrace } = await import('./simulate-record.ts');
        await recordTrace(flags.record, flags);
        return;
      }
      if (!file) throw new Error('give a scenario file (troupe simulate SCENARIO.yaml), or --record FILE');
      const scenario = await loadScenario(file);
      const policies = choosePolicies(scenario, flags.policy);
      const report: Report = {
        scenario: scenario.name,
        description: scenario.description,
        seed: scenario.seed,
        endSeconds: scenario.endMs / 1000,
        policies: [],
      };
      for (const policy of policies) {
        const started = performance.now();
        const result = await runOnEmbeddedCluster(scenario, policy, flags);
        const wall = (performance.now() - started) / 1000;
        if (!flags.quiet) {
          process.stderr.write(
            `policy ${policy.name}: ${Math.round(result.simulatedSeconds)}s simulated in ${wall.toFixed(1)}s of wall time\n`,
          );
        }
        report.policies.push(result);
      }
      process.stdout.write(reportTable(report));
      if (flags.out) {
        await mkdir(flags.out, { recursive: true });
        await writeFile(join(flags.out, 'report.json'), reportJson(report));
        await writeFile(join(flags.out, 'report.html'), reportHtml(report));
        if (!flags.quiet) process.stderr.write(`wrote ${join(flags.out, 'report.json')} and report.html\n`);
      }
    });
}

export async function loadScenario(file: string): Promise<Scenario> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ScenarioError(file, [
      `cannot read it: ${err instanceof Error ? err.message : String(err)} (check the path)`,
    ]);
  }
  const scenario = parseScenario(text, file);
  try {
    validateNodeConfig(scenario.nodes);
  } catch (err) {
    if (err instanceof NodeConfigError)
      throw new ScenarioError(
        file,
        err.problems.map(
          (p) => `nodes: ${p} (node pools take the fields of --node-config, see docs/embedded-cluster.md)`,
        ),
      );
    throw err;
  }
  // AppWrappers always go through Kueue; Jobs only under `queues: true`.
  const anyAppWrapper = scenario.gangs.some((g) => g.kind === 'AppWrapper');
  const problems = scenario.policies.flatMap((p, i) => {
    const at = `policies[${i}] (${p.name})`;
    if (p.waitForPodsReady && !p.queues && !anyAppWrapper)
      return [
        `${at}: waitForPodsReady acts on the workloads Kueue admits, and this policy queues none: add queues: true`,
      ];
    try {
      policyKueue(p);
      return [];
    } catch (err) {
      return [`${at}: ${err instanceof Error ? err.message : String(err)}`];
    }
  });
  if (problems.length > 0) throw new ScenarioError(file, problems);
  return scenario;
}

function choosePolicies(scenario: Scenario, names: string[] | undefined): Policy[] {
  if (!names) return scenario.policies;
  const unknown = names.filter((n) => !scenario.policies.some((p) => p.name === n));
  if (unknown.length > 0) {
    throw new Error(
      `--policy ${unknown.join(', ')}: not in the scenario (its policies: ${scenario.policies.map((p) => p.name).join(', ')})`,
    );
  }
  return scenario.policies.filter((p) => names.includes(p.name));
}

/** The manager's flags as `troupe up` defaults them, quiet, with nothing served. */
function managerFlags(policy: Policy, logLevel: string): ManagerFlags {
  const cmd = addManagerOptions(new Command(), {
    healthProbeBindAddress: '0',
    metricsBindAddress: '0',
    webhookPort: 0,
    dashboardAddress: '0',
  });
  cmd.parse([], { from: 'user' });
  const flags = cmd.opts<ManagerFlags>();
  return {
    ...flags,
    controllers: '*',
    logLevel,
    logFormat: 'json',
    ...(policy.offload
      ? {
          maxPendingTime: policy.offload.maxPendingTime,
          pendingJobThreshold: policy.offload.pendingJobThreshold,
          maxGpuPrice: policy.offload.maxGpuPrice,
        }
      : {}),
  };
}

/** A policy's waitForPodsReady section as the Kueue stand-in takes it (a Configuration holding it). */
function policyKueue(policy: Policy): KueueConfiguration | undefined {
  if (!policy.waitForPodsReady) return undefined;
  return kueueConfiguration({
    apiVersion: KUEUE_CONFIG_API_VERSION,
    kind: 'Configuration',
    waitForPodsReady: policy.waitForPodsReady,
  });
}

/**
 * One policy on a fresh embedded cluster (in memory) with troupe's controllers, all on one
 * clock: a virtual clock seeded with the scenario's seed (time jumps to the next timer
 * whenever everything is idle; deterministic), or with `timeScale` the wall clock sped up.
 */
/**
 * The capabilities a policy's run starts, by name. The PodGroup controller always (it keeps
 * gangs' status and deadlock policy). PodSequence and AppWrapper only for a trace that has
 * such a workload: idle, their controllers would still watch every Node and Pod over HTTPS (a
 * tenth of a simulated day's CPU) for nothing. Offload only when the policy offloads: without
 * a provider its controller would still register its virtual node (tainted, not Ready) and
 * heartbeat it every 10 s, a 501st node in every scheduling message and ~26,000 requests in a
 * simulated day.
 */
export function neededCapabilities(scenario: Scenario, policy: Policy, all: { name: string }[]): string[] {
  const kinds = new Set(scenario.gangs.map((g) => g.kind));
  const needed: Record<string, boolean> = {
    podsequence: kinds.has('PodSequence'),
    appwrapper: kinds.has('AppWrapper'),
    offload: policy.offload !== undefined,
  };
  return all.map((c) => c.name).filter((n) => needed[n] ?? true);
}

export async function runOnEmbeddedCluster(
  scenario: Scenario,
  policy: Policy,
  opts: { timeScale?: number; logLevel?: string } = {},
) {
  const { timeScale } = opts;
  const virtual = timeScale === undefined ? startSimulation({ seed: scenario.seed }) : undefined;
  const clock: Clock = virtual ?? new ScaledClock(timeScale ?? 1);
  const [{ buildManager }, { startRunPodStandIn }, { ensureXPodGroupCRD }, { capabilities }] =
    await Promise.all([
      import('./manager.ts'),
      import('../cluster/runpod/index.ts'),
      import('../cluster/scheduler/gang/crd.ts'),
      import('../controllers/capabilities.ts'),
    ]);
  const dataDir = await mkdtemp(join(tmpdir(), 'troupe-simulate-'));
  const cleanups: (() => Promise<unknown>)[] = [() => rm(dataDir, { recursive: true, force: true })];
  try {
    const cluster = await startEmbeddedCluster({
      dataDir,
      ephemeral: true,
      port: 0,
      host: '127.0.0.1',
      nodes: validateNodeConfig(scenario.nodes),
      gangScheduling: policy.gangScheduling,
      scoring: policy.scoring,
      nodeLeaseRenewIntervalMs: scenario.nodeLeaseRenewMs,
      kueue: policyKueue(policy),
      clock,
    });
    cleanups.unshift(() => cluster.stop());
    // Gangs written for scheduler-plugins need its PodGroup kind under every policy.
    if (!policy.gangScheduling) await ensureXPodGroupCRD(cluster.client);
    const runpod = policy.offload ? await startRunPodStandIn({ clock }) : undefined;
    if (runpod) cleanups.unshift(() => runpod.stop());
    const built = buildManager(
      kubeConfigFromString(cluster.server.kubeconfig),
      managerFlags(policy, opts.logLevel ?? 'silent'),
      {
        clock,
        values: runpod ? { runpodBaseUrl: runpod.url, runpodKey: runpod.apiKey } : {},
        only: neededCapabilities(scenario, policy, capabilities()),
      },
    );
    cleanups.unshift(() => built.stop());
    // Served before the manager starts: its informers need the kinds. The installer waits on
    // the wall clock: the virtual one stands still until the run drives it, and the API
    // server establishes a CRD at once.
    await installCrds(
      built.manager.client,
      built.capabilities.flatMap((c) => c.crds),
    );
    await built.manager.start();
    const client = cluster.client;
    const sim: SimCluster = {
      clock,
      async create(o) {
        await waitServed(client, o.gvr);
        await client.create(o.gvr, o.object as never);
      },
      async delete(gvr, namespace, name) {
        await client.delete(gvr, namespace, name, { propagationPolicy: 'Background' });
      },
      watch(resource, handler) {
        const gvr = resource === 'jobs' ? GVR.jobs : { group: '', version: 'v1', resource };
        return client.watch(gvr, (type, obj) => handler(type, obj), {
          shared: true,
        });
      },
      runUntil: async (at, done) => {
        if (!virtual) return clock.sleep(Math.max(0, at - clock.now()), done);
        await runUntil(virtual, at, { signal: done });
      },
      capacity() {
        const total: Record<string, number> = {};
        for (const n of client.list({ group: '', version: 'v1', resource: 'nodes' })) {
          const alloc = ((n as { status?: { allocatable?: Record<string, string> } }).status?.allocatable ??
            {}) as Record<string, string>;
          for (const [k, v] of Object.entries(alloc)) total[k] = (total[k] ?? 0) + Number(quantityValue(v));
        }
        return total;
      },
    };
    return await runPolicy(scenario, policy, sim);
  } finally {
    for (const c of cleanups) await c();
    if (virtual) endSimulation();
  }
}

/** A custom resource is served shortly after its CRD is applied (establishment is batched). */
async function waitServed(client: ClusterClient, gvr: Gvr): Promise<void> {
  for (let i = 0; !client.served(gvr); i++) {
    if (i > 200) throw new Error(`${gvr.resource}.${gvr.group} is not served: is its CRD installed?`);
    await sleep(25);
  }
}
