import assert from 'node:assert/strict';
import { ClusterState, type ScheduleResult } from '../../../src/cluster/scheduler/core/index.ts';
import type { Affinity, Node, Pod, PodSpec, Taint, Toleration } from '../../../src/kube/builtin.ts';
import { node as buildNode, pod as buildPod } from '../../support/objects.ts';

export const ZONE = 'topology.kubernetes.io/zone';

export function node(
  name: string,
  allocatable: Record<string, string>,
  opts: { labels?: Record<string, string>; taints?: Taint[]; unschedulable?: boolean } = {},
): Node {
  return buildNode<Node>(name, {
    labels: { 'kubernetes.io/hostname': name, ...opts.labels },
    ...(opts.taints ? { taints: opts.taints } : {}),
    ...(opts.unschedulable !== undefined ? { unschedulable: opts.unschedulable } : {}),
    allocatable: { pods: '110', ...allocatable },
  });
}

let uid = 0;

export function pod(
  name: string,
  requests: Record<string, string> = {},
  opts: {
    nodeName?: string;
    tolerations?: Toleration[];
    nodeSelector?: Record<string, string>;
    affinity?: Affinity;
    priority?: number;
    preemptionPolicy?: string;
    limits?: Record<string, string>;
  } = {},
): Pod {
  uid++;
  const { nodeName, limits, ...spec } = opts;
  return buildPod<Pod>(name, {
    uid: `uid-${name}-${uid}`,
    ...(nodeName ? { node: nodeName } : {}),
    requests,
    ...(limits ? { limits } : {}),
    spec: Object.fromEntries(Object.entries(spec).filter(([, v]) => v !== undefined)),
  });
}

/** A pod with labels and extra spec and metadata fields on top of `pod`. */
export function labelled(
  name: string,
  labels: Record<string, string>,
  spec: PodSpec = {},
  meta: Partial<NonNullable<Pod['metadata']>> = {},
  requests: Record<string, string> = {},
): Pod {
  const p = pod(name, requests);
  return { ...p, metadata: { ...p.metadata, labels, ...meta }, spec: { ...p.spec, ...spec } };
}

/** n1, n2 in zone a; n3, n4 in zone b. */
export function zones(): ClusterState {
  const s = new ClusterState();
  for (const [n, z] of [
    ['n1', 'a'],
    ['n2', 'a'],
    ['n3', 'b'],
    ['n4', 'b'],
  ] as const) {
    s.upsertNode(node(n, { cpu: '8', memory: '16Gi' }, { labels: { [ZONE]: z } }));
  }
  return s;
}

/** The message of a result that must be Unschedulable. */
export function message(r: ScheduleResult): string {
  assert.equal(r.status, 'Unschedulable');
  return r.status === 'Unschedulable' ? r.error.message : '';
}
