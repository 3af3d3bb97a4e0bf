/**
 * The parts of the built-in kinds (Pod, Node and their scheduling fields) the PodSequence
 * controller reads: loose shapes, as the cache holds them.
 */
import type { KubeObject } from '../../kube/object.ts';

/** The parts of a Pod this controller reads. */
export interface Pod extends KubeObject {
  spec?: {
    nodeName?: string;
    schedulingGates?: { name: string }[];
    nodeSelector?: Record<string, string>;
    affinity?: {
      nodeAffinity?: {
        requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] } | null;
        [key: string]: unknown;
      } | null;
      [key: string]: unknown;
    } | null;
    tolerations?: Toleration[];
    [key: string]: unknown;
  };
  status?: {
    phase?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    [key: string]: unknown;
  };
}

export interface NodeSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string;
}

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

export interface Node extends KubeObject {
  spec?: { taints?: Taint[]; [key: string]: unknown };
}
