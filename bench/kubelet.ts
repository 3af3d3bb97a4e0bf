/**
 * Kubelet simulator throughput for docs/benchmarks.md: pods/s from Pending-on-node to
 * Running, in process (the API server's generic API, as the embedded cluster runs it).
 *
 *  1. backlog: N pods already bound to M simulated nodes, then the kubelet starts: time until
 *     every pod is Running (the kubelet's own rate: status render + strategic-merge patch).
 *  2. streaming: the kubelet runs while N more pods are created bound: time from the first
 *     create to the last pod Running (includes the creates).
 *  3. holding: with all 2N pods running, CPU the process spends over 10 s (Lease renewals,
 *     timers), and the kubelet's bookkeeping.
 *
 * Kubelet Events (Pulled/Created/Started per container) are on unless --no-events.
 * Run: node bench/kubelet.ts [--pods 10000] [--nodes 100] [--no-events]
 */

import { startApiServer } from '../src/cluster/apiserver/server.ts';
import type { KubeObject } from '../src/cluster/apiserver/types.ts';
import { ClusterClient, GVR } from '../src/cluster/client.ts';
import { startKubelet } from '../src/cluster/kubelet/index.ts';
import { eachLimited, machine } from './support.ts';

const args = process.argv.slice(2);
const flag = (name: string, dflt: number) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) || dflt : dflt;
};
const PODS = flag('--pods', 10_000);
const NODES = flag('--nodes', 100);
const EVENTS = !args.includes('--no-events');

function pod(ns: string, name: string, node: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels: { app: 'bench' } },
    spec: {
      nodeName: node,
      containers: [
        {
          name: 'c',
          image: 'registry.k8s.io/pause:3.10',
          resources: { requests: { cpu: '10m', memory: '16Mi' } },
        },
      ],
    },
  };
}

async function createPods(client: ClusterClient, ns: string, n: number): Promise<void> {
  await eachLimited(
    Array.from({ length: n }, (_, i) => i),
    64,
    async (i) => {
      await client.create(GVR.pods, pod(ns, `p-${i}`, `node-${i % NODES}`));
    },
  );
}

/** Resolves when `n` pods of the namespace have been seen Running. */
function runningCounter(client: ClusterClient, ns: string, n: number): Promise<number> {
  return new Promise((resolve) => {
    const seen = new Set<string>();
    const stop = client.watch(
      GVR.pods,
      (_type, obj) => {
        if ((obj.status as { phase?: string } | undefined)?.phase !== 'Running') return;
        seen.add(obj.metadata.name!);
        if (seen.size === n) {
          queueMicrotask(() => stop());
          resolve(Date.now());
        }
      },
      { namespace: ns },
    );
  });
}

async function main(): Promise<void> {
  const server = await startApiServer({ port: 0 });
  const admin = new ClusterClient(server.api, 'system:admin');
  for (const ns of ['bench-backlog', 'bench-stream']) {
    await admin.create(GVR.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  }
  for (let i = 0; i < NODES; i++) {
    await admin.create(GVR.nodes, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: `node-${i}`, annotations: { 'kwok.x-k8s.io/node': 'fake' } },
    });
  }

  const t0 = Date.now();
  await createPods(admin, 'bench-backlog', PODS);
  const createSecs = (Date.now() - t0) / 1000;

  const cpu0 = process.cpuUsage();
  const backlogDone = runningCounter(admin, 'bench-backlog', PODS);
  const t1 = Date.now();
  const kubelet = await startKubelet(admin.as('system:node:kwok'), { events: EVENTS });
  const backlogSecs = ((await backlogDone) - t1) / 1000;
  await kubelet.idle();

  const streamDone = runningCounter(admin, 'bench-stream', PODS);
  const t2 = Date.now();
  await createPods(admin, 'bench-stream', PODS);
  const streamSecs = ((await streamDone) - t2) / 1000;
  await kubelet.idle();
  const cpu = process.cpuUsage(cpu0);
  const holdCpu0 = process.cpuUsage();
  await new Promise((r) => setTimeout(r, 10_000));
  const hold = process.cpuUsage(holdCpu0);
  const stats = kubelet.stats();
  await kubelet.stop();
  await server.close();

  const rss = process.memoryUsage().rss;
  console.log(`machine: ${machine()}`);
  console.log(`pods: ${PODS} per run on ${NODES} nodes, kubelet events ${EVENTS ? 'on' : 'off'}`);
  console.log(`creating ${PODS} bound pods (no kubelet): ${(PODS / createSecs).toFixed(0)} pods/s`);
  console.log(
    `backlog Pending-on-node -> Running: ${(PODS / backlogSecs).toFixed(0)} pods/s (${backlogSecs.toFixed(2)} s)`,
  );
  console.log(
    `streaming create -> Running: ${(PODS / streamSecs).toFixed(0)} pods/s (${streamSecs.toFixed(2)} s, creates included)`,
  );
  console.log(
    `plays ${stats.plays}, events written ${stats.eventsWritten}, dropped ${stats.eventsDropped}, ` +
      `CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s, RSS ${(rss / 2 ** 20).toFixed(0)} MiB`,
  );
  console.log(
    `holding ${stats.pods} pods on ${stats.nodes} nodes: ${(((hold.user + hold.system) / 1e6 / 10) * 100).toFixed(1)}% of a core, ` +
      `${stats.timers} timers queued, ${stats.leaseRenewals} lease renewals so far`,
  );
}

await main();
