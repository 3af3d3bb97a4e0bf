/**
 * The disruption-budget half of pods/eviction (pkg/registry/core/pod/storage/eviction.go):
 * a pod that is not terminal, pending or already terminating may only be evicted while its
 * PodDisruptionBudget allows a disruption; the eviction then takes one (disruptionsAllowed−1,
 * the pod recorded in status.disruptedPods) before the pod is deleted. A budget that forbids
 * it answers 429, which `kubectl drain` retries.
 */
import { selectorFromObject } from '../../kube/labels.ts';
import { isPodReady, type PodLike } from '../../kube/pod.ts';
import type { Api } from './api.ts';
import { recordOf, str } from './builtin/common.ts';
import { ApiError, errors } from './errors.ts';
import type { KubeObject } from './types.ts';

const MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget.";

function budgetError(cause: string): ApiError {
  const err = new ApiError(429, 'TooManyRequests', MESSAGE, {
    causes: [{ reason: 'DisruptionBudget' as never, message: cause, field: '' }],
  });
  return err;
}

/** Takes a disruption from the pod's budget, or throws why the eviction must wait. */
export async function takeDisruption(api: Api, pod: KubeObject, dryRun: boolean): Promise<void> {
  const phase = str(recordOf(pod.status).phase);
  // canIgnorePDB: terminal, pending and terminating pods are not protected.
  if (pod.metadata.deletionTimestamp || phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending')
    return;
  const rt = api.registry.get('policy', 'v1', 'poddisruptionbudgets');
  if (!rt) return;
  const ns = pod.metadata.namespace ?? '';
  const pdbs = api
    .list(rt, ns)
    .records.map((r) => api.decode(rt, r))
    .filter((pdb) => {
      const sel = recordOf(pdb.spec).selector;
      if (!sel) return false;
      try {
        return selectorFromObject(sel as never).matches(pod.metadata.labels ?? {});
      } catch {
        return false;
      }
    });
  if (pdbs.length === 0) return;
  if (pdbs.length > 1) {
    throw errors.internal(
      'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
    );
  }
  const pdb = pdbs[0]!;
  const status = recordOf(pdb.status);
  const name = pdb.metadata.name!;
  // An unhealthy pod may go when the budget is met (IfHealthyBudget) or always (AlwaysAllow).
  const policy = str(recordOf(pdb.spec).unhealthyPodEvictionPolicy) || 'IfHealthyBudget';
  if (!isPodReady(pod as PodLike)) {
    if (policy === 'AlwaysAllow') return;
    if (
      Number(status.currentHealthy ?? 0) >= Number(status.desiredHealthy ?? 0) &&
      Number(status.desiredHealthy ?? 0) > 0
    )
      return;
  }
  if (Number(status.observedGeneration ?? 0) < Number(pdb.metadata.generation ?? 0)) {
    throw budgetError(`The disruption budget ${name} is still being processed by the server.`);
  }
  const allowed = Number(status.disruptionsAllowed ?? 0);
  if (allowed <= 0) {
    throw budgetError(
      `The disruption budget ${name} needs ${Number(status.desiredHealthy ?? 0)} healthy pods and has ${Number(status.currentHealthy ?? 0)} currently`,
    );
  }
  if (dryRun) return;
  const now = new Date(api.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  await api.updateWith(
    rt,
    ns,
    name,
    { user: 'system:apiserver', subresource: 'status' },
    (cur) => {
      const st = recordOf(cur.status);
      const left = Number(st.disruptionsAllowed ?? 0);
      if (left <= 0)
        throw budgetError(
          `The disruption budget ${name} needs ${Number(st.desiredHealthy ?? 0)} healthy pods and has ${Number(st.currentHealthy ?? 0)} currently`,
        );
      return {
        ...cur,
        status: {
          ...st,
          disruptionsAllowed: left - 1,
          disruptedPods: { ...recordOf(st.disruptedPods), [pod.metadata.name!]: now },
        },
      };
    },
    false,
  );
}
