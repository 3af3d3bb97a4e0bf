/**
 * The podgroup controller's decisions, pure: one group's pods and PodGroup (as cached) in,
 * the changes to make out. No I/O and no clock of its own, so every rule is unit-testable.
 *
 * Per group (pods of one namespace naming the same group):
 * - ready labels: once the gang is complete, every Running member without
 *   `podgroup.jhwagner.github.io/ready=true` gets it (one label patch per pod);
 * - the PodGroup: created when a labelled group has none (if enabled), and its status
 *   (state, counts, conditions) recomputed and written only when it changed;
 * - events: one per phase transition, plus warnings for bad input;
 * - the opt-in deadlock policy: a group left Unschedulable past its timeout deletes its
 *   controller-owned members so their workload controllers recreate them.
 */

import {
  AUTO_CREATED_ANNOTATION,
  ConditionTypes,
  type DeadlockPolicy,
  GROUP_LABEL,
  PODGROUP_API_VERSION,
  type PodGroup,
  type PodGroupCondition,
  type PodGroupPhase,
  type PodGroupStatus,
  type PodObject,
  Reasons,
} from '../../apis/scheduling.incubator.k8s.io/v1alpha1.ts';
import { rfc3339, sameCondition, withCondition } from '../../kube/conditions.ts';
import { keyOf } from '../../kube/keys.ts';
import { backoffDelay } from '../../lib/backoff.ts';
import { isObject, jsonEqual } from '../../lib/json.ts';
import { getControllerOf, type OwnerReference } from '../../runtime/index.ts';
import { claimOf, invalidGroupName } from './membership.ts';
import { nextPhase, type PhaseResult, type PreviousState, type Requirement, requirementOf } from './phase.ts';
import { groupPriority, type Member, observedPhase, type Tally, tally, toMember } from './tally.ts';

export interface PodRef {
  name: string;
  uid: string;
}

/** Another group under the Restart policy, for choosing who gives way. */
export interface PeerGroup {
  namespace: string;
  name: string;
  priority: number;
  creationTimestamp: string | undefined;
  /** Its phase; only Unschedulable peers are candidates to give way. */
  phase?: PodGroupPhase;
  /** When its policy last restarted it. */
  lastRestartTime?: string;
}

export interface GroupInput {
  namespace: string;
  /** The group's name (label or annotation value). */
  name: string;
  /** Every pod of the namespace that names this group by label or annotation. */
  pods: readonly PodObject[];
  podGroup: PodGroup | undefined;
  now: Date;
  /** Create a PodGroup for a labelled group that has none. */
  autoCreate: boolean;
  /** Without minMember, the gang is complete only when no member joined within this window. */
  formationWindowMs: number;
  /** When the controller first saw each pod (uid → epoch ms); default: its creationTimestamp. */
  joinedAt?: ReadonlyMap<string, number>;
  /** Pods this process already labelled ready whose label the cache does not show yet. */
  labelled?: ReadonlySet<string>;
  /** The members at this process's previous decision for the group (uid → observedPhase). */
  previous?: ReadonlyMap<string, string>;
  /** Other groups under the Restart policy that are Unschedulable or were restarted. */
  peers?: readonly PeerGroup[];
}

export type EventTarget = { kind: 'group' } | { kind: 'pod'; pod: PodRef };

export interface PlannedEvent {
  target: EventTarget;
  type: 'Normal' | 'Warning';
  reason: string;
  action: string;
  note: string;
}

export interface Decision {
  /** The members as observed now (uid → observedPhase), to pass as `previous` next time. */
  observed: Map<string, string>;
  /** The phase the group is in now (also computed when it has no PodGroup). */
  phase: PodGroupPhase;
  reason: string;
  message: string;
  /** Pods to patch with the ready label. */
  label: PodRef[];
  /** A PodGroup to create. */
  create?: PodGroup;
  /** The new status, when it differs from the stored one. */
  status?: PodGroupStatus;
  /** Members to delete so their controllers recreate them (deadlock policy). */
  restart: PodRef[];
  events: PlannedEvent[];
  /** Reconcile again after this long (formation window, deadlock timeout). */
  requeueAfterMs?: number;
  /** The group another stuck group gives way to, when the deadlock policy defers. */
  deferredTo?: string;
}

const DEFAULT_DEADLOCK_TIMEOUT_S = 60;
const DEFAULT_DEADLOCK_MAX_TIMEOUT_S = 600;
/** How soon a group that gave way to another one looks again. */
const DEFER_RECHECK_MS = 5_000;

export function decide(input: GroupInput): Decision {
  const { now, podGroup } = input;
  const nowMs = now.getTime();
  const events: PlannedEvent[] = [];

  // Members: pods whose group (label first, else annotation) is this one. Pods that name this
  // group only in an annotation contradicted by their label belong elsewhere and are reported.
  const members: Member[] = [];
  const conflicts: PodObject[] = [];
  let labelled = false;
  for (const pod of input.pods) {
    const claim = claimOf(pod);
    if (claim.conflict) conflicts.push(pod);
    if (claim.group !== input.name) continue;
    if (claim.label === input.name) labelled = true;
    const uid = pod.metadata.uid ?? '';
    members.push(toMember(pod, input.joinedAt?.get(uid) ?? creationMs(pod, nowMs)));
  }
  for (const pod of conflicts) {
    const c = claimOf(pod);
    events.push({
      target: { kind: 'pod', pod: refOf(pod) },
      type: 'Warning',
      reason: 'GroupConflict',
      action: 'Grouping',
      note: `label ${GROUP_LABEL}=${c.label} and annotation scheduling.k8s.io/group-name=${c.annotation} name different groups; the pod counts in ${c.label}`,
    });
  }

  const t = tally(members, input.previous, input.name);
  const spec = podGroup?.spec;
  const minMember = validMinMember(spec?.minMember);
  const specProblem = specProblemOf(spec);
  const formed = nowMs - t.newestJoin >= input.formationWindowMs;
  const req = requirementOf(t, minMember, formed);
  const prevStatus = podGroup?.status;
  const prev: PreviousState | undefined = prevStatus?.state?.phase
    ? {
        phase: prevStatus.state.phase,
        reason: prevStatus.state.reason,
        running: prevStatus.running ?? 0,
        succeeded: prevStatus.succeeded ?? 0,
        failed: prevStatus.failed ?? 0,
      }
    : undefined;
  const next = nextPhase(prev, t, req);

  const decision: Decision = {
    observed: new Map(members.map((m) => [m.uid, observedPhase(m)])),
    phase: next.phase,
    reason: next.reason,
    message: next.message,
    label: [],
    restart: [],
    events,
  };

  if (next.satisfied) {
    for (const m of members) {
      if (m.phase === 'Running' && !m.terminating && !m.ready && !input.labelled?.has(m.uid)) {
        decision.label.push({ name: m.name, uid: m.uid });
      }
    }
  } else if (!req.minMemberMode && req.required >= 1 && t.running + t.succeeded >= req.required && !formed) {
    decision.requeueAfterMs = t.newestJoin + input.formationWindowMs - nowMs;
  }

  const nameProblem = invalidGroupName(input.name);
  if (!podGroup) {
    if (nameProblem) {
      for (const m of members) {
        events.push({
          target: { kind: 'pod', pod: { name: m.name, uid: m.uid } },
          type: 'Warning',
          reason: 'InvalidGroupName',
          action: 'Grouping',
          note: `group "${input.name}" ${nameProblem}; the pod gets ready labels but the group has no PodGroup`,
        });
      }
    } else if (input.autoCreate && labelled) {
      decision.create = newPodGroup(input.namespace, input.name, members);
    }
    return decision;
  }

  // Status.
  const conditionsIn: PodGroupCondition[] = prevStatus?.conditions ?? [];
  const { conditions, changed: conditionsChanged } = computeConditions(
    conditionsIn,
    next,
    t,
    req,
    specProblem,
    conflicts,
    now,
  );
  const phaseChanged = prev?.phase !== next.phase;
  const stamp = rfc3339(now);
  const status: PodGroupStatus = {
    observedGeneration: podGroup.metadata.generation,
    state: {
      phase: next.phase,
      lastProbeTime: prevStatus?.state?.lastProbeTime,
      lastTransitionTime: phaseChanged ? stamp : (prevStatus?.state?.lastTransitionTime ?? stamp),
      reason: next.reason,
      message: next.message,
    },
    running: t.running,
    succeeded: t.succeeded,
    failed: t.failed,
    conditions,
  };
  if (prevStatus?.restarts !== undefined) status.restarts = prevStatus.restarts;
  if (prevStatus?.lastRestartTime !== undefined) status.lastRestartTime = prevStatus.lastRestartTime;

  if (phaseChanged) {
    const warning = next.phase === 'Recovering' || next.phase === 'Unschedulable';
    events.push({
      target: { kind: 'group' },
      type: warning ? 'Warning' : 'Normal',
      reason: next.reason,
      action: 'PhaseTransition',
      note: `${prev ? `${prev.phase} → ` : ''}${next.phase}: ${next.message}`,
    });
  }
  if (specProblem && !sameCondition(conditionsIn, conditions, ConditionTypes.SpecValid)) {
    events.push({
      target: { kind: 'group' },
      type: 'Warning',
      reason: 'InvalidSpec',
      action: 'Validating',
      note: specProblem,
    });
  }

  if (next.phase === 'Unschedulable') {
    applyDeadlockPolicy(input, podGroup, t, status, decision);
  }

  if (statusChanged(prevStatus, status, conditionsChanged)) {
    status.state!.lastProbeTime = stamp;
    decision.status = status;
  }
  return decision;
}

function applyDeadlockPolicy(
  input: GroupInput,
  podGroup: PodGroup,
  t: Tally,
  status: PodGroupStatus,
  decision: Decision,
): void {
  const policy: DeadlockPolicy | undefined = podGroup.spec?.deadlockPolicy;
  if (policy?.action !== 'Restart') return;
  const nowMs = input.now.getTime();
  const since = Date.parse(status.state?.lastTransitionTime ?? '') || nowMs;
  const lastRestart = Date.parse(status.lastRestartTime ?? '');
  // One restart per Unschedulable episode: the phase must move on (to Pending once the
  // deleted members are gone) before the group can be restarted again.
  if (Number.isFinite(lastRestart) && lastRestart >= since) return;
  const restarts = status.restarts ?? 0;
  const timeoutMs = deadlockTimeoutMs(podGroup, restarts);
  const remaining = since + timeoutMs - nowMs;
  if (remaining > 0) {
    decision.requeueAfterMs = minDefined(decision.requeueAfterMs, remaining);
    return;
  }
  // Another group gave its resources back within our timeout: wait and see whether that
  // unblocks us before giving ours back too (two groups restarting together would only race
  // into the same deadlock again).
  for (const peer of input.peers ?? []) {
    const restartedAt = Date.parse(peer.lastRestartTime ?? '');
    if (Number.isFinite(restartedAt) && nowMs - restartedAt < timeoutMs) {
      decision.deferredTo = keyOf(peer.namespace, peer.name);
      decision.requeueAfterMs = minDefined(
        decision.requeueAfterMs,
        Math.max(1, restartedAt + timeoutMs - nowMs),
      );
      return;
    }
  }
  const self: PeerGroup = {
    namespace: input.namespace,
    name: input.name,
    priority: groupPriority(t.members.map((m) => m.pod)),
    creationTimestamp: podGroup.metadata.creationTimestamp,
  };
  const stuck = (input.peers ?? []).filter((p) => p.phase === 'Unschedulable');
  const victim = chooseVictim([self, ...stuck]);
  if (victim !== self) {
    decision.deferredTo = keyOf(victim.namespace, victim.name);
    decision.requeueAfterMs = minDefined(decision.requeueAfterMs, DEFER_RECHECK_MS);
    return;
  }
  const targets = t.members.filter((m) => !m.terminating && (m.phase === 'Pending' || m.phase === 'Running'));
  const orphans = targets.filter((m) => !m.controlled);
  if (orphans.length > 0) {
    decision.events.push({
      target: { kind: 'group' },
      type: 'Warning',
      reason: 'RestartBlocked',
      action: 'Restarting',
      note: `deadlock policy cannot restart the group: ${orphans.map((m) => m.name).join(', ')} ${orphans.length === 1 ? 'has' : 'have'} no controller to recreate ${orphans.length === 1 ? 'it' : 'them'}`,
    });
    decision.requeueAfterMs = minDefined(decision.requeueAfterMs, timeoutMs);
    return;
  }
  decision.restart = targets.map((m) => ({ name: m.name, uid: m.uid }));
  status.restarts = restarts + 1;
  status.lastRestartTime = rfc3339(input.now);
  const nextTimeoutS = deadlockTimeoutMs(podGroup, restarts + 1) / 1000;
  decision.events.push({
    target: { kind: 'group' },
    type: 'Warning',
    reason: 'DeadlockRestart',
    action: 'Restarting',
    note: `Unschedulable for ${Math.round((nowMs - since) / 1000)}s with ${t.placed} of ${t.members.length} members placed: deleting ${decision.restart.length} members so their controllers recreate them (restart ${restarts + 1}; next timeout ${nextTimeoutS}s)`,
  });
}

/** The timeout before the next restart: doubled after each restart, capped. */
export function deadlockTimeoutMs(podGroup: PodGroup, restarts: number): number {
  const spec = podGroup.spec;
  const base =
    positiveInt(spec?.deadlockPolicy?.timeoutSeconds) ??
    positiveInt(spec?.scheduleTimeoutSeconds) ??
    DEFAULT_DEADLOCK_TIMEOUT_S;
  const cap = Math.max(
    base,
    positiveInt(spec?.deadlockPolicy?.maxTimeoutSeconds) ?? DEFAULT_DEADLOCK_MAX_TIMEOUT_S,
  );
  return backoffDelay(restarts, base, cap) * 1000;
}

/** Who gives way among stuck groups: the lowest priority, then the youngest, then the last by key. */
export function chooseVictim<T extends PeerGroup>(groups: readonly T[]): T {
  const sorted = [...groups].sort((a, b) => {
    if (a.priority !== b.priority) return a.priority - b.priority;
    const ta = Date.parse(a.creationTimestamp ?? '') || 0;
    const tb = Date.parse(b.creationTimestamp ?? '') || 0;
    if (ta !== tb) return tb - ta;
    const ka = keyOf(a.namespace, a.name);
    const kb = keyOf(b.namespace, b.name);
    return ka < kb ? 1 : ka > kb ? -1 : 0;
  });
  return sorted[0]!;
}

function computeConditions(
  current: readonly PodGroupCondition[],
  next: PhaseResult,
  t: Tally,
  req: Requirement,
  specProblem: string | undefined,
  conflicts: readonly PodObject[],
  now: Date,
): { conditions: PodGroupCondition[]; changed: boolean } {
  let list = current.map((c) => ({ ...c }));
  let changed = false;
  const set = (c: PodGroupCondition) => {
    const r = withCondition(list, c, now);
    list = r.conditions;
    changed ||= r.changed;
  };
  const released = next.phase === 'Running' || next.phase === 'Completed';
  set({
    type: ConditionTypes.GangReady,
    status: released ? 'True' : 'False',
    reason: next.reason,
    message: next.message,
  });
  // kube-batch's condition (Volcano's too): NotEnoughTasks while the gang lacks members,
  // else NotEnoughResources; a gang scheduler's verdict is quoted as it is.
  set(
    t.unschedulable > 0
      ? {
          type: ConditionTypes.Unschedulable,
          status: 'True',
          reason:
            req.minMemberMode && t.live < req.required ? Reasons.NotEnoughTasks : Reasons.NotEnoughResources,
          message:
            t.gangVerdict ??
            `${t.unschedulable} of ${t.members.length} members cannot be scheduled: ${t.schedulerMessage ?? ''}`,
        }
      : { type: ConditionTypes.Unschedulable, status: 'False', reason: 'Schedulable', message: '' },
  );
  set(
    specProblem
      ? { type: ConditionTypes.SpecValid, status: 'False', reason: 'InvalidSpec', message: specProblem }
      : { type: ConditionTypes.SpecValid, status: 'True', reason: 'Valid', message: '' },
  );
  set(
    conflicts.length > 0
      ? {
          type: ConditionTypes.MembershipConflict,
          status: 'True',
          reason: 'LabelAnnotationMismatch',
          message: `pods whose label and annotation name different groups: ${conflicts
            .map((p) => p.metadata.name)
            .sort()
            .join(', ')}`,
        }
      : { type: ConditionTypes.MembershipConflict, status: 'False', reason: 'NoConflict', message: '' },
  );
  return { conditions: list, changed };
}

/**
 * Whether `after` differs from `before` apart from lastProbeTime (which moves only when
 * something else does), as jsonEqual compares. `after`'s conditions are copies of `before`'s
 * with the changes `conditionsChanged` reports, so without any they need no walk (they
 * are most of a status).
 */
function statusChanged(
  before: PodGroupStatus | undefined,
  after: PodGroupStatus,
  conditionsChanged: boolean,
): boolean {
  if (!before || conditionsChanged) return true;
  // Most changes move a count or the state, and each of these is a number or string in
  // `after`, so `!==` decides as the full comparison would.
  const was = before.state;
  const now = after.state;
  if (
    before.running !== after.running ||
    before.succeeded !== after.succeeded ||
    before.failed !== after.failed ||
    was?.phase !== now?.phase ||
    was?.reason !== now?.reason ||
    was?.message !== now?.message
  ) {
    return true;
  }
  // Both have a state (its phase matched) and conditions (unchanged copies of before's).
  const copies = before.conditions?.every(isObject) ?? false;
  return !(
    sameMembers(before, after, 'state', 'conditions') &&
    sameMembers(was, now, 'lastProbeTime') &&
    (copies || jsonEqual(before.conditions, after.conditions))
  );
}

/** jsonEqual(a, b) for two objects, leaving members `skip` out of it. */
function sameMembers(a: object | undefined, b: object | undefined, ...skip: string[]): boolean {
  if (!isObject(a) || !isObject(b)) return false;
  let n = 0;
  for (const k in a) {
    const v = a[k];
    if (v === undefined || skip.includes(k)) continue;
    n++;
    const w = b[k];
    if (w === undefined || !jsonEqual(v, w)) return false;
  }
  for (const k in b) if (b[k] !== undefined && !skip.includes(k)) n--;
  return n === 0;
}

function validMinMember(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;
}

function positiveInt(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined;
}

/**
 * What in a spec cannot be honoured. The CRD's schema rejects these on a real API server;
 * this covers objects stored under a laxer schema (an older CRD, another installer).
 */
export function specProblemOf(spec: PodGroup['spec']): string | undefined {
  if (!spec) return undefined;
  const problems: string[] = [];
  if (spec.minMember !== undefined && validMinMember(spec.minMember) === undefined) {
    problems.push(
      `spec.minMember ${JSON.stringify(spec.minMember)} is not a non-negative integer; every member is required instead`,
    );
  }
  const dp = spec.deadlockPolicy;
  if (dp !== undefined) {
    if (dp.action !== undefined && dp.action !== 'None' && dp.action !== 'Restart') {
      problems.push(`spec.deadlockPolicy.action ${JSON.stringify(dp.action)} is not None or Restart`);
    }
    for (const f of ['timeoutSeconds', 'maxTimeoutSeconds'] as const) {
      if (dp[f] !== undefined && positiveInt(dp[f]) === undefined) {
        problems.push(`spec.deadlockPolicy.${f} ${JSON.stringify(dp[f])} is not a positive integer`);
      }
    }
  }
  return problems.length > 0 ? problems.join('; ') : undefined;
}

function newPodGroup(namespace: string, name: string, members: readonly Member[]): PodGroup {
  const pg: PodGroup = {
    apiVersion: PODGROUP_API_VERSION,
    kind: 'PodGroup',
    metadata: {
      name,
      namespace,
      annotations: { [AUTO_CREATED_ANNOTATION]: 'true' },
      labels: { 'app.kubernetes.io/managed-by': 'troupe' },
    },
    spec: {},
  };
  // When every member has the same controller (a Job, a JobSet's Job...), the PodGroup goes
  // away with it through garbage collection; bare pods leave it for the user to delete.
  const owners = new Map<string, OwnerReference | undefined>();
  for (const m of members) {
    const ref = getControllerOf(m.pod);
    owners.set(ref?.uid ?? '', ref);
  }
  const [only] = owners.values();
  if (owners.size === 1 && only) {
    pg.metadata.ownerReferences = [
      { apiVersion: only.apiVersion, kind: only.kind, name: only.name, uid: only.uid },
    ];
  }
  return pg;
}

function refOf(pod: PodObject): PodRef {
  return { name: pod.metadata.name ?? '', uid: pod.metadata.uid ?? '' };
}

function creationMs(pod: PodObject, fallback: number): number {
  const t = Date.parse(pod.metadata.creationTimestamp ?? '');
  return Number.isFinite(t) ? t : fallback;
}

function minDefined(a: number | undefined, b: number): number {
  return a === undefined ? b : Math.min(a, b);
}
