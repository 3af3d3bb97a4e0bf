/**
 * PodSequence: ordered startup of pod groups through scheduling gates, cluster-wide or per
 * node, in lite mode (gates only) or full mode (plus node taints and a mutating webhook).
 *
 * Wiring, for `troupe run` / `troupe up`:
 *   install `podSequenceCrd` (and wait until it is served) before the manager starts;
 *   for (const c of podSequenceControllers(opts)) mgr.add(c);
 *   full mode: registerPodSequenceWebhooks(mgr, opts) before mgr.start(), then apply
 *   podSequenceWebhookConfiguration({ url, caBundle: mgr.webhooks.caBundle }).
 */

export {
  DEFAULT_GATE,
  GROUP,
  KIND,
  type NodeSequenceStatus,
  PHASES,
  type Phase,
  PLURAL,
  PODSEQUENCE,
  type PodGroup,
  type PodSequence,
  type PodSequenceSpec,
  type PodSequenceStatus,
  RELEASED_BY_ANNOTATION,
  type Scope,
  TAINT_FINALIZER,
  VERSION,
} from '../../apis/scheduling.example.com/v1alpha1.ts';
export {
  CONTROLLER_NAME,
  nodeChangeMatters,
  podChangeMatters,
  podSequenceControllers,
} from './controller.ts';
export {
  type CoreEvent,
  type CoreInput,
  type Decision,
  decide,
  decideReleases,
  type Failure,
  type NodeView,
  type Plan,
  type Release,
  type TaintChange,
} from './core.ts';
export { podSequenceCrd } from './crd.ts';
export { type ExplainInput, explainPod, explainSequence } from './explain.ts';
export { ensurePodSequenceCrd } from './install.ts';
export {
  DEFAULT_OPTIONS,
  type PodSequenceMode,
  type PodSequenceOptions,
  type ResolvedOptions,
  resolveOptions,
} from './options.ts';
export { narrowedTerms, releasePatch } from './release.ts';
export { type ResolvedGroup, type ResolvedSpec, resolveSpec } from './spec.ts';
export { desiredTaints, isSequenceTaint, taintKey, tolerationsFor } from './taints.ts';
export {
  mutateDaemonSet,
  mutatePod,
  podSequenceWebhookConfiguration,
  podSequenceWebhookHandler,
  registerPodSequenceWebhooks,
  WEBHOOK_CONFIGURATION_NAME,
  WEBHOOK_PATH,
  type WebhookConfigurationOptions,
} from './webhook.ts';
