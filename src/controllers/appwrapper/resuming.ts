/** Phase Resuming: render the components, and take in the outcome of creating them. */

import {
  type AppWrapper,
  type AwCondition,
  Conditions,
  Phases,
} from '../../apis/workload.codeflare.dev/v1beta2.ts';
import { setCondition } from '../../kube/conditions.ts';
import type { KubeObject } from '../../runtime/index.ts';
import { type Effective, effective } from './config.ts';
import {
  type CoreInput,
  CREATE_RETRY_MS,
  type Decision,
  type DeployItem,
  type DeployResult,
  Draft,
  findCond,
  finish,
  isTrue,
  newDecision,
  requeue,
  resetOrFail,
  unhealthy,
} from './decision.ts';
import { RenderError, renderComponent } from './inject.ts';
import { initialComponentStatus } from './podsets.ts';

export function planResume(
  aw: AppWrapper,
  draft: Draft,
  input: CoreInput,
  _eff: Effective,
  d: Decision,
): Decision {
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
      obj = renderComponent(aw, i, css, {
        schedulerName: input.config.schedulerName,
        autopilot: input.config.autopilot,
      });
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
