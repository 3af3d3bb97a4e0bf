/**
 * The podgroup controller's shell: reads a group's pods and PodGroup from the cache, asks
 * core.decide what to change, and applies it through the API (label patches, PodGroup
 * create, status patch, restarts, events). Keys are `namespace/group`, whether they come from
 * a PodGroup or from pods that name a group without one.
 */

import {
  POD_KIND,
  PODGROUP_KIND,
  type PodGroup,
  type PodObject,
  READY_LABEL,
} from '../../apis/scheduling.incubator.k8s.io/v1alpha1.ts';
import { compareStrings } from '../../lib/compare.ts';
import {
  type ControllerDefinition,
  isAlreadyExists,
  isConflict,
  isNotFound,
  keyOf,
  type ObjectReference,
  OwnWrites,
  type ReconcileContext,
} from '../../runtime/index.ts';
import { type Decision, decide, type PeerGroup, type PlannedEvent } from './core.ts';
import { groupKeysOf } from './membership.ts';
import { type PodGroupMetrics, podGroupMetrics } from './metrics.ts';
import { groupPriority } from './tally.ts';

/** Cache index of pods by every group key they name (`namespace/group`). */
export const GROUP_INDEX = 'podgroup.troupe.dev/group';
/** PodGroups another Restart group may give way to (stuck or restarted), under `yes`. */
const RESTART_PEER_INDEX = 'podgroup.troupe.dev/restart-peer';

export interface PodGroupOptions {
  /** Create a PodGroup for a labelled group that has none (default true). */
  autoCreate?: boolean;
  /** Only these namespaces (default: every namespace the manager watches). */
  namespaces?: string[];
  /**
   * Without minMember, a group counts as complete only when no member joined within this
   * many ms (default 1000), so a gang whose pods are still being created is not released
   * early because its first pods happened to start before the last ones were created.
   */
  formationWindowMs?: number;
  /** Parallel reconciles (default 4). */
  maxConcurrentReconciles?: number;
  /** The controller's name in metrics, logs and `--controllers` (default `podgroup`). */
  name?: string;
}

export const DEFAULT_PODGROUP_OPTIONS = {
  autoCreate: true,
  formationWindowMs: 1000,
  maxConcurrentReconciles: 4,
  name: 'podgroup',
} as const;

/** Memory that only saves API calls or smooths timing; losing it (a restart) is harmless. */
interface GroupMemory {
  /** When each member was first seen (uid → ms). */
  joinedAt: Map<string, number>;
  /** Pods labelled ready by this process whose label the cache has not shown yet. */
  labelled: Set<string>;
  /** The members at the last decision that was applied in full (uid → phase). */
  previous?: Map<string, string>;
}

const MAX_WARNED = 10_000;

export function podGroupController(options: PodGroupOptions = {}): ControllerDefinition<PodGroupMetrics> {
  const opts = { ...DEFAULT_PODGROUP_OPTIONS, ...options };
  const scope = options.namespaces?.length ? new Set(options.namespaces) : undefined;
  const inScope = (ns: string | undefined) => !!ns && (!scope || scope.has(ns));
  const memory = new Map<string, GroupMemory>();
  // The PodGroup as our last status write returned it.
  const written = new OwnWrites<PodGroup>();
  // Warnings about a pod (bad group name, conflicting claims) are recorded once per pod.
  const warned = new Set<string>();

  return {
    name: opts.name,
    for: PODGROUP_KIND,
    watches: [
      {
        ...POD_KIND,
        map: (obj) => groupKeysOf(obj as PodObject).filter((k) => inScope(obj.metadata.namespace) && k),
      },
    ],
    indexes: [
      { kind: POD_KIND, name: GROUP_INDEX, fn: (obj) => groupKeysOf(obj as PodObject) },
      {
        kind: PODGROUP_KIND,
        name: RESTART_PEER_INDEX,
        fn: (obj) => (isRestartPeer(obj as PodGroup) ? ['yes'] : []),
      },
    ],
    maxConcurrentReconciles: opts.maxConcurrentReconciles,
    metrics: podGroupMetrics,

    async reconcile(key, ctx) {
      const namespace = ctx.namespace;
      if (!namespace || !inScope(namespace)) return;
      const now = new Date(ctx.clock.now());
      const nowMs = now.getTime();
      const pods = await ctx.cache.list<PodObject>(POD_KIND, { index: { name: GROUP_INDEX, value: key } });
      let podGroup = await ctx.cache.get<PodGroup>(PODGROUP_KIND, ctx.name, namespace);

      let mem = memory.get(key);
      if (pods.length === 0 && !podGroup) {
        memory.delete(key);
        written.forget(key);
        return;
      }
      if (!mem) {
        mem = { joinedAt: new Map(), labelled: new Set() };
        memory.set(key, mem);
      }
      const joinedAt = new Map<string, number>();
      const present = new Set<string>();
      for (const pod of pods) {
        const uid = pod.metadata.uid ?? '';
        present.add(uid);
        // creationTimestamp has second precision: a pod created over a second ago joined then.
        const created = Date.parse(pod.metadata.creationTimestamp ?? '');
        const firstSeen = mem.joinedAt.get(uid) ?? nowMs;
        joinedAt.set(uid, Number.isFinite(created) ? Math.min(firstSeen, created + 999) : firstSeen);
        if (pod.metadata.labels?.[READY_LABEL] === 'true') mem.labelled.delete(uid);
      }
      mem.joinedAt = joinedAt;
      for (const uid of mem.labelled) if (!present.has(uid)) mem.labelled.delete(uid);

      if (podGroup) podGroup = written.latest(key, podGroup);

      const peers =
        podGroup?.spec?.deadlockPolicy?.action === 'Restart' ? await stuckPeers(ctx, key) : undefined;

      const decision = decide({
        namespace,
        name: ctx.name,
        pods,
        podGroup,
        now,
        autoCreate: opts.autoCreate,
        formationWindowMs: opts.formationWindowMs,
        joinedAt,
        labelled: mem.labelled,
        previous: mem.previous,
        peers,
      });
      await apply(ctx, namespace, podGroup, decision, mem, written, warned);
      mem.previous = decision.observed;
      if (decision.deferredTo) {
        ctx.log.info(
          { deferredTo: decision.deferredTo },
          'deadlock policy: giving way to another stuck group',
        );
      }
      return decision.requeueAfterMs !== undefined
        ? { requeueAfter: Math.max(1, decision.requeueAfterMs) }
        : undefined;
    },
  };
}

async function apply(
  ctx: ReconcileContext<PodGroupMetrics>,
  namespace: string,
  podGroup: PodGroup | undefined,
  d: Decision,
  mem: GroupMemory,
  written: OwnWrites<PodGroup>,
  warned: Set<string>,
): Promise<void> {
  const { client } = ctx;
  if (d.create) {
    try {
      await client.create(d.create);
      ctx.log.info({ podGroup: keyOf(namespace, ctx.name) }, 'created PodGroup');
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }

  // One merge patch of the one label per pod; the uid makes it fail on a namesake pod
  // (a StatefulSet replacement) instead of labelling a pod that is not the one we saw.
  const results = await Promise.allSettled(
    d.label.map(async (p) => {
      await client.mergePatchUnread(
        { ...POD_KIND, metadata: { name: p.name, namespace } },
        { metadata: { uid: p.uid, labels: { [READY_LABEL]: 'true' } } },
      );
      mem.labelled.add(p.uid);
      ctx.metrics.labelled();
    }),
  );
  const failure = results.find(
    (r) => r.status === 'rejected' && !isNotFound(r.reason) && !isUidConflict(r.reason),
  );
  if (failure) throw (failure as PromiseRejectedResult).reason;

  if (d.status && podGroup) {
    const fromRv = podGroup.metadata.resourceVersion;
    const updated = await client.patchStatus<PodGroup>(podGroup, {
      metadata: { resourceVersion: fromRv },
      status: d.status,
    });
    written.record(ctx.key, fromRv, updated);
    ctx.metrics.statusWritten(podGroup.status, d.status);
    podGroup = updated;
  }

  for (const p of d.restart) {
    await client
      .delete(
        { ...POD_KIND, metadata: { name: p.name, namespace } },
        { preconditions: { uid: p.uid }, propagationPolicy: 'Background' },
      )
      .catch((err: unknown) => {
        if (!isUidConflict(err)) throw err;
      });
  }

  for (const e of d.events) record(ctx, namespace, podGroup, e, warned);
}

function record(
  ctx: ReconcileContext,
  namespace: string,
  podGroup: PodGroup | undefined,
  e: PlannedEvent,
  warned: Set<string>,
): void {
  let regarding: PodGroup | ObjectReference;
  if (e.target.kind === 'pod') {
    const once = `${e.target.pod.uid}|${e.reason}`;
    if (warned.has(once)) return;
    if (warned.size >= MAX_WARNED) warned.clear();
    warned.add(once);
    regarding = { ...POD_KIND, name: e.target.pod.name, namespace, uid: e.target.pod.uid };
  } else {
    if (!podGroup) return;
    regarding = podGroup;
  }
  ctx.recorder.event(regarding, e.type, e.reason, e.action, e.note);
}

/** A 409 from a uid precondition: the pod was replaced by a namesake since we looked. */
function isUidConflict(err: unknown): boolean {
  return isConflict(err);
}

/** Under the Restart policy and stuck, or restarted once: a group others may give way to. */
function isRestartPeer(pg: PodGroup): boolean {
  if (pg.spec?.deadlockPolicy?.action !== 'Restart') return false;
  return pg.status?.state?.phase === 'Unschedulable' || Boolean(pg.status?.lastRestartTime);
}

/**
 * Other PodGroups under the Restart policy that are stuck or were restarted, with their
 * priorities, by namespace and name. Read from an index: listing every PodGroup on each
 * reconcile of a stuck group grew with every gang the cluster ever ran.
 */
async function stuckPeers(ctx: ReconcileContext, selfKey: string): Promise<PeerGroup[]> {
  const candidates = await ctx.cache.list<PodGroup>(PODGROUP_KIND, {
    index: { name: RESTART_PEER_INDEX, value: 'yes' },
  });
  const peers: PeerGroup[] = [];
  for (const pg of candidates) {
    const key = keyOf(pg.metadata.namespace, pg.metadata.name ?? '');
    if (key === selfKey) continue;
    const phase = pg.status?.state?.phase;
    const pods = await ctx.cache.list<PodObject>(POD_KIND, { index: { name: GROUP_INDEX, value: key } });
    peers.push({
      namespace: pg.metadata.namespace ?? '',
      name: pg.metadata.name ?? '',
      priority: groupPriority(pods),
      creationTimestamp: pg.metadata.creationTimestamp,
      phase,
      lastRestartTime: pg.status?.lastRestartTime,
    });
  }
  // The index keeps keys in the order they were last updated: name order instead, so which
  // peer a group defers to does not depend on the cache's history.
  return peers.sort((a, b) => compareStrings(keyOf(a.namespace, a.name), keyOf(b.namespace, b.name)));
}
