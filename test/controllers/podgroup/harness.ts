/**
 * Runs the podgroup controller in a runtime Manager against an API server over real HTTP:
 * the bare embedded API server (tests play scheduler and kubelet by writing pod status) or
 * the whole embedded cluster (simulated nodes, scheduler, KWOK kubelet, workload controllers).
 */

import type { KubeConfig } from '@kubernetes/client-node';
import { type ApiServerHandle, startApiServer } from '../../../src/cluster/apiserver/server.ts';
import { type EmbeddedClusterOptions, startEmbeddedCluster } from '../../../src/cluster/index.ts';
import {
  PODGROUP_KIND,
  type PodGroup,
  type PodGroupOptions,
  podGroupControllers,
  podGroupCrdManifests,
} from '../../../src/controllers/podgroup/index.ts';
import { Client, type KubeObject, kubeConfigFromString, Manager } from '../../../src/runtime/index.ts';
import { kubectlFor } from '../../support/kubectl.ts';
import { waitFor } from '../../support/wait.ts';

export const POD = { apiVersion: 'v1', kind: 'Pod' } as const;
export const EVENT = { apiVersion: 'events.k8s.io/v1', kind: 'Event' } as const;

export interface RequestRecord {
  method: string;
  path: string;
  code: number;
}

export interface Env {
  kubeconfig: string;
  /** Runs kubectl against the cluster; rejects with its stderr on a non-zero exit. */
  kubectl(args: string[], input?: string): Promise<string>;
  client: Client;
  manager: Manager;
  /** Every request the API server answered (bare server only). */
  requests: RequestRecord[];
  namespace(prefix?: string): Promise<string>;
  stop(): Promise<void>;
}

let nsSeq = 0;

export async function installPodGroupCrd(client: Client): Promise<void> {
  for (const crd of podGroupCrdManifests()) {
    try {
      await client.create(crd);
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode !== 409) throw err;
    }
  }
  await waitFor('the PodGroup CRD to be served', async () => {
    await client.mapper.resourceFor(PODGROUP_KIND);
    await client.list(PODGROUP_KIND, { limit: 1 });
    return true;
  });
}

export function newManager(kubeConfig: KubeConfig, opts: PodGroupOptions = {}): Manager {
  const manager = new Manager({ kubeConfig, healthProbeAddress: false, processMetrics: false });
  for (const c of podGroupControllers(opts)) manager.add(c);
  return manager;
}

/** Collects the API server's request log lines. */
function requestLog(requests: RequestRecord[]) {
  return (msg: string, fields?: Record<string, unknown>) => {
    if (msg === 'request') requests.push(fields as unknown as RequestRecord);
  };
}

/** A bare API server with the CRD installed and the controller running. */
export async function startBareEnv(opts: PodGroupOptions = {}): Promise<Env> {
  const requests: RequestRecord[] = [];
  const server: ApiServerHandle = await startApiServer({ log: requestLog(requests) });
  return startController(server.kubeconfig, requests, () => server.close(), opts);
}

/** The whole embedded cluster (nodes, scheduler, KWOK kubelet, workload controllers) plus the controller. */
export async function startClusterEnv(
  opts: PodGroupOptions = {},
  clusterOpts: EmbeddedClusterOptions = {},
): Promise<Env> {
  const requests: RequestRecord[] = [];
  const cluster = await startEmbeddedCluster({ ...clusterOpts, log: requestLog(requests) });
  return startController(cluster.server.kubeconfig, requests, () => cluster.stop(), opts);
}

/** Installs the CRD and starts the controller against a server that `stopServer` shuts down. */
async function startController(
  kubeconfig: string,
  requests: RequestRecord[],
  stopServer: () => Promise<void>,
  opts: PodGroupOptions,
): Promise<Env> {
  const client = Client.fromKubeConfig(kubeConfigFromString(kubeconfig));
  const manager = newManager(kubeConfigFromString(kubeconfig), opts);
  try {
    await installPodGroupCrd(client);
    await manager.start();
  } catch (err) {
    await manager.stop();
    await client.rest.close();
    await stopServer();
    throw err;
  }
  const k = await kubectlFor(kubeconfig);
  return {
    kubeconfig,
    kubectl: async (args, input) => (await k.run(args, input)).stdout,
    client,
    manager,
    requests,
    namespace: (prefix = 'pg') => createNamespace(client, prefix),
    async stop() {
      await manager.stop();
      await client.rest.close();
      await stopServer();
      await k.cleanup();
    },
  };
}

export async function createNamespace(client: Client, prefix = 'pg'): Promise<string> {
  const name = `${prefix}-${process.pid}-${++nsSeq}`;
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}

export async function getPodGroup(client: Client, ns: string, name: string): Promise<PodGroup | undefined> {
  return client.tryGet<PodGroup>(PODGROUP_KIND, name, ns);
}

/** Waits until the PodGroup's state has this phase (and reason, when given); returns it. */
export async function waitForPhase(
  client: Client,
  ns: string,
  name: string,
  phase: string,
  reason?: string,
  timeoutMs = 20_000,
): Promise<PodGroup> {
  let last: PodGroup | undefined;
  try {
    return await waitFor(
      `PodGroup ${ns}/${name} to be ${phase}${reason ? `/${reason}` : ''}`,
      async () => {
        last = await getPodGroup(client, ns, name);
        const s = last?.status?.state;
        return s?.phase === phase && (!reason || s.reason === reason) ? last : undefined;
      },
      { timeoutMs },
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last state: ${JSON.stringify(last?.status?.state)}`);
  }
}

/** Events (events.k8s.io/v1) about an object. */
export async function eventsFor(
  client: Client,
  ns: string,
  kind: string,
  name: string,
): Promise<KubeObject[]> {
  const list = await client.list(EVENT, { namespace: ns });
  return list.items.filter((e) => {
    const r = e.regarding as { kind?: string; name?: string } | undefined;
    return r?.kind === kind && r.name === name;
  });
}
