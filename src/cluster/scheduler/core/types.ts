/**
 * The slices of core/v1 Pod and Node the scheduler core reads. Plain JSON objects as the API
 * server stores them; everything optional because stored objects omit empty fields.
 */

export type ResourceList = Record<string, string | number>;

export interface ContainerLike {
  name?: string;
  resources?: { requests?: ResourceList | null; limits?: ResourceList | null } | null;
  /** `Always` on an init container makes it a sidecar (restartable init container). */
  restartPolicy?: string | null;
}

import type { NodeSelectorRequirement, Taint, Toleration } from '../../../kube/builtin.ts';

// Tolerations, taints and selector requirements are Kubernetes' own shapes (src/kube/builtin.ts).
export type TolerationLike = Toleration;
export type TaintLike = Taint;
export type NodeSelectorRequirementLike = NodeSelectorRequirement;

export interface NodeSelectorTermLike {
  matchExpressions?: NodeSelectorRequirementLike[] | null;
  matchFields?: NodeSelectorRequirementLike[] | null;
}

export interface PreferredSchedulingTermLike {
  weight: number;
  preference: NodeSelectorTermLike;
}

export interface NodeAffinityLike {
  requiredDuringSchedulingIgnoredDuringExecution?: {
    nodeSelectorTerms?: NodeSelectorTermLike[] | null;
  } | null;
  preferredDuringSchedulingIgnoredDuringExecution?: PreferredSchedulingTermLike[] | null;
}

export interface LabelSelectorLike {
  matchLabels?: Record<string, string> | null;
  matchExpressions?: { key: string; operator: string; values?: string[] | null }[] | null;
}

export interface PodAffinityTermLike {
  labelSelector?: LabelSelectorLike | null;
  namespaces?: string[] | null;
  namespaceSelector?: LabelSelectorLike | null;
  topologyKey: string;
  matchLabelKeys?: string[] | null;
  mismatchLabelKeys?: string[] | null;
}

export interface WeightedPodAffinityTermLike {
  weight: number;
  podAffinityTerm: PodAffinityTermLike;
}

export interface PodAffinityLike {
  requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTermLike[] | null;
  preferredDuringSchedulingIgnoredDuringExecution?: WeightedPodAffinityTermLike[] | null;
}

export interface TopologySpreadConstraintLike {
  maxSkew: number;
  topologyKey: string;
  whenUnsatisfiable: string;
  labelSelector?: LabelSelectorLike | null;
  minDomains?: number | null;
  nodeAffinityPolicy?: string | null;
  nodeTaintsPolicy?: string | null;
  matchLabelKeys?: string[] | null;
}

export interface OwnerReferenceLike {
  apiVersion: string;
  kind: string;
  name: string;
  controller?: boolean | null;
}

export interface PodLike {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    creationTimestamp?: string;
    deletionTimestamp?: string | null;
    labels?: Record<string, string>;
    ownerReferences?: OwnerReferenceLike[] | null;
  };
  spec?: {
    nodeName?: string;
    nodeSelector?: Record<string, string> | null;
    affinity?: {
      nodeAffinity?: NodeAffinityLike | null;
      podAffinity?: PodAffinityLike | null;
      podAntiAffinity?: PodAffinityLike | null;
    } | null;
    topologySpreadConstraints?: TopologySpreadConstraintLike[] | null;
    tolerations?: TolerationLike[] | null;
    containers?: ContainerLike[] | null;
    initContainers?: ContainerLike[] | null;
    overhead?: ResourceList | null;
    priority?: number | null;
    preemptionPolicy?: string | null;
  };
  status?: { startTime?: string; phase?: string };
}

export interface NodeLike {
  metadata: { name: string; labels?: Record<string, string> };
  spec?: { unschedulable?: boolean; taints?: TaintLike[] | null };
  status?: { allocatable?: ResourceList | null; capacity?: ResourceList | null };
}
