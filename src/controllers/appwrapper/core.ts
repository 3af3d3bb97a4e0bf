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
 *
 * This file holds the state machine and the questions the shell and webhook ask before it;
 * the phases with more to them live beside it: resuming.ts, running.ts, deletion.ts (every
 * winding-down phase), with decision.ts (input, answer, status draft) and health.ts.
 */

import {
  Annotations,
  type AppWrapper,
  type AppWrapperComponentStatus,
  AW_CONTROLLER_NAME,
  AW_FINALIZER,
  Conditions,
  Phases,
  QUEUE_NAME_LABEL,
} from '../../apis/workload.codeflare.dev/v1beta2.ts';
import { formatGoDuration } from '../../kube/duration.ts';
import { labelSelectorMatches } from '../../kube/labels.ts';
import { jsonEqual } from '../../lib/json.ts';
import { type AppWrapperConfig, effective } from './config.ts';
import {
  type CoreInput,
  DELETION_POLL_MS,
  type Decision,
  Draft,
  externallySuspended,
  finish,
  isTrue,
  newDecision,
  requeue,
  unhealthy,
} from './decision.ts';
import { planDeletion } from './deletion.ts';
import { initialComponentStatus } from './podsets.ts';
import { planResume } from './resuming.ts';
import { running } from './running.ts';

export {
  type CoreInput,
  CREATE_RETRY_MS,
  DELETION_POLL_MS,
  type Decision,
  type DeleteAction,
  type DeployItem,
  type DeployResult,
  type EventSpec,
  isTrue,
  READY_RECHECK_MS,
  WARMUP_POLL_MS,
} from './decision.ts';
export { type PodSummary, summarizeComponents, summarizePods } from './health.ts';
export { afterDeploy } from './resuming.ts';

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
        if (!jsonEqual(labels, aw.metadata.labels ?? {})) d.update.labels = labels;
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
        externallySuspended(draft, d, Phases.Resuming);
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
        externallySuspended(draft, d, Phases.Resetting);
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
