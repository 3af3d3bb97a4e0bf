/** Deleting what an AppWrapper deployed: the step every phase that winds down takes. */

import { type AppWrapper, Conditions } from '../../apis/workload.codeflare.dev/v1beta2.ts';
import { setCondition } from '../../kube/conditions.ts';
import type { Effective } from './config.ts';
import { type CoreInput, type Decision, type Draft, findCond } from './decision.ts';
import { ours } from './health.ts';

/**
 * Upstream's deleteComponents: background deletion of every deployed component, then, once
 * the forceful-deletion grace period has passed, pods and components with grace period 0.
 * Changes `draft`; returns whether everything (components and pods) is gone.
 */
export function planDeletion(
  aw: AppWrapper,
  draft: Draft,
  input: CoreInput,
  eff: Effective,
  d: Decision,
): boolean {
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
