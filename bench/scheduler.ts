/**
 * Scheduler end to end: an in-process API server, simulated nodes and the default-scheduler,
 * all in one process as `troupe cluster` runs them. Creates the nodes, then pods through
 * ClusterClient in batches (yielding to the event loop between batches, as pods arriving over
 * HTTP would), and measures pods/s from the first create to the last binding, the create→bound
 * latency, and the process's RSS and CPU time.
 *
 *   ./node_modules/.bin/node --max-old-space-size=4096 bench/scheduler.ts [nodes] [pods] [--most-allocated]
 */
import { startApiServer } from '../src/cluster/apiserver/server.ts';
import type { KubeObject } from '../src/cluster/apiserver/types.ts';
import { ClusterClient, GVR } from '../src/cluster/client.ts';
import { startNodes, validateNodeConfig } from '../src/cluster/nodes/index.ts';
import { startScheduler } from '../src/cluster/scheduler/index.ts';
import { createInBatches, exitOnStall, percentile } from './support.ts';

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const NODES = Number(args[0] ?? 1000);
const PODS = Number(args[1] ?? 100_000);
const MOST = process.argv.includes('--most-allocated');
const BATCH = 250;
// Every pod must fit: 95% of nodes take the 99.8% of pods without GPUs, at most 110 each.
const GPU_NODES = Math.floor(NODES / 20);

const server = await startApiServer({ tls: false, port: 0, historySize: 10_000 });
const admin = new ClusterClient(server.api, 'bench');
await admin.create(GVR.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });

const cpu0 = process.cpuUsage();
let t = performance.now();
const nodes = await startNodes(
  admin.as('system:node-simulator'),
  validateNodeConfig({
    pools: [
      {
        name: 'standard',
        namePrefix: 'node',
        count: NODES - GPU_NODES,
        capacity: { cpu: '32', memory: '256Gi', pods: '110' },
        labels: { zone: 'a' },
      },
      {
        name: 'gpu',
        count: GPU_NODES,
        capacity: { cpu: '96', memory: '768Gi', pods: '110', 'nvidia.com/gpu': '8' },
        taints: [{ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' }],
      },
    ],
  }),
);
console.log(`${NODES} nodes registered with leases in ${((performance.now() - t) / 1000).toFixed(2)} s`);

const created = new Map<string, number>();
const latencies: number[] = [];
let bound = 0;
let done: () => void = () => {};
const allBound = new Promise<void>((r) => {
  done = r;
});
const stopWatch = admin.watch(
  GVR.pods,
  (type, pod) => {
    if (type !== 'MODIFIED' || !(pod.spec as { nodeName?: string }).nodeName) return;
    const start = created.get(pod.metadata.name!);
    if (start === undefined) return;
    created.delete(pod.metadata.name!);
    latencies.push(performance.now() - start);
    if (++bound === PODS) done();
  },
  { namespace: 'bench' },
);

const sched = startScheduler(
  admin.as('system:kube-scheduler'),
  MOST ? { scoringStrategy: 'MostAllocated' } : {},
);

function pod(i: number): KubeObject {
  const gpu = i % 500 === 0;
  const spec: Record<string, unknown> = {
    containers: [
      {
        name: 'main',
        image: 'registry.k8s.io/pause:3.10',
        resources: gpu
          ? { requests: { cpu: '1', memory: '4Gi' }, limits: { 'nvidia.com/gpu': '1' } }
          : { requests: { cpu: `${100 + (i % 4) * 50}m`, memory: `${128 + (i % 3) * 64}Mi` } },
      },
    ],
  };
  if (gpu) spec.tolerations = [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }];
  else if (i % 10 === 1) spec.nodeSelector = { zone: 'a' };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `pod-${i}`, namespace: 'bench', labels: { app: 'bench' } },
    spec,
  };
}

let peakRss = process.memoryUsage().rss;
const rssTimer = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 250);
t = performance.now();
await createInBatches(PODS, BATCH, (j) => {
  created.set(`pod-${j}`, performance.now());
  return admin.create(GVR.pods, pod(j));
});
const createdSecs = (performance.now() - t) / 1000;
const stopStallCheck = exitOnStall(
  () => bound,
  20_000,
  () => console.error(`stalled at ${bound}/${PODS} bound:`, sched.stats()),
);
await allBound;
stopStallCheck();
const secs = (performance.now() - t) / 1000;
clearInterval(rssTimer);
peakRss = Math.max(peakRss, process.memoryUsage().rss);
const cpu = process.cpuUsage(cpu0);
latencies.sort((a, b) => a - b);
const pct = (p: number) => percentile(latencies, p).toFixed(0);
const st = sched.stats();
console.log(
  `${PODS} pods on ${NODES} nodes (${MOST ? 'MostAllocated' : 'LeastAllocated'}): created in ${createdSecs.toFixed(1)} s, ` +
    `all bound in ${secs.toFixed(1)} s → ${Math.round(PODS / secs)} pods/s create→bound`,
);
console.log(`create→bound latency ms: p50 ${pct(50)}, p90 ${pct(90)}, p99 ${pct(99)}, max ${pct(100)}`);
console.log(
  `scheduler: bound ${st.bound}, bind errors ${st.bindErrors}, unschedulable attempts ${st.unschedulableAttempts}, ` +
    `pending ${st.active + st.backoff + st.unschedulable}`,
);
global.gc?.();
console.log(
  `process RSS: peak ${(peakRss / 2 ** 20).toFixed(0)} MiB, now ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB; ` +
    `CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s over ${secs.toFixed(1)} s`,
);

stopWatch();
await sched.stop();
await nodes.stop();
await server.close();
