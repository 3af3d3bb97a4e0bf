/**
 * The PodGroup API (scheduling.incubator.k8s.io/v1alpha1) as troupe reads and writes it, and
 * the keys pods use to join a group (read the same way by the controller and by the embedded
 * scheduler's coscheduling). Shapes only; decisions live in the controller's core.ts.
 */

import type { KubeObject } from '../../kube/object.ts';

/** The seed's grouping label (podgroup-controller). */
export const GROUP_LABEL = 'podgroup.jhwagner.github.io/name';
/** The seed's readiness label, set to "true" on every member once the gang is complete. */
export const READY_LABEL = 'podgroup.jhwagner.github.io/ready';
/** The annotation kube-batch and Volcano use to put a pod in a PodGroup. */
export const GROUP_ANNOTATION = 'scheduling.k8s.io/group-name';
/** Marks PodGroups troupe created for a labelled group that had none. */
export const AUTO_CREATED_ANNOTATION = 'podgroup.troupe.dev/auto-created';

export const PODGROUP_GROUP = 'scheduling.incubator.k8s.io';
export const PODGROUP_API_VERSION = `${PODGROUP_GROUP}/v1alpha1`;
export const PODGROUP_KIND = { apiVersion: PODGROUP_API_VERSION, kind: 'PodGroup' } as const;
export const POD_KIND = { apiVersion: 'v1', kind: 'Pod' } as const;

/** The design's phases, plus troupe's terminal Completed. */
export type PodGroupPhase = 'Pending' | 'Running' | 'Recovering' | 'Unschedulable' | 'Completed';

/** The design's four reasons and troupe's reasons for the phases the design gives none. */
export const Reasons = {
  PodFailed: 'PodFailed',
  PodDeleted: 'PodDeleted',
  NotEnoughResources: 'NotEnoughResources',
  NotEnoughTasks: 'NotEnoughTasks',
  /** troupe: Running because the required members run (or have succeeded). */
  MembersRunning: 'MembersRunning',
  /** troupe: Pending while enough members exist and are being scheduled or started. */
  MembersStarting: 'MembersStarting',
  /** troupe: Completed because every member finished and enough of them succeeded. */
  MembersFinished: 'MembersFinished',
} as const;

export const ConditionTypes = {
  /** True once the gang is complete and its members are released (ready label). */
  GangReady: 'GangReady',
  /** kube-batch's condition: the scheduler reports members it cannot place. */
  Unschedulable: 'Unschedulable',
  /** False when the spec cannot be honoured (for example a minMember that is not a count). */
  SpecValid: 'SpecValid',
  /** True when some pods claim this group by label and another by annotation. */
  MembershipConflict: 'MembershipConflict',
} as const;

export type DeadlockAction = 'None' | 'Restart';

export interface DeadlockPolicy {
  action?: DeadlockAction;
  timeoutSeconds?: number;
  maxTimeoutSeconds?: number;
}

export interface PodGroupSpec {
  minMember?: number;
  minResources?: Record<string, string | number>;
  queue?: string;
  priorityClassName?: string;
  scheduleTimeoutSeconds?: number;
  deadlockPolicy?: DeadlockPolicy;
}

export interface PodGroupState {
  phase: PodGroupPhase;
  lastProbeTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface PodGroupCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
  [key: string]: unknown;
}

export interface PodGroupStatus {
  observedGeneration?: number;
  state?: PodGroupState;
  running?: number;
  succeeded?: number;
  failed?: number;
  restarts?: number;
  lastRestartTime?: string;
  conditions?: PodGroupCondition[];
}

export interface PodGroup extends KubeObject {
  spec?: PodGroupSpec;
  status?: PodGroupStatus;
}

/** The pod fields the controller reads. */
export interface PodObject extends KubeObject {
  spec?: {
    nodeName?: string;
    priority?: number;
    schedulingGates?: { name: string }[];
    [key: string]: unknown;
  };
  status?: {
    phase?: string;
    reason?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    [key: string]: unknown;
  };
}

/**
 * The gang verdict of troupe's coscheduling scheduler, on every member's FailedScheduling
 * event and PodScheduled condition (kube-batch's "N/M tasks in gang unschedulable: …" shape):
 * the PodGroup controller quotes it in the group's status. `unplaced` of `total` (minMember)
 * members have no node: members the scheduler held and released count as unplaced.
 */
export function gangVerdict(unplaced: number, total: number, gang: string, reason: string): string {
  return `${unplaced}/${total} pods of ${gang} could not be placed: ${reason}`;
}

/** Whether a scheduler message is the verdict on gang `gang`. */
export function isGangVerdict(message: string, gang: string): boolean {
  const m = /^\d+\/\d+ pods of (.+?) could not be placed: /.exec(message);
  return m?.[1] === gang;
}

export interface GroupClaim {
  /** The group the pod counts in, if any. */
  group: string | undefined;
  label: string | undefined;
  annotation: string | undefined;
  /** Label and annotation name different groups. */
  conflict: boolean;
}

/**
 * Which group a pod names: the seed's label or the kube-batch/Volcano annotation; when both
 * are present and disagree, the label wins (the seed's contract stays exact).
 */
export function claimOf(pod: Pick<KubeObject, 'metadata'>): GroupClaim {
  const label = pod.metadata.labels?.[GROUP_LABEL] || undefined;
  const annotation = pod.metadata.annotations?.[GROUP_ANNOTATION] || undefined;
  return {
    group: label ?? annotation,
    label,
    annotation,
    conflict: label !== undefined && annotation !== undefined && label !== annotation,
  };
}
