/**
 * Pod groups: gang readiness labels (podgroup-controller) and the PodGroup lifecycle status
 * (PodGroup Status Enhancement) in one controller. See docs/podgroup.md.
 */

import type { ControllerDefinition } from '../../runtime/index.ts';
import { type PodGroupOptions, podGroupController } from './controller.ts';

export {
  AUTO_CREATED_ANNOTATION,
  ConditionTypes,
  type DeadlockPolicy,
  GROUP_ANNOTATION,
  GROUP_LABEL,
  PODGROUP_API_VERSION,
  PODGROUP_GROUP,
  PODGROUP_KIND,
  type PodGroup,
  type PodGroupCondition,
  type PodGroupPhase,
  type PodGroupSpec,
  type PodGroupState,
  type PodGroupStatus,
  READY_LABEL,
  Reasons,
} from '../../apis/scheduling.incubator.k8s.io/v1alpha1.ts';
export {
  DEFAULT_PODGROUP_OPTIONS,
  GROUP_INDEX,
  type PodGroupOptions,
  podGroupController,
} from './controller.ts';
export { type Decision, decide, type GroupInput } from './core.ts';
export { PODGROUP_CRD_PATH, podGroupCrdManifests } from './crd.ts';

/** The controllers of the pod groups capability, for Manager.add. */
export function podGroupControllers(opts: PodGroupOptions = {}): ControllerDefinition[] {
  return [podGroupController(opts)];
}
