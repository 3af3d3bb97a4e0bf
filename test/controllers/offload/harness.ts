/**
 * Test harness: the embedded cluster (API server, nodes, scheduler, kubelet simulator,
 * Job controller, garbage collector) with the RunPod stand-in and troupe's offload
 * controllers running in a Manager over real HTTP, plus kubectl against the cluster.
 */
import type { EmbeddedCluster } from '../../../src/cluster/index.ts';
import type { NodeConfig } from '../../../src/cluster/nodes/index.ts';
import {
  type RunPodStandIn,
  type RunPodStandInOptions,
  startRunPodStandIn,
} from '../../../src/cluster/runpod/index.ts';
import { createOffload, type Offload, type OffloadOptions } from '../../../src/controllers/offload/index.ts';
import { Client, type KubeObject, kubeConfigFromString, Manager } from '../../../src/runtime/index.ts';
import { startTestCluster } from '../../support/cluster.ts';

export interface OffloadEnv {
  cluster: EmbeddedCluster;
  runpod: RunPodStandIn;
  client: Client;
  manager: Manager;
  offload: Offload;
  kubeconfigPath: string;
  kubectl(args: string[], input?: string): Promise<string>;
  /** Stops the manager abruptly (no graceful drain: a crash) and starts a fresh one with no memory. */
  restart(overrides?: Partial<OffloadOptions>): Promise<void>;
  /** Stops the manager (the remote world keeps going). */
  stopManager(): Promise<void>;
  close(): Promise<void>;
}

export async function startOffloadEnv(
  opts: {
    offload?: Partial<OffloadOptions>;
    runpod?: RunPodStandInOptions;
    nodes?: number | NodeConfig;
    /**
     * The manager's shutdown bound (default 5000 ms). 0 makes every stop a crash: in-flight
     * reconciles are cut off at their next request, as when the process is killed.
     */
    gracefulShutdownMs?: number;
  } = {},
): Promise<OffloadEnv> {
  const testCluster = await startTestCluster({ nodes: opts.nodes ?? 1, timeScale: 20 });
  const { cluster } = testCluster;
  const runpod = await startRunPodStandIn({ timeScale: 20, ...opts.runpod });
  const launch = async (overrides: Partial<OffloadOptions> = {}) => {
    const offload = createOffload(
      {
        runpodKey: runpod.apiKey,
        runpodBaseUrl: runpod.url,
        reconcileInterval: 2,
        statusPollInterval: 0.2,
        requestTimeout: 5,
        clusterName: 'e2e',
        ...opts.offload,
        ...overrides,
      },
      { env: {} },
    );
    const manager = new Manager({
      kubeConfig: kubeConfigFromString(cluster.server.kubeconfig),
      healthProbeAddress: '127.0.0.1:0',
      processMetrics: false,
      gracefulShutdownMs: opts.gracefulShutdownMs ?? 5000,
    });
    for (const c of offload.controllers) manager.add(c);
    for (const [n, check] of offload.readyChecks) manager.addReadyzCheck(n, check);
    await manager.start();
    return { offload, manager };
  };
  let running: { offload: Offload; manager: Manager } | undefined = await launch();
  const client = Client.fromKubeConfig(kubeConfigFromString(cluster.server.kubeconfig));
  const stopManager = async () => {
    if (!running) return;
    const r = running;
    running = undefined;
    await r.manager.stop();
    r.offload.stop();
  };
  const env: OffloadEnv = {
    cluster,
    runpod,
    client,
    manager: running.manager,
    offload: running.offload,
    kubeconfigPath: testCluster.kubeconfigPath,
    kubectl: testCluster.kubectl,
    stopManager,
    async restart(overrides) {
      if (running) {
        const r = running;
        running = undefined;
        r.offload.stop();
        await r.manager.stop();
      }
      running = await launch(overrides);
      env.manager = running.manager;
      env.offload = running.offload;
    },
    async close() {
      await stopManager();
      await client.rest.close();
      await runpod.stop();
      await testCluster.close();
    },
  };
  return env;
}

/** The seed README's example Job (name and namespace chosen by the test). */
export function seedJob(
  name: string,
  namespace: string,
  extra: {
    command?: string[];
    env?: Record<string, unknown>[];
    annotations?: Record<string, string>;
    backoffLimit?: number;
  } = {},
): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace,
      annotations: {
        'runpod.io/managed': 'true',
        'runpod.io/offload': 'true',
        'runpod.io/required-gpu-memory': '16',
        ...extra.annotations,
      },
    },
    spec: {
      ...(extra.backoffLimit !== undefined ? { backoffLimit: extra.backoffLimit } : {}),
      template: {
        spec: {
          containers: [
            {
              name: 'my-container',
              image: 'my-gpu-image:latest',
              ...(extra.command ? { command: extra.command } : {}),
              ...(extra.env ? { env: extra.env } : {}),
              resources: { requests: { 'nvidia.com/gpu': '1' }, limits: { 'nvidia.com/gpu': '1' } },
            },
          ],
          restartPolicy: 'Never',
        },
      },
    },
  };
}
