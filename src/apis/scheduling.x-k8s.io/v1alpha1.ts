/**
 * scheduler-plugins' PodGroup API (scheduling.x-k8s.io/v1alpha1), as its coscheduling plugin
 * and its podgroup controller read and write it (apis/scheduling/v1alpha1/types.go of
 * kubernetes-sigs/scheduler-plugins). Shapes only.
 */

import type { KubeObject } from '../../kube/object.ts';

export const X_PODGROUP_GROUP = 'scheduling.x-k8s.io';
/** v1alpha1.PodGroupLabel: the label that puts a pod in a PodGroup. */
export const X_POD_GROUP_LABEL = `${X_PODGROUP_GROUP}/pod-group`;

/** The phases scheduler-plugins' podgroup controller writes. */
export type XPodGroupPhase = 'Pending' | 'Scheduling' | 'Running' | 'Unknown' | 'Finished' | 'Failed';

export interface XPodGroupSpec {
  minMember?: number;
  minResources?: Record<string, string | number>;
  scheduleTimeoutSeconds?: number;
}

export interface XPodGroupStatus {
  phase?: XPodGroupPhase;
  /** `namespace/owner` of the workloads whose pods form the group, comma-separated. */
  occupiedBy?: string;
  running?: number;
  succeeded?: number;
  failed?: number;
  scheduleStartTime?: string;
}

export interface XPodGroup extends KubeObject {
  spec?: XPodGroupSpec;
  status?: XPodGroupStatus;
}
