/**
 * The AppWrapper API (workload.codeflare.dev/v1beta2), field for field as upstream AppWrapper
 * 1.2 serializes it, plus the keys (labels, annotations, finalizer) users and Kueue rely on.
 * Shapes only; decisions live in core.ts.
 */

import type { KubeObject } from '../../kube/object.ts';

export const AW_GROUP = 'workload.codeflare.dev';
export const AW_VERSION = 'v1beta2';
export const AW_API_VERSION = `${AW_GROUP}/${AW_VERSION}`;
export const AW_KIND = { apiVersion: AW_API_VERSION, kind: 'AppWrapper' } as const;
export const AW_RESOURCE = 'appwrappers';
export const POD_KIND = { apiVersion: 'v1', kind: 'Pod' } as const;

/** Put on every wrapped object and every pod template, valued with the AppWrapper's name. */
export const AW_LABEL = 'workload.codeflare.dev/appwrapper';
export const AW_FINALIZER = 'workload.codeflare.dev/finalizer';
/** spec.managedBy value meaning "this controller" (absent means the same). */
export const AW_CONTROLLER_NAME = 'workload.codeflare.dev/appwrapper-controller';
/** Labels the defaulting webhook writes with the creating user's name and uid. */
export const AW_USERNAME_LABEL = 'workload.codeflare.dev/user';
export const AW_USERID_LABEL = 'workload.codeflare.dev/userid';
export const QUEUE_NAME_LABEL = 'kueue.x-k8s.io/queue-name';

const ANN = 'workload.codeflare.dev.appwrapper';
/** The per-object fault-tolerance annotations (upstream's names). */
export const Annotations = {
  admissionGracePeriodDuration: `${ANN}/admissionGracePeriodDuration`,
  warmupGracePeriodDuration: `${ANN}/warmupGracePeriodDuration`,
  failureGracePeriodDuration: `${ANN}/failureGracePeriodDuration`,
  retryPausePeriodDuration: `${ANN}/retryPausePeriodDuration`,
  retryLimit: `${ANN}/retryLimit`,
  forcefulDeletionGracePeriodDuration: `${ANN}/forcefulDeletionGracePeriodDuration`,
  deletionOnFailureGracePeriodDuration: `${ANN}/deletionOnFailureGracePeriodDuration`,
  successTTLDuration: `${ANN}/successTTLDuration`,
  terminalExitCodes: `${ANN}/terminalExitCodes`,
  retryableExitCodes: `${ANN}/retryableExitCodes`,
} as const;

/** PodSet annotations Kueue's topology-aware scheduling reads (set on inferred pod sets). */
export const PodSetAnnotations = {
  tasPodIndexLabel: `${ANN}/tas-pod-index-label`,
  tasSubGroupIndexLabel: `${ANN}/tas-sub-group-index-label`,
  tasSubGroupCount: `${ANN}/tas-sub-group-count`,
} as const;

export type AppWrapperPhase =
  | ''
  | 'Suspended'
  | 'Resuming'
  | 'Running'
  | 'Resetting'
  | 'Suspending'
  | 'Succeeded'
  | 'Failed'
  | 'Terminating';

export const Phases = {
  Empty: '',
  Suspended: 'Suspended',
  Resuming: 'Resuming',
  Running: 'Running',
  Resetting: 'Resetting',
  Suspending: 'Suspending',
  Succeeded: 'Succeeded',
  Failed: 'Failed',
  Terminating: 'Terminating',
} as const satisfies Record<string, AppWrapperPhase>;

export const Conditions = {
  QuotaReserved: 'QuotaReserved',
  ResourcesDeployed: 'ResourcesDeployed',
  PodsReady: 'PodsReady',
  Unhealthy: 'Unhealthy',
  DeletingResources: 'DeletingResources',
} as const;

/** metav1.Condition as the CRD requires it: message and lastTransitionTime always present. */
export interface AwCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
  [key: string]: unknown;
}

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

export interface AppWrapperPodSet {
  replicas?: number;
  path: string;
  annotations?: Record<string, string>;
}

export interface AppWrapperPodSetInfo {
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
  schedulingGates?: { name: string }[];
}

export interface AppWrapperComponent {
  annotations?: Record<string, string>;
  podSets?: AppWrapperPodSet[];
  podSetInfos?: AppWrapperPodSetInfo[];
  template: Record<string, unknown>;
}

export interface AppWrapperComponentStatus {
  name: string;
  kind: string;
  apiVersion: string;
  podSets: AppWrapperPodSet[];
  conditions?: AwCondition[];
}

export interface AppWrapperSpec {
  components: AppWrapperComponent[];
  suspend?: boolean;
  managedBy?: string;
}

export interface AppWrapperStatus {
  phase?: AppWrapperPhase;
  resettingCount?: number;
  conditions?: AwCondition[];
  componentStatus?: AppWrapperComponentStatus[];
}

export interface AppWrapper extends KubeObject {
  spec: AppWrapperSpec;
  status?: AppWrapperStatus;
}

/** The pod fields the controller reads (pods are cached with everything else stripped). */
export interface PodObject extends KubeObject {
  spec?: { nodeName?: string; [k: string]: unknown };
  status?: {
    phase?: string;
    containerStatuses?: { name?: string; state?: { terminated?: { exitCode?: number } } }[];
    initContainerStatuses?: { name?: string; state?: { terminated?: { exitCode?: number } } }[];
  };
}
