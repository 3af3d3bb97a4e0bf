/**
 * The object builders tests share: one `pod`, one `node`, one `crd`. Each option sets one field the way
 * the API server would show it; keys not asked for are left out, so a test reads as the
 * object it means. Domain fixtures (a gated PodSequence member, a gang member) are thin
 * wrappers over these in their own test folder.
 */

import type { KubeObject, OwnerReference } from '../../src/runtime/types.ts';

/** One condition, as status.conditions carries it. */
export interface TestCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface PodOptions {
  /** Default `default`; null for none (a body for a request that names the namespace). */
  namespace?: string | null;
  uid?: string;
  resourceVersion?: string;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  /** Being deleted since then. */
  deletionTimestamp?: string;
  /** spec.schedulingGates, by name. */
  gates?: string[];
  /** spec.nodeName. */
  node?: string;
  /** Required node affinity on metadata.name, as DaemonSet pods are pinned to their node. */
  pinnedTo?: string;
  /** One container `c` with this image, requests and limits (given any of them). */
  image?: string;
  requests?: Record<string, string>;
  limits?: Record<string, string>;
  /** status.phase; without it the pod has no status unless conditions are given. */
  phase?: string;
  conditions?: TestCondition[];
  /** Extra fields, merged last (shallowly) into each part. */
  metadata?: Record<string, unknown>;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/** The node affinity that pins a pod to one node by name. */
export function pinnedAffinity(node: string) {
  return {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }],
      },
    },
  };
}

/**
 * A v1 Pod. The return type is the caller's (each part of troupe has its own structural
 * Pod type), so the builder is typed loosely on purpose.
 */
// biome-ignore lint/suspicious/noExplicitAny: see above
export function pod<T = any>(name: string, o: PodOptions = {}): T {
  const metadata: Record<string, unknown> = { name };
  if (o.namespace !== null) metadata.namespace = o.namespace ?? 'default';
  if (o.uid !== undefined) metadata.uid = o.uid;
  if (o.resourceVersion !== undefined) metadata.resourceVersion = o.resourceVersion;
  if (o.creationTimestamp !== undefined) metadata.creationTimestamp = o.creationTimestamp;
  if (o.labels !== undefined) metadata.labels = o.labels;
  if (o.annotations !== undefined) metadata.annotations = o.annotations;
  if (o.ownerReferences !== undefined) metadata.ownerReferences = o.ownerReferences;
  if (o.deletionTimestamp !== undefined) metadata.deletionTimestamp = o.deletionTimestamp;
  const spec: Record<string, unknown> = {};
  if (o.node !== undefined) spec.nodeName = o.node;
  if (o.gates !== undefined) spec.schedulingGates = o.gates.map((g) => ({ name: g }));
  if (o.pinnedTo !== undefined) spec.affinity = pinnedAffinity(o.pinnedTo);
  if (o.image !== undefined || o.requests !== undefined || o.limits !== undefined) {
    const resources = {
      ...(o.requests ? { requests: o.requests } : {}),
      ...(o.limits ? { limits: o.limits } : {}),
    };
    spec.containers = [
      {
        name: 'c',
        ...(o.image !== undefined ? { image: o.image } : {}),
        ...(o.requests !== undefined || o.limits !== undefined ? { resources } : {}),
      },
    ];
  }
  const status: Record<string, unknown> = {};
  if (o.phase !== undefined) status.phase = o.phase;
  if (o.conditions !== undefined) status.conditions = o.conditions;
  const out: Record<string, unknown> = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...metadata, ...o.metadata },
    spec: { ...spec, ...o.spec },
  };
  if (Object.keys(status).length > 0 || o.status) out.status = { ...status, ...o.status };
  return out as T;
}

export interface NodeOptions {
  labels?: Record<string, string>;
  taints?: { key: string; value?: string; effect: string }[];
  unschedulable?: boolean;
  /** status.allocatable and status.capacity. */
  allocatable?: Record<string, string>;
  metadata?: Record<string, unknown>;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/** A v1 Node (typed loosely, as `pod`). */
// biome-ignore lint/suspicious/noExplicitAny: see pod
export function node<T = any>(name: string, o: NodeOptions = {}): T {
  const spec: Record<string, unknown> = {};
  if (o.taints !== undefined) spec.taints = o.taints;
  if (o.unschedulable !== undefined) spec.unschedulable = o.unschedulable;
  const out: Record<string, unknown> = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, ...(o.labels ? { labels: o.labels } : {}), ...o.metadata },
    spec: { ...spec, ...o.spec },
  };
  if (o.allocatable || o.status)
    out.status = {
      ...(o.allocatable ? { allocatable: o.allocatable, capacity: o.allocatable } : {}),
      ...o.status,
    };
  return out as T;
}

/** A namespaced CRD serving `kind` in `group`, version v1 (a kind no troupe code knows). */
export function crd(group: string, kind: string, plural: string): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind, plural },
      versions: [{ name: 'v1', served: true, storage: true }],
    },
  };
}
