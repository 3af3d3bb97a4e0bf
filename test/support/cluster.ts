/**
 * Test support: the whole embedded cluster (API server and simulated data plane) with a
 * kubeconfig file for kubectl and a KubeConfig for @kubernetes/client-node.
 */
import { after, before } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import {
  type EmbeddedCluster,
  type EmbeddedClusterOptions,
  startEmbeddedCluster,
} from '../../src/cluster/index.ts';
import { type KubectlResult, kubectlFor } from './kubectl.ts';

export interface TestCluster {
  cluster: EmbeddedCluster;
  kubeconfigPath: string;
  /** The admin's KubeConfig for @kubernetes/client-node. */
  kc: KubeConfig;
  kubectl(args: string[], input?: string): Promise<string>;
  kubectlResult(args: string[], input?: string): Promise<KubectlResult>;
  close(): Promise<void>;
}

export async function startTestCluster(opts: EmbeddedClusterOptions = {}): Promise<TestCluster> {
  const cluster = await startEmbeddedCluster({ port: 0, ...opts });
  const kubectl = await kubectlFor(cluster.server.kubeconfig);
  const kc = new KubeConfig();
  kc.loadFromString(cluster.server.kubeconfig);
  return {
    cluster,
    kubeconfigPath: kubectl.kubeconfigPath,
    kc,
    kubectlResult: kubectl.result,
    kubectl: async (args, input) => (await kubectl.run(args, input)).stdout,
    close: async () => {
      await cluster.stop();
      await kubectl.cleanup();
    },
  };
}

/**
 * A whole cluster for the calling suite: started before its tests (then `setup` runs on it),
 * closed after them. The object is filled in by the `before` hook, so read it only inside tests.
 */
export function testClusterForSuite(
  opts: EmbeddedClusterOptions = {},
  setup?: (c: TestCluster) => Promise<unknown>,
): TestCluster {
  const c = {} as TestCluster;
  before(async () => {
    Object.assign(c, await startTestCluster(opts));
    await setup?.(c);
  });
  // A cluster that failed to start has nothing to close.
  after(() => c.close?.());
  return c;
}
