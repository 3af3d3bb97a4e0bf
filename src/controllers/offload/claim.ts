/**
 * Steps 2 and 3 of a launch, claim then clear: the virtual pod takes the Job's active slot
 * before anything remote exists, then the Job's local pods that no node holds are deleted.
 * A local pod that is bound or running wins, so a Job never runs locally and remotely.
 */
import { isAlreadyExists, isConflict } from '../../runtime/index.ts';
import { type OffloadContext, POD } from './context.ts';
import { isVirtualPod } from './core.ts';
import { ensureVirtualNode } from './node.ts';
import type { Job, Pod } from './types.ts';
import { virtualPod } from './virtual.ts';
import { virtualPodName } from './workload.ts';

/** Step 2: the unlinked virtual pod; 'taken' when a pod of its name is someone else's, 'busy' while one is going. */
export async function claim(c: OffloadContext, job: Job): Promise<Pod | 'taken' | 'busy'> {
  await ensureVirtualNode(c, c.provider.name);
  let vpod: Pod;
  try {
    vpod = await c.client.create(virtualPod(job, { provider: c.provider.name }), { signal: c.signal });
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    const existing = await c.client.tryGet<Pod>(POD, virtualPodName(job), job.metadata.namespace, {
      signal: c.signal,
    });
    if (!existing) return 'busy';
    if (!existing.metadata.ownerReferences?.some((r) => r.uid === job.metadata.uid)) return 'taken';
    if (existing.metadata.deletionTimestamp) return 'busy';
    return existing;
  }
  // Its status is written once it is linked: nothing before the remote create waits for it.
  return vpod;
}

/** The Job's pods as the API server has them now (the cache may lag behind the scheduler). */
async function livePods(c: OffloadContext, job: Job): Promise<Pod[]> {
  const match = job.spec?.selector?.matchLabels ?? {
    'batch.kubernetes.io/controller-uid': job.metadata.uid ?? '',
  };
  const labelSelector = Object.entries(match)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const list = await c.client.list<Pod>(POD, {
    namespace: job.metadata.namespace,
    labelSelector,
    signal: c.signal,
  });
  return list.items.filter((p) => p.metadata.ownerReferences?.some((r) => r.uid === job.metadata.uid));
}

/**
 * Step 3: deletes the Job's local pods no node holds. 'local' when a local pod is bound,
 * running or succeeded (it runs here, so the offload must not happen); 'wait' when one
 * bound to a node is still terminating, or when the only local attempts have failed: the
 * offload would replace no attempt but run the Job again after it ran here (its
 * controller fails the Job, or makes a new attempt that may be offloaded in its turn).
 */
export async function clearLocal(c: OffloadContext, job: Job): Promise<'clear' | 'local' | 'wait'> {
  for (let round = 0; round < 5; round++) {
    let again = false;
    let failed = false;
    let active = false;
    for (const p of await livePods(c, job)) {
      if (isVirtualPod(p)) continue;
      const phase = p.status?.phase;
      if (phase === 'Succeeded') return 'local';
      if (phase === 'Failed') {
        failed = true;
        continue;
      }
      if (p.spec?.nodeName) return p.metadata.deletionTimestamp ? 'wait' : 'local';
      active = true;
      if (p.metadata.deletionTimestamp) continue;
      try {
        await c.client.delete(p, {
          preconditions: { uid: p.metadata.uid, resourceVersion: p.metadata.resourceVersion },
        });
      } catch (err) {
        if (!isConflict(err)) throw err;
        again = true;
      }
    }
    if (!again) return failed && !active ? 'wait' : 'clear';
  }
  return 'wait';
}
