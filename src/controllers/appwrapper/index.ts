/**
 * AppWrapper (workload.codeflare.dev/v1beta2): bundles of resources queued and admitted by
 * Kueue as one unit, with upstream AppWrapper 1.2's lifecycle. See docs/appwrapper.md.
 */

import type { ControllerDefinition } from '../../runtime/index.ts';
import { type AppWrapperOptions, appWrapperController } from './controller.ts';

export {
  Annotations,
  type AppWrapper,
  type AppWrapperComponent,
  type AppWrapperComponentStatus,
  type AppWrapperPhase,
  type AppWrapperPodSet,
  type AppWrapperPodSetInfo,
  type AppWrapperSpec,
  type AppWrapperStatus,
  AW_API_VERSION,
  AW_CONTROLLER_NAME,
  AW_FINALIZER,
  AW_GROUP,
  AW_KIND,
  AW_LABEL,
  AW_USERID_LABEL,
  AW_USERNAME_LABEL,
  Conditions,
  Phases,
  PodSetAnnotations,
  QUEUE_NAME_LABEL,
} from '../../apis/workload.codeflare.dev/v1beta2.ts';
export { parseGoDuration } from '../../kube/duration.ts';
export {
  type AppWrapperConfig,
  type AppWrapperConfigInput,
  configFromOperatorFile,
  configFromUpstream,
  DEFAULT_AUTOPILOT,
  DEFAULT_FAULT_TOLERANCE,
  DEFAULT_NAMESPACE_SELECTOR,
  type FaultToleranceOptions,
  resolveConfig,
} from './config.ts';
export { type AppWrapperOptions, AW_OWNER_INDEX, appWrapperController } from './controller.ts';
export { afterDeploy, type CoreInput, type Decision, type DeployResult, decide } from './core.ts';
export { APPWRAPPER_CRD_PATH, appWrapperCrdManifests } from './crd.ts';
export { RenderError, renderComponent } from './inject.ts';
export { expectedPodCount, inferPodSets, initialComponentStatus, validatePodSets } from './podsets.ts';
export {
  appWrapperWebhookConfigurations,
  defaultingHandler,
  MUTATING_PATH,
  registerAppWrapperWebhooks,
  sanitizeLabel,
  VALIDATING_PATH,
  validatingHandler,
  type WebhookClientTarget,
} from './webhook.ts';

/** The controllers of the AppWrapper capability, for Manager.add. */
export function appWrapperControllers(opts: AppWrapperOptions = {}): ControllerDefinition[] {
  return [appWrapperController(opts)];
}
