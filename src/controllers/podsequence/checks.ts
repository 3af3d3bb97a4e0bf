/**
 * The pieces both scopes judge pods with: what a release of a pod sends, which pods may be
 * released, which run ahead of their turn, and the failures (missing, escaped, claimed
 * twice) a plan reports; and the taints a plan sets in full mode.
 */

import type { Pod } from './objects.ts';
import { type Ctx, type Failure, listNames, podName, type Release, type TaintChange } from './plan.ts';
import { hasGate, isDone, isFailed, isTerminating } from './pods.ts';
import { releasedBy, releasePatch } from './release.ts';
import { groupLabel } from './spec.ts';
import { desiredTaints, reconcileTaints, tolerationsFor } from './taints.ts';

/** Missing named pods of the groups up to `upTo` are a failure once the grace period is over. */
export function missingCheck(
  ctx: Ctx,
  missingByGroup: readonly (readonly string[])[],
  upTo: number,
): { missing: string[]; failure?: Failure; requeueAfterMs?: number } {
  const missing: string[] = [];
  missingByGroup.forEach((names, k) => {
    if (k <= upTo) missing.push(...names);
  });
  if (missing.length === 0) return { missing };
  const prev = (ctx.prev.conditions ?? []).find((c) => c.type === 'PodsFound');
  const since =
    prev?.status === 'False' && prev.lastTransitionTime
      ? Date.parse(prev.lastTransitionTime)
      : ctx.input.now.getTime();
  const grace = ctx.input.options.missingPodGracePeriodMs;
  const waited = ctx.input.now.getTime() - since;
  if (waited >= grace) {
    return {
      missing,
      failure: {
        reason: 'PodNotFound',
        // No running clock in the message: a status that changes every second would be
        // rewritten every second.
        message: `Pod ${listNames(missing)} not found in namespace ${ctx.spec.namespace} for more than ${Math.round(grace / 1000)}s`,
      },
    };
  }
  // Conditions carry whole seconds: wait for the first instant past the grace period.
  return { missing, requeueAfterMs: grace - waited + 1000 };
}

export function conflictFailure(conflicts: ReadonlyMap<string, string>): Failure | undefined {
  if (conflicts.size === 0) return undefined;
  // By name: the same conflicts read the same whatever order the pods were seen in.
  const names = [...conflicts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, why]) => `${name} (${why})`);
  return { reason: 'Conflict', message: `Not releasing pods claimed twice: ${listNames(names, 3)}` };
}

export function releaseFor(ctx: Ctx, pod: Pod, group: number, extra: Partial<Release> = {}): Release {
  if (!ctx.hostnames) {
    ctx.hostnames = new Map();
    for (const node of ctx.input.nodes ?? []) {
      const h = node.metadata.labels?.['kubernetes.io/hostname'];
      if (h && node.metadata.name) ctx.hostnames.set(node.metadata.name, h);
    }
  }
  const hostnames = ctx.hostnames;
  // Full mode: the webhook adds these at creation, but a pod admitted before the webhook
  // knew its sequence would otherwise be kept off every node by the later groups' taints.
  const tolerations =
    ctx.input.nodes && ctx.spec.scope === 'Node'
      ? tolerationsFor(ctx.seq.metadata.namespace ?? '', ctx.seq.metadata.name ?? '', group, ctx.n)
      : undefined;
  return {
    name: podName(pod),
    group,
    fromResourceVersion: pod.metadata.resourceVersion,
    ...extra,
    patch: releasePatch({
      pod,
      gate: ctx.spec.gate,
      releasedBy: ctx.key,
      narrowTo: extra.narrowTo,
      hostnameOf: (n) => hostnames.get(n) ?? n,
      tolerations,
    }),
  };
}

export function releasable(ctx: Ctx, conflicts: ReadonlyMap<string, string>, pod: Pod): boolean {
  return hasGate(pod, ctx.spec.gate) && !isTerminating(pod) && !conflicts.has(podName(pod));
}

/** A pod that runs ahead of its group without having been released by this sequence. */
export function escaped(ctx: Ctx, pod: Pod): boolean {
  return (
    !hasGate(pod, ctx.spec.gate) &&
    !isDone(pod) &&
    !isTerminating(pod) &&
    !isFailed(pod) &&
    releasedBy(pod) !== ctx.key
  );
}

export function escapedFailure(ctx: Ctx, pods: { pod: Pod; group: number }[]): Failure | undefined {
  if (pods.length === 0) return undefined;
  const names = pods.map(
    ({ pod, group }) => `${podName(pod)} (group ${groupLabel(ctx.spec.groups[group]!, ctx.n)})`,
  );
  return {
    reason: 'PodNotGated',
    message: `Pod ${listNames(names, 3)} started before its group's turn: it does not carry the scheduling gate ${ctx.spec.gate}`,
  };
}

// ---- taints (full mode) ------------------------------------------------------------

/**
 * This sequence's taints per node, where the cached node differs. `lift` removes them all
 * (cluster scope, invalid spec): node-scoped sequences in full mode are the only users.
 */
export function taintChanges(ctx: Ctx, indexOf: Map<string, number>, lift: boolean): TaintChange[] {
  const ns = ctx.seq.metadata.namespace ?? '';
  const name = ctx.seq.metadata.name ?? '';
  const out: TaintChange[] = [];
  for (const node of ctx.input.nodes ?? []) {
    const nodeName = node.metadata.name;
    if (!nodeName) continue;
    const desired = lift ? [] : desiredTaints(ns, name, indexOf.get(nodeName) ?? 0, ctx.n);
    if (reconcileTaints(node.spec?.taints, ns, name, desired)) out.push({ node: nodeName, desired });
  }
  return out;
}
