/**
 * The embedded cluster end to end (issue: simulated data plane): API server, nodes,
 * scheduler, KWOK-compatible kubelet and workload controllers in one process, as
 * `troupe cluster` runs them. Creates pods through the in-process client in batches and
 * measures pods/s from create to Running, then whether the cluster holds them: CPU share
 * and RSS over a quiet period with every pod running (KWOK's headline: 1k nodes, 100k pods).
 *
 *   ./node_modules/.bin/node --max-old-space-size=6144 --expose-gc bench/cluster.ts [nodes] [pods]
 */
import type { KubeObject } from '../src/cluster/apiserver/types.ts';
import { GVR } from '../src/cluster/client.ts';
import { startEmbeddedCluster } from '../src/cluster/index.ts';
import { createInBatches, exitOnStall, machine, percentile } from './support.ts';

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const NODES = Number(args[0] ?? 1000);
const PODS = Number(args[1] ?? 100_000);
const BATCH = 250;
const HOLD_SECONDS = 30;

console.log(`machine: ${machine()}`);
const cluster = await startEmbeddedCluster({ tls: false, port: 0, nodes: NODES, historySize: 10_000 });
const admin = cluster.client;
await admin.create(GVR.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });

const created = new Map<string, number>();
const latencies: number[] = [];
let running = 0;
let done: () => void = () => {};
const allRunning = new Promise<void>((r) => {
  done = r;
});
const stopWatch = admin.watch(
  GVR.pods,
  (type, pod) => {
    if (type !== 'MODIFIED' || (pod.status as { phase?: string } | undefined)?.phase !== 'Running') return;
    const start = created.get(pod.metadata.name!);
    if (start === undefined) return;
    created.delete(pod.metadata.name!);
    latencies.push(performance.now() - start);
    if (++running === PODS) done();
  },
  { namespace: 'bench' },
);

function pod(i: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `pod-${i}`, namespace: 'bench', labels: { app: 'bench' } },
    spec: {
      containers: [
        {
          name: 'main',
          image: 'registry.k8s.io/pause:3.10',
          resources: { requests: { cpu: '100m', memory: '128Mi' } },
        },
      ],
    },
  };
}

const cpu0 = process.cpuUsage();
const t0 = performance.now();
await createInBatches(PODS, BATCH, (j) => {
  created.set(`pod-${j}`, performance.now());
  return admin.create(GVR.pods, pod(j));
});
const createdSecs = (performance.now() - t0) / 1000;
const stopStallCheck = exitOnStall(
  () => running,
  30_000,
  () => console.error(`stalled at ${running}/${PODS} running`),
);
await allRunning;
stopStallCheck();
const secs = (performance.now() - t0) / 1000;
const cpuRun = process.cpuUsage(cpu0);
latencies.sort((a, b) => a - b);
console.log(
  `${PODS} pods on ${NODES} nodes: created in ${createdSecs.toFixed(1)} s, all Running in ${secs.toFixed(1)} s → ${Math.round(PODS / secs)} pods/s create→Running ` +
    `(CPU ${((cpuRun.user + cpuRun.system) / 1e6).toFixed(0)} s)`,
);
console.log(
  `create→Running latency: p50 ${(percentile(latencies, 50) / 1000).toFixed(1)} s, p99 ${(percentile(latencies, 99) / 1000).toFixed(1)} s (pods queue behind the creates)`,
);

// Hold: node heartbeats and leases keep running; nothing else should.
const cpu1 = process.cpuUsage();
const h0 = performance.now();
await new Promise((r) => setTimeout(r, HOLD_SECONDS * 1000));
const held = process.cpuUsage(cpu1);
const heldSecs = (performance.now() - h0) / 1000;
global.gc?.();
const ready = admin
  .list(GVR.nodes)
  .filter((n) =>
    ((n.status as { conditions?: { type: string; status: string }[] }).conditions ?? []).some(
      (c) => c.type === 'Ready' && c.status === 'True',
    ),
  ).length;
const stillRunning = admin.list(GVR.pods, 'bench', { fieldSelector: 'status.phase=Running' }).length;
console.log(
  `held ${HOLD_SECONDS} s: ${stillRunning}/${PODS} pods Running, ${ready}/${NODES} nodes Ready, ` +
    `CPU ${(((held.user + held.system) / 1e6 / heldSecs) * 100).toFixed(1)}% of one core, RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB (API server and data plane in one process)`,
);
stopWatch();
await cluster.stop();
