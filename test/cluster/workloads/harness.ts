/**
 * Test harness for the workload controllers: an in-process API server, a client, the
 * controllers, and the stand-ins for what does not exist in these tests (scheduler and
 * kubelet): helpers that bind pods and write their status as a kubelet would, and a
 * "kubelet" that confirms graceful deletions of bound pods.
 */

import { after, before } from 'node:test';
import { type ApiServerHandle, startApiServer } from '../../../src/cluster/apiserver/server.ts';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { ClusterClient, GVR, type Gvr } from '../../../src/cluster/client.ts';
import {
  startWorkloadControllers,
  type WorkloadControllersOptions,
} from '../../../src/cluster/workloads/index.ts';

export interface TestCluster {
  handle: ApiServerHandle;
  client: ClusterClient;
  close(): Promise<void>;
}

export async function startCluster(
  opts: WorkloadControllersOptions & { kubelet?: boolean } = {},
): Promise<TestCluster> {
  const handle = await startApiServer();
  const client = new ClusterClient(handle.api, 'system:test');
  const controllers = startWorkloadControllers(client, { jobBackoff: { baseMs: 10, maxMs: 100 }, ...opts });
  const stopKubelet = opts.kubelet === false ? () => {} : confirmDeletions(client);
  return {
    handle,
    client,
    close: async () => {
      stopKubelet();
      await controllers.stop();
      await handle.close();
    },
  };
}

/**
 * A cluster for the calling suite: started with `namespaces` before its tests, closed after
 * them. The object is filled in by the `before` hook, so read it only inside tests.
 */
export function clusterForSuite(...namespaces: string[]): TestCluster {
  const cluster = {} as TestCluster;
  before(async () => {
    Object.assign(cluster, await startCluster());
    for (const ns of namespaces) await createNamespace(cluster.client, ns);
  });
  after(() => cluster.close());
  return cluster;
}

/** What a kubelet does for a deleted pod on its node: stop it and confirm with a zero grace period. */
function confirmDeletions(client: ClusterClient): () => void {
  const kubelet = client.as('system:node:test');
  const pending = new Set<string>();
  return client.watch(GVR.pods, (type, pod) => {
    if (type === 'DELETED' || !pod.metadata.deletionTimestamp) return;
    if (
      !(pod.spec as { nodeName?: string } | undefined)?.nodeName ||
      (pod.metadata.deletionGracePeriodSeconds ?? 0) === 0
    )
      return;
    const key = `${pod.metadata.namespace}/${pod.metadata.name}/${pod.metadata.uid}`;
    if (pending.has(key)) return;
    pending.add(key);
    setImmediate(() => {
      kubelet
        .delete(GVR.pods, pod.metadata.namespace!, pod.metadata.name!, {
          gracePeriodSeconds: 0,
          preconditions: { uid: pod.metadata.uid },
        })
        .catch(() => {})
        .finally(() => pending.delete(key));
    });
  });
}

export async function createNamespace(client: ClusterClient, name: string): Promise<void> {
  await client.create(GVR.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

export function list<T extends KubeObject = KubeObject>(
  client: ClusterClient,
  gvr: Gvr,
  ns: string,
  labelSelector?: string,
): T[] {
  return client.list<T>(gvr, ns, labelSelector ? { labelSelector } : {});
}

export function podsOwnedBy(client: ClusterClient, owner: KubeObject): KubeObject[] {
  return client
    .list(GVR.pods, owner.metadata.namespace)
    .filter((p) => p.metadata.ownerReferences?.some((r) => r.uid === owner.metadata.uid));
}

export function get<T extends KubeObject = KubeObject>(
  client: ClusterClient,
  gvr: Gvr,
  ns: string,
  name: string,
): T | undefined {
  return client.get<T>(gvr, ns, name);
}

type PodStatus = { phase?: string; conditions?: Record<string, unknown>[]; [k: string]: unknown };

/** Binds a pod if it is not bound yet, as the scheduler would: to its pinned node (DaemonSet pods) or `node`. */
export async function bind(client: ClusterClient, pod: KubeObject, node?: string): Promise<void> {
  const cur = client.get(GVR.pods, pod.metadata.namespace!, pod.metadata.name!);
  if ((cur?.spec as { nodeName?: string } | undefined)?.nodeName) return;
  await client.bind(pod.metadata.namespace!, pod.metadata.name!, node ?? pinnedNode(pod) ?? 'node-1');
}

function pinnedNode(pod: KubeObject): string | undefined {
  type Terms = { nodeSelectorTerms?: { matchFields?: { key: string; values?: string[] }[] }[] };
  const req = (
    pod.spec as
      | { affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: Terms } } }
      | undefined
  )?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  return req?.nodeSelectorTerms?.[0]?.matchFields?.find((f) => f.key === 'metadata.name')?.values?.[0];
}

export async function createNode(
  client: ClusterClient,
  name: string,
  opts: {
    labels?: Record<string, string>;
    taints?: { key: string; value?: string; effect: string }[];
    unschedulable?: boolean;
  } = {},
): Promise<void> {
  await client.create(GVR.nodes, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(opts.labels ?? {}) } },
    spec: {
      ...(opts.taints ? { taints: opts.taints } : {}),
      ...(opts.unschedulable ? { unschedulable: true } : {}),
    },
  });
}

/** Writes pod status as the kubelet would: phase and the Ready/ContainersReady conditions. */
export async function setPodStatus(
  client: ClusterClient,
  pod: KubeObject,
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed',
  opts: { ready?: boolean; node?: string; exitCode?: number; readySince?: Date } = {},
): Promise<void> {
  await bind(client, pod, opts.node);
  const ready = opts.ready ?? phase === 'Running';
  const t = `${(opts.readySince ?? new Date()).toISOString().slice(0, 19)}Z`;
  await client.as('system:node:test').mutate(
    GVR.pods,
    pod.metadata.namespace!,
    pod.metadata.name!,
    (p) => {
      const status = (p.status ?? {}) as PodStatus;
      status.phase = phase;
      const keep = (status.conditions ?? []).filter(
        (c) => c.type !== 'Ready' && c.type !== 'ContainersReady',
      );
      const s = ready ? 'True' : 'False';
      keep.push({ type: 'ContainersReady', status: s, lastProbeTime: null, lastTransitionTime: t });
      keep.push({ type: 'Ready', status: s, lastProbeTime: null, lastTransitionTime: t });
      status.conditions = keep;
      const containers = (
        (p.spec as { containers?: { name: string; image?: string }[] }).containers ?? []
      ).map((c) => ({
        name: c.name,
        image: c.image,
        imageID: '',
        ready,
        restartCount: 0,
        started: phase === 'Running',
        state:
          phase === 'Running'
            ? { running: { startedAt: t } }
            : phase === 'Pending'
              ? { waiting: { reason: 'ContainerCreating' } }
              : {
                  terminated: {
                    exitCode: opts.exitCode ?? (phase === 'Succeeded' ? 0 : 1),
                    reason: phase === 'Succeeded' ? 'Completed' : 'Error',
                    startedAt: t,
                    finishedAt: t,
                  },
                },
      }));
      status.containerStatuses = containers;
      p.status = status;
    },
    'status',
  );
}

export function cond(obj: KubeObject | undefined, type: string): Record<string, unknown> | undefined {
  return ((obj?.status as { conditions?: Record<string, unknown>[] } | undefined)?.conditions ?? []).find(
    (c) => c.type === type,
  );
}

export function status<T = Record<string, unknown>>(obj: KubeObject | undefined): T {
  return (obj?.status ?? {}) as T;
}

export function events(client: ClusterClient, ns: string, involvedName?: string): KubeObject[] {
  return client
    .list(GVR.events, ns)
    .filter(
      (e) => involvedName === undefined || (e.involvedObject as { name?: string }).name === involvedName,
    );
}

export function eventReasons(client: ClusterClient, ns: string, involvedName: string): string[] {
  return events(client, ns, involvedName).map((e) => e.reason as string);
}

export const CONTAINER = [{ name: 'c', image: 'busybox' }];

/**
 * A stand-in scheduler+kubelet for one namespace: every new pod is bound and reported
 * Running and Ready (after `delayMs`, when given). Returns a stop function.
 */
export function autoRun(
  client: ClusterClient,
  ns: string,
  opts: { node?: string; delayMs?: number } = {},
): () => void {
  const seen = new Set<string>();
  let stopped = false;
  const stop = client.watch(
    GVR.pods,
    (type, pod) => {
      if (type !== 'ADDED' || seen.has(pod.metadata.uid!) || pod.metadata.deletionTimestamp) return;
      seen.add(pod.metadata.uid!);
      setTimeout(() => {
        if (stopped) return;
        setPodStatus(client, pod, 'Running', { node: opts.node }).catch(() => {});
      }, opts.delayMs ?? 0);
    },
    { namespace: ns },
  );
  return () => {
    stopped = true;
    stop();
  };
}
