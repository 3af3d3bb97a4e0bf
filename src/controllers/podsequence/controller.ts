/**
 * The PodSequence controller: the thin shell around `decide` (core.ts). It reads the
 * sequence, the membership of its pods (kept current from pod events, trackers.ts) and
 * (full mode) the nodes from the shared cache, and applies the plan: one merge patch per
 * released pod, node taints, the status (only when it changed, progress-only changes
 * spaced by `statusUpdateIntervalMs`) and events.
 *
 * Safety against stale data: each release patch carries the pod's resourceVersion (409 if
 * the pod changed since it was read). The sequence is read from the cache, like every
 * input: an edit takes effect once the controller has seen it (see docs/podsequence.md,
 * "A sequence edited mid-way"). A live read before each release would not close that
 * window (the edit can land between the read and the patch) and would cost a round trip
 * on every tier step.
 */

import pLimit from 'p-limit';
import {
  NODE,
  POD,
  PODSEQUENCE,
  type PodSequence,
  type PodSequenceStatus,
  RELEASED_BY_ANNOTATION,
  TAINT_FINALIZER,
} from '../../apis/scheduling.example.com/v1alpha1.ts';
import { jsonEqual } from '../../lib/json.ts';
import {
  type Client,
  type ControllerDefinition,
  hasFinalizer,
  isConflict,
  isNotFound,
  type KubeObject,
  type MapFunc,
  OwnWrites,
  objectKey,
  type Predicate,
  type ReconcileContext,
  type ReconcileResult,
} from '../../runtime/index.ts';
import {
  type CoreEvent,
  type CoreInput,
  type Decision,
  decideReleases,
  type Release,
  releaseEvents,
} from './core.ts';
import { ReleaseExpectations } from './expectations.ts';
import { SequenceIndex } from './index-of-sequences.ts';
import type { OtherSequence } from './membership.ts';
import { type PodSequenceMetrics, podSequenceMetrics } from './metrics.ts';
import type { Node, Pod, Taint } from './objects.ts';
import { type PodSequenceOptions, type ResolvedOptions, resolveOptions } from './options.ts';
import { resolveSpec } from './spec.ts';
import { isSequenceTaint, reconcileTaints } from './taints.ts';
import { Trackers } from './trackers.ts';

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
  'waitingUntil',
  'timedOutGroups',
];

/** Pod updates that can change a decision (status heartbeats and the like are dropped). */
export const podChangeMatters: Predicate = (e) => {
  if (e.type !== 'update' || !e.old) return true;
  const a = e.old as Pod;
  const b = e.obj as Pod;
  if (a.metadata.resourceVersion === b.metadata.resourceVersion) return false;
  const ready = (p: Pod) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  return (
    !jsonEqual(a.metadata.labels, b.metadata.labels) ||
    !jsonEqual(a.spec?.schedulingGates, b.spec?.schedulingGates) ||
    a.spec?.nodeName !== b.spec?.nodeName ||
    a.status?.phase !== b.status?.phase ||
    ready(a) !== ready(b) ||
    a.metadata.deletionTimestamp !== b.metadata.deletionTimestamp ||
    a.metadata.annotations?.[RELEASED_BY_ANNOTATION] !== b.metadata.annotations?.[RELEASED_BY_ANNOTATION] ||
    !jsonEqual(a.spec?.affinity, b.spec?.affinity)
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
    !jsonEqual(a.finalizers, b.finalizers) ||
    a.uid !== b.uid
  );
};

/** Node events that can change taints: nodes coming and going, taints or hostname edited. */
export const nodeChangeMatters: Predicate = (e) => {
  if (e.type !== 'update' || !e.old) return true;
  const a = e.old as Node;
  const b = e.obj as Node;
  return (
    !jsonEqual(a.spec?.taints, b.spec?.taints) ||
    a.metadata.labels?.['kubernetes.io/hostname'] !== b.metadata.labels?.['kubernetes.io/hostname']
  );
};

/**
 * When a status that differs from the written one may be written: now when it changes
 * the phase, the observed generation or some condition's status (what users and tools
 * wait on), otherwise once `intervalMs` have passed since this controller's last write.
 * Resolves the ms to wait, 0 for now.
 */
export function statusWriteDelay(
  prev: PodSequenceStatus | undefined,
  next: PodSequenceStatus,
  lastWriteAt: number | undefined,
  now: number,
  intervalMs: number,
): number {
  if (!prev || lastWriteAt === undefined || intervalMs <= 0) return 0;
  if (prev.phase !== next.phase || prev.observedGeneration !== next.observedGeneration) return 0;
  const state = (s: PodSequenceStatus) => (s.conditions ?? []).map((c) => `${c.type}=${c.status}`).join(',');
  if (state(prev) !== state(next)) return 0;
  return Math.max(0, lastWriteAt + intervalMs - now);
}

/** The PodSequence controller(s) for the runtime's Manager. */
export function podSequenceControllers(options: PodSequenceOptions = {}): ControllerDefinition[] {
  const opts = resolveOptions(options);
  const index = new SequenceIndex(opts.defaultGateName);
  const full = opts.mode === 'full';
  const state: State = {
    written: new OwnWrites<PodSequence>(),
    writtenAt: new Map(),
    trackers: new Trackers(),
    expectations: new ReleaseExpectations(),
  };

  const trackSequences: MapFunc = (_obj, event) => {
    if (event.type === 'delete') {
      index.remove(objectKey(event.obj));
      state.written.forget(objectKey(event.obj));
      state.writtenAt.delete(objectKey(event.obj));
      state.trackers.forget(objectKey(event.obj));
    } else index.upsert(event.obj as PodSequence);
    return [];
  };
  const podToSequences: MapFunc = (obj) =>
    index.sequencesFor(obj.metadata.namespace, obj.metadata.name, obj.metadata.labels);
  const nodeToSequences: MapFunc = () => index.nodeScoped();

  const controller: ControllerDefinition<PodSequenceMetrics> = {
    name: CONTROLLER_NAME,
    for: PODSEQUENCE,
    predicates: [sequenceChangeMatters],
    watches: [
      { ...PODSEQUENCE, map: trackSequences },
      { ...POD, map: podToSequences, predicates: [podChangeMatters] },
      ...(full ? [{ ...NODE, map: nodeToSequences, predicates: [nodeChangeMatters] }] : []),
    ],
    maxConcurrentReconciles: opts.maxConcurrentReconciles,
    metrics: podSequenceMetrics,
    reconcile: (_key, ctx) => reconcile(ctx, opts, index, state),
  };
  return [controller];
}

/** What the controller keeps between reconciles; all of it derived, rebuilt after a restart. */
interface State {
  /** This controller's status writes the cache may not show yet. */
  written: OwnWrites<PodSequence>;
  /** When this controller last wrote each sequence's status (ms, monotonic): spaces progress writes. */
  writtenAt: Map<string, number>;
  trackers: Trackers;
  expectations: ReleaseExpectations;
}

async function reconcile(
  ctx: ReconcileContext<PodSequenceMetrics>,
  opts: ResolvedOptions,
  index: SequenceIndex,
  state: State,
): Promise<ReconcileResult | undefined> {
  const now = ctx.clock.now();
  const started = ctx.clock.monotonic();
  const cached = await ctx.cache.get<PodSequence>(PODSEQUENCE, ctx.name, ctx.namespace);
  if (!cached) return undefined;
  const key = objectKey(cached);
  // Judged against the status written last, not an older cached one: otherwise every pass
  // until the watch delivers that write writes it again and records its events again.
  const seq = state.written.latest(key, cached);
  const full = opts.mode === 'full';
  if (seq.metadata.deletionTimestamp) {
    await finalize(ctx, seq, full);
    return undefined;
  }
  const spec = index.specOf(seq) ?? resolveSpec(seq, opts.defaultGateName);
  const input: CoreInput = { seq, spec, pods: [], now: new Date(now), options: opts };
  input.others = index.others(key, spec.namespace);
  if (spec.errors.length === 0) {
    const scope = ctx.cache.namespace;
    if (scope && scope !== spec.namespace) {
      input.readError = `cannot read the pods of namespace ${spec.namespace}: namespace ${spec.namespace} is outside the cache's scope ${scope}`;
    } else {
      const version = [seq.metadata.uid, seq.metadata.generation, ...input.others.map(rivalVersion)].join(
        '/',
      );
      const tracked = await state.trackers.get(ctx.cache, key, version, spec, input.others, ctx.signal);
      input.tracker = tracked.tracker;
      input.memo = tracked.memo;
    }
  }
  if (full) input.nodes = await ctx.cache.list<Node>(NODE, { signal: ctx.signal });
  const decision = decideReleases(input);

  if (full && spec.errors.length === 0 && spec.scope === 'Node' && !hasFinalizer(seq, TAINT_FINALIZER)) {
    // Before the first taint, so that deleting the sequence always lifts them.
    await ctx.client.addFinalizer(seq, TAINT_FINALIZER, { signal: ctx.signal });
  }
  // Taints first: a node admits a group before that group's pods become schedulable, so
  // the scheduler never sees a released pod against a taint about to be lifted.
  for (const change of decision.taints)
    await setTaints(ctx.client, seq, change.node, change.desired, ctx.signal);
  // The releases go out first; the report (a walk over every node in node scope) is
  // derived once the API server has taken them, rather than in front of them or in
  // competition with them for the machine.
  const retry =
    decision.releases.length > 0
      ? await release(ctx, seq, decision, opts, state.expectations, started)
      : false;
  const plan = decision.plan();
  let requeueAfter = plan.requeueAfterMs;
  if (statusChanged(seq.status, plan.status)) {
    const wait = statusWriteDelay(
      seq.status,
      plan.status,
      state.writtenAt.get(key),
      ctx.clock.monotonic(),
      opts.statusUpdateIntervalMs,
    );
    if (wait > 0) {
      // Its transition events wait with it: the next pass derives them again from the
      // status written last, and records them once, when it writes.
      requeueAfter = Math.min(requeueAfter ?? wait, wait);
    } else {
      const stored = await writeStatus(ctx, seq, plan.status);
      if (stored) {
        state.written.record(key, seq.metadata.resourceVersion, stored);
        state.writtenAt.set(key, ctx.clock.monotonic());
      }
      record(ctx, seq, plan.statusEvents);
    }
  }
  if (retry) return { requeue: true };
  return requeueAfter ? { requeueAfter } : undefined;
}

function record(ctx: ReconcileContext, seq: PodSequence, events: CoreEvent[]): void {
  for (const e of events) ctx.recorder.event(seq, e.type, e.reason, e.action, e.note);
}

/** Rivals' identity for the tracker version: their spec decides which pods conflict. */
function rivalVersion(o: OtherSequence): string {
  return `${o.key}@${o.generation}`;
}

/**
 * Sends the release patches, except those already sent from the pod's cached state, and
 * records the releases the API server accepted; resolves true when some must be retried
 * on fresh data.
 */
async function release(
  ctx: ReconcileContext<PodSequenceMetrics>,
  seq: PodSequence,
  plan: Pick<Decision, 'spec' | 'releases'>,
  opts: ResolvedOptions,
  expectations: ReleaseExpectations,
  started: number,
): Promise<boolean> {
  let retry = false;
  const accepted: Release[] = [];
  const failures: string[] = [];
  const ns = plan.spec.namespace;
  const todo = plan.releases.filter(
    (r) => !expectations.pending(`${ns}/${r.name}`, r.fromResourceVersion, ctx.clock.monotonic()),
  );
  await pLimit(opts.releaseConcurrency).map(todo, async (r) => {
    const ref = { apiVersion: 'v1', kind: 'Pod', metadata: { name: r.name, namespace: ns } };
    try {
      await ctx.client.mergePatch(ref, r.patch, { signal: ctx.signal });
      expectations.expect(`${ns}/${r.name}`, r.fromResourceVersion, ctx.clock.monotonic());
      accepted.push(r);
    } catch (err) {
      if (isNotFound(err)) return;
      if (isConflict(err)) {
        retry = true;
        return;
      }
      failures.push(`${r.name}: ${(err as Error).message}`);
    }
  });
  ctx.metrics.released(plan.spec.scope, accepted, (ctx.clock.monotonic() - started) / 1000);
  const sent = new Set(accepted);
  record(
    ctx,
    seq,
    releaseEvents(
      plan.spec,
      plan.releases.filter((r) => sent.has(r)),
    ),
  );
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

function statusChanged(current: PodSequenceStatus | undefined, next: PodSequenceStatus): boolean {
  return !STATUS_KEYS.every((k) =>
    k === 'nodeStatus' ? sameEntries(current?.nodeStatus, next.nodeStatus) : jsonEqual(current?.[k], next[k]),
  );
}

/**
 * The node entries compared one by one: the decision hands back the written entry object
 * for every node that did not change, so a thousand-node status compares by identity but
 * for the nodes that moved.
 */
function sameEntries(a: readonly unknown[] | undefined, b: readonly unknown[] | undefined): boolean {
  if (a === b) return true;
  if (!a || !b) return jsonEqual(a, b);
  return a.length === b.length && a.every((x, i) => x === b[i] || jsonEqual(x, b[i]));
}

/** Writes the status; resolves with the stored sequence, or undefined when the sequence is gone. */
async function writeStatus(
  ctx: ReconcileContext,
  seq: PodSequence,
  status: PodSequenceStatus,
): Promise<PodSequence | undefined> {
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
