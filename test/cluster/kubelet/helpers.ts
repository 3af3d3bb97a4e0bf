/** Shared fixtures for the kubelet tests: a server, an admin client, nodes and pods. */

import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { ClusterClient, GVR } from '../../../src/cluster/client.ts';
import { type Kubelet, type KubeletOptions, startKubelet } from '../../../src/cluster/kubelet/index.ts';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';
import { waitFor } from '../../support/wait.ts';

export interface KubeletEnv {
  ts: TestServer;
  admin: ClusterClient;
  kubelet: Kubelet;
  close(): Promise<void>;
}

export async function startKubeletEnv(opts: KubeletOptions = {}): Promise<KubeletEnv> {
  const ts = await startTestServer();
  const admin = new ClusterClient(ts.server.api, 'system:admin');
  const kubelet = await startKubelet(admin.as('system:node:kwok'), opts);
  return {
    ts,
    admin,
    kubelet,
    close: async () => {
      await kubelet.stop();
      await ts.close();
    },
  };
}

export async function createNode(admin: ClusterClient, name: string, managed = true): Promise<KubeObject> {
  return admin.create(GVR.nodes, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, annotations: managed ? { 'kwok.x-k8s.io/node': 'fake' } : {} },
  });
}

export interface PodOptions {
  node?: string;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  restartPolicy?: 'Always' | 'OnFailure' | 'Never';
  containers?: Record<string, unknown>[];
  ownerReferences?: Record<string, unknown>[];
  finalizers?: string[];
}

export async function createPod(admin: ClusterClient, name: string, o: PodOptions = {}): Promise<KubeObject> {
  const spec: Record<string, unknown> = {
    nodeName: o.node ?? 'node-1',
    containers: o.containers ?? [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }],
  };
  if (o.restartPolicy) spec.restartPolicy = o.restartPolicy;
  const metadata: Record<string, unknown> = { name, namespace: 'default' };
  if (o.annotations) metadata.annotations = o.annotations;
  if (o.labels) metadata.labels = o.labels;
  if (o.ownerReferences) metadata.ownerReferences = o.ownerReferences;
  if (o.finalizers) metadata.finalizers = o.finalizers;
  return admin.create(GVR.pods, { apiVersion: 'v1', kind: 'Pod', metadata, spec } as KubeObject);
}

export type Pod = KubeObject & {
  spec: Record<string, unknown>;
  status?: {
    phase?: string;
    podIP?: string;
    hostIP?: string;
    startTime?: string;
    conditions?: {
      type: string;
      status: string;
      reason?: string;
      message?: string;
      lastTransitionTime?: string;
    }[];
    containerStatuses?: {
      name: string;
      ready: boolean;
      started?: boolean;
      restartCount: number;
      state: Record<string, Record<string, unknown>>;
      lastState?: Record<string, Record<string, unknown>>;
    }[];
  };
};

export function getPod(admin: ClusterClient, name: string): Pod | undefined {
  return admin.get<Pod>(GVR.pods, 'default', name);
}

export function condition(pod: Pod | undefined, type: string): string | undefined {
  return pod?.status?.conditions?.find((c) => c.type === type)?.status;
}

export function waitForPod(
  admin: ClusterClient,
  name: string,
  what: string,
  check: (p: Pod) => boolean,
  timeoutMs = 20_000,
): Promise<Pod> {
  return waitFor(
    `pod ${name} ${what}`,
    () => {
      const p = getPod(admin, name);
      return p && check(p) ? p : undefined;
    },
    { timeoutMs },
  );
}

/** Every version of a pod as the watch delivers it, with the time it arrived. */
export function recordPod(
  admin: ClusterClient,
  name: string,
): { versions: { at: number; pod: Pod }[]; stop: () => void } {
  const versions: { at: number; pod: Pod }[] = [];
  const stop = admin.watch(
    GVR.pods,
    (_type, obj) => {
      if (obj.metadata.name === name) versions.push({ at: Date.now(), pod: obj as Pod });
    },
    { namespace: 'default' },
  );
  return { versions, stop };
}

export function eventsFor(
  admin: ClusterClient,
  kind: string,
  name: string,
  namespace = 'default',
): KubeObject[] {
  return admin.list(GVR.events, namespace).filter((e) => {
    const io = e.involvedObject as { kind?: string; name?: string };
    return io.kind === kind && io.name === name;
  });
}

export function reasons(events: KubeObject[]): string[] {
  return events.map((e) => String(e.reason));
}
