/**
 * SetDefaults_* functions of the pkg/apis/<group>/v1/defaults.go files for the Go types whose
 * kinds have no strategy of their own here, keyed by Go type. As defaulter-gen's generated
 * SetObjectDefaults_* do, each runs wherever its type occurs in an object (a MatchResources in a
 * policy and in its binding, a PersistentVolumeClaimSpec in a claim and in a StatefulSet's
 * claim templates), before the type's `+default=` markers and the types inside it.
 * The kinds with strategies (Pods, workloads, Services, ...) default in their own files.
 */

import { isObject } from '../../../lib/json.ts';
import { arrayOf, ensureRecord, type Json } from './common.ts';
import { defaultPodTemplate } from './podspec.ts';

const CORE = 'io.k8s.api.core.v1.';
const ADMISSION = 'io.k8s.api.admissionregistration.v1.';

/** SetDefaults_Rule: a rule's scope is `*` (embedded in the rule types, so set on them). */
function defaultRuleScope(o: Json): void {
  o.scope ??= '*';
}

/** SetDefaults_ValidatingWebhook / SetDefaults_MutatingWebhook. */
function defaultWebhook(o: Json, mutating: boolean): void {
  o.failurePolicy ??= 'Fail';
  o.matchPolicy ??= 'Equivalent';
  o.namespaceSelector ??= {};
  o.objectSelector ??= {};
  o.sideEffects ??= 'Unknown';
  o.timeoutSeconds ??= 30;
  if (mutating) o.reinvocationPolicy ??= 'Never';
  if (arrayOf(o.admissionReviewVersions).length === 0) o.admissionReviewVersions = ['v1'];
}

export const SET_DEFAULTS: Record<string, (o: Json) => void> = {
  // pkg/apis/core/v1/defaults.go
  [`${CORE}PersistentVolume`]: (o) => {
    const spec = ensureRecord(o, 'spec');
    spec.persistentVolumeReclaimPolicy ||= 'Retain';
    spec.volumeMode ??= 'Filesystem';
    ensureRecord(o, 'status').phase ||= 'Pending';
  },
  [`${CORE}PersistentVolumeClaim`]: (o) => {
    ensureRecord(o, 'status').phase ||= 'Pending';
  },
  [`${CORE}PersistentVolumeClaimSpec`]: (o) => {
    o.volumeMode ??= 'Filesystem';
  },
  [`${CORE}ReplicationController`]: (o) => {
    const spec = ensureRecord(o, 'spec');
    const template = isObject(spec.template) ? spec.template : undefined;
    const labels = template && isObject(template.metadata) ? template.metadata.labels : undefined;
    if (isObject(labels)) {
      if (!isObject(spec.selector) || Object.keys(spec.selector).length === 0) spec.selector = { ...labels };
      const meta = ensureRecord(o, 'metadata');
      if (!isObject(meta.labels) || Object.keys(meta.labels).length === 0) meta.labels = { ...labels };
    }
    spec.replicas ??= 1;
    if (template) defaultPodTemplate(template);
  },
  [`${CORE}PodTemplate`]: (o) => {
    if (isObject(o.template)) defaultPodTemplate(o.template);
  },
  [`${CORE}LimitRangeItem`]: (o) => {
    if (o.type !== 'Container') return;
    const def = ensureRecord(o, 'default');
    const defReq = ensureRecord(o, 'defaultRequest');
    for (const [k, v] of Object.entries(isObject(o.max) ? o.max : {})) if (!(k in def)) def[k] = v;
    for (const [k, v] of Object.entries(def)) if (!(k in defReq)) defReq[k] = v;
    for (const [k, v] of Object.entries(isObject(o.min) ? o.min : {})) if (!(k in defReq)) defReq[k] = v;
  },
  // pkg/apis/batch/v1/defaults.go (the job template's pod spec as SetObjectDefaults_CronJob)
  'io.k8s.api.batch.v1.CronJob': (o) => {
    const spec = ensureRecord(o, 'spec');
    spec.concurrencyPolicy ||= 'Allow';
    spec.suspend ??= false;
    spec.successfulJobsHistoryLimit ??= 3;
    spec.failedJobsHistoryLimit ??= 1;
    const jobSpec = isObject(spec.jobTemplate) ? spec.jobTemplate.spec : undefined;
    if (isObject(jobSpec) && isObject(jobSpec.template)) defaultPodTemplate(jobSpec.template);
  },
  // pkg/apis/storage/v1/defaults.go (CSIVolumeFSGroupPolicy and CSIInlineVolume are GA)
  'io.k8s.api.storage.v1.StorageClass': (o) => {
    o.reclaimPolicy ??= 'Delete';
    o.volumeBindingMode ??= 'Immediate';
  },
  'io.k8s.api.storage.v1.CSIDriverSpec': (o) => {
    o.attachRequired ??= true;
    o.podInfoOnMount ??= false;
    o.storageCapacity ??= false;
    o.fsGroupPolicy ??= 'ReadWriteOnceWithFSType';
    if (arrayOf(o.volumeLifecycleModes).length === 0) o.volumeLifecycleModes = ['Persistent'];
    o.requiresRepublish ??= false;
  },
  // pkg/apis/scheduling/v1/defaults.go
  'io.k8s.api.scheduling.v1.PriorityClass': (o) => {
    o.preemptionPolicy ??= 'PreemptLowerPriority';
  },
  // pkg/apis/networking/v1/defaults.go
  'io.k8s.api.networking.v1.NetworkPolicyPort': (o) => {
    o.protocol ??= 'TCP';
  },
  'io.k8s.api.networking.v1.NetworkPolicy': (o) => {
    const spec = ensureRecord(o, 'spec');
    if (arrayOf(spec.policyTypes).length === 0) {
      spec.policyTypes = arrayOf(spec.egress).length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
    }
  },
  'io.k8s.api.networking.v1.IngressClassParametersReference': (o) => {
    o.scope ??= 'Cluster';
  },
  // pkg/apis/discovery/v1/defaults.go
  'io.k8s.api.discovery.v1.EndpointPort': (o) => {
    o.name ??= '';
    o.protocol ??= 'TCP';
  },
  // pkg/apis/flowcontrol/v1/defaults.go (nominalConcurrencyShares is a pointer in v1: nil only)
  'io.k8s.api.flowcontrol.v1.FlowSchemaSpec': (o) => {
    o.matchingPrecedence ||= 1000;
  },
  'io.k8s.api.flowcontrol.v1.ExemptPriorityLevelConfiguration': (o) => {
    o.nominalConcurrencyShares ??= 0;
    o.lendablePercent ??= 0;
  },
  'io.k8s.api.flowcontrol.v1.LimitedPriorityLevelConfiguration': (o) => {
    o.nominalConcurrencyShares ??= 30;
    o.lendablePercent ??= 0;
  },
  'io.k8s.api.flowcontrol.v1.QueuingConfiguration': (o) => {
    o.handSize ||= 8;
    o.queues ||= 64;
    o.queueLengthLimit ||= 50;
  },
  // pkg/apis/admissionregistration/v1/defaults.go
  [`${ADMISSION}ValidatingAdmissionPolicySpec`]: (o) => {
    o.failurePolicy ??= 'Fail';
  },
  [`${ADMISSION}MatchResources`]: (o) => {
    o.matchPolicy ??= 'Equivalent';
    o.namespaceSelector ??= {};
    o.objectSelector ??= {};
  },
  [`${ADMISSION}ParamRef`]: (o) => {
    o.parameterNotFoundAction ??= 'Deny';
  },
  [`${ADMISSION}RuleWithOperations`]: defaultRuleScope,
  [`${ADMISSION}NamedRuleWithOperations`]: defaultRuleScope,
  [`${ADMISSION}ValidatingWebhook`]: (o) => defaultWebhook(o, false),
  [`${ADMISSION}MutatingWebhook`]: (o) => defaultWebhook(o, true),
  [`${ADMISSION}ServiceReference`]: (o) => {
    o.port ??= 443;
  },
};
