/**
 * What `troupe up --dashboard-address` runs, assembled for tests: the embedded cluster, a
 * Manager with the pod group and pod sequence controllers (their CRDs installed as `troupe
 * up` does), and the dashboard on loopback.
 */

import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { type EmbeddedCluster, startEmbeddedCluster } from '../../src/cluster/index.ts';
import { podGroupControllers, podGroupCrdManifests } from '../../src/controllers/podgroup/index.ts';
import { podSequenceControllers, podSequenceCrd } from '../../src/controllers/podsequence/index.ts';
import { type DashboardHandle, startDashboard } from '../../src/dashboard/index.ts';
import { type KubeObject, kubeConfigFromString, Manager, silentLogger } from '../../src/runtime/index.ts';

export const ROOT = resolve(import.meta.dirname, '../..');

export interface Stack {
  cluster: EmbeddedCluster;
  manager: Manager;
  dashboard: DashboardHandle;
  /** Creates every object of a YAML file of this repository over the API, as `kubectl create` (namespaced kinds default to `default`). */
  createFromFile(path: string): Promise<KubeObject[]>;
  stop(): Promise<void>;
}

export async function loadYaml(path: string): Promise<KubeObject[]> {
  const text = await readFile(resolve(ROOT, path), 'utf8');
  return parseAllDocuments(text)
    .map((d) => d.toJSON() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);
}

export async function startStack(opts: { nodes?: number; timeScale?: number } = {}): Promise<Stack> {
  const cluster = await startEmbeddedCluster({
    port: 0,
    nodes: opts.nodes ?? 3,
    timeScale: opts.timeScale ?? 10,
  });
  const manager = new Manager({
    kubeConfig: kubeConfigFromString(cluster.server.kubeconfig),
    healthProbeAddress: false,
    processMetrics: false,
    gracefulShutdownMs: 5_000,
    logger: silentLogger(),
  });
  // A missing pod must stay "missing" while a test looks at it, not fail the sequence.
  for (const c of [
    ...podGroupControllers(),
    ...podSequenceControllers({ missingPodGracePeriodMs: 600_000 }),
  ]) {
    manager.add(c);
  }
  for (const crd of [...podGroupCrdManifests(), podSequenceCrd as KubeObject]) {
    await manager.client.apply(crd, { force: true });
  }
  await manager.start();
  const dashboard = await startDashboard({ manager, address: '127.0.0.1:0', minIntervalMs: 100 });
  return {
    cluster,
    manager,
    dashboard,
    async createFromFile(path) {
      const created: KubeObject[] = [];
      for (const obj of await loadYaml(path)) {
        if (!obj.metadata.namespace && obj.kind !== 'Node') obj.metadata.namespace = 'default';
        created.push(await manager.client.create(obj));
      }
      return created;
    },
    async stop() {
      await dashboard.stop();
      await manager.stop();
      await cluster.stop();
    },
  };
}
