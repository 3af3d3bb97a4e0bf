/**
 * The embedded cluster: the API server plus the simulated data plane (nodes, scheduler,
 * KWOK-compatible kubelet, workload controllers and garbage collector). Every component
 * talks to the API server only through the Kubernetes API, so each could be swapped for
 * the real one.
 */

import { type Clock, realClock } from '../lib/clock.ts';
import { type ApiServerHandle, type ApiServerOptions, startApiServer } from './apiserver/server.ts';
import { ClusterClient } from './client.ts';
import { startKubelet } from './kubelet/index.ts';
import { containerLog } from './kubelet/logs.ts';
import { startKueue } from './kueue/index.ts';
import { defaultNodeConfig, type NodeConfig, startNodes } from './nodes/index.ts';
import { ensureXPodGroupCRD } from './scheduler/gang/crd.ts';
import { startScheduler } from './scheduler/index.ts';
import { startWorkloadControllers } from './workloads/index.ts';

export interface EmbeddedClusterOptions extends ApiServerOptions {
  /** Simulated nodes: a count of default nodes, or a parsed node pool config. */
  nodes?: number | NodeConfig;
  /** Speeds every simulated delay up (10 = ten times faster). */
  timeScale?: number;
  /** Scheduler scoring: spread (LeastAllocated, the default) or bin packing (MostAllocated). */
  scoring?: 'LeastAllocated' | 'MostAllocated';
  /** Run the data plane (default true); false gives a bare API server. */
  dataPlane?: boolean;
  /** The time the data plane runs by (default the real clock). */
  clock?: Clock;
  /** Coscheduling in the scheduler: a PodGroup's pods are placed all or none. */
  gangScheduling?: boolean;
}

export interface EmbeddedCluster {
  server: ApiServerHandle;
  /** An in-process client acting as the cluster admin. */
  client: ClusterClient;
  nodes: Awaited<ReturnType<typeof startNodes>> | undefined;
  stop(): Promise<void>;
}

export async function startEmbeddedCluster(opts: EmbeddedClusterOptions = {}): Promise<EmbeddedCluster> {
  // pods/log reads the simulated kubelet's KWOK Logs objects, through a client made below.
  let logsClient: ClusterClient | undefined;
  const server = await startApiServer({
    podLogs: (pod, container, o) => (logsClient ? containerLog(logsClient, pod, container, o.previous) : ''),
    ...opts,
  });
  const client = new ClusterClient(server.api, 'system:admin');
  if (opts.dataPlane !== false) logsClient = client.as('system:node:kwok');
  const stops: (() => Promise<void>)[] = [];
  let nodes: EmbeddedCluster['nodes'];
  if (opts.dataPlane !== false) {
    const timeScale = opts.timeScale ?? 1;
    const config = typeof opts.nodes === 'object' ? opts.nodes : defaultNodeConfig(opts.nodes ?? 3);
    const clock = opts.clock ?? realClock;
    const workloads = startWorkloadControllers(client.as('system:kube-controller-manager'), {
      clock,
      timeScale,
    });
    stops.push(() => workloads.stop());
    // Kueue's stand-in, with the seed's default flavor and queues (cluster-queue, user-queue).
    const kueue = await startKueue(client, { defaultQueues: true, clock });
    stops.push(() => kueue.stop());
    // Node leases are renewed by the nodes component, which also keeps NotReady nodes' leases.
    const kubelet = await startKubelet(client.as('system:node:kwok'), { timeScale, leases: false, clock });
    stops.push(() => kubelet.stop());
    nodes = await startNodes(client.as('system:node-controller'), config, { timeScale, clock });
    const n = nodes;
    stops.push(() => n.stop());
    // Gangs written for scheduler-plugins' coscheduling need its PodGroup kind.
    if (opts.gangScheduling) await ensureXPodGroupCRD(client);
    const scheduler = startScheduler(client.as('system:kube-scheduler'), {
      scoringStrategy: opts.scoring ?? 'LeastAllocated',
      timeScale,
      clock,
      gangScheduling: opts.gangScheduling ?? false,
    });
    stops.push(() => scheduler.stop());
  }
  return {
    server,
    client,
    nodes,
    stop: async () => {
      for (const stop of stops.reverse()) await stop();
      await server.close();
    },
  };
}
