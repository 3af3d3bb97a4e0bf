/**
 * The AppWrapper lifecycle as pure functions: an observed AppWrapper (plus, when the phase
 * needs them, its components and pods) and the time in; the status to write, the objects to
 * create or delete, the events to record and when to look again out. It follows upstream
 * AppWrapper 1.2's state machine phase by phase:
 *
 *   Empty → Suspended ⇄ Resuming → Running → Succeeded
 *                 ↑         ↑         ↓ (failure within the retry limit)
 *            Suspending  Resetting ←──┘            Running/Resuming → Failed
 *   (deletion of a finalized AppWrapper: Terminating, then the finalizer goes)
 */

import { setCondition } from '../../kube/conditions.ts';
import { labelSelectorMatches } from '../../kube/labels.ts';
import { getControllerOf, type KubeObject } from '../../runtime/index.ts';
import {
  Annotations,
  type AppWrapper,
  type AppWrapperComponentStatus,
  type AppWrapperPhase,
  type AppWrapperStatus,
  AW_CONTROLLER_NAME,
  AW_FINALIZER,
  type AwCondition,
  Conditions,
  Phases,
  type PodObject,
  QUEUE_NAME_LABEL,
} from './api.ts';
import { type AppWrapperConfig, type Effective, effective } from './config.ts';
import { formatGoDuration } from '../../kube/duration.ts';
import { RenderError, renderComponent } from './inject.ts';
import { expectedPodCount, initialComponentStatus } from './podsets.ts';

/** Upstream's fixed intervals. */
export const DELETION_POLL_MS = 5000;
export const CREATE_RETRY_MS = 1000;
export const WARMUP_POLL_MS = 5000;
export const READY_RECHECK_MS = 60_000;

export interface CoreInput {
  aw: AppWrapper;
  now: Date;
  config: AppWrapperConfig;
  /** The live components, aligned with status.componentStatus (undefined: absent). */
  components?: (KubeObject | undefined)[];
  /** Pods labelled with the AppWrapper. */
  pods?: PodObject[];
  /** Labels of the AppWrapper's namespace (phase Empty without webhook only). */
  namespaceLabels?: Record<string, string>;
}

export interface DeleteAction {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  /** Preconditions: only this incarnation. */
  uid?: string;
  /** 0 for forceful deletion. */
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Background';
  /** Set for components (not for pods). */
  componentIndex?: number;
}

export interface EventSpec {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface DeployItem {
  index: number;
  obj: KubeObject;
}

export interface Decision {
  /** Metadata/spec changes written (merge patch) before the status. */
  update?: { finalizers?: string[]; labels?: Record<string, string>; suspend?: boolean };
  /** The whole new status, when it differs from the observed one. */
  status?: AppWrapperStatus;
  /** A failed status write is not an error (upstream's best-effort Terminating patch). */
  statusBestEffort?: boolean;
  /** Phase Resuming: objects to create, in order, once `status` is written. */
  deploy?: DeployItem[];
  deletes: DeleteAction[];
  /** Drop the finalizer once the rest is done. */
  removeFinalizer?: boolean;
  events: EventSpec[];
  requeueAfterMs?: number;
  /** Malformed annotations, for the log. */
  problems: { annotation: string; value: string }[];
}

export type DeployResult =
  | { index: number; outcome: 'created'; name: string }
  | { index: number; outcome: 'exists'; controlledByUs: boolean }
  | { index: number; outcome: 'failed'; message: string; fatal: boolean };

// ---- helpers ---------------------------------------------------------------

function findCond(conds: AwCondition[] | undefined, type: string): AwCondition | undefined {
  return conds?.find((c) => c.type === type);
}

export function isTrue(conds: AwCondition[] | undefined, type: string): boolean {
  return findCond(conds, type)?.status === 'True';
}

function ltt(conds: AwCondition[] | undefined, type: string): number {
  const t = Date.parse(findCond(conds, type)?.lastTransitionTime ?? '');
  return Number.isFinite(t) ? t : 0;
}

class Draft {
  readonly status: AppWrapperStatus;
  private readonly now: Date;

  constructor(observed: AppWrapperStatus | undefined, now: Date) {
    this.status = structuredClone(observed ?? {});
    this.now = now;
  }

  get conditions(): AwCondition[] {
    this.status.conditions ??= [];
    return this.status.conditions;
  }

  set(type: string, status: AwCondition['status'], reason: string, message = ''): void {
    setCondition(this.conditions, { type, status, reason, message, lastTransitionTime: '' }, this.now);
  }

  /** Upstream's clearCondition: only a True condition turns False. */
  clear(type: string, reason: string, message = ''): void {
    if (isTrue(this.status.conditions, type)) this.set(type, 'False', reason, message);
  }

  isTrue(type: string): boolean {
    return isTrue(this.status.conditions, type);
  }

  since(type: string): number {
    return ltt(this.status.conditions, type);
  }

  get phase(): AppWrapperPhase {
    return this.status.phase ?? '';
  }

  set phase(p: AppWrapperPhase) {
    this.status.phase = p;
  }
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function finish(d: Decision, draft: Draft, observed: AppWrapperStatus | undefined): Decision {
  if (!sameJson(normalize(draft.status), normalize(observed ?? {}))) d.status = draft.status;
  return d;
}

/** resettingCount 0 is omitted, as Go's omitempty does. */
function normalize(s: AppWrapperStatus): AppWrapperStatus {
  const out = { ...s };
  if (!out.resettingCount) delete out.resettingCount;
  return out;
}

function requeue(d: Decision, ms: number): void {
  const v = Math.max(1, Math.ceil(ms));
  d.requeueAfterMs = d.requeueAfterMs === undefined ? v : Math.min(d.requeueAfterMs, v);
}

function newDecision(eff: Effective): Decision {
  return { deletes: [], events: [], problems: eff.problems };
}

/** True when the AppWrapper belongs to another controller (MultiKueue's managedBy). */
export function managedElsewhere(aw: AppWrapper): boolean {
  const m = aw.spec?.managedBy;
  return m !== undefined && m !== null && m !== '' && m !== AW_CONTROLLER_NAME;
}

/** Whether decide() wants components and pods for this AppWrapper. */
export function needsObservation(aw: AppWrapper): boolean {
  const phase = aw.status?.phase ?? '';
  if (aw.metadata.deletionTimestamp) return true;
  return phase === Phases.Running || isTrue(aw.status?.conditions, Conditions.ResourcesDeployed);
}

/** Whether decide() needs the namespace's labels (no-webhook defaulting of suspend). */
export function needsNamespaceLabels(aw: AppWrapper, config: AppWrapperConfig): boolean {
  return (
    !aw.metadata.deletionTimestamp &&
    (aw.status?.phase ?? '') === Phases.Empty &&
    !(aw.metadata.finalizers ?? []).includes(AW_FINALIZER) &&
    config.enableKueueIntegrations &&
    config.manageJobsWithoutQueueName &&
    config.manageJobsNamespaceSelector !== undefined
  );
}

/** Kueue's WorkloadShouldBeSuspended for an AppWrapper (which has no Kueue-managed owner). */
export function shouldSuspend(
  labels: Record<string, string>,
  config: AppWrapperConfig,
  namespaceLabels: Record<string, string> | undefined,
): boolean {
  if (labels[QUEUE_NAME_LABEL]) return true;
  if (!config.manageJobsWithoutQueueName) return false;
  if (config.manageJobsNamespaceSelector === undefined) return true;
  return labelSelectorMatches(config.manageJobsNamespaceSelector, namespaceLabels ?? {});
}

// ---- pods and components -----------------------------------------------------

export interface PodSummary {
  expected: number;
  pending: number;
  running: number;
  succeeded: number;
  failed: number;
  terminalFailure: boolean;
}

/** Upstream's getPodStatus: counts by phase and the exit-code rules on failed pods. */
export function summarizePods(pods: PodObject[], expected: number, eff: Effective): PodSummary {
  const s: PodSummary = { expected, pending: 0, running: 0, succeeded: 0, failed: 0, terminalFailure: false };
  for (const pod of pods) {
    switch (pod.status?.phase) {
      case 'Pending':
        s.pending++;
        break;
      case 'Running':
        if (!pod.metadata.deletionTimestamp) s.running++;
        break;
      case 'Succeeded':
        s.succeeded++;
        break;
      case 'Failed': {
        s.failed++;
        const codes = (pod.status?.containerStatuses ?? [])
          .map((c) => c.state?.terminated?.exitCode)
          .filter((c): c is number => typeof c === 'number' && c !== 0);
        if (eff.terminalExitCodes.length > 0 && codes.some((c) => eff.terminalExitCodes.includes(c))) {
          s.terminalFailure = true;
        }
        if (eff.retryableExitCodes.length > 0 && codes.some((c) => !eff.retryableExitCodes.includes(c))) {
          s.terminalFailure = true;
        }
        break;
      }
    }
  }
  return s;
}

function conditionTrue(obj: KubeObject, type: string): boolean {
  const conds = (obj.status as { conditions?: { type?: string; status?: string }[] } | undefined)?.conditions;
  return Array.isArray(conds) && conds.some((c) => c.type === type && c.status === 'True');
}

/** A component object the AppWrapper controls (a namesake owned by someone else does not count). */
function ours(aw: AppWrapper, obj: KubeObject | undefined): obj is KubeObject {
  if (!obj) return false;
  const ref = getControllerOf(obj);
  return (
    ref !== undefined &&
    ref.kind === 'AppWrapper' &&
    ref.name === aw.metadata.name &&
    (!aw.metadata.uid || ref.uid === aw.metadata.uid)
  );
}

/** Upstream's getComponentStatus: deployed components and those their controller failed. */
export function summarizeComponents(
  aw: AppWrapper,
  componentStatus: AppWrapperComponentStatus[],
  components: (KubeObject | undefined)[],
): { expected: number; deployed: number; failed: number } {
  const out = { expected: componentStatus.length, deployed: 0, failed: 0 };
  componentStatus.forEach((cs, i) => {
    const obj = components[i];
    if (!ours(aw, obj) || obj.metadata.deletionTimestamp) return;
    out.deployed++;
    const key = `${cs.apiVersion}:${cs.kind}`;
    // Only these kinds have a failed state that does not heal itself (RayCluster's does).
    if ((key === 'batch/v1:Job' || key === 'kubeflow.org/v1:PyTorchJob') && conditionTrue(obj, 'Failed'))
      out.failed++;
  });
  return out;
}

// ---- deletion -------------------------------------------------------------------

/**
 * Upstream's deleteComponents: background deletion of every deployed component, then, once
 * the forceful-deletion grace period has passed, pods and components with grace period 0.
 * Changes `draft`; returns whether everything (components and pods) is gone.
 */
function planDeletion(aw: AppWrapper, draft: Draft, input: CoreInput, eff: Effective, d: Decision): boolean {
  const ns = aw.metadata.namespace ?? '';
  const components = input.components ?? [];
  const pods = input.pods ?? [];
  draft.set(Conditions.DeletingResources, 'True', 'DeletionInitiated');

  const present: number[] = [];
  const css = draft.status.componentStatus ?? [];
  css.forEach((cs, i) => {
    if (!cs.name) return;
    // What exists decides, not what the status recorded: a create whose status write was
    // lost (the AppWrapper changed meanwhile) must still be cleaned up.
    const obj = components[i];
    if (!ours(aw, obj)) {
      const rd = findCond(cs.conditions, Conditions.ResourcesDeployed);
      if (!rd || rd.status === 'False') return;
      cs.conditions ??= [];
      // Upstream's reason, spelling included, so tools matching on it keep working.
      setCondition(
        cs.conditions,
        {
          type: Conditions.ResourcesDeployed,
          status: 'False',
          reason: 'CompononetDeleted',
          message: '',
          lastTransitionTime: '',
        },
        input.now,
      );
      return;
    }
    present.push(i);
    if (!obj.metadata.deletionTimestamp) {
      d.deletes.push({
        apiVersion: cs.apiVersion,
        kind: cs.kind,
        name: cs.name,
        namespace: ns,
        uid: obj.metadata.uid,
        propagationPolicy: 'Background',
        componentIndex: i,
      });
    }
  });

  const expired =
    input.now.getTime() > draft.since(Conditions.DeletingResources) + eff.forcefulDeletionGraceMs;
  if (present.length > 0 && !expired) return false;
  if (present.length === 0 && pods.length === 0) {
    draft.clear(Conditions.DeletingResources, 'DeletionComplete');
    return true;
  }
  if (expired) {
    if (pods.length > 0) {
      for (const pod of pods) {
        d.deletes.push({
          apiVersion: 'v1',
          kind: 'Pod',
          name: pod.metadata.name ?? '',
          namespace: ns,
          uid: pod.metadata.uid,
          gracePeriodSeconds: 0,
        });
      }
    } else {
      d.deletes = d.deletes.filter((x) => x.componentIndex === undefined);
      for (const i of present) {
        const cs = css[i]!;
        d.deletes.push({
          apiVersion: cs.apiVersion,
          kind: cs.kind,
          name: cs.name,
          namespace: ns,
          uid: components[i]?.metadata.uid,
          gracePeriodSeconds: 0,
          componentIndex: i,
        });
      }
    }
  }
  return false;
}

function resetOrFail(draft: Draft, eff: Effective, terminal: boolean, increment: number): void {
  const count = draft.status.resettingCount ?? 0;
  if (!terminal && count < eff.retryLimit) {
    draft.status.resettingCount = count + increment;
    draft.phase = Phases.Resetting;
  } else {
    draft.phase = Phases.Failed;
  }
}

function unhealthy(draft: Draft, d: Decision, reason: string, message: string, eventMessage?: string): void {
  draft.set(Conditions.Unhealthy, 'True', reason, message);
  d.events.push({
    type: 'Normal',
    reason: Conditions.Unhealthy,
    message: eventMessage ?? `${reason}: ${message}`,
  });
}

// ---- the state machine --------------------------------------------------------------

export function decide(input: CoreInput): Decision {
  const { aw, now, config } = input;
  const eff = effective(aw, config);
  const d = newDecision(eff);
  const observed = aw.status;
  const draft = new Draft(observed, now);
  const finalized = (aw.metadata.finalizers ?? []).includes(AW_FINALIZER);

  if (aw.metadata.deletionTimestamp) {
    if (!finalized) return d;
    if (draft.isTrue(Conditions.ResourcesDeployed)) {
      if (!planDeletion(aw, draft, input, eff, d)) {
        draft.phase = Phases.Terminating;
        d.statusBestEffort = true;
        requeue(d, DELETION_POLL_MS);
        return finish(d, draft, observed);
      }
      draft.set(Conditions.ResourcesDeployed, 'False', Phases.Terminating, 'Resources successfully deleted');
    }
    if (draft.isTrue(Conditions.QuotaReserved)) {
      draft.set(Conditions.QuotaReserved, 'False', Phases.Terminating, 'No resources deployed');
    }
    d.removeFinalizer = true;
    return finish(d, draft, observed);
  }

  switch (draft.phase) {
    case Phases.Empty: {
      if (!finalized) {
        // No webhook ran (e.g. `make run`): apply what its defaulting would have.
        const labels = { ...(aw.metadata.labels ?? {}) };
        let suspend: boolean | undefined;
        if (config.enableKueueIntegrations) {
          if (config.defaultQueueName && !labels[QUEUE_NAME_LABEL])
            labels[QUEUE_NAME_LABEL] = config.defaultQueueName;
          if (!aw.spec.suspend && shouldSuspend(labels, config, input.namespaceLabels)) suspend = true;
        }
        d.update = { finalizers: [...(aw.metadata.finalizers ?? []), AW_FINALIZER] };
        if (!sameJson(labels, aw.metadata.labels ?? {})) d.update.labels = labels;
        if (suspend) d.update.suspend = true;
      }
      let cs: AppWrapperComponentStatus[] | undefined;
      try {
        cs = initialComponentStatus(aw);
      } catch (err) {
        // Upstream retries forever here (its webhook keeps such objects out); without a
        // webhook that would strand the AppWrapper, so it fails with the reason instead.
        draft.status.componentStatus ??= [];
        unhealthy(draft, d, 'CreateFailed', `error initializing components: ${(err as Error).message}`);
        draft.phase = Phases.Failed;
        return finish(d, draft, observed);
      }
      if (cs) draft.status.componentStatus = cs;
      draft.phase = Phases.Suspended;
      return finish(d, draft, observed);
    }

    case Phases.Suspended: {
      if (aw.spec.suspend) return d;
      for (const type of [Conditions.QuotaReserved, Conditions.ResourcesDeployed] as const) {
        draft.set(type, 'True', Phases.Resuming, 'Suspend is false');
      }
      for (const type of [Conditions.PodsReady, Conditions.Unhealthy] as const) {
        draft.set(type, 'False', Phases.Resuming, 'Suspend is false');
      }
      draft.phase = Phases.Resuming;
      return finish(d, draft, observed);
    }

    case Phases.Resuming: {
      if (aw.spec.suspend) {
        draft.phase = Phases.Suspending;
        return finish(d, draft, observed);
      }
      return planResume(aw, draft, input, eff, d);
    }

    case Phases.Running:
      return running(aw, draft, input, eff, d);

    case Phases.Suspending: {
      if (draft.isTrue(Conditions.ResourcesDeployed)) {
        if (!planDeletion(aw, draft, input, eff, d)) {
          requeue(d, DELETION_POLL_MS);
          return finish(d, draft, observed);
        }
        draft.set(Conditions.ResourcesDeployed, 'False', Phases.Suspended, 'Suspend is true');
      }
      draft.set(Conditions.QuotaReserved, 'False', Phases.Suspended, 'Suspend is true');
      draft.clear(Conditions.PodsReady, Phases.Suspended);
      draft.clear(Conditions.Unhealthy, Phases.Suspended);
      draft.phase = Phases.Suspended;
      return finish(d, draft, observed);
    }

    case Phases.Resetting: {
      if (aw.spec.suspend) {
        draft.phase = Phases.Suspending;
        return finish(d, draft, observed);
      }
      draft.clear(Conditions.PodsReady, Phases.Resetting);
      if (draft.isTrue(Conditions.ResourcesDeployed)) {
        if (!planDeletion(aw, draft, input, eff, d)) {
          requeue(d, DELETION_POLL_MS);
          return finish(d, draft, observed);
        }
        draft.set(
          Conditions.ResourcesDeployed,
          'False',
          Phases.Resetting,
          'Resources deleted for resetting AppWrapper',
        );
      }
      const deadline = draft.since(Conditions.Unhealthy) + eff.retryPauseMs;
      if (now.getTime() < deadline) {
        requeue(d, deadline - now.getTime());
        return finish(d, draft, observed);
      }
      draft.set(Conditions.ResourcesDeployed, 'True', Phases.Resuming, 'Reset complete; resuming');
      draft.phase = Phases.Resuming;
      return finish(d, draft, observed);
    }

    case Phases.Failed: {
      const delay = eff.deletionOnFailureGraceMs;
      // Upstream re-pauses on every pass, which restarts the pause once deletion has begun;
      // here the pause applies only until deletion starts.
      if (delay > 0 && !aw.spec.suspend && !draft.isTrue(Conditions.DeletingResources)) {
        draft.set(
          Conditions.DeletingResources,
          'False',
          'DeletionPaused',
          `${Annotations.deletionOnFailureGracePeriodDuration} has value ${formatGoDuration(delay)}`,
        );
        const deadline = draft.since(Conditions.DeletingResources) + delay;
        if (now.getTime() < deadline) {
          requeue(d, deadline - now.getTime());
          return finish(d, draft, observed);
        }
      }
      if (draft.isTrue(Conditions.ResourcesDeployed)) {
        if (!planDeletion(aw, draft, input, eff, d)) {
          requeue(d, DELETION_POLL_MS);
          return finish(d, draft, observed);
        }
        const msg =
          delay > 0 && aw.spec.suspend
            ? 'Kueue forced resource deletion by suspending AppWrapper'
            : 'Resources deleted for failed AppWrapper';
        draft.set(Conditions.ResourcesDeployed, 'False', Phases.Failed, msg);
      }
      draft.set(Conditions.QuotaReserved, 'False', Phases.Failed, 'No resources deployed');
      return finish(d, draft, observed);
    }

    case Phases.Succeeded: {
      if (!draft.isTrue(Conditions.ResourcesDeployed)) return d;
      // As upstream, the time to live counts from the ResourcesDeployed transition.
      const deadline = draft.since(Conditions.ResourcesDeployed) + eff.successTTLMs;
      if (now.getTime() < deadline) {
        requeue(d, deadline - now.getTime());
        return d;
      }
      if (!planDeletion(aw, draft, input, eff, d)) {
        requeue(d, DELETION_POLL_MS);
        return finish(d, draft, observed);
      }
      draft.set(
        Conditions.ResourcesDeployed,
        'False',
        Phases.Succeeded,
        `Time to live after success of ${formatGoDuration(eff.successTTLMs)} expired`,
      );
      return finish(d, draft, observed);
    }

    default:
      return d;
  }
}

function planResume(aw: AppWrapper, draft: Draft, input: CoreInput, _eff: Effective, d: Decision): Decision {
  const observed = aw.status;
  let css = draft.status.componentStatus;
  if (!css || css.length !== aw.spec.components.length) {
    try {
      css = initialComponentStatus(aw) ?? css ?? [];
    } catch (err) {
      unhealthy(draft, d, 'CreateFailed', `error creating components: ${(err as Error).message}`);
      draft.phase = Phases.Failed;
      return finish(d, draft, observed);
    }
    draft.status.componentStatus = css;
  }
  const deploy: DeployItem[] = [];
  for (let i = 0; i < css.length; i++) {
    const cs = css[i]!;
    if (isTrue(cs.conditions, Conditions.ResourcesDeployed)) continue;
    let obj: KubeObject;
    try {
      obj = renderComponent(aw, i, css, { schedulerName: input.config.schedulerName });
    } catch (err) {
      if (!(err instanceof RenderError)) throw err;
      unhealthy(draft, d, 'CreateFailed', `error creating components: ${err.message}`);
      draft.phase = Phases.Failed;
      return finish(d, draft, observed);
    }
    if (!findCond(cs.conditions, Conditions.ResourcesDeployed)) {
      cs.name = obj.metadata.name ?? '';
      cs.kind = obj.kind;
      cs.apiVersion = obj.apiVersion;
      cs.conditions ??= [];
      setCondition(
        cs.conditions,
        {
          type: Conditions.ResourcesDeployed,
          status: 'Unknown',
          reason: 'ComponentCreationInitiated',
          message: '',
          lastTransitionTime: '',
        },
        input.now,
      );
    }
    deploy.push({ index: i, obj });
  }
  if (deploy.length === 0) {
    draft.phase = Phases.Running;
    return finish(d, draft, observed);
  }
  d.deploy = deploy;
  return finish(d, draft, observed);
}

/**
 * Phase Resuming, after the shell created (or tried to create) `deploy` in order, stopping
 * at the first failure: `aw` carries the status written before the creates.
 */
export function afterDeploy(input: CoreInput, results: DeployResult[]): Decision {
  const { aw, now } = input;
  const eff = effective(aw, input.config);
  const d = newDecision(eff);
  const observed = aw.status;
  const draft = new Draft(observed, now);
  const css = draft.status.componentStatus ?? [];
  let failure: { message: string; fatal: boolean } | undefined;
  for (const r of results) {
    const cs = css[r.index];
    if (!cs) continue;
    cs.conditions ??= [];
    const setRd = (status: AwCondition['status'], reason: string) =>
      setCondition(
        cs.conditions!,
        { type: Conditions.ResourcesDeployed, status, reason, message: '', lastTransitionTime: '' },
        now,
      );
    if (r.outcome === 'created' || (r.outcome === 'exists' && r.controlledByUs)) {
      if (r.outcome === 'created') cs.name = r.name;
      setRd('True', 'ComponentCreatedSuccessfully');
    } else if (r.outcome === 'exists') {
      // Marked as not deployed so that cleanup never deletes an object that is not ours.
      setRd('False', 'ComponentCreationErrored');
      failure = { message: `resource ${cs.name} exists, but is not controlled by appwrapper`, fatal: true };
      break;
    } else {
      setRd('False', 'ComponentCreationErrored');
      failure = { message: r.message, fatal: r.fatal };
      break;
    }
  }
  if (!failure) {
    const allDeployed = css.every((cs) => isTrue(cs.conditions, Conditions.ResourcesDeployed));
    if (allDeployed) draft.phase = Phases.Running;
    else requeue(d, CREATE_RETRY_MS);
    return finish(d, draft, observed);
  }
  if (!failure.fatal) {
    const deadline = draft.since(Conditions.ResourcesDeployed) + eff.admissionGraceMs;
    if (now.getTime() < deadline) {
      requeue(d, CREATE_RETRY_MS);
      return finish(d, draft, observed);
    }
  }
  unhealthy(draft, d, 'CreateFailed', `error creating components: ${failure.message}`);
  if (failure.fatal) draft.phase = Phases.Failed;
  else resetOrFail(draft, eff, false, 1);
  return finish(d, draft, observed);
}

function running(aw: AppWrapper, draft: Draft, input: CoreInput, eff: Effective, d: Decision): Decision {
  const observed = aw.status;
  const now = input.now.getTime();
  if (aw.spec.suspend) {
    draft.phase = Phases.Suspending;
    return finish(d, draft, observed);
  }
  const css = draft.status.componentStatus ?? [];
  const comps = summarizeComponents(aw, css, input.components ?? []);
  const pods = summarizePods(input.pods ?? [], expectedPodCount(css), eff);

  if (comps.deployed !== comps.expected) {
    unhealthy(
      draft,
      d,
      'MissingComponent',
      `Only found ${comps.deployed} deployed components, but was expecting ${comps.expected}`,
    );
    draft.phase = Phases.Failed;
    return finish(d, draft, observed);
  }

  if (comps.failed > 0) {
    unhealthy(draft, d, 'FailedComponent', `Found ${comps.failed} failed components`);
    resetOrFail(draft, eff, pods.terminalFailure, 1);
    return finish(d, draft, observed);
  }

  if (pods.succeeded >= pods.expected && pods.pending + pods.running + pods.failed === 0) {
    const msg = `${pods.succeeded} pods succeeded and no running, pending, or failed pods`;
    draft.set(Conditions.QuotaReserved, 'False', Phases.Succeeded, msg);
    draft.set(Conditions.ResourcesDeployed, 'True', Phases.Succeeded, msg);
    draft.phase = Phases.Succeeded;
    return finish(d, draft, observed);
  }

  if (pods.failed > 0) {
    // No count in the message: the condition should not change while failures accumulate.
    draft.set(Conditions.Unhealthy, 'True', 'FoundFailedPods');
    const deadline = draft.since(Conditions.Unhealthy) + eff.failureGraceMs;
    if (now < deadline) {
      requeue(d, deadline - now);
      return finish(d, draft, observed);
    }
    d.events.push({
      type: 'Normal',
      reason: Conditions.Unhealthy,
      message: `FoundFailedPods: ${pods.failed} failed pods`,
    });
    resetOrFail(draft, eff, pods.terminalFailure, 1);
    return finish(d, draft, observed);
  }

  draft.clear(Conditions.Unhealthy, 'FoundNoFailedPods');

  if (pods.running + pods.succeeded >= pods.expected) {
    draft.set(
      Conditions.PodsReady,
      'True',
      'SufficientPodsReady',
      `${pods.running} pods running; ${pods.succeeded} pods succeeded`,
    );
    requeue(d, READY_RECHECK_MS);
    return finish(d, draft, observed);
  }

  const detail = `${pods.pending} pods pending; ${pods.running} pods running; ${pods.succeeded} pods succeeded`;
  draft.clear(Conditions.PodsReady, 'InsufficientPodsReady', detail);
  const grace =
    pods.pending + pods.running + pods.succeeded >= pods.expected ? eff.warmupGraceMs : eff.admissionGraceMs;
  const deadline = draft.since(Conditions.ResourcesDeployed) + grace;
  if (now < deadline) {
    requeue(d, Math.min(WARMUP_POLL_MS, deadline - now));
    return finish(d, draft, observed);
  }
  unhealthy(draft, d, 'InsufficientPodsReady', detail);
  resetOrFail(draft, eff, pods.terminalFailure, 1);
  return finish(d, draft, observed);
}
