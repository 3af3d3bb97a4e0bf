/**
 * Test harness for the simulated data plane: an in-process API server and a ClusterClient,
 * plus small builders for nodes and pods.
 */
import { type ApiServerHandle, startApiServer } from '../../../src/cluster/apiserver/server.ts';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { ClusterClient, GVR } from '../../../src/cluster/client.ts';
import { waitFor } from '../../support/wait.ts';

export interface Harness {
  server: ApiServerHandle;
  client: ClusterClient;
  close(): Promise<void>;
}

export async function startHarness(): Promise<Harness> {
  const server = await startApiServer({ tls: false, port: 0 });
  const client = new ClusterClient(server.api, 'system:test');
  return { server, client, close: () => server.close() };
}

/** Empties the cluster between tests: the default namespace's pods, ReplicaSets and events, and every node. */
export async function clearCluster(client: ClusterClient): Promise<void> {
  for (const p of client.list(GVR.pods, 'default'))
    await client.delete(GVR.pods, 'default', p.metadata.name!, { gracePeriodSeconds: 0 });
  for (const rs of client.list(GVR.replicasets, 'default'))
    await client.delete(GVR.replicasets, 'default', rs.metadata.name!);
  for (const n of client.list(GVR.nodes)) await client.delete(GVR.nodes, '', n.metadata.name!);
  for (const e of client.list(GVR.events, 'default'))
    await client.delete(GVR.events, 'default', e.metadata.name!);
}

export function nodeObj(
  name: string,
  allocatable: Record<string, string>,
  opts: { labels?: Record<string, string>; taints?: { key: string; value?: string; effect: string }[] } = {},
): KubeObject {
  const res = { pods: '110', ...allocatable };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...opts.labels } },
    spec: opts.taints ? { taints: opts.taints } : {},
    status: {
      capacity: res,
      allocatable: res,
      conditions: [
        { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
      ],
    },
  };
}

export function podObj(
  name: string,
  requests: Record<string, string> = {},
  spec: Record<string, unknown> = {},
  limits?: Record<string, string>,
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      containers: [
        { name: 'main', image: 'busybox', resources: limits ? { requests, limits } : { requests } },
      ],
      ...spec,
    },
  };
}

export function getPod(client: ClusterClient, name: string): KubeObject | undefined {
  return client.get(GVR.pods, 'default', name);
}

export function nodeNameOf(pod: KubeObject | undefined): string | undefined {
  return (pod?.spec as { nodeName?: string } | undefined)?.nodeName;
}

export function condition(obj: KubeObject | undefined, type: string): Record<string, unknown> | undefined {
  return ((obj?.status as { conditions?: Record<string, unknown>[] } | undefined)?.conditions ?? []).find(
    (c) => c.type === type,
  );
}

export function waitBound(client: ClusterClient, name: string): Promise<string> {
  return waitFor(`pod ${name} bound`, () => nodeNameOf(getPod(client, name)));
}

export function eventsFor(client: ClusterClient, name: string, reason?: string): KubeObject[] {
  return client
    .list(GVR.events, 'default')
    .filter(
      (e) =>
        (e.involvedObject as { name?: string }).name === name &&
        (reason === undefined || e.reason === reason),
    );
}

export function waitUnschedulable(client: ClusterClient, name: string): Promise<string> {
  return waitFor(`pod ${name} unschedulable`, () => {
    const c = condition(getPod(client, name), 'PodScheduled');
    return c?.status === 'False' && c.reason === 'Unschedulable' ? (c.message as string) : undefined;
  });
}
