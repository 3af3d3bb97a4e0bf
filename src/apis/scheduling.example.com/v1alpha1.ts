/**
 * The PodSequence API (`scheduling.example.com/v1alpha1`), field for field as the seed's
 * README describes it, plus the fields troupe adds to status (observedGeneration,
 * conditions and three summary strings for `kubectl get podseq`).
 */

import type { Condition } from '../../kube/conditions.ts';
import type { LabelSelectorObject } from '../../kube/labels.ts';
import type { KindRef, KubeObject } from '../../kube/object.ts';

export const GROUP = 'scheduling.example.com';
export const VERSION = 'v1alpha1';
export const KIND = 'PodSequence';
export const PLURAL = 'podsequences';
export const PODSEQUENCE: KindRef = { apiVersion: `${GROUP}/${VERSION}`, kind: KIND };
export const POD: KindRef = { apiVersion: 'v1', kind: 'Pod' };
export const NODE: KindRef = { apiVersion: 'v1', kind: 'Node' };
export const DAEMONSET: KindRef = { apiVersion: 'apps/v1', kind: 'DaemonSet' };

export const DEFAULT_GATE = 'podsequence.example.com/sequence-gate';
/** Written in the same patch that removes a pod's gate: which sequence released it. */
export const RELEASED_BY_ANNOTATION = 'podsequence.example.com/released-by';
/** Full mode: keeps a node-scoped sequence until its node taints are removed. */
export const TAINT_FINALIZER = 'podsequence.example.com/node-taints';

export type Scope = 'Cluster' | 'Node';
export type Phase = 'Pending' | 'InProgress' | 'Completed' | 'Failed';

export interface PodGroup {
  name?: string;
  pods?: string[];
  podSelector?: LabelSelectorObject;
  /** Reserved, as in the seed ("future use"): accepted and stored, not acted on. */
  nodeSelector?: Record<string, string>;
  /** Upstream's: how long after this group is Ready the next group waits (Go duration). */
  waitDuration?: string;
  /** troupe's: how long this group may take to be Ready once released (Go duration). */
  timeout?: string;
  /** What a timeout does: Fail the sequence (default) or Continue with the next group. */
  timeoutPolicy?: 'Fail' | 'Continue';
}

export interface PodSequenceSpec {
  podGroups: PodGroup[];
  scope?: Scope;
  namespace?: string;
  schedulingGateName?: string;
}

export interface NodeSequenceStatus {
  nodeName: string;
  currentIndex: number;
  readyPodsInCurrentGroup: number;
  phase: Phase;
  conditions?: Condition[];
}

export interface PodSequenceStatus {
  phase?: Phase;
  currentIndex?: number;
  nodeStatus?: NodeSequenceStatus[];
  currentGroupPods?: string[];
  readyPodsInCurrentGroup?: number;
  processedPods?: string[];
  message?: string;
  observedGeneration?: number;
  conditions?: Condition[];
  /** Number of groups in the spec. */
  totalGroups?: number;
  /** `<currentIndex + 1>/<totalGroups>` (`n/n` once completed), for printer columns. */
  progress?: string;
  currentGroupName?: string;
  /** Cluster scope `ready/total` of the current group; node scope `done/total nodes`. */
  currentGroupReady?: string;
  /** While the next group waits for the previous one's waitDuration: when it is released. */
  waitingUntil?: string;
  /** Groups released without being Ready, their timeout passed (timeoutPolicy Continue). */
  timedOutGroups?: string[];
}

export interface PodSequence extends KubeObject {
  spec: PodSequenceSpec;
  status?: PodSequenceStatus;
}

export const PHASES: readonly Phase[] = ['Pending', 'InProgress', 'Completed', 'Failed'];
