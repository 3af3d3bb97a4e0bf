/** Phase Running: watch components and pods; succeed, reset or fail as upstream does. */

import { type AppWrapper, Conditions, Phases } from '../../apis/workload.codeflare.dev/v1beta2.ts';
import type { Effective } from './config.ts';
import {
  type CoreInput,
  type Decision,
  type Draft,
  externallySuspended,
  finish,
  READY_RECHECK_MS,
  requeue,
  resetOrFail,
  unhealthy,
  WARMUP_POLL_MS,
} from './decision.ts';
import { podsOnNoExecuteNodes, summarizeComponents, summarizePods } from './health.ts';
import { expectedPodCount } from './podsets.ts';

export function running(
  aw: AppWrapper,
  draft: Draft,
  input: CoreInput,
  eff: Effective,
  d: Decision,
): Decision {
  const observed = aw.status;
  const now = input.now.getTime();
  if (aw.spec.suspend) {
    externallySuspended(draft, d, Phases.Running);
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

  // Autopilot flagged a resource the pods use as NoExecute: migrate away (upstream resets
  // without counting a retry; the injected anti-affinity keeps the new pods off the node).
  if (input.config.autopilot.monitorNodes && input.noExecuteNodes) {
    const bad = podsOnNoExecuteNodes(input.pods ?? [], input.noExecuteNodes);
    if (bad.length > 0) {
      // Go's %v of the node set, as upstream's message prints it.
      const message = `Workload contains pods using NoExecute resources on Nodes: map[${bad.map((n) => `${n}:{}`).join(' ')}]`;
      unhealthy(draft, d, 'AutopilotNoExecute', message, message);
      resetOrFail(draft, eff, false, 0);
      return finish(d, draft, observed);
    }
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
