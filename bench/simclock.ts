/**
 * Virtual time: how much faster than the wall a simulated cluster runs. The embedded cluster
 * (API server, nodes, scheduler, kubelet, workload controllers) and troupe's manager share
 * one VirtualClock in this process, as `troupe simulate` runs them; time jumps to the next
 * timer whenever everything is idle. Two runs of the same length on the same cluster: an
 * idle one (the floor: node heartbeats and leases only) and a busy one (GPU Jobs arriving
 * all along, each running for a seeded random time), twice with the same seed. The figure
 * is simulated / wall time; the two busy runs must bind and finish the same pods on the same
 * nodes at the same virtual times (their traces' hashes are printed).
 *
 *   ./node_modules/.bin/node bench/simclock.ts [nodes] [simulated hours] [jobs per hour] [lease renewal ms]
 */
import { createHash } from 'node:crypto';
import { buildManager } from '../src/cli/manager.ts';
import { GVR } from '../src/cluster/client.ts';
import { startEmbeddedCluster } from '../src/cluster/index.ts';
import { validateNodeConfig } from '../src/cluster/nodes/index.ts';
import { seededRandom } from '../src/lib/random.ts';
import { endSimulation, runUntil, startSimulation } from '../src/lib/virtual-clock.ts';
import { kubeConfigFromString } from '../src/runtime/index.ts';
import { quietManagerFlags } from '../test/support/in-process-manager.ts';
import { machine } from './support.ts';

const NODES = Number(process.argv[2] ?? 50);
const HOURS = Number(process.argv[3] ?? 1);
const JOBS_PER_HOUR = Number(process.argv[4] ?? 60);
const GPUS_PER_NODE = 8;
/** Node Lease renewal (EmbeddedClusterOptions.nodeLeaseRenewIntervalMs), default a kubelet's 10 s. */
const LEASE_RENEW_MS = Number(process.argv[5] ?? 10_000);

interface Run {
  simulatedS: number;
  wallS: number;
  /** CPU seconds of this process meanwhile: near wallS when the run is CPU-bound. */
  cpuS: number;
  /** API writes (resourceVersions) during the run, and how many were Events. */
  writes: number;
  events: number;
  steps: number;
  jobs: number;
  podsSucceeded: number;
  gpuHours: number;
  /** sha256 of every pod's binding and end, with its virtual time, in commit order. */
  trace: string;
}

async function run(busy: boolean): Promise<Run> {
  const clock = startSimulation({ seed: 42 });
  const draw = seededRandom(7);
  const cluster = await startEmbeddedCluster({
    clock,
    port: 0,
    nodeLeaseRenewIntervalMs: LEASE_RENEW_MS,
    events: process.env.SIMCLOCK_EVENTS !== 'false',
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
  const built = buildManager(
    kubeConfigFromString(cluster.server.kubeconfig),
    quietManagerFlags(['--controllers=podgroup,podsequence', '--log-level=error']),
    { clock },
  );
  for (const cap of built.capabilities) {
    for (const crd of cap.crds) await built.manager.client.apply(crd, { force: true });
  }
  await built.manager.start();
  const start = clock.now();
  const end = start + HOURS * 3_600_000;
  let jobs = 0;
  let succeeded = 0;
  let gpuMs = 0;
  const trace = createHash('sha256');
  const seen = new Map<string, string>();
  cluster.client.watch(
    GVR.pods,
    (type, pod) => {
      const status = pod.status as
        | {
            phase?: string;
            containerStatuses?: { state?: { terminated?: { startedAt?: string; finishedAt?: string } } }[];
          }
        | undefined;
      const node = (pod.spec as { nodeName?: string } | undefined)?.nodeName ?? '';
      const state = `${node} ${status?.phase ?? ''}`;
      if (seen.get(pod.metadata.name ?? '') !== state) {
        seen.set(pod.metadata.name ?? '', state);
        trace.update(`${clock.now() - start} ${pod.metadata.name} ${state}\n`);
      }
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
  const rv0 = cluster.server.api.store.currentRv;
  const cpu0 = process.cpuUsage();
  const r = await runUntil(clock, end, { stallMs: 60_000 });
  const cpu = process.cpuUsage(cpu0);
  const writes = cluster.server.api.store.currentRv - rv0;
  const events = cluster.client.list(GVR.events).length;
  await built.stop();
  await cluster.stop();
  endSimulation();
  return {
    simulatedS: (clock.now() - start) / 1000,
    wallS: r.wallMs / 1000,
    cpuS: (cpu.user + cpu.system) / 1e6,
    writes,
    events,
    steps: r.steps,
    jobs,
    podsSucceeded: succeeded,
    gpuHours: gpuMs / 3_600_000,
    trace: trace.digest('hex').slice(0, 16),
  };
}

const fmt = (r: Run) =>
  `${r.simulatedS / 3600} h simulated in ${r.wallS.toFixed(1)} s wall (${r.cpuS.toFixed(1)} s CPU): ${Math.round(r.simulatedS / r.wallS)}×; ` +
  `${r.writes} writes (${r.events} Events), ` +
  `${r.steps} steps, ${r.jobs} jobs, ${r.podsSucceeded} pods succeeded, ${r.gpuHours.toFixed(0)} GPU-hours, trace ${r.trace}`;

console.log(
  `${machine()}; ${NODES} nodes × ${GPUS_PER_NODE} GPUs, ${HOURS} h, ${JOBS_PER_HOUR} jobs/h, leases renewed every ${LEASE_RENEW_MS / 1000} s`,
);
const which = process.env.SIMCLOCK_RUNS ?? 'idle,busy';
if (which.includes('idle')) console.log(`idle: ${fmt(await run(false))}`);
if (which.includes('busy')) {
  const a = await run(true);
  console.log(`busy: ${fmt(a)}`);
  // The same seed again: the same pods on the same nodes at the same virtual times.
  const b = await run(true);
  console.log(`busy again: ${fmt(b)}; ${a.trace === b.trace ? 'identical' : 'DIFFERENT'}`);
}
