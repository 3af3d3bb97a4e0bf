/**
 * The embedded cluster: the API server plus the simulated data plane (nodes, scheduler,
 * KWOK-compatible kubelet, workload controllers and garbage collector). Every component
 * talks to the API server only through the Kubernetes API, so each could be swapped for
 * the real one.
 */

import { setImmediate as nextTurn } from 'node:timers/promises';
import { type Clock, realClock } from '../lib/clock.ts';
import { type ApiServerHandle, type ApiServerOptions, startApiServer } from './apiserver/server.ts';
import { ClusterClient } from './client.ts';
import type { Kubelet } from './kubelet/index.ts';
import { containerLog } from './kubelet/logs.ts';
import { podForward } from './kubelet/portforward.ts';
import type { KueueConfiguration } from './kueue/config.ts';
import type { NodeConfig } from './nodes/config.ts';
import type { startNodes } from './nodes/index.ts';

export interface EmbeddedClusterOptions extends ApiServerOptions {
  /** Simulated nodes: a count of default nodes, or a parsed node pool config. */
  nodes?: number | NodeConfig;
  /** Speeds every simulated delay up (10 = ten times faster). */
  timeScale?: number;
  /** Scheduler scoring: spread (LeastAllocated, the default) or bin packing (MostAllocated). */
  scoring?: 'LeastAllocated' | 'MostAllocated';
  /** Run the data plane (default true); false gives a bare API server. */
  dataPlane?: boolean;
  /**
   * The time the whole cluster runs by, API server and data plane (default the real clock).
   * A VirtualClock (src/lib/virtual-clock.ts) makes it a simulation: time jumps ahead
   * whenever every component is idle; `timeScale` then has no use and stays 1.
   */
  clock?: Clock;
  /**
   * How often simulated nodes renew their Leases (default 10 s, as a kubelet). A simulation of
   * a large cluster sets minutes: 500 nodes renewing every 10 s are 180,000 writes per
   * simulated hour, most of its cost. The Lease duration (4×), the node monitor's grace
   * period (5×) and period (½×) follow, as their defaults (40 s, 50 s, 5 s) follow 10 s, so
   * nodes stay Ready and a node that stops is found NotReady after 5× the interval.
   */
  nodeLeaseRenewIntervalMs?: number;
  /**
   * Write the data plane's Events: the kubelet's (Pulled, Created, Started, Killing), the
   * nodes' and the scheduler's (default true). A simulation that reads what it reports from
   * objects' status sets false: these Events are about 40% of a busy cluster's writes.
   */
  events?: boolean;
  /**
   * What the Kueue stand-in takes from Kueue's Configuration file (`--kueue-config`): its
   * waitForPodsReady section, off when absent. Its durations follow `timeScale`.
   */
  kueue?: KueueConfiguration;
  /** Coscheduling in the scheduler: a PodGroup's pods are placed all or none. */
  gangScheduling?: boolean;
  /** Coscheduling's permitWaitingTimeSeconds (default 60): see the scheduler's option. */
  permitWaitingTimeSeconds?: number;
  /** Coscheduling's podGroupBackoffSeconds (default 0): see the scheduler's option. */
  podGroupBackoffSeconds?: number;
  /**
   * Called once the API server listens, before the data plane starts: a restart of a large
   * cluster serves (and can write its kubeconfig) while the data plane still catches up.
   */
  onServing?: (server: ApiServerHandle) => void | Promise<void>;
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
  // Ephemeral containers' processes are the simulated kubelet's, started below.
  let kubelet: Kubelet | undefined;
  const server = await startApiServer({
    podLogs: (pod, container, o) =>
      (logsClient ? containerLog(logsClient, pod, container, o) : '') ||
      (o.previous ? '' : (kubelet?.containerOutput(pod, container) ?? '')),
    podAttach: (pod, container, io) => kubelet?.attach(pod, container, io),
    // pods/portforward follows the simulated kubelet's KWOK PortForward objects.
    podPortForward: (pod, port) => (logsClient ? podForward(logsClient, pod, port) : undefined),
    // pods/exec runs in the simulated kubelet's shell; loaded on first use. Its `sleep` is
    // simulated time, divided by --time-scale as in the containers' own commands.
    podExec: async (pod, container, command, io) =>
      (await import('./kubelet/exec.ts')).execInContainer(
        pod,
        container,
        command,
        io,
        opts.clock ?? realClock,
        opts.timeScale ?? 1,
      ),
    ...opts,
  });
  const client = new ClusterClient(server.api, 'system:admin');
  if (opts.dataPlane !== false) logsClient = client.as('system:node:kwok');
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop();
    await server.close();
  };
  let nodes: EmbeddedCluster['nodes'];
  try {
    await opts.onServing?.(server);
    if (opts.dataPlane !== false) {
      // Loaded only now: a bare API server, and the time to serving, need none of it.
      const [
        { startWorkloadControllers },
        { startKueue },
        { startKubelet },
        nodesMod,
        { startScheduler },
        gang,
        gangStatus,
      ] = await Promise.all([
        import('./workloads/index.ts'),
        import('./kueue/index.ts'),
        import('./kubelet/index.ts'),
        import('./nodes/index.ts'),
        import('./scheduler/index.ts'),
        import('./scheduler/gang/crd.ts'),
        import('./scheduler/gang/podgroup-status.ts'),
      ]);
      const timeScale = opts.timeScale ?? 1;
      const config =
        typeof opts.nodes === 'object' ? opts.nodes : nodesMod.defaultNodeConfig(opts.nodes ?? 3);
      const clock = opts.clock ?? realClock;
      // Each component lists what it watches synchronously (on a restored cluster, every pod):
      // a turn of the event loop between them lets requests waiting meanwhile be answered.
      await nextTurn();
      const workloads = startWorkloadControllers(client.as('system:kube-controller-manager'), {
        clock,
        timeScale,
      });
      stops.push(() => workloads.stop());
      await nextTurn();
      // Kueue's stand-in, with the seed's default flavor and queues (cluster-queue, user-queue).
      const kueue = await startKueue(client, {
        defaultQueues: true,
        clock,
        timeScale,
        waitForPodsReady: opts.kueue?.waitForPodsReady,
      });
      stops.push(() => kueue.stop());
      await nextTurn();
      // Node leases are renewed by the nodes component, which also keeps NotReady nodes' leases.
      const k = await startKubelet(client.as('system:node:kwok'), {
        timeScale,
        leases: false,
        clock,
        events: opts.events,
        // On a restored cluster, Stage timers continue from the stored objects' last writes.
        resumeStoredTimers: true,
      });
      kubelet = k;
      stops.push(() => k.stop());
      await nextTurn();
      const renewMs = opts.nodeLeaseRenewIntervalMs;
      nodes = await nodesMod.startNodes(client.as('system:node-controller'), config, {
        timeScale,
        clock,
        events: opts.events,
        ...(renewMs
          ? {
              leaseRenewIntervalMs: renewMs,
              leaseDurationSeconds: Math.ceil((4 * renewMs) / 1000),
              nodeMonitorGracePeriodMs: 5 * renewMs,
              nodeMonitorPeriodMs: renewMs / 2,
            }
          : {}),
      });
      const n = nodes;
      stops.push(() => n.stop());
      // Gangs written for scheduler-plugins' coscheduling need its PodGroup kind, and its
      // podgroup controller for their status.
      if (opts.gangScheduling) {
        await gang.ensureXPodGroupCRD(client);
        const pgStatus = gangStatus.startXPodGroupController(client.as('scheduler-plugins-controller'), {
          clock,
        });
        stops.push(() => pgStatus.stop());
      }
      await nextTurn();
      const scheduler = startScheduler(client.as('system:kube-scheduler'), {
        scoringStrategy: opts.scoring ?? 'LeastAllocated',
        timeScale,
        clock,
        events: opts.events,
        gangScheduling: opts.gangScheduling ?? false,
        permitWaitingTimeSeconds: opts.permitWaitingTimeSeconds,
        podGroupBackoffSeconds: opts.podGroupBackoffSeconds,
      });
      stops.push(() => scheduler.stop());
    }
  } catch (err) {
    // The server already serves: a data plane that fails to start must not leave it open.
    await stopAll();
    throw err;
  }
  return {
    server,
    client,
    nodes,
    stop: stopAll,
  };
}
