/**
 * The PodSequence controller: the thin shell around `decide` (core.ts). It reads the
 * sequence, the pods of its namespace and (full mode) the nodes from the shared cache,
 * and applies the plan: one merge patch per released pod, node taints, the status (only
 * when it changed) and events.
 *
 * Safety against stale data: each release patch carries the pod's resourceVersion (409 if
 * the pod changed since it was read), and before releasing anything the sequence itself is
 * read from the API server, so an edit the cache has not seen yet stops the release.
 */

import {
  type Client,
  type ControllerDefinition,
  hasFinalizer,
  isConflict,
  isNotFound,
  type KubeObject,
  type MapFunc,
  objectKey,
  type Predicate,
  type ReconcileContext,
  type ReconcileResult,
} from '../../runtime/index.ts';
import { type CoreInput, decide, type Plan } from './core.ts';
import { SequenceIndex } from './index-of-sequences.ts';
import type { OtherSequence } from './membership.ts';
import { type PodSequenceOptions, type ResolvedOptions, resolveOptions } from './options.ts';
import { resolveSpec } from './spec.ts';
import { isSequenceTaint, reconcileTaints } from './taints.ts';
import {
  NODE,
  type Node,
  POD,
  type Pod,
  PODSEQUENCE,
  type PodSequence,
  type PodSequenceStatus,
  RELEASED_BY_ANNOTATION,
  TAINT_FINALIZER,
  type Taint,
} from './types.ts';

export const CONTROLLER_NAME = 'podsequence';

const STATUS_KEYS: (keyof PodSequenceStatus)[] = [
  'phase',
  'currentIndex',
  'nodeStatus',
  'currentGroupPods',
  'readyPodsInCurrentGroup',
  'processedPods',
  'message',
  'observedGeneration',
  'conditions',
  'totalGroups',
  'progress',
  'currentGroupName',
  'currentGroupReady',
];

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** Pod updates that can change a decision (status heartbeats and the like are dropped). */
export const podChangeMatters: Predicate = (e) => {
  if (e.type !== 'update' || !e.old) return true;
  const a = e.old as Pod;
  const b = e.obj as Pod;
  if (a.metadata.resourceVersion === b.metadata.resourceVersion) return false;
  const ready = (p: Pod) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  return (
    !sameJson(a.metadata.labels, b.metadata.labels) ||
    !sameJson(a.spec?.schedulingGates, b.spec?.schedulingGates) ||
    a.spec?.nodeName !== b.spec?.nodeName ||
    a.status?.phase !== b.status?.phase ||
    ready(a) !== ready(b) ||
    a.metadata.deletionTimestamp !== b.metadata.deletionTimestamp ||
    a.metadata.annotations?.[RELEASED_BY_ANNOTATION] !== b.metadata.annotations?.[RELEASED_BY_ANNOTATION] ||
    !sameJson(a.spec?.affinity, b.spec?.affinity)
  );
};

/**
 * PodSequence updates worth a reconcile: spec edits, deletion, finalizers. Not the
 * controller's own status writes, which would otherwise each trigger another pass.
 */
export const sequenceChangeMatters: Predicate = (e) => {
  if (e.type !== 'update' || !e.old) return true;
  const a = e.old.metadata;
  const b = e.obj.metadata;
  return (
    a.generation !== b.generation ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    !sameJson(a.finalizers, b.finalizers) ||
    a.uid !== b.uid
  );
};

/** Node events that can change taints: nodes coming and going, taints or hostname edited. */
export const nodeChangeMatters: Predicate = (e) => {
  if (e.type !== 'update' || !e.old) return true;
  const a = e.old as Node;
  const b = e.obj as Node;
  return (
    !sameJson(a.spec?.taints, b.spec?.taints) ||
    a.metadata.labels?.['kubernetes.io/hostname'] !== b.metadata.labels?.['kubernetes.io/hostname']
  );
};

async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * The status this controller last wrote for a sequence, the resourceVersion that write
 * produced, and the resourceVersions known to be older (those its writes started from or
 * superseded). While the cache shows one of those, a reconcile judges against the written
 * status rather than the cached one: otherwise every reconcile in that window writes the
 * same status again and records the same transition events again. Any other
 * resourceVersion (the cache caught up, or someone else changed the sequence) means the
 * cache is to be trusted again.
 */
interface WrittenStatus {
  uid: string | undefined;
  status: PodSequenceStatus;
  rv: string | undefined;
  older: Set<string | undefined>;
}

/** `cached`, with the status this controller wrote last if the cache does not show it yet. */
function withOwnStatus(cached: PodSequence, written: Map<string, WrittenStatus>): PodSequence {
  const key = objectKey(cached);
  const mine = written.get(key);
  if (!mine) return cached;
  if (mine.uid === cached.metadata.uid && mine.older.has(cached.metadata.resourceVersion)) {
    return { ...cached, status: mine.status };
  }
  written.delete(key);
  return cached;
}

function rememberStatus(
  written: Map<string, WrittenStatus>,
  seq: PodSequence,
  status: PodSequenceStatus,
  rv: string | undefined,
): void {
  const key = objectKey(seq);
  const prev = written.get(key);
  const same = prev && prev.uid === seq.metadata.uid ? prev : undefined;
  const older = new Set(same?.older);
  older.add(seq.metadata.resourceVersion);
  if (same) older.add(same.rv);
  written.set(key, { uid: seq.metadata.uid, status, rv, older });
}

/** The PodSequence controller(s) for the runtime's Manager. */
export function podSequenceControllers(options: PodSequenceOptions = {}): ControllerDefinition[] {
  const opts = resolveOptions(options);
  const index = new SequenceIndex(opts.defaultGateName);
  const full = opts.mode === 'full';
  const written = new Map<string, WrittenStatus>();

  const trackSequences: MapFunc = (_obj, event) => {
    if (event.type === 'delete') {
      index.remove(objectKey(event.obj));
      written.delete(objectKey(event.obj));
    } else index.upsert(event.obj as PodSequence);
    return [];
  };
  const podToSequences: MapFunc = (obj) =>
    index.sequencesFor(obj.metadata.namespace, obj.metadata.name, obj.metadata.labels);
  const nodeToSequences: MapFunc = () => index.nodeScoped();

  const controller: ControllerDefinition = {
    name: CONTROLLER_NAME,
    for: PODSEQUENCE,
    predicates: [sequenceChangeMatters],
    watches: [
      { ...PODSEQUENCE, map: trackSequences },
      { ...POD, map: podToSequences, predicates: [podChangeMatters] },
      ...(full ? [{ ...NODE, map: nodeToSequences, predicates: [nodeChangeMatters] }] : []),
    ],
    maxConcurrentReconciles: opts.maxConcurrentReconciles,
    reconcile: (_key, ctx) => reconcile(ctx, opts, written),
  };
  return [controller];
}

async function reconcile(
  ctx: ReconcileContext,
  opts: ResolvedOptions,
  written: Map<string, WrittenStatus>,
): Promise<ReconcileResult | undefined> {
  const cached = await ctx.cache.get<PodSequence>(PODSEQUENCE, ctx.name, ctx.namespace);
  if (!cached) return undefined;
  const seq = withOwnStatus(cached, written);
  const full = opts.mode === 'full';
  if (seq.metadata.deletionTimestamp) {
    await finalize(ctx, seq, full);
    return undefined;
  }
  const spec = resolveSpec(seq, opts.defaultGateName);
  const input: CoreInput = { seq, pods: [], now: new Date(), options: opts };
  if (spec.errors.length === 0) {
    try {
      input.pods = await ctx.cache.list<Pod>(POD, { namespace: spec.namespace, signal: ctx.signal });
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      input.readError = `cannot read the pods of namespace ${spec.namespace}: ${(err as Error).message}`;
    }
  }
  if (full) input.nodes = await ctx.cache.list<Node>(NODE, { signal: ctx.signal });
  input.others = await otherSequences(ctx, seq, spec.namespace, opts);
  const plan = decide(input);

  let retry = false;
  if (full && spec.errors.length === 0 && spec.scope === 'Node' && !hasFinalizer(seq, TAINT_FINALIZER)) {
    // Before the first taint, so that deleting the sequence always lifts them.
    await ctx.client.addFinalizer(seq, TAINT_FINALIZER, { signal: ctx.signal });
  }
  if (plan.releases.length > 0) retry = (await release(ctx, seq, plan, opts)) || retry;
  for (const change of plan.taints) await setTaints(ctx.client, seq, change.node, change.desired, ctx.signal);
  const stored = await writeStatus(ctx, seq, plan.status);
  if (stored) rememberStatus(written, seq, plan.status, stored.metadata.resourceVersion);
  for (const e of plan.events) ctx.recorder.event(seq, e.type, e.reason, e.action, e.note);
  if (retry) return { requeue: true };
  return plan.requeueAfterMs ? { requeueAfter: plan.requeueAfterMs } : undefined;
}

async function otherSequences(
  ctx: ReconcileContext,
  seq: PodSequence,
  namespace: string,
  opts: ResolvedOptions,
): Promise<OtherSequence[]> {
  const key = objectKey(seq);
  const all = await ctx.cache.list<PodSequence>(PODSEQUENCE, { signal: ctx.signal });
  return all
    .filter(
      (o) =>
        objectKey(o) !== key &&
        (o.spec?.namespace || o.metadata.namespace) === namespace &&
        !o.metadata.deletionTimestamp,
    )
    .map((o) => ({ key: objectKey(o), spec: resolveSpec(o, opts.defaultGateName) }));
}

/** Sends the release patches; resolves true when some must be retried on fresh data. */
async function release(
  ctx: ReconcileContext,
  seq: PodSequence,
  plan: Plan,
  opts: ResolvedOptions,
): Promise<boolean> {
  // The cache may lag an edit of the sequence (groups reordered, pods moved): decide only
  // on the spec the API server holds now.
  const live = await ctx.client.tryGet<PodSequence>(PODSEQUENCE, ctx.name, ctx.namespace, {
    signal: ctx.signal,
  });
  if (
    !live ||
    live.metadata.uid !== seq.metadata.uid ||
    live.metadata.generation !== seq.metadata.generation
  ) {
    ctx.log.debug('the sequence changed since it was cached; not releasing on the old spec');
    return true;
  }
  let retry = false;
  const failures: string[] = [];
  await eachLimited(plan.releases, opts.releaseConcurrency, async (r) => {
    const ref = { apiVersion: 'v1', kind: 'Pod', metadata: { name: r.name, namespace: plan.spec.namespace } };
    try {
      await ctx.client.mergePatch(ref, r.patch, { signal: ctx.signal });
    } catch (err) {
      if (isNotFound(err)) return;
      if (isConflict(err)) {
        retry = true;
        return;
      }
      failures.push(`${r.name}: ${(err as Error).message}`);
    }
  });
  if (failures.length > 0) {
    const note = `Could not release ${failures.length} pod${failures.length === 1 ? '' : 's'}: ${failures.slice(0, 3).join('; ')}`;
    ctx.recorder.warning(seq, 'ReleaseFailed', 'RemoveSchedulingGate', note);
    throw new Error(note);
  }
  return retry;
}

async function setTaints(
  client: Client,
  seq: PodSequence,
  nodeName: string,
  desired: Taint[],
  signal: AbortSignal,
): Promise<void> {
  const ns = seq.metadata.namespace ?? '';
  const name = seq.metadata.name ?? '';
  try {
    await client.modify<Node>(
      { apiVersion: 'v1', kind: 'Node', metadata: { name: nodeName } },
      (node) => {
        const next = reconcileTaints(node.spec?.taints, ns, name, desired);
        if (!next) return false;
        node.spec = { ...node.spec, taints: next };
        return true;
      },
      { signal },
    );
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** Writes the status when it differs from `seq`'s; resolves with the stored sequence when it wrote it. */
async function writeStatus(
  ctx: ReconcileContext,
  seq: PodSequence,
  status: PodSequenceStatus,
): Promise<PodSequence | undefined> {
  const current = seq.status ?? {};
  if (STATUS_KEYS.every((k) => sameJson(current[k], status[k]))) return undefined;
  // A merge patch keeps keys it does not name: clear the ones this status does not set.
  const body: Record<string, unknown> = {};
  for (const k of STATUS_KEYS) body[k] = status[k] ?? null;
  try {
    return await ctx.client.patchStatus<PodSequence>(seq, { status: body }, { signal: ctx.signal });
  } catch (err) {
    if (!isNotFound(err)) throw err;
    return undefined;
  }
}

async function finalize(ctx: ReconcileContext, seq: PodSequence, full: boolean): Promise<void> {
  if (!hasFinalizer(seq, TAINT_FINALIZER)) return;
  if (full) {
    const ns = seq.metadata.namespace ?? '';
    const name = seq.metadata.name ?? '';
    // A live list: the cache may not show yet a taint this controller has just added.
    const nodes = (await ctx.client.listAll<Node>(NODE, { signal: ctx.signal })).items;
    for (const node of nodes) {
      if ((node.spec?.taints ?? []).some((t) => isSequenceTaint(t.key, ns, name))) {
        await setTaints(ctx.client, seq, node.metadata.name ?? '', [], ctx.signal);
      }
    }
  } else {
    ctx.log.warn(
      'running in lite mode: cannot lift node taints left by full mode; removing the finalizer anyway',
    );
  }
  await ctx.client.removeFinalizer(seq as KubeObject, TAINT_FINALIZER, { signal: ctx.signal });
}
