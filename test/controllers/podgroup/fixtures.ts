/** Builders for pods and PodGroups as the controller's cache holds them, for core unit tests. */

import type { PodObject } from '../../../src/apis/scheduling.incubator.k8s.io/v1alpha1.ts';
import {
  GROUP_ANNOTATION,
  GROUP_LABEL,
  PODGROUP_API_VERSION,
  type PodGroup,
  type PodGroupSpec,
  READY_LABEL,
} from '../../../src/apis/scheduling.incubator.k8s.io/v1alpha1.ts';
import { type Decision, decide, type GroupInput } from '../../../src/controllers/podgroup/core.ts';
import { pod as buildPod } from '../../support/objects.ts';

export const NS = 'ml';

export const T0 = new Date('2026-01-01T00:00:00Z');

export interface PodOpts {
  group?: string;
  annotation?: string;
  phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed';
  node?: string;
  unschedulable?: string;
  ready?: boolean;
  deleting?: boolean;
  owner?: string;
  priority?: number;
  created?: Date;
}

let uidSeq = 0;

export function pod(name: string, o: PodOpts = {}): PodObject {
  const labels: Record<string, string> = {};
  const annotations: Record<string, string> = {};
  const group = o.group === undefined ? 'g' : o.group;
  if (group) labels[GROUP_LABEL] = group;
  if (o.annotation) annotations[GROUP_ANNOTATION] = o.annotation;
  if (o.ready) labels[READY_LABEL] = 'true';
  const phase = o.phase ?? 'Pending';
  const node =
    o.node ?? (phase === 'Running' || phase === 'Succeeded' || phase === 'Failed' ? 'node-1' : undefined);
  const conditions = o.unschedulable
    ? [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: o.unschedulable }]
    : node
      ? [{ type: 'PodScheduled', status: 'True' }]
      : [];
  return buildPod<PodObject>(name, {
    namespace: NS,
    uid: `uid-${name}-${++uidSeq}`,
    creationTimestamp: (o.created ?? new Date(T0.getTime() - 60_000)).toISOString(),
    labels,
    annotations,
    ...(o.deleting ? { deletionTimestamp: T0.toISOString() } : {}),
    ...(o.owner
      ? {
          ownerReferences: [
            { apiVersion: 'batch/v1', kind: 'Job', name: o.owner, uid: `job-${o.owner}`, controller: true },
          ],
        }
      : {}),
    ...(node ? { node } : {}),
    ...(o.priority !== undefined ? { spec: { priority: o.priority } } : {}),
    phase,
    conditions,
  });
}

export function podGroup(name: string, spec: PodGroupSpec = {}, created = T0): PodGroup {
  return {
    apiVersion: PODGROUP_API_VERSION,
    kind: 'PodGroup',
    metadata: {
      name,
      namespace: NS,
      uid: `pg-${name}`,
      generation: 1,
      creationTimestamp: created.toISOString(),
    },
    spec,
  };
}

export function input(
  pods: PodObject[],
  pg: PodGroup | undefined,
  over: Partial<GroupInput> = {},
): GroupInput {
  return {
    namespace: NS,
    name: pg?.metadata.name ?? 'g',
    pods,
    podGroup: pg,
    now: T0,
    autoCreate: true,
    formationWindowMs: 1000,
    ...over,
  };
}

/** Decides and stores the status the shell would write, like one reconcile. */
export function step(pg: PodGroup, pods: PodObject[], over: Partial<GroupInput> = {}): Decision {
  const d = decide(input(pods, pg, over));
  if (d.status) pg.status = structuredClone(d.status);
  return d;
}

export function at(seconds: number): Date {
  return new Date(T0.getTime() + seconds * 1000);
}
