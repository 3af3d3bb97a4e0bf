/**
 * Virtual time: how much faster than the wall a simulated cluster runs. The embedded cluster
 * (API server, nodes, scheduler, kubelet, workload controllers) and troupe's manager share
 * one VirtualClock in this process, as `troupe simulate` runs them; time jumps to the next
 * timer whenever everything is idle. Two runs of the same length on the same cluster: an
 * idle one (the floor: node heartbeats and leases only) and a busy one (GPU Jobs arriving
 * all along, each running for a seeded random time). The figure is simulated / wall time.
 *
 *   ./node_modules/.bin/node bench/simclock.ts [nodes] [simulated hours] [jobs per hour] [lease renewal ms]
 */
import { Command } from 'commander';
import { buildManager } from '../src/cli/manager.ts';
import { addManagerOptions, type ManagerFlags } from '../src/cli/manager-flags.ts';
import { GVR } from '../src/cluster/client.ts';
import { startEmbeddedCluster } from '../src/cluster/index.ts';
import { validateNodeConfig } from '../src/cluster/nodes/index.ts';
import { seededRandom } from '../src/lib/random.ts';
import { endSimulation, runUntil, startSimulation } from '../src/lib/virtual-clock.ts';
import { kubeConfigFromString } from '../src/runtime/index.ts';
import { machine } from './support.ts';

const NODES = Number(process.argv[2] ?? 50);
const HOURS = Number(process.argv[3] ?? 1);
const JOBS_PER_HOUR = Number(process.argv[4] ?? 60);
const GPUS_PER_NODE = 8;
/** Node Lease renewal (EmbeddedClusterOptions.nodeLeaseRenewIntervalMs), default a kubelet's 10 s. */
const LEASE_RENEW_MS = Number(process.argv[5] ?? 10_000);

function managerFlags(): ManagerFlags {
  const cmd = addManagerOptions(new Command('run').exitOverride(), {
    healthProbeBindAddress: '0',
    metricsBindAddress: '0',
    webhookPort: 0,
    dashboardAddress: '0',
  });
  cmd.action(() => {});
  cmd.parse(['--controllers=podgroup,podsequence', '--log-level=error'], { from: 'user' });
  return cmd.opts<ManagerFlags>();
}

interface Run {
  simulatedS: number;
  wallS: number;
  steps: number;
  jobs: number;
  podsSucceeded: number;
  gpuHours: number;
}

async function run(busy: boolean): Promise<Run> {
  const clock = startSimulation({ seed: 42 });
  const draw = seededRandom(7);
  const cluster = await startEmbeddedCluster({
    clock,
    port: 0,
    nodeLeaseRenewIntervalMs: LEASE_RENEW_MS,
    nodes: validateNodeConfig({
      pools: [
        {
          name: 'gpu',
          count: NODES,
          capacity: { cpu: '96', memory: '768Gi', pods: '110', 'nvidia.com/gpu': String(GPUS_PER_NODE) },
        },
      ],
    }),
  });
  const built = buildManager(kubeConfigFromString(cluster.server.kubeconfig), managerFlags(), { clock });
  for (const cap of built.capabilities) {
    for (const crd of cap.crds) await built.manager.client.apply(crd, { force: true });
  }
  await built.manager.start();
  const start = clock.now();
  const end = start + HOURS * 3_600_000;
  let jobs = 0;
  let succeeded = 0;
  let gpuMs = 0;
  cluster.client.watch(
    GVR.pods,
    (type, pod) => {
      const status = pod.status as
        | {
            phase?: string;
            containerStatuses?: { state?: { terminated?: { startedAt?: string; finishedAt?: string } } }[];
          }
        | undefined;
      if (type !== 'MODIFIED' || status?.phase !== 'Succeeded') return;
      succeeded++;
      const t = status.containerStatuses?.[0]?.state?.terminated;
      if (t?.startedAt && t.finishedAt) gpuMs += (Date.parse(t.finishedAt) - Date.parse(t.startedAt)) * 2;
    },
    { shared: true },
  );
  if (busy) {
    // Jobs arrive at exponential intervals; each runs 1-8 pods of 2 GPUs for 5-120 minutes.
    const arrive = () => {
      const gap = (-Math.log(1 - draw()) * 3_600_000) / JOBS_PER_HOUR;
      clock.setTimer(() => {
        if (clock.now() >= end) return;
        const n = 1 + Math.floor(draw() * 8);
        const minutes = 5 + Math.floor(draw() * 115);
        jobs++;
        void cluster.client.create(GVR.jobs, {
          apiVersion: 'batch/v1',
          kind: 'Job',
          metadata: { name: `train-${jobs}`, namespace: 'default' },
          spec: {
            completions: n,
            parallelism: n,
            template: {
              metadata: { annotations: { 'troupe.dev/run-duration': `${minutes}m` } },
              spec: {
                restartPolicy: 'Never',
                containers: [
                  {
                    name: 'train',
                    image: 'trainer',
                    resources: { requests: { 'nvidia.com/gpu': '2' }, limits: { 'nvidia.com/gpu': '2' } },
                  },
                ],
              },
            },
          },
        });
        arrive();
      }, gap);
    };
    arrive();
  }
  const r = await runUntil(clock, end, { stallMs: 60_000 });
  await built.stop();
  await cluster.stop();
  endSimulation();
  return {
    simulatedS: (clock.now() - start) / 1000,
    wallS: r.wallMs / 1000,
    steps: r.steps,
    jobs,
    podsSucceeded: succeeded,
    gpuHours: gpuMs / 3_600_000,
  };
}

const fmt = (r: Run) =>
  `${r.simulatedS / 3600} h simulated in ${r.wallS.toFixed(1)} s wall: ${Math.round(r.simulatedS / r.wallS)}×; ` +
  `${r.steps} steps, ${r.jobs} jobs, ${r.podsSucceeded} pods succeeded, ${r.gpuHours.toFixed(0)} GPU-hours`;

console.log(
  `${machine()}; ${NODES} nodes × ${GPUS_PER_NODE} GPUs, ${HOURS} h, ${JOBS_PER_HOUR} jobs/h, leases renewed every ${LEASE_RENEW_MS / 1000} s`,
);
const which = process.env.SIMCLOCK_RUNS ?? 'idle,busy';
if (which.includes('idle')) console.log(`idle: ${fmt(await run(false))}`);
if (which.includes('busy')) console.log(`busy: ${fmt(await run(true))}`);
