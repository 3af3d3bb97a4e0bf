/**
 * The AppWrapper controller's shell: reads the AppWrapper, its components and its pods, asks
 * core.decide what to do, and does it through the API (metadata and status merge patches
 * guarded by resourceVersion, component creates, deletions, events, the finalizer).
 */

import {
  type AppWrapper,
  AW_FINALIZER,
  AW_KIND,
  AW_LABEL,
  POD_KIND,
  type PodObject,
} from '../../apis/workload.codeflare.dev/v1beta2.ts';
import { keyOf, objectKey } from '../../kube/keys.ts';
import { jsonEqual } from '../../lib/json.ts';
import {
  type ControllerDefinition,
  enqueueByLabel,
  getControllerOf,
  isAlreadyExists,
  isConflict,
  isInvalid,
  isNoKindMatch,
  isNotFound,
  type KindRef,
  type KubeObject,
  type MapFunc,
  OwnWrites,
  type ReconcileContext,
  type WatchSpec,
} from '../../runtime/index.ts';
import { type AppWrapperConfigInput, resolveConfig } from './config.ts';
import {
  afterDeploy,
  type CoreInput,
  type Decision,
  type DeployResult,
  decide,
  managedElsewhere,
  needsNamespaceLabels,
  needsObservation,
} from './core.ts';
import { noExecuteNodesOf } from './health.ts';
import { type AppWrapperMetrics, appWrapperMetrics } from './metrics.ts';

export interface AppWrapperOptions extends AppWrapperConfigInput {
  /** The controller's name in metrics, logs and `--controllers` (default `appwrapper`). */
  name?: string;
  /** Parallel reconciles (default 8). */
  maxConcurrentReconciles?: number;
}

/** Index of pods (and cached components) by `namespace/<appwrapper>`. */
export const AW_OWNER_INDEX = 'appwrapper.troupe.dev/owner';

const JOB_KIND = { apiVersion: 'batch/v1', kind: 'Job' } as const;
const DEPLOYMENT_KIND = { apiVersion: 'apps/v1', kind: 'Deployment' } as const;
const STATEFULSET_KIND = { apiVersion: 'apps/v1', kind: 'StatefulSet' } as const;
const NAMESPACE_KIND = { apiVersion: 'v1', kind: 'Namespace' } as const;
const NODE_KIND = { apiVersion: 'v1', kind: 'Node' } as const;
/** Kinds watched (only objects carrying the AppWrapper label) and read from the cache. */
const CACHED_KINDS: KindRef[] = [POD_KIND, JOB_KIND, DEPLOYMENT_KIND, STATEFULSET_KIND];
const CACHED = new Set(CACHED_KINDS.map((k) => `${k.apiVersion}/${k.kind}`));

const byOwner = (obj: KubeObject): string[] => {
  const v = obj.metadata.labels?.[AW_LABEL];
  return v ? [keyOf(obj.metadata.namespace, v)] : [];
};

export function appWrapperController(
  options: AppWrapperOptions = {},
): ControllerDefinition<AppWrapperMetrics> {
  const config = resolveConfig(options);
  const written = new OwnWrites<AppWrapper>();
  const monitorNodes = config.autopilot.monitorNodes;
  // Which AppWrappers have pods on which node, kept from the pod watch, so that a node
  // Autopilot relabels wakes exactly the AppWrappers on it. A pod leaves it when it is
  // deleted, loses its AppWrapper label or moves; a node leaves it with its last pod. (A map
  // function is synchronous and sees no cache, so this is the watch's own index.)
  const placed = new Map<string, { node: string; aw: string }>(); // pod key → where, whose
  const onNode = new Map<string, Set<string>>(); // node → pod keys
  const byLabel = enqueueByLabel(AW_LABEL);
  const unplace = (pod: string) => {
    const was = placed.get(pod);
    if (!was) return;
    placed.delete(pod);
    const pods = onNode.get(was.node);
    pods?.delete(pod);
    if (pods?.size === 0) onNode.delete(was.node);
  };
  const trackPod: MapFunc = (obj, event) => {
    const aws = byLabel(obj, event);
    // An update maps the old object too (to wake its former AppWrapper): the new one says where the pod is.
    if (obj !== event.obj) return aws;
    const key = objectKey(obj);
    const node =
      event.type === 'delete' ? undefined : (obj.spec as { nodeName?: string } | undefined)?.nodeName;
    const aw = aws?.[0];
    unplace(key);
    if (node && aw) {
      placed.set(key, { node, aw });
      let pods = onNode.get(node);
      if (!pods) {
        pods = new Set();
        onNode.set(node, pods);
      }
      pods.add(key);
    }
    return aws;
  };
  const awsOnNode = (node: string): string[] => {
    const out = new Set<string>();
    for (const pod of onNode.get(node) ?? []) {
      const p = placed.get(pod);
      if (p) out.add(p.aw);
    }
    return [...out];
  };
  const watches: WatchSpec[] = CACHED_KINDS.map((k) => ({
    ...k,
    labelSelector: AW_LABEL,
    map: monitorNodes && k === POD_KIND ? trackPod : byLabel,
  }));
  if (monitorNodes) {
    watches.push({
      ...NODE_KIND,
      map: (node) => awsOnNode(node.metadata.name ?? ''),
      // Only a change of labels can change what Autopilot says about a node.
      predicates: [
        (e) => e.type !== 'update' || !e.old || !jsonEqual(e.old.metadata.labels, e.obj.metadata.labels),
      ],
    });
  }

  return {
    name: options.name ?? 'appwrapper',
    for: AW_KIND,
    watches,
    indexes: CACHED_KINDS.map((kind) => ({ kind, name: AW_OWNER_INDEX, fn: byOwner })),
    maxConcurrentReconciles: options.maxConcurrentReconciles ?? 8,
    metrics: appWrapperMetrics,

    async reconcile(key, ctx) {
      const ns = ctx.namespace ?? '';
      const cached = await ctx.cache.get<AppWrapper>(AW_KIND, ctx.name, ns);
      if (!cached) {
        written.forget(key);
        return;
      }
      let aw = written.latest(key, cached);
      if (managedElsewhere(aw)) return;

      const input: CoreInput = { aw, now: new Date(ctx.clock.now()), config };
      if (needsObservation(aw)) {
        input.pods = await podsOf(ctx, aw);
        input.components = await componentsOf(ctx, aw);
        if (monitorNodes) {
          const nodes = await ctx.cache.informerFor(NODE_KIND);
          input.noExecuteNodes = noExecuteNodesOf(nodes.store.list(), config.autopilot);
        }
      }
      if (needsNamespaceLabels(aw, config)) {
        const nsObj = await ctx.client.tryGet(NAMESPACE_KIND, ns, undefined, { signal: ctx.signal });
        input.namespaceLabels = nsObj?.metadata.labels ?? {};
      }
      const d = decide(input);
      const remember = (from: string | undefined, obj: AppWrapper) => {
        written.record(key, from, obj);
        aw = obj;
      };
      aw = await apply(ctx, aw, d, remember);
      if (d.deploy) {
        const results = await deploy(ctx, aw, d.deploy);
        const after = afterDeploy({ ...input, aw, now: new Date(ctx.clock.now()) }, results);
        aw = await apply(ctx, aw, after, remember);
        return after.requeueAfterMs !== undefined ? { requeueAfter: after.requeueAfterMs } : undefined;
      }
      return d.requeueAfterMs !== undefined ? { requeueAfter: d.requeueAfterMs } : undefined;
    },
  };
}

async function podsOf(ctx: ReconcileContext, aw: AppWrapper): Promise<PodObject[]> {
  const inf = await ctx.cache.informerFor<PodObject>(POD_KIND, { labelSelector: AW_LABEL });
  return inf.store.byIndex(AW_OWNER_INDEX, objectKey(aw));
}

/** The components, aligned with status.componentStatus: from the cache, else read live. */
async function componentsOf(ctx: ReconcileContext, aw: AppWrapper): Promise<(KubeObject | undefined)[]> {
  const ns = aw.metadata.namespace ?? '';
  return Promise.all(
    (aw.status?.componentStatus ?? []).map(async (cs) => {
      if (!cs.name || !cs.kind || !cs.apiVersion) return undefined;
      const kind = { apiVersion: cs.apiVersion, kind: cs.kind };
      if (CACHED.has(`${cs.apiVersion}/${cs.kind}`)) {
        const inf = await ctx.cache.informerFor(kind, { labelSelector: AW_LABEL });
        const hit = inf.get(`${ns}/${cs.name}`);
        if (hit) return hit;
      }
      // Not cached (another kind, or a watch that has not caught up): ask the server, so a
      // component is never declared missing on the strength of a stale cache.
      try {
        return await ctx.client.tryGet(kind, cs.name, ns, { signal: ctx.signal });
      } catch (err) {
        if (isNoKindMatch(err)) return undefined;
        throw err;
      }
    }),
  );
}

async function apply(
  ctx: ReconcileContext<AppWrapperMetrics>,
  aw: AppWrapper,
  d: Decision,
  remember: (fromRv: string | undefined, obj: AppWrapper) => void,
): Promise<AppWrapper> {
  const { client } = ctx;
  for (const p of d.problems) {
    ctx.log.warn({ annotation: p.annotation, value: p.value }, 'malformed annotation; using the default');
  }
  if (d.update) {
    const from = aw.metadata.resourceVersion;
    const patch: Record<string, unknown> = {
      metadata: { resourceVersion: from, finalizers: d.update.finalizers, labels: d.update.labels },
    };
    if (d.update.suspend !== undefined) patch.spec = { suspend: d.update.suspend };
    const updated = await client.mergePatch<AppWrapper>(aw, patch);
    ctx.log.info('no webhook: applied default initializations');
    remember(from, updated);
    aw = updated;
  }
  if (d.status) {
    const from = aw.metadata.resourceVersion;
    const before = aw.status?.phase ?? '';
    try {
      const updated = await client.patchStatus<AppWrapper>(aw, {
        metadata: { resourceVersion: from },
        status: { ...d.status, resettingCount: d.status.resettingCount || null },
      });
      remember(from, updated);
      ctx.metrics.statusWritten(aw.status, updated.status ?? d.status, aw.metadata.namespace ?? '');
      aw = updated;
      const after = updated.status?.phase ?? '';
      if (after !== before) ctx.log.info({ phase: after }, after || 'Empty');
    } catch (err) {
      if (!d.statusBestEffort) throw err;
      ctx.log.debug({ err }, 'best-effort status update failed');
    }
  }
  for (const del of d.deletes) {
    try {
      await client.delete(
        {
          apiVersion: del.apiVersion,
          kind: del.kind,
          metadata: { name: del.name, namespace: del.namespace },
        },
        {
          propagationPolicy: del.propagationPolicy,
          gracePeriodSeconds: del.gracePeriodSeconds,
          preconditions: del.uid ? { uid: del.uid } : undefined,
          signal: ctx.signal,
        },
      );
    } catch (err) {
      // A replaced object (uid precondition) or a kind no longer served is already "gone";
      // the next pass sees what is left.
      if (!isConflict(err) && !isNoKindMatch(err))
        ctx.log.error({ err, name: del.name, kind: del.kind }, 'deletion error');
    }
  }
  for (const e of d.events) {
    if (e.type === 'Warning') ctx.recorder.warning(aw, e.reason, e.reason, e.message);
    else ctx.recorder.normal(aw, e.reason, e.reason, e.message);
  }
  if (d.removeFinalizer) {
    aw = await client.removeFinalizer(aw, AW_FINALIZER);
    ctx.log.info('finalizer deleted');
  }
  return aw;
}

/** Creates the components in order, stopping at the first failure, as upstream does. */
async function deploy(
  ctx: ReconcileContext,
  aw: AppWrapper,
  items: NonNullable<Decision['deploy']>,
): Promise<DeployResult[]> {
  const results: DeployResult[] = [];
  for (const { index, obj } of items) {
    try {
      const created = await ctx.client.create(obj, { signal: ctx.signal });
      results.push({ index, outcome: 'created', name: created.metadata.name ?? '' });
    } catch (err) {
      if (isAlreadyExists(err) && obj.metadata.name) {
        const existing = await ctx.client.tryGet(obj, obj.metadata.name, obj.metadata.namespace, {
          signal: ctx.signal,
        });
        const ref = existing && getControllerOf(existing);
        results.push({ index, outcome: 'exists', controlledByUs: ref?.name === aw.metadata.name });
        if (ref?.name !== aw.metadata.name) break;
        continue;
      }
      const message = err instanceof Error ? err.message : String(err);
      // A kind the server does not serve (no CRD) or an object it rejects will never be created.
      const fatal = isNoKindMatch(err) || isNotFound(err) || isInvalid(err);
      results.push({ index, outcome: 'failed', message, fatal });
      break;
    }
  }
  return results;
}
