/**
 * The Kueue API (kueue.x-k8s.io/v1beta2) as the stand-in reads and writes it: resources,
 * shapes, and the label, finalizer and condition vocabulary real Kueue uses.
 */

import type { MetaCondition, PodTemplateSpec, Taint, Toleration } from '../../kube/builtin.ts';
import type { LabelSelectorObject } from '../../kube/labels.ts';
import type { KubeObject } from '../apiserver/types.ts';
import type { Gvr } from '../client.ts';

export const KUEUE_GROUP = 'kueue.x-k8s.io';
export const KUEUE_VERSION = 'v1beta2';
export const KUEUE_API_VERSION = `${KUEUE_GROUP}/${KUEUE_VERSION}`;

export const KGVR = {
  resourceFlavors: { group: KUEUE_GROUP, version: KUEUE_VERSION, resource: 'resourceflavors' },
  clusterQueues: { group: KUEUE_GROUP, version: KUEUE_VERSION, resource: 'clusterqueues' },
  localQueues: { group: KUEUE_GROUP, version: KUEUE_VERSION, resource: 'localqueues' },
  workloads: { group: KUEUE_GROUP, version: KUEUE_VERSION, resource: 'workloads' },
  workloadPriorityClasses: {
    group: KUEUE_GROUP,
    version: KUEUE_VERSION,
    resource: 'workloadpriorityclasses',
  },
  appWrappers: { group: 'workload.codeflare.dev', version: 'v1beta2', resource: 'appwrappers' },
  crds: { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' },
} as const satisfies Record<string, Gvr>;

export const QUEUE_NAME_LABEL = 'kueue.x-k8s.io/queue-name';
/** Kueue's older way to name the queue, still honoured when no label is set. */
export const QUEUE_NAME_ANNOTATION = 'kueue.x-k8s.io/queue-name';
export const JOB_UID_LABEL = 'kueue.x-k8s.io/job-uid';
export const PODSET_LABEL = 'kueue.x-k8s.io/podset';
export const RESOURCE_IN_USE_FINALIZER = 'kueue.x-k8s.io/resource-in-use';
/** The LocalQueue jobs without a queue name go to, when it exists (LocalQueueDefaulting). */
export const DEFAULT_LOCAL_QUEUE = 'default';

export const WorkloadConditions = {
  QuotaReserved: 'QuotaReserved',
  Admitted: 'Admitted',
  Finished: 'Finished',
  PodsReady: 'PodsReady',
  Evicted: 'Evicted',
  Preempted: 'Preempted',
  Requeued: 'Requeued',
  DeactivationTarget: 'DeactivationTarget',
} as const;

export type LabelSelector = LabelSelectorObject;

export interface ResourceFlavor extends KubeObject {
  spec?: { nodeLabels?: Record<string, string>; nodeTaints?: Taint[]; tolerations?: Toleration[] };
}

export interface FlavorQuotas {
  name: string;
  resources: {
    name: string;
    nominalQuota: string | number;
    borrowingLimit?: unknown;
    lendingLimit?: unknown;
  }[];
}

export interface ResourceGroup {
  coveredResources: string[];
  flavors: FlavorQuotas[];
}

export type QueueingStrategy = 'StrictFIFO' | 'BestEffortFIFO';
export type StopPolicy = 'None' | 'Hold' | 'HoldAndDrain';

export interface ClusterQueue extends KubeObject {
  spec?: {
    resourceGroups?: ResourceGroup[];
    cohortName?: string;
    queueingStrategy?: QueueingStrategy;
    namespaceSelector?: LabelSelector | null;
    stopPolicy?: StopPolicy;
    [k: string]: unknown;
  };
  status?: Record<string, unknown>;
}

export interface LocalQueue extends KubeObject {
  spec?: { clusterQueue?: string; stopPolicy?: StopPolicy; [k: string]: unknown };
  status?: Record<string, unknown>;
}

export interface PodSet {
  name: string;
  count: number;
  template: PodTemplateSpec;
  minCount?: number;
  topologyRequest?: Record<string, unknown>;
}

export interface PodSetAssignment {
  name: string;
  flavors?: Record<string, string>;
  resourceUsage?: Record<string, string>;
  count?: number;
}

export interface Admission {
  clusterQueue: string;
  podSetAssignments: PodSetAssignment[];
}

export interface Workload extends KubeObject {
  spec: {
    podSets: PodSet[];
    queueName?: string;
    priority?: number;
    priorityClassRef?: { group: string; kind: string; name: string };
    active?: boolean;
    [k: string]: unknown;
  };
  status?: {
    conditions?: MetaCondition[];
    admission?: Admission | null;
    /** Re-queueing after PodsReady timeouts: how often, and not before when. */
    requeueState?: { count?: number; requeueAt?: string } | null;
    [k: string]: unknown;
  };
}

/** What the stand-in injects into a pod set when it starts a job (Kueue's PodSetInfo). */
export interface PodSetInfo {
  name: string;
  count: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  nodeSelector: Record<string, string>;
  tolerations: Toleration[];
  schedulingGates: { name: string }[];
}
