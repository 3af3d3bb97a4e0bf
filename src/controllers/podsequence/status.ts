/** The PodSequence status a plan writes: phase, progress, conditions, and each node's entry. */

import type {
  NodeSequenceStatus,
  Phase,
  PodSequenceStatus,
} from '../../apis/scheduling.example.com/v1alpha1.ts';
import { type Condition, sameCondition, withCondition } from '../../kube/conditions.ts';
import type { Inbound } from './decision-memo.ts';
import type { Pod } from './objects.ts';
import { type Ctx, listNames, type NodeView, notDoneDetail } from './plan.ts';
import { isDone } from './pods.ts';
import { groupLabel } from './spec.ts';

export interface StatusBase {
  phase: Phase;
  currentIndex: number;
  message: string;
  groupName: string | undefined;
  ready: string | undefined;
}

export function baseStatus(ctx: Ctx, b: StatusBase): PodSequenceStatus {
  const n = ctx.n;
  const status: PodSequenceStatus = {
    phase: b.phase,
    currentIndex: b.currentIndex,
    message: b.message,
    observedGeneration: ctx.seq.metadata.generation,
    totalGroups: n,
    progress: n === 0 ? '0/0' : `${Math.min(b.currentIndex + 1, n)}/${n}`,
  };
  if (b.groupName !== undefined) status.currentGroupName = b.groupName;
  if (b.ready !== undefined) status.currentGroupReady = b.ready;
  return status;
}

export interface ConditionFacts {
  valid: boolean;
  validMessage?: string;
  missing: string[];
  completed: boolean;
  phase: Phase;
  message: string;
}

export function conditions(ctx: Ctx, f: ConditionFacts): Condition[] {
  const now = ctx.input.now;
  const gen = ctx.seq.metadata.generation;
  let list: Condition[] = ctx.prev.conditions ?? [];
  const set = (c: Condition) => {
    list = withCondition(list, { ...c, observedGeneration: gen }, now).conditions;
  };
  set(
    f.valid
      ? { type: 'SpecValid', status: 'True', reason: 'Valid', message: 'The spec is valid' }
      : { type: 'SpecValid', status: 'False', reason: 'InvalidSpec', message: f.validMessage ?? '' },
  );
  set(
    f.missing.length === 0
      ? { type: 'PodsFound', status: 'True', reason: 'AllFound', message: 'Every named pod exists' }
      : {
          type: 'PodsFound',
          status: 'False',
          reason: 'PodsMissing',
          message: `Not found in namespace ${ctx.spec.namespace}: ${listNames(f.missing)}`,
        },
  );
  set(
    f.completed
      ? { type: 'Completed', status: 'True', reason: 'AllGroupsReady', message: f.message }
      : {
          type: 'Completed',
          status: 'False',
          reason: f.phase === 'Failed' ? 'Failed' : f.phase === 'Pending' ? 'Pending' : 'InProgress',
          message: f.message,
        },
  );
  return list;
}

export function waitingMessage(
  ctx: Ctx,
  index: number,
  members: readonly Pod[],
  missing: readonly string[],
  label: string,
): string {
  const { spec } = ctx;
  if (members.length === 0 && missing.length === 0) {
    const g = spec.groups[index]!;
    return `Waiting for group ${label}: no pod in namespace ${spec.namespace} matches ${g.selectorText ?? ''}`;
  }
  const ready = members.filter(isDone).length;
  const total = members.length + missing.length;
  const parts: string[] = [];
  if (missing.length > 0) parts.push(`${listNames(missing)} not found in namespace ${spec.namespace}`);
  const detail = notDoneDetail(ctx, members);
  if (detail) parts.push(detail);
  return `Waiting for group ${label}: ${ready}/${total} pods Ready; ${parts.join('; ')}`;
}

export function nodeWaiting(ctx: Ctx, v: NodeView, inbound: Inbound, released: ReadonlySet<string>): string {
  const { spec, n } = ctx;
  const k = v.index;
  const label = `group ${groupLabel(spec.groups[k]!, n)}`;
  const pods = v.byGroup[k]!;
  const heading = inbound.headingTo[k]!.get(v.name) ?? [];
  const anywhere = inbound.anywhere[k]!;
  if (pods.length === 0 && heading.length === 0 && anywhere === 0)
    return `${label}: no pod of it on this node`;
  const parts: string[] = [];
  // This node's pods released in this pass read as released.
  const detail = notDoneDetail(ctx, pods, released);
  if (pods.length > 0)
    parts.push(`${pods.filter(isDone).length}/${pods.length} Ready${detail ? ` (${detail})` : ''}`);
  if (heading.length > 0) parts.push(`${listNames(heading)} not scheduled yet`);
  else if (anywhere > 0) parts.push(`${anywhere} pods not scheduled yet`);
  return `${label}: ${parts.join('; ')}`;
}

/** Two status entries for one node alike in all a node pass reads of them. */
export function sameNodeEntry(a: NodeSequenceStatus | undefined, b: NodeSequenceStatus | undefined): boolean {
  if (a === b) return true;
  if (!a || !b) return false;
  if (
    a.currentIndex !== b.currentIndex ||
    a.readyPodsInCurrentGroup !== b.readyPodsInCurrentGroup ||
    a.phase !== b.phase
  ) {
    return false;
  }
  const x = a.conditions ?? [];
  const y = b.conditions ?? [];
  return (
    x.length === y.length &&
    x.every((c, i) => {
      const d = y[i]!;
      return (
        c.type === d.type &&
        c.status === d.status &&
        c.reason === d.reason &&
        c.message === d.message &&
        c.lastTransitionTime === d.lastTransitionTime
      );
    })
  );
}

export function nodeStatus(ctx: Ctx, v: NodeView, prev: NodeSequenceStatus | undefined): NodeSequenceStatus {
  const n = ctx.n;
  const index = v.completed ? n : v.index;
  const pods = index < n ? v.byGroup[index]! : [];
  const cond: Condition = v.completed
    ? {
        type: 'Completed',
        status: 'True',
        reason: 'AllGroupsReady',
        message: 'Every pod of the sequence on this node is Ready',
      }
    : {
        type: 'Completed',
        status: 'False',
        reason: v.phase === 'Failed' ? 'PodFailed' : 'Waiting',
        message: v.waiting ? `Waiting for ${v.waiting}` : 'Waiting',
      };
  const ready = pods.filter(isDone).length;
  // Unchanged nodes keep their entry object: no new conditions list per node per pass, and
  // comparing the status with the written one stops at the identical entries.
  if (
    prev &&
    prev.currentIndex === index &&
    prev.readyPodsInCurrentGroup === ready &&
    prev.phase === v.phase &&
    sameCondition(prev.conditions, [cond], cond.type)
  ) {
    return prev;
  }
  return {
    nodeName: v.name,
    currentIndex: index,
    readyPodsInCurrentGroup: ready,
    phase: v.phase,
    conditions: withCondition(prev?.conditions ?? [], cond, ctx.input.now).conditions,
  };
}
