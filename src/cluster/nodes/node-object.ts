/**
 * The Node objects a simulated kubelet registers, and the condition sets it (or the node
 * lifecycle controller) reports: the labels, annotations and status fields a real kubelet
 * posts, plus KWOK's management annotation so KWOK-style Stages select these nodes.
 */
import { rfc3339 } from '../../kube/conditions.ts';
import { randomUUID } from '../../lib/random.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { type ClusterClient, GVR } from '../client.ts';
import type { NodePool, Taint } from './config.ts';

/** KWOK manages nodes carrying this annotation with this value. */
export const KWOK_NODE_ANNOTATION = 'kwok.x-k8s.io/node';
export const KWOK_MANAGED_VALUE = 'fake';
/** Set instead of `fake` while a simulated kubelet is down, so a KWOK-style kubelet leaves the node alone. */
export const KWOK_STOPPED_VALUE = 'stopped';
export const KUBELET_VERSION = 'v1.32.0';
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

export const TAINT_NOT_READY = 'node.kubernetes.io/not-ready';
export const TAINT_UNREACHABLE = 'node.kubernetes.io/unreachable';
export const TAINT_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';

/** What one simulated node is made of (a pool member, or a node added at run time). */
export interface SimNodeSpec {
  name: string;
  pool: string;
  capacity: Record<string, string>;
  allocatable: Record<string, string>;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  taints: Taint[];
  address: string;
}

export type ReadyStatus = 'True' | 'False' | 'Unknown';

export interface NodeCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string | null;
  lastTransitionTime?: string | null;
}

const HEALTHY: [type: string, reason: string, message: string][] = [
  ['MemoryPressure', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
  ['DiskPressure', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
  ['PIDPressure', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
];

/** The conditions a kubelet posts: healthy pressures and Ready True or False. */
export function kubeletConditions(
  ready: boolean,
  now: string,
  previous: NodeCondition[] = [],
): NodeCondition[] {
  const out: NodeCondition[] = HEALTHY.map(([type, reason, message]) => ({
    type,
    status: 'False',
    lastHeartbeatTime: now,
    lastTransitionTime: transition(previous, type, 'False', now),
    reason,
    message,
  }));
  const status = ready ? 'True' : 'False';
  out.push({
    type: 'Ready',
    status,
    lastHeartbeatTime: now,
    lastTransitionTime: transition(previous, 'Ready', status, now),
    reason: ready ? 'KubeletReady' : 'KubeletNotReady',
    message: ready ? 'kubelet is posting ready status' : 'container runtime is down (simulated node failure)',
  });
  return out;
}

/** What the node lifecycle controller writes when the kubelet stops posting status. */
export function unknownConditions(previous: NodeCondition[], now: string): NodeCondition[] {
  const out: NodeCondition[] = [];
  const seen = new Set<string>();
  for (const c of previous) {
    seen.add(c.type);
    out.push({
      ...c,
      status: 'Unknown',
      reason: 'NodeStatusUnknown',
      message: 'Kubelet stopped posting node status.',
      lastTransitionTime: c.status === 'Unknown' ? c.lastTransitionTime : now,
    });
  }
  for (const type of [...HEALTHY.map((h) => h[0]), 'Ready']) {
    if (seen.has(type)) continue;
    out.push({
      type,
      status: 'Unknown',
      lastHeartbeatTime: null,
      lastTransitionTime: now,
      reason: 'NodeStatusNeverUpdated',
      message: 'Kubelet never posted node status.',
    });
  }
  return out;
}

function transition(previous: NodeCondition[], type: string, status: string, now: string): string {
  const p = previous.find((c) => c.type === type);
  return p && p.status === status && p.lastTransitionTime ? p.lastTransitionTime : now;
}

export function nodeLabels(spec: Pick<SimNodeSpec, 'name' | 'pool' | 'labels'>): Record<string, string> {
  return {
    'beta.kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/hostname': spec.name,
    'kubernetes.io/os': 'linux',
    'node.kubernetes.io/instance-type': spec.pool,
    type: 'kwok',
    ...spec.labels,
  };
}

export function nodeInfo(): Record<string, string> {
  const id = randomUUID();
  return {
    architecture: 'amd64',
    bootID: randomUUID(),
    containerRuntimeVersion: 'troupe-sim://0.1.0',
    kernelVersion: '6.8.0-troupe-sim',
    kubeProxyVersion: KUBELET_VERSION,
    kubeletVersion: KUBELET_VERSION,
    machineID: id.replaceAll('-', ''),
    operatingSystem: 'linux',
    osImage: 'troupe simulated node',
    systemUUID: id,
  };
}

/** The Node a simulated kubelet registers, Ready from the start. */
export function nodeObject(spec: SimNodeSpec, now: string): KubeObject {
  const node: KubeObject = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: spec.name,
      labels: nodeLabels(spec),
      annotations: {
        [KWOK_NODE_ANNOTATION]: KWOK_MANAGED_VALUE,
        'node.alpha.kubernetes.io/ttl': '0',
        ...spec.annotations,
      },
    },
    spec: spec.taints.length > 0 ? { taints: spec.taints.map((t) => ({ ...t })) } : {},
    status: nodeStatus(spec, now),
  };
  return node;
}

export function nodeStatus(
  spec: Pick<SimNodeSpec, 'name' | 'capacity' | 'allocatable' | 'address'>,
  now: string,
): Record<string, unknown> {
  return {
    capacity: { ...spec.capacity },
    allocatable: { ...spec.allocatable },
    conditions: kubeletConditions(true, now),
    addresses: [
      { type: 'InternalIP', address: spec.address },
      { type: 'Hostname', address: spec.name },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: nodeInfo(),
    phase: 'Running',
  };
}

export function poolMembers(pool: NodePool, address: (cidr: string, name: string) => string): SimNodeSpec[] {
  const out: SimNodeSpec[] = [];
  for (let i = 0; i < pool.count; i++) {
    const name = `${pool.namePrefix}-${i}`;
    out.push({
      name,
      pool: pool.name,
      capacity: pool.capacity,
      allocatable: pool.allocatable,
      labels: pool.labels,
      annotations: pool.annotations,
      taints: pool.taints,
      address: address(pool.cidr, name),
    });
  }
  return out;
}

/** Replaces a node's conditions with what `make` builds from the current ones. */
export function postConditions(
  client: ClusterClient,
  name: string,
  make: (prev: NodeCondition[], now: string) => NodeCondition[],
): Promise<KubeObject> {
  return client.mutate(
    GVR.nodes,
    '',
    name,
    (cur) => {
      cur.status ??= {};
      const st = cur.status as { conditions?: NodeCondition[] };
      st.conditions = make(st.conditions ?? [], rfc3339());
    },
    'status',
  );
}

export function readyCondition(node: KubeObject): NodeCondition | undefined {
  const conds = (node.status as { conditions?: NodeCondition[] } | undefined)?.conditions;
  return conds?.find((c) => c.type === 'Ready');
}

export function nodeTaints(node: KubeObject): (Taint & { timeAdded?: string })[] {
  return ((node.spec as { taints?: (Taint & { timeAdded?: string })[] } | undefined)?.taints ??
    []) as (Taint & {
    timeAdded?: string;
  })[];
}
