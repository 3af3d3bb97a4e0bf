/**
 * Pods: pkg/registry/core/pod/strategy.go, ValidatePodCreate/Update/StatusUpdate, the
 * admission plugins every cluster runs on pod create (ServiceAccount's default,
 * DefaultTolerationSeconds, Priority), the binding subresource's rules and the printer.
 *
 * Why one file: the pod strategy, the admission plugins on pod create and the binding rules
 * are read together against upstream's pod/strategy.go and validation.
 */

import { rfc3339 } from '../../../kube/conditions.ts';
import { translateTimestampSince } from '../../../kube/duration.ts';
import { type PodLike, podDisplay, podIP, podQOSClass } from '../../../kube/pod.ts';
import { clone, isObject, semanticEqual } from '../../../lib/json.ts';
import type { FieldError, KubeObject, RequestContext, Strategy, TablePrinter } from '../types.ts';
import {
  AGE_COLUMN,
  arrayOf,
  column,
  type Json,
  keepAllButStatus,
  keepOldStatus,
  NAME_COLUMN,
  recordOf,
  setGenerationOnCreate,
  str,
} from './common.ts';
import { child, dedupe, forbidden, index, invalid, notSupported, required } from './field-errors.ts';
import { mergeAffinityLabelKeys } from './pod-affinity.ts';
import { defaultPodSpec, validatePodSpec, validateTolerations } from './podspec.ts';
import {
  inclusiveRangeError,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidIP,
  nameIsDNSSubdomain,
  validateImmutable,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './validation.ts';

const MAX_INT32 = 2147483647;

export const SCHEDULING_GATED_MESSAGE = 'Scheduling is blocked due to non-empty scheduling gates';

/** Priorities of the two built-in PriorityClasses; any other class name is left to a PriorityClass lookup. */
export const SYSTEM_PRIORITY_CLASSES: Record<string, number> = {
  'system-cluster-critical': 2000000000,
  'system-node-critical': 2000001000,
};

function podSpec(obj: KubeObject): Json {
  if (!isObject(obj.spec)) obj.spec = {};
  return obj.spec as Json;
}

/** What the DefaultTolerationSeconds admission plugin appends when a pod tolerates neither taint. */
export function addDefaultTolerations(spec: Json, seconds = 300): void {
  const tolerations = arrayOf(spec.tolerations);
  const tolerates = (taint: string) =>
    tolerations.some((t) => (t.key === taint || !t.key) && (t.effect === 'NoExecute' || !t.effect));
  const out = [...tolerations];
  for (const taint of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
    if (!tolerates(taint))
      out.push({ key: taint, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds });
  }
  spec.tolerations = out;
}

/** The admission plugins a default cluster runs on pod create, in their order. */
export function admitPodCreate(pod: KubeObject): void {
  const spec = podSpec(pod);
  // ServiceAccount admission.
  if (!spec.serviceAccountName) spec.serviceAccountName = 'default';
  spec.serviceAccount = spec.serviceAccountName;
  addDefaultTolerations(spec);
  // Priority admission: no class means the (absent) global default, priority 0.
  const className = str(spec.priorityClassName);
  if (spec.priority == null) {
    if (!className) spec.priority = 0;
    else if (className in SYSTEM_PRIORITY_CLASSES) spec.priority = SYSTEM_PRIORITY_CLASSES[className];
  }
  if (spec.priority != null) spec.preemptionPolicy ??= 'PreemptLowerPriority';
}

/**
 * The same plugins on a pod update of the main resource, each as it treats UPDATE:
 * DefaultTolerationSeconds adds its tolerations on every write (only additions, which update
 * validation allows), Priority keeps the priority and preemptionPolicy the pod was created with
 * (plugin/pkg/admission/priority/admission.go), and ServiceAccount mutates on create only.
 * So the manifest a pod was created from can be sent again (`kubectl replace -f`).
 */
export function admitPodUpdate(pod: KubeObject, old: KubeObject): void {
  const spec = podSpec(pod);
  const oldSpec = recordOf(old.spec);
  addDefaultTolerations(spec);
  if (oldSpec.priority === undefined) delete spec.priority;
  else spec.priority = oldSpec.priority;
  if (oldSpec.preemptionPolicy === undefined) delete spec.preemptionPolicy;
  else spec.preemptionPolicy = oldSpec.preemptionPolicy;
}

/** podutil.UpdatePodCondition: replaces the condition, keeping lastTransitionTime when status is unchanged. */
export function updatePodCondition(status: Json, condition: Json, now: Date): boolean {
  const conditions = arrayOf(status.conditions);
  const next: Json = { lastProbeTime: null, ...condition, lastTransitionTime: rfc3339(now) };
  const i = conditions.findIndex((c) => c.type === condition.type);
  if (i < 0) {
    status.conditions = [...conditions, next];
    return true;
  }
  const old = conditions[i]!;
  if (old.status === next.status) next.lastTransitionTime = old.lastTransitionTime;
  const changed =
    old.status !== next.status ||
    (old.reason ?? '') !== (next.reason ?? '') ||
    (old.message ?? '') !== (next.message ?? '') ||
    old.lastTransitionTime !== next.lastTransitionTime;
  conditions[i] = next;
  status.conditions = conditions;
  return changed;
}

function preparePodForCreate(obj: KubeObject, now: Date): void {
  setGenerationOnCreate(obj);
  admitPodCreate(obj);
  const status: Json = { phase: 'Pending', qosClass: podQOSClass(obj as PodLike) };
  obj.status = status;
  if (arrayOf(podSpec(obj).schedulingGates).length > 0) {
    updatePodCondition(
      status,
      { type: 'PodScheduled', status: 'False', reason: 'SchedulingGated', message: SCHEDULING_GATED_MESSAGE },
      now,
    );
  }
  mergeAffinityLabelKeys(obj);
}

function preparePodForUpdate(obj: KubeObject, old: KubeObject, ctx: RequestContext): void {
  if (ctx.subresource === 'status') {
    keepAllButStatus(obj, old, 'pod');
    const status = recordOf(obj.status);
    const oldStatus = recordOf(old.status);
    // QoS is fixed at creation; old kubelets dropped it, so it is backfilled.
    if (!status.qosClass && oldStatus.qosClass) {
      status.qosClass = oldStatus.qosClass;
      obj.status = status;
    }
    if (status.observedGeneration == null && oldStatus.observedGeneration != null) {
      status.observedGeneration = oldStatus.observedGeneration;
    }
    return;
  }
  // pods/ephemeralcontainers changes the list only (dropNonEphemeralContainerUpdates), with
  // its containers defaulted as the decoder defaults the Pod it reads.
  if (ctx.subresource === 'ephemeralcontainers') {
    const list = recordOf(obj.spec).ephemeralContainers;
    const meta = obj.metadata;
    Object.assign(obj, clone(old));
    obj.metadata = { ...obj.metadata, resourceVersion: meta.resourceVersion };
    const spec = recordOf(obj.spec);
    if (list === undefined) delete spec.ephemeralContainers;
    else spec.ephemeralContainers = list;
    obj.spec = spec;
    defaultPodSpec({ ephemeralContainers: spec.ephemeralContainers }, true);
    return;
  }
  // pods/binding (and other pod subresources) write status themselves.
  if (ctx.subresource === '') {
    admitPodUpdate(obj, old);
    keepOldStatus(obj, old);
  }
}

export function validatePodCreate(obj: KubeObject): FieldError[] {
  const spec = recordOf(obj.spec);
  const errs = [
    ...validateObjectMeta(obj.metadata, true, nameIsDNSSubdomain),
    ...validatePodSpec(spec, 'spec', { isPod: true }),
  ];
  if (arrayOf(spec.ephemeralContainers).length > 0)
    errs.push(forbidden('spec.ephemeralContainers', 'cannot be set on create'));
  if (str(spec.nodeName) && arrayOf(spec.schedulingGates).length > 0) {
    errs.push(forbidden('spec.nodeName', 'cannot be set until all schedulingGates have been cleared'));
  }
  return dedupe(errs);
}

export const UPDATABLE_POD_SPEC_FIELDS = [
  '`spec.containers[*].image`',
  '`spec.initContainers[*].image`',
  '`spec.activeDeadlineSeconds`',
  '`spec.tolerations` (only additions to existing tolerations)',
  '`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
];

function validateContainerUpdates(
  next: unknown,
  prev: unknown,
  path: string,
): { errs: FieldError[]; stop: boolean } {
  const n = arrayOf(next);
  const o = arrayOf(prev);
  if (n.length !== o.length)
    return { errs: [forbidden(path, 'pod updates may not add or remove containers')], stop: true };
  const errs: FieldError[] = [];
  n.forEach((c, i) => {
    const image = str(c.image);
    if (!image) errs.push(required(child(index(path, i), 'image')));
    if (image.trim() !== image)
      errs.push(
        invalid(child(index(path, i), 'image'), image, 'must not have leading or trailing whitespace'),
      );
  });
  return { errs, stop: false };
}

/** A toleration's identity for the "only additions" rule: everything but tolerationSeconds. */
function tolerationKey(t: Json): string {
  return JSON.stringify([str(t.key), str(t.operator), str(t.value), str(t.effect)]);
}

function validateOnlyAddedTolerations(next: unknown, prev: unknown, path: string): FieldError[] {
  const nextKeys = new Set(arrayOf(next).map(tolerationKey));
  for (const t of arrayOf(prev)) {
    if (!nextKeys.has(tolerationKey(t)))
      return [forbidden(path, 'existing toleration can not be modified except its tolerationSeconds')];
  }
  return validateTolerations(next, path);
}

function validateOnlyDeletedSchedulingGates(next: unknown, prev: unknown, path: string): FieldError[] {
  const oldNames = new Set(arrayOf(prev).map((g) => str(g.name)));
  const added = new Map<string, number>();
  arrayOf(next).forEach((g, i) => {
    if (!oldNames.has(str(g.name))) added.set(str(g.name), i);
  });
  return [...added].map(([name, i]) =>
    forbidden(
      child(index(path, i), 'name'),
      `only deletion is allowed, but found new scheduling gate '${name}'`,
    ),
  );
}

function validateNodeSelectorMutation(next: unknown, prev: unknown, path: string): FieldError[] {
  const n = recordOf(next);
  for (const [k, v] of Object.entries(recordOf(prev))) {
    if (!(k in n) || n[k] !== v) {
      return [
        invalid(
          path,
          next ?? null,
          'only additions to spec.nodeSelector are allowed (no mutations or deletions)',
        ),
      ];
    }
  }
  return [];
}

function termHasOnlyAdditions(next: Json, prev: Json): boolean {
  const oldExprs = arrayOf(prev.matchExpressions);
  const oldFields = arrayOf(prev.matchFields);
  const newExprs = arrayOf(next.matchExpressions);
  const newFields = arrayOf(next.matchFields);
  if (oldExprs.length === 0 && oldFields.length === 0 && (newExprs.length > 0 || newFields.length > 0))
    return false;
  if (
    oldExprs.length > 0 &&
    (newExprs.length < oldExprs.length || !semanticEqual(newExprs.slice(0, oldExprs.length), oldExprs))
  ) {
    return false;
  }
  if (
    oldFields.length > 0 &&
    (newFields.length < oldFields.length || !semanticEqual(newFields.slice(0, oldFields.length), oldFields))
  ) {
    return false;
  }
  return true;
}

/** KEP-3838: a gated pod's required node affinity may only be narrowed. */
function validateNodeAffinityMutation(next: unknown, prev: unknown, path: string): FieldError[] {
  const oldRequired = recordOf(prev).requiredDuringSchedulingIgnoredDuringExecution;
  if (prev == null || oldRequired == null) return [];
  const oldTerms = arrayOf(recordOf(oldRequired).nodeSelectorTerms);
  const newTerms = arrayOf(
    recordOf(recordOf(next).requiredDuringSchedulingIgnoredDuringExecution).nodeSelectorTerms,
  );
  const termsPath = child(child(path, 'requiredDuringSchedulingIgnoredDuringExecution'), 'nodeSelectorTerms');
  if (oldTerms.length > 0 && oldTerms.length !== newTerms.length) {
    return [
      invalid(termsPath, newTerms, 'no additions/deletions to non-empty NodeSelectorTerms list are allowed'),
    ];
  }
  const errs: FieldError[] = [];
  oldTerms.forEach((t, i) => {
    if (!termHasOnlyAdditions(newTerms[i] ?? {}, t)) {
      errs.push(
        invalid(
          index(termsPath, i),
          newTerms[i] ?? null,
          'only additions are allowed (no mutations or deletions)',
        ),
      );
    }
  });
  return errs;
}

/** A short old/new listing of what differs, standing in for the Go cmp.Diff kube appends. */
export function specDiff(prev: unknown, next: unknown, path = ''): string[] {
  if (semanticEqual(prev, next)) return [];
  if (isObject(prev) && isObject(next)) {
    const keys = [...new Set([...Object.keys(prev), ...Object.keys(next)])].sort();
    return keys.flatMap((k) => specDiff(prev[k], next[k], path ? `${path}.${k}` : k));
  }
  if (Array.isArray(prev) && Array.isArray(next) && prev.length === next.length) {
    return prev.flatMap((v, i) => specDiff(v, next[i], `${path}[${i}]`));
  }
  return [`- \t${path}: ${JSON.stringify(prev ?? null)}`, `+ \t${path}: ${JSON.stringify(next ?? null)}`];
}

/** ValidatePodUpdate: what a user may change on an existing pod, with kube's messages. */
export function validatePodUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const spec = recordOf(obj.spec);
  const oldSpec = recordOf(old.spec);
  const errs = [
    ...validateObjectMetaUpdate(obj.metadata, old.metadata),
    ...validateObjectMeta(obj.metadata, true, nameIsDNSSubdomain),
    ...validatePodSpec(spec, 'spec', { isPod: true }),
  ];
  for (const list of ['containers', 'initContainers']) {
    const r = validateContainerUpdates(spec[list], oldSpec[list], `spec.${list}`);
    errs.push(...r.errs);
    if (r.stop) return dedupe(errs);
  }
  const ads = spec.activeDeadlineSeconds;
  if (ads != null) {
    if (typeof ads !== 'number' || ads < 0 || ads > MAX_INT32) {
      errs.push(invalid('spec.activeDeadlineSeconds', ads, inclusiveRangeError(0, MAX_INT32)));
      return dedupe(errs);
    }
    if (typeof oldSpec.activeDeadlineSeconds === 'number' && oldSpec.activeDeadlineSeconds < ads) {
      errs.push(invalid('spec.activeDeadlineSeconds', ads, 'must be less than or equal to previous value'));
      return dedupe(errs);
    }
  } else if (oldSpec.activeDeadlineSeconds != null) {
    errs.push(
      invalid('spec.activeDeadlineSeconds', null, 'must not update from a positive integer to nil value'),
    );
  }
  errs.push(...validateOnlyAddedTolerations(spec.tolerations, oldSpec.tolerations, 'spec.tolerations'));
  errs.push(
    ...validateOnlyDeletedSchedulingGates(
      spec.schedulingGates,
      oldSpec.schedulingGates,
      'spec.schedulingGates',
    ),
  );
  if (semanticEqual(spec, oldSpec)) return dedupe(errs);

  const munged = clone(spec);
  for (const list of ['containers', 'initContainers']) {
    const olds = arrayOf(oldSpec[list]);
    arrayOf(munged[list]).forEach((c, i) => {
      c.image = olds[i]?.image;
    });
  }
  munged.activeDeadlineSeconds = oldSpec.activeDeadlineSeconds;
  munged.schedulingGates = clone(oldSpec.schedulingGates);
  munged.tolerations = clone(oldSpec.tolerations);
  if (
    typeof oldSpec.terminationGracePeriodSeconds === 'number' &&
    oldSpec.terminationGracePeriodSeconds < 0 &&
    munged.terminationGracePeriodSeconds === 1
  ) {
    munged.terminationGracePeriodSeconds = oldSpec.terminationGracePeriodSeconds;
  }

  if (arrayOf(oldSpec.schedulingGates).length > 0) {
    if (!semanticEqual(munged.nodeSelector, oldSpec.nodeSelector)) {
      errs.push(
        ...validateNodeSelectorMutation(munged.nodeSelector, oldSpec.nodeSelector, 'spec.nodeSelector'),
      );
      munged.nodeSelector = clone(oldSpec.nodeSelector);
    }
    const oldNA = recordOf(oldSpec.affinity).nodeAffinity;
    const mungedAffinity = isObject(munged.affinity) ? munged.affinity : undefined;
    const mungedNA = mungedAffinity?.nodeAffinity;
    if (!semanticEqual(oldNA, mungedNA)) {
      errs.push(...validateNodeAffinityMutation(mungedNA, oldNA, 'spec.affinity.nodeAffinity'));
      if (!mungedAffinity && oldNA == null) {
        // nothing to restore
      } else if (!mungedAffinity) {
        munged.affinity = { nodeAffinity: clone(oldNA) };
      } else if (
        oldSpec.affinity == null &&
        mungedAffinity.podAffinity == null &&
        mungedAffinity.podAntiAffinity == null
      ) {
        delete munged.affinity;
      } else if (oldNA == null) {
        delete mungedAffinity.nodeAffinity;
      } else {
        mungedAffinity.nodeAffinity = clone(oldNA);
      }
    }
  }

  if (!semanticEqual(munged, oldSpec)) {
    const diff = ['  core.PodSpec{', ...specDiff(oldSpec, munged), '  }'].join('\n');
    errs.push(
      forbidden(
        'spec',
        `pod updates may not change fields other than ${UPDATABLE_POD_SPEC_FIELDS.join(',')}\n${diff}`,
      ),
    );
  }
  return dedupe(errs);
}

const SYSTEM_POD_CONDITIONS = new Set(['PodScheduled', 'Ready', 'Initialized']);

function validateContainerStateTransitions(
  next: unknown,
  prev: unknown,
  path: string,
  restartPolicy: string,
  inits?: Json[],
): FieldError[] {
  if (restartPolicy === 'Always') return [];
  const errs: FieldError[] = [];
  arrayOf(prev).forEach((o, i) => {
    const terminated = recordOf(o.state).terminated;
    if (!isObject(terminated)) return;
    if ((terminated.exitCode ?? 0) !== 0 && restartPolicy === 'OnFailure') return;
    if (inits?.find((c) => c.name === o.name)?.restartPolicy === 'Always') return;
    for (const n of arrayOf(next)) {
      if (n.name === o.name && !isObject(recordOf(n.state).terminated)) {
        errs.push(
          forbidden(child(index(path, i), 'state'), 'may not be transitioned to non-terminated state'),
        );
      }
    }
  });
  return errs;
}

/** ValidatePodStatusUpdate. */
/** ValidatePodEphemeralContainersUpdate: existing ephemeral containers stay as they are. */
export function validateEphemeralContainersUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const errs = [
    ...validateObjectMetaUpdate(obj.metadata, old.metadata),
    ...validateObjectMeta(obj.metadata, true, nameIsDNSSubdomain),
    ...validatePodSpec(recordOf(obj.spec), 'spec', { isPod: true }),
  ];
  if (old.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined)
    return [forbidden('', 'static pods do not support ephemeral containers')];
  const next = new Map(arrayOf(recordOf(obj.spec).ephemeralContainers).map((c) => [str(c.name), c]));
  for (const c of arrayOf(recordOf(old.spec).ephemeralContainers)) {
    const now = next.get(str(c.name));
    if (!now) {
      errs.push(
        forbidden(
          'spec.ephemeralContainers',
          `existing ephemeral containers "${str(c.name)}" may not be removed\n`,
        ),
      );
    } else if (!semanticEqual(c, now)) {
      errs.push(
        forbidden(
          'spec.ephemeralContainers',
          `existing ephemeral containers "${str(c.name)}" may not be changed\n`,
        ),
      );
    }
  }
  return dedupe(errs);
}

export function validatePodStatusUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateObjectMetaUpdate(obj.metadata, old.metadata);
  const status = recordOf(obj.status);
  const oldStatus = recordOf(old.status);
  arrayOf(status.conditions).forEach((c, i) => {
    const type = str(c.type);
    if (SYSTEM_POD_CONDITIONS.has(type)) return;
    // kube-apiserver reports these under metadata.conditions; kept for fidelity.
    for (const m of isQualifiedName(type))
      errs.push(invalid(child(index('metadata.conditions', i), 'Type'), type, m));
  });
  if (str(recordOf(obj.spec).nodeName) !== str(recordOf(old.spec).nodeName)) {
    errs.push(forbidden('status.nodeName', 'may not be changed directly'));
  }
  const nominated = str(status.nominatedNodeName);
  if (nominated && nominated !== str(oldStatus.nominatedNodeName)) {
    for (const m of isDNS1123Subdomain(nominated))
      errs.push(invalid('status.nominatedNodeName', nominated, m));
  }
  errs.push(...validateImmutable(str(status.qosClass), str(oldStatus.qosClass), 'status.qosClass'));
  const restartPolicy = str(recordOf(old.spec).restartPolicy);
  errs.push(
    ...validateContainerStateTransitions(
      status.containerStatuses,
      oldStatus.containerStatuses,
      'status.containerStatuses',
      restartPolicy,
    ),
  );
  errs.push(
    ...validateContainerStateTransitions(
      status.initContainerStatuses,
      oldStatus.initContainerStatuses,
      'status.initContainerStatuses',
      restartPolicy,
      arrayOf(recordOf(old.spec).initContainers),
    ),
  );
  arrayOf(status.podIPs).forEach((p, i) => {
    if (!isValidIP(str(p.ip)))
      errs.push(
        invalid(
          index('status.podIPs', i),
          p.ip ?? '',
          'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
        ),
      );
  });
  return dedupe(errs);
}

// ---------------------------------------------------------------- binding

/** ValidatePodBinding for a v1 Binding body. */
export function validateBinding(binding: Json): FieldError[] {
  const errs: FieldError[] = [];
  const target = recordOf(binding.target);
  if (target.kind && target.kind !== 'Node')
    errs.push(notSupported('target.kind', target.kind, ['Node', '<empty>']));
  if (!target.name) errs.push(required('target.name'));
  return errs;
}

export interface BindResult {
  /** HTTP status kube-apiserver answers with when the bind is refused. */
  code?: 409 | 500;
  error?: string;
}

/**
 * Applies a Binding to the stored pod in place, as BindingREST's assignPod does: refused for
 * deleting, already-bound or still-gated pods; otherwise sets spec.nodeName, merges the
 * binding's annotations and sets PodScheduled=True.
 */
export function bindPod(pod: KubeObject, binding: Json, now: Date = new Date()): BindResult {
  const name = pod.metadata?.name ?? '';
  const meta = recordOf(binding.metadata);
  if (pod.metadata?.deletionTimestamp)
    return { code: 500, error: `pod ${name} is being deleted, cannot be assigned to a host` };
  if (meta.uid && meta.uid !== pod.metadata?.uid) {
    return {
      code: 409,
      error: `the UID in the binding (${meta.uid}) does not match the UID in the pod (${pod.metadata?.uid ?? ''})`,
    };
  }
  if (meta.resourceVersion && meta.resourceVersion !== pod.metadata?.resourceVersion) {
    return {
      code: 409,
      error: `the resourceVersion in the binding (${meta.resourceVersion}) does not match the pod (${pod.metadata?.resourceVersion ?? ''})`,
    };
  }
  const spec = podSpec(pod);
  if (str(spec.nodeName))
    return { code: 409, error: `pod ${name} is already assigned to node "${spec.nodeName}"` };
  if (arrayOf(spec.schedulingGates).length > 0)
    return { code: 409, error: `pod ${name} has non-empty .spec.schedulingGates` };
  spec.nodeName = str(recordOf(binding.target).name);
  const annotations = recordOf(meta.annotations);
  if (Object.keys(annotations).length > 0) {
    pod.metadata.annotations = {
      ...(pod.metadata.annotations ?? {}),
      ...(annotations as Record<string, string>),
    };
  }
  if (!isObject(pod.status)) pod.status = {};
  updatePodCondition(pod.status as Json, { type: 'PodScheduled', status: 'True' }, now);
  return {};
}

// ---------------------------------------------------------------- strategy

export function podSelectableFields(obj: KubeObject): Record<string, string> {
  const spec = recordOf(obj.spec);
  const status = recordOf(obj.status);
  return {
    'spec.nodeName': str(spec.nodeName),
    'spec.restartPolicy': str(spec.restartPolicy),
    'spec.schedulerName': str(spec.schedulerName),
    'spec.serviceAccountName': str(spec.serviceAccountName),
    'spec.hostNetwork': String(spec.hostNetwork === true),
    'status.phase': str(status.phase),
    'status.podIP': str(arrayOf(status.podIPs)[0]?.ip),
    'status.nominatedNodeName': str(status.nominatedNodeName),
  };
}

export const podTable: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Ready', 'string', {
      description: 'The aggregate readiness state of this pod for accepting traffic.',
    }),
    column('Status', 'string', { description: 'The aggregate status of the containers in this pod.' }),
    column('Restarts', 'string', {
      description:
        'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
    }),
    AGE_COLUMN,
    column('IP', 'string', {
      priority: 1,
      description:
        'podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.',
    }),
    column('Node', 'string', {
      priority: 1,
      description: 'NodeName indicates in which node this pod is scheduled.',
    }),
    column('Nominated Node', 'string', {
      priority: 1,
      description: 'nominatedNodeName is set only when this pod preempts other pods on the node.',
    }),
    column('Readiness Gates', 'string', {
      priority: 1,
      description: 'If specified, all readiness gates will be evaluated for pod readiness.',
    }),
  ],
  cells(obj, now) {
    const pod = obj as PodLike;
    const d = podDisplay(pod);
    const restarts =
      d.restarts !== 0 && d.lastRestart
        ? `${d.restarts} (${translateTimestampSince(d.lastRestart, now)} ago)`
        : String(d.restarts);
    const gates = arrayOf(recordOf(obj.spec).readinessGates);
    let readinessGates = '<none>';
    if (gates.length > 0) {
      const conditions = arrayOf(recordOf(obj.status).conditions);
      const trueCount = gates.filter(
        (g) => conditions.find((c) => c.type === g.conditionType)?.status === 'True',
      ).length;
      readinessGates = `${trueCount}/${gates.length}`;
    }
    return [
      obj.metadata?.name ?? '',
      `${d.ready}/${d.total}`,
      d.status,
      restarts,
      translateTimestampSince(obj.metadata?.creationTimestamp, now),
      podIP(pod) || '<none>',
      str(recordOf(obj.spec).nodeName) || '<none>',
      str(recordOf(obj.status).nominatedNodeName) || '<none>',
      readinessGates,
    ];
  },
};

/** `now` is injectable for tests; the server uses the wall clock. */
export function podStrategy(clock: () => Date = () => new Date()): Strategy {
  return {
    default(obj) {
      defaultPodSpec(podSpec(obj), true);
    },
    prepareForCreate(obj) {
      preparePodForCreate(obj, clock());
    },
    prepareForUpdate(obj, old, ctx) {
      preparePodForUpdate(obj, old, ctx);
    },
    validateCreate(obj) {
      return validatePodCreate(obj);
    },
    validateUpdate(obj, old, ctx) {
      if (ctx.subresource === 'status') return validatePodStatusUpdate(obj, old);
      if (ctx.subresource === '') return validatePodUpdate(obj, old);
      if (ctx.subresource === 'ephemeralcontainers') return validateEphemeralContainersUpdate(obj, old);
      // pods/binding: the binding rules are enforced by the caller (see bindPod).
      return validateObjectMetaUpdate(obj.metadata, old.metadata);
    },
    selectableFields: podSelectableFields,
    tracksGeneration: true,
    table: podTable,
  };
}
