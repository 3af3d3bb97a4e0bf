/**
 * The virtual node's side of burst offloading, apart from any Job: the `offload-node`
 * controller keeps the node registered, Ready while the provider answers, and heartbeating
 * (its Ready condition and its Lease, as a kubelet does); the same provider probe answers
 * the manager's /readyz.
 */
import {
  type ControllerDefinition,
  isAlreadyExists,
  isNotFound,
  type KubeObject,
  microTime,
  type ReconcileContext,
} from '../../runtime/index.ts';
import * as K from './keys.ts';
import type { OffloadProvider } from './provider.ts';
import {
  NODE_HEARTBEAT_MS,
  NODE_LEASE_NAMESPACE,
  nodeLease,
  virtualNode,
  virtualNodeStatus,
} from './virtual.ts';

const NODE = { apiVersion: 'v1', kind: 'Node' };
const NAMESPACE = { apiVersion: 'v1', kind: 'Namespace' };
const LEASE = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' };
/** How long one probe answer is reused (the heartbeat and /readyz both ask). */
const PROBE_TTL_MS = 5000;

type VirtualNode = KubeObject & {
  status?: { conditions?: { type: string; status: string; lastHeartbeatTime?: string }[] };
};

export interface ProbeResult {
  ok: boolean;
  message: string;
}

/** Whether the provider answers with configured credentials, asked at most once per PROBE_TTL_MS. */
export function providerProbe(
  provider: OffloadProvider,
  timeoutMs: number,
  now: () => number,
): () => Promise<ProbeResult> {
  let last: (ProbeResult & { at: number }) | undefined;
  return async () => {
    if (last && now() - last.at < PROBE_TTL_MS) return last;
    let result: ProbeResult;
    if (!provider.configured())
      result = { ok: false, message: 'no provider credentials are configured (RUNPOD_KEY)' };
    else {
      try {
        await provider.ping(AbortSignal.timeout(timeoutMs));
        result = { ok: true, message: `${provider.name} answers` };
      } catch (err) {
        result = { ok: false, message: `${provider.name} does not answer: ${(err as Error).message}` };
      }
    }
    last = { at: now(), ...result };
    return result;
  };
}

/** The virtual node, created when the cache does not show it. */
export async function ensureVirtualNode(ctx: ReconcileContext, providerName: string): Promise<VirtualNode> {
  const cached = await ctx.cache.get<VirtualNode>(NODE, K.VIRTUAL_NODE_NAME);
  if (cached) return cached;
  try {
    return await ctx.client.create(virtualNode(K.VIRTUAL_NODE_NAME, providerName));
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    return ctx.client.get<VirtualNode>(NODE, K.VIRTUAL_NODE_NAME);
  }
}

export function virtualNodeController(deps: {
  provider: OffloadProvider;
  probe: () => Promise<ProbeResult>;
  now: () => number;
}): ControllerDefinition {
  const { provider, probe, now } = deps;
  return {
    name: 'offload-node',
    for: NODE,
    predicates: [(e) => e.obj.metadata.name === K.VIRTUAL_NODE_NAME],
    watches: [{ ...NAMESPACE, map: (_o, e) => (e.initialList ? [K.VIRTUAL_NODE_NAME] : []) }],
    async reconcile(_key, ctx) {
      provider.attach?.(ctx.client);
      const node = await ensureVirtualNode(ctx, provider.name);
      const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
      const last = Date.parse(ready?.lastHeartbeatTime ?? '');
      const answer = await probe();
      const stale = Number.isNaN(last) || now() - last >= NODE_HEARTBEAT_MS;
      if (stale || (ready?.status === 'True') !== answer.ok) {
        const stamp = new Date(now()).toISOString().replace(/\.\d+Z$/, 'Z');
        await ctx.client.patchStatus(node, { status: virtualNodeStatus(answer.ok, answer.message, stamp) });
        const renew = microTime(now());
        const lease = await ctx.client.tryGet(LEASE, K.VIRTUAL_NODE_NAME, NODE_LEASE_NAMESPACE);
        if (!lease) {
          try {
            await ctx.client.create(nodeLease(K.VIRTUAL_NODE_NAME, renew));
          } catch (err) {
            if (!isAlreadyExists(err) && !isNotFound(err)) throw err;
          }
        } else {
          await ctx.client.mergePatch(lease, {
            spec: { renewTime: renew, holderIdentity: K.VIRTUAL_NODE_NAME },
          });
        }
      }
      return { requeueAfter: NODE_HEARTBEAT_MS };
    },
  };
}
