/**
 * Pure Deployment arithmetic (pkg/controller/deployment/util): revisions and the
 * annotations a Deployment stamps on its ReplicaSets, maxSurge/maxUnavailable fenceposts,
 * how many replicas a new ReplicaSet may have, proportional scaling, status and conditions.
 */
import type { Deployment, DeploymentCondition, DeploymentStatus } from '../../kube/builtin.ts';
import { rfc3339 } from '../../kube/conditions.ts';
import { jsonEqual } from '../../lib/json.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { int } from './context.ts';
import type { PodTemplate } from './pods.ts';
import type { ReplicaSet } from './replicaset.ts';
import { computeHash, parseTime, scaledValue } from './util.ts';

export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY_ANNOTATION = 'deployment.kubernetes.io/revision-history';
export const DESIRED_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/desired-replicas';
export const MAX_REPLICAS_ANNOTATION = 'deployment.kubernetes.io/max-replicas';
export const POD_TEMPLATE_HASH = 'pod-template-hash';
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const ROLLBACK_TO = 'deprecated.deployment.rollback.to';

export type { Deployment, DeploymentCondition, DeploymentStatus } from '../../kube/builtin.ts';

export function replicasOf(d: Deployment): number {
  return int(d.spec?.replicas, 1);
}

export function rsReplicas(rs: ReplicaSet | undefined): number {
  return int(rs?.spec?.replicas, 0);
}

export function isRollingUpdate(d: Deployment): boolean {
  return (d.spec?.strategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
}

/** ResolveFenceposts: surge rounds up, unavailability down, and both zero means one unavailable. */
export function resolveFenceposts(d: Deployment): { surge: number; unavailable: number } {
  const ru = d.spec?.strategy?.rollingUpdate;
  const desired = replicasOf(d);
  const surge = scaledValue(ru?.maxSurge ?? '25%', desired, true);
  let unavailable = scaledValue(ru?.maxUnavailable ?? '25%', desired, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

export function maxSurge(d: Deployment): number {
  return isRollingUpdate(d) ? resolveFenceposts(d).surge : 0;
}

export function maxUnavailable(d: Deployment): number {
  if (!isRollingUpdate(d) || replicasOf(d) === 0) return 0;
  return Math.min(resolveFenceposts(d).unavailable, replicasOf(d));
}

export function revisionOf(obj: KubeObject | undefined): number {
  const v = obj?.metadata.annotations?.[REVISION_ANNOTATION];
  const n = v === undefined ? 0 : Number(v);
  return Number.isInteger(n) ? n : 0;
}

export function maxRevision(rss: ReplicaSet[]): number {
  let m = 0;
  for (const rs of rss) m = Math.max(m, revisionOf(rs));
  return m;
}

/** The template without the pod-template-hash label, for EqualIgnoreHash. */
function withoutHash(t: PodTemplate | undefined): PodTemplate {
  const c = structuredClone(t ?? {});
  if (c.metadata?.labels) {
    delete c.metadata.labels[POD_TEMPLATE_HASH];
    if (Object.keys(c.metadata.labels).length === 0) delete c.metadata.labels;
  }
  return c;
}

export function equalIgnoreHash(a: PodTemplate | undefined, b: PodTemplate | undefined): boolean {
  return jsonEqual(withoutHash(a), withoutHash(b));
}

export function podTemplateHash(d: Deployment): string {
  return computeHash(d.spec?.template, d.status?.collisionCount);
}

function byCreation(a: KubeObject, b: KubeObject): number {
  const ta = parseTime(a.metadata.creationTimestamp) ?? 0;
  const tb = parseTime(b.metadata.creationTimestamp) ?? 0;
  if (ta !== tb) return ta - tb;
  return (a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1;
}

export function sortByCreation<T extends KubeObject>(list: T[]): T[] {
  return [...list].sort(byCreation);
}

/** FindNewReplicaSet: the oldest ReplicaSet whose template equals the Deployment's. */
export function findNewReplicaSet(d: Deployment, rss: ReplicaSet[]): ReplicaSet | undefined {
  for (const rs of sortByCreation(rss)) if (equalIgnoreHash(rs.spec?.template, d.spec?.template)) return rs;
  return undefined;
}

/** FindOldReplicaSets: every other ReplicaSet (all of them, and those with pods). */
export function findOldReplicaSets(d: Deployment, rss: ReplicaSet[]): ReplicaSet[] {
  const newRs = findNewReplicaSet(d, rss);
  return rss.filter((rs) => rs !== newRs);
}

export function activeReplicaSets(rss: ReplicaSet[]): ReplicaSet[] {
  return rss.filter((rs) => rsReplicas(rs) > 0);
}

export function sumSpecReplicas(rss: (ReplicaSet | undefined)[]): number {
  let n = 0;
  for (const rs of rss) if (rs) n += rsReplicas(rs);
  return n;
}

function sumStatus(
  rss: (ReplicaSet | undefined)[],
  f: 'replicas' | 'readyReplicas' | 'availableReplicas',
): number {
  let n = 0;
  for (const rs of rss) if (rs) n += int(rs.status?.[f], 0);
  return n;
}

/** NewRSNewReplicas: how far the new ReplicaSet may grow this step. */
export function newRSNewReplicas(d: Deployment, all: ReplicaSet[], newRs: ReplicaSet): number {
  if (!isRollingUpdate(d)) return replicasOf(d);
  const surge = maxSurge(d);
  const current = sumSpecReplicas(all);
  const maxTotal = replicasOf(d) + surge;
  if (current >= maxTotal) return rsReplicas(newRs);
  const up = Math.min(maxTotal - current, Math.max(0, replicasOf(d) - rsReplicas(newRs)));
  return rsReplicas(newRs) + up;
}

/** SetReplicasAnnotations; returns whether anything changed. */
export function setReplicasAnnotations(rs: ReplicaSet, desired: number, max: number): boolean {
  rs.metadata.annotations ??= {};
  const a = rs.metadata.annotations;
  let changed = false;
  if (a[DESIRED_REPLICAS_ANNOTATION] !== String(desired)) {
    a[DESIRED_REPLICAS_ANNOTATION] = String(desired);
    changed = true;
  }
  if (a[MAX_REPLICAS_ANNOTATION] !== String(max)) {
    a[MAX_REPLICAS_ANNOTATION] = String(max);
    changed = true;
  }
  return changed;
}

export function replicasAnnotationsNeedUpdate(rs: ReplicaSet, desired: number, max: number): boolean {
  const a = rs.metadata.annotations ?? {};
  return a[DESIRED_REPLICAS_ANNOTATION] !== String(desired) || a[MAX_REPLICAS_ANNOTATION] !== String(max);
}

/** SetNewReplicaSetAnnotations: copies the Deployment's annotations and stamps the revision. */
export function setNewReplicaSetAnnotations(
  d: Deployment,
  rs: ReplicaSet,
  newRevision: number,
  exists: boolean,
): boolean {
  let changed = false;
  rs.metadata.annotations ??= {};
  const a = rs.metadata.annotations;
  for (const [k, v] of Object.entries(d.metadata.annotations ?? {})) {
    if (
      k === LAST_APPLIED ||
      k === REVISION_ANNOTATION ||
      k === REVISION_HISTORY_ANNOTATION ||
      k === DESIRED_REPLICAS_ANNOTATION ||
      k === MAX_REPLICAS_ANNOTATION ||
      k === ROLLBACK_TO
    )
      continue;
    if (a[k] !== v) {
      a[k] = v;
      changed = true;
    }
  }
  const old = a[REVISION_ANNOTATION];
  const oldNum = old === undefined ? 0 : Number(old);
  if (!(oldNum >= newRevision)) {
    a[REVISION_ANNOTATION] = String(newRevision);
    changed = true;
    if (old !== undefined && old !== '') {
      // A reused ReplicaSet (rollback) remembers the revisions it has been.
      const hist = a[REVISION_HISTORY_ANNOTATION];
      a[REVISION_HISTORY_ANNOTATION] = hist ? `${hist},${old}` : old;
    }
  }
  if (!exists && setReplicasAnnotations(rs, replicasOf(d), replicasOf(d) + maxSurge(d))) changed = true;
  return changed;
}

/** IsSaturated: the new ReplicaSet alone runs the whole desired count, all available. */
export function isSaturated(d: Deployment, rs: ReplicaSet | undefined): boolean {
  if (!rs) return false;
  const desired = Number(rs.metadata.annotations?.[DESIRED_REPLICAS_ANNOTATION]);
  return (
    desired === replicasOf(d) &&
    rsReplicas(rs) === replicasOf(d) &&
    int(rs.status?.availableReplicas, 0) === replicasOf(d)
  );
}

/** FindActiveOrLatest: the only ReplicaSet with replicas, or the newest when none has any. */
export function findActiveOrLatest(
  newRs: ReplicaSet | undefined,
  olds: ReplicaSet[],
): ReplicaSet | undefined {
  if (!newRs && olds.length === 0) return undefined;
  const byNewest = [...olds].sort((a, b) => -byCreation(a, b));
  const active = activeReplicaSets([...olds, ...(newRs ? [newRs] : [])]);
  if (active.length === 0) return newRs ?? byNewest[0];
  if (active.length === 1) return active[0];
  return undefined;
}

/** getReplicaSetFraction / GetProportion: this ReplicaSet's share of a scale change. */
export function proportion(rs: ReplicaSet, d: Deployment, toAdd: number, added: number): number {
  if (rsReplicas(rs) === 0 || toAdd === 0 || toAdd === added) return 0;
  let fraction: number;
  if (replicasOf(d) === 0) fraction = -rsReplicas(rs);
  else {
    const deploymentReplicas = replicasOf(d) + maxSurge(d);
    const annotated = Number(rs.metadata.annotations?.[MAX_REPLICAS_ANNOTATION]);
    const base =
      Number.isInteger(annotated) && rs.metadata.annotations?.[MAX_REPLICAS_ANNOTATION] !== undefined
        ? annotated
        : int(d.status?.replicas, 0);
    fraction = base === 0 ? 0 : Math.round((rsReplicas(rs) * deploymentReplicas) / base) - rsReplicas(rs);
  }
  const allowed = toAdd - added;
  return toAdd > 0 ? Math.min(fraction, allowed) : Math.max(fraction, allowed);
}

/** ReplicaSetsBySizeNewer (scale up) / BySizeOlder (scale down). */
export function sortBySize(rss: ReplicaSet[], newerFirst: boolean): ReplicaSet[] {
  return [...rss].sort((a, b) => {
    if (rsReplicas(a) !== rsReplicas(b)) return rsReplicas(b) - rsReplicas(a);
    return newerFirst ? -byCreation(a, b) : byCreation(a, b);
  });
}

export function calculateStatus(
  all: ReplicaSet[],
  newRs: ReplicaSet | undefined,
  d: Deployment,
  now: Date,
): DeploymentStatus {
  const available = sumStatus(all, 'availableReplicas');
  const total = sumSpecReplicas(all);
  const status: DeploymentStatus = {
    observedGeneration: d.metadata.generation,
    replicas: sumStatus(all, 'replicas'),
    updatedReplicas: sumStatus([newRs], 'replicas'),
    readyReplicas: sumStatus(all, 'readyReplicas'),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, total - available),
    conditions: (d.status?.conditions ?? []).map((c) => ({ ...c })),
  };
  if (d.status?.collisionCount !== undefined) status.collisionCount = d.status.collisionCount;
  if (available >= replicasOf(d) - maxUnavailable(d)) {
    setCondition(
      status,
      newCondition(
        'Available',
        'True',
        'MinimumReplicasAvailable',
        'Deployment has minimum availability.',
        now,
      ),
    );
  } else {
    setCondition(
      status,
      newCondition(
        'Available',
        'False',
        'MinimumReplicasUnavailable',
        'Deployment does not have minimum availability.',
        now,
      ),
    );
  }
  return status;
}

export function newCondition(
  type: string,
  status: string,
  reason: string,
  message: string,
  now: Date,
): DeploymentCondition {
  const t = rfc3339(now);
  return { type, status, lastUpdateTime: t, lastTransitionTime: t, reason, message };
}

export function getCondition(
  status: DeploymentStatus | undefined,
  type: string,
): DeploymentCondition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

/** SetDeploymentCondition: same status and reason is no change; same status keeps the transition time. */
export function setCondition(status: DeploymentStatus, cond: DeploymentCondition): void {
  const cur = getCondition(status, cond.type);
  if (cur && cur.status === cond.status && cur.reason === cond.reason) return;
  const next = { ...cond };
  if (cur && cur.status === cond.status) next.lastTransitionTime = cur.lastTransitionTime;
  status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== cond.type), next];
}

export function removeCondition(status: DeploymentStatus, type: string): void {
  if (status.conditions) status.conditions = status.conditions.filter((c) => c.type !== type);
}

export function hasProgressDeadline(d: Deployment): boolean {
  const p = d.spec?.progressDeadlineSeconds;
  return p === undefined || (p !== null && p !== 2147483647);
}

export function progressDeadlineSeconds(d: Deployment): number {
  return int(d.spec?.progressDeadlineSeconds, 600);
}

/** DeploymentComplete: every desired replica updated and available, at the current generation. */
export function deploymentComplete(d: Deployment, s: DeploymentStatus): boolean {
  const r = replicasOf(d);
  return (
    int(s.updatedReplicas, 0) === r &&
    int(s.replicas, 0) === r &&
    int(s.availableReplicas, 0) === r &&
    int(s.observedGeneration, 0) >= int(d.metadata.generation, 0)
  );
}

/** DeploymentProgressing: anything moved forward since the last recorded status. */
export function deploymentProgressing(d: Deployment, s: DeploymentStatus): boolean {
  const old = d.status ?? {};
  const oldOld = int(old.replicas, 0) - int(old.updatedReplicas, 0);
  const newOld = int(s.replicas, 0) - int(s.updatedReplicas, 0);
  return (
    int(s.updatedReplicas, 0) > int(old.updatedReplicas, 0) ||
    newOld < oldOld ||
    int(s.readyReplicas, 0) > int(old.readyReplicas, 0) ||
    int(s.availableReplicas, 0) > int(old.availableReplicas, 0)
  );
}

export function deploymentTimedOut(d: Deployment, s: DeploymentStatus, now: number): boolean {
  if (!hasProgressDeadline(d)) return false;
  const c = getCondition(s, 'Progressing');
  if (!c) return false;
  if (c.reason === 'NewReplicaSetAvailable') return false;
  if (c.reason === 'ProgressDeadlineExceeded') return true;
  const from = parseTime(c.lastUpdateTime);
  return from !== undefined && from + progressDeadlineSeconds(d) * 1000 < now;
}

/** The status as apps/v1 serializes it (omitempty counters dropped). */
export function serializedStatus(s: DeploymentStatus): DeploymentStatus {
  const out: DeploymentStatus = { ...s };
  for (const k of [
    'replicas',
    'updatedReplicas',
    'readyReplicas',
    'availableReplicas',
    'unavailableReplicas',
    'observedGeneration',
  ] as const) {
    if (!out[k]) delete out[k];
  }
  if (!out.conditions?.length) delete out.conditions;
  return out;
}
