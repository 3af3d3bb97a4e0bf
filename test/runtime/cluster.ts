/** An embedded API server and a runtime client against it, over real HTTP. */

import type { KubeConfig } from '@kubernetes/client-node';
import {
  type ApiServerHandle,
  type ApiServerOptions,
  startApiServer,
} from '../../src/cluster/apiserver/server.ts';
import { Client } from '../../src/runtime/client.ts';
import { kubeConfigFromString } from '../../src/runtime/config.ts';
import type { RestClientOptions } from '../../src/runtime/rest.ts';

export interface TestCluster {
  server: ApiServerHandle;
  kubeConfig: KubeConfig;
  client: Client;
  /** A fresh KubeConfig (each manager should own its own). */
  newKubeConfig(): KubeConfig;
  newClient(opts?: RestClientOptions): Client;
  close(): Promise<void>;
}

export async function startCluster(opts: ApiServerOptions = {}): Promise<TestCluster> {
  const server = await startApiServer(opts);
  const kubeConfig = kubeConfigFromString(server.kubeconfig);
  const clients: Client[] = [];
  const newClient = (o?: RestClientOptions) => {
    const c = Client.fromKubeConfig(kubeConfigFromString(server.kubeconfig), o);
    clients.push(c);
    return c;
  };
  const client = newClient();
  return {
    server,
    kubeConfig,
    client,
    newKubeConfig: () => kubeConfigFromString(server.kubeconfig),
    newClient,
    async close() {
      await Promise.all(clients.map((c) => c.rest.close()));
      await server.close();
    },
  };
}

let seq = 0;
/** A namespace of its own for a test. */
export async function createNamespace(client: Client, prefix = 'rt'): Promise<string> {
  const name = `${prefix}-${process.pid}-${++seq}`;
  await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  return name;
}
