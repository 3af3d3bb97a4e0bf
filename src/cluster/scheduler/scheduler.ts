/**
 * The embedded cluster's `default-scheduler`: the shell around the pure core. It watches
 * nodes and pods through the API, keeps the core's ClusterState up to date incrementally,
 * queues pending pods (priority, then arrival), schedules them in batches per event-loop
 * turn, assumes each pod on its node before the asynchronous binding (so the next pod sees
 * the space taken), and reports failures as kube-scheduler does: the PodScheduled=False
 * condition, a FailedScheduling event, and a retry when the cluster changes in a way that
 * could help (node added or changed, a pod placed, relabelled, deleted or finished, the pod
 * itself edited). Namespaces and the selectors of Services, ReplicaSets, StatefulSets and
 * ReplicationControllers are watched too, for pod affinity's namespaceSelector and the
 * default topology spreading.
 *
 * Why one file: the shell's watches, queue and retry rules share one event-driven state; the
 * decisions themselves are in core/.
 */

import type { Node, Pod } from '../../kube/builtin.ts';
import { type Condition, setCondition } from '../../kube/conditions.ts';
import { sameLabels } from '../../kube/labels.ts';
import { type Clock, holdClock, realClock, setRepeating, type TimerHandle } from '../../lib/clock.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { type ClusterClient, GVR, type Gvr, isNotFound } from '../client.ts';
import {
  ClusterState,
  computePodRequests,
  type ExtraPlugins,
  type FilterStatus,
  type FitError,
  MESSAGES_1_33,
  type MessageStyle,
  type OwnerKind,
  type PodEntry,
  type PreparedPod,
  podStartTime,
  preparePod,
  type ScheduleOptions,
  type ScheduleResult,
  type ScoringOptions,
  schedulePod,
  type Unschedulable,
} from './core/index.ts';
import { SeriesEventRecorder } from './events.ts';
import { COSCHEDULING, Coscheduling } from './gang/coscheduling.ts';
import { ANY_PLUGIN, type QueuedPod, SchedulingQueue } from './queue.ts';
import { SchedulerVolumes } from './volume-binder.ts';
import { type PodVolumes, VOLUME_BINDING } from './volume-binding.ts';

export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';

export type SchedulerLog = (
  level: 'debug' | 'info' | 'warn',
  msg: string,
  fields?: Record<string, unknown>,
) => void;

export interface SchedulerOptions {
  /** Backoff and unschedulable times, Event times; default the real clock. */
  clock?: Clock;
  /** Pods naming another `spec.schedulerName` are left alone. */
  schedulerName?: string;
  /** NodeResourcesFit scoring: LeastAllocated spreads (default), MostAllocated bin-packs. */
  scoringStrategy?: 'LeastAllocated' | 'MostAllocated';
  /** Full scoring options (resources and plugin weights); `scoringStrategy` wins for the strategy. */
  scoring?: ScoringOptions;
  /** Message wording; the embedded server claims 1.32, whose scheduler names the taint. */
  messages?: MessageStyle;
  /** 0 (default) is kube-scheduler's adaptive percentage; 100 scores every feasible node. */
  percentageOfNodesToScore?: number;
  /** DefaultPreemption: evict lower-priority pods to make room. Default true. */
  preemption?: boolean;
  /** podInitialBackoffSeconds / podMaxBackoffSeconds, in ms (defaults 1 s and 10 s). */
  podInitialBackoffMs?: number;
  podMaxBackoffMs?: number;
  /** Pods parked unschedulable longer than this retry anyway (default 5 minutes)... */
  podMaxInUnschedulableMs?: number;
  /** ...checked this often (default 30 s). */
  unschedulableFlushIntervalMs?: number;
  /** Divides the queue's durations (backoffs, the unschedulable flush), like every simulated delay. */
  timeScale?: number;
  /**
   * Coscheduling (scheduler-plugins' plugin): pods of one PodGroup are placed all or none
   * (gang/coscheduling.ts). Default false.
   */
  gangScheduling?: boolean;
  /** The plugin's podGroupBackoffSeconds: a rejected gang is not tried for this long (default 0). */
  podGroupBackoffSeconds?: number;
  /** The plugin's permitWaitingTimeSeconds: how long placed members wait by default (default 60). */
  permitWaitingTimeSeconds?: number;
  /** VolumeBinding (PVC checks, WaitForFirstConsumer node selection). Default true. */
  volumeBinding?: boolean;
  /** Write Scheduled / FailedScheduling / Preempted events (default true). */
  events?: boolean;
  /** reportingInstance of events. */
  instance?: string;
  /** Time spent scheduling per event-loop turn before yielding to the API server (default 10 ms). */
  tickBudgetMs?: number;
  log?: SchedulerLog;
}

export interface SchedulerStats {
  /** Pods bound by this scheduler. */
  bound: number;
  bindErrors: number;
  /** Scheduling attempts that found no node. */
  unschedulableAttempts: number;
  preemptions: number;
  active: number;
  backoff: number;
  unschedulable: number;
  /** Pods assumed on a node whose binding is still in flight. */
  binding: number;
  nodes: number;
  /** Pods the cluster state accounts on nodes (bound and assumed). */
  accountedPods: number;
}

export interface SchedulerHandle {
  /** The scheduler's view of the cluster (read-only for callers). */
  readonly state: ClusterState;
  stats(): SchedulerStats;
  stop(): Promise<void>;
}

type MoveRequest = Set<string> | 'all' | undefined;

/** Pods one scheduling turn places at most on a virtual clock (the wall-time budget's stand-in). */
const SIMULATED_TICK_PODS = 256;
const RESOURCES_PLUGIN = 'NodeResourcesFit';
const SPREAD_PLUGIN = 'PodTopologySpread';
const INTER_POD_PLUGIN = 'InterPodAffinity';
const NO_MOVE = new Set<string>();
/** A placed pod went away: room, spread counts and anti-affinity may all have changed. */
const POD_REMOVED = new Set([RESOURCES_PLUGIN, SPREAD_PLUGIN, INTER_POD_PLUGIN]);
/** A pod relabelled: spread counts and affinity matches change. */
const POD_CHANGED = new Set([SPREAD_PLUGIN, INTER_POD_PLUGIN]);
/**
 * A pod placed (AssignedPodAdd): as POD_CHANGED, and Coscheduling registers Pod/Add without a
 * queueing hint, so with SchedulerQueueingHints (on since 1.32) kube-scheduler's addPodToCache
 * moves every pod it turned away.
 */
const POD_PLACED = new Set([SPREAD_PLUGIN, INTER_POD_PLUGIN, COSCHEDULING]);
/** A terminating pod stops counting for topology spread. */
const POD_TERMINATING = new Set([SPREAD_PLUGIN]);

const SERVICES = GVR.services;
const REPLICATION_CONTROLLERS = GVR.replicationcontrollers;
/** The owners whose selector default spreading reads, where the API server serves them. */
const OWNERS: [OwnerKind, Gvr][] = [
  ['ReplicaSet', GVR.replicasets],
  ['StatefulSet', GVR.statefulsets],
  ['ReplicationController', REPLICATION_CONTROLLERS],
];

interface NodeSignature {
  labels: string;
  taints: string;
  unschedulable: boolean;
  allocatable: string;
}

export function startScheduler(client: ClusterClient, opts: SchedulerOptions = {}): SchedulerHandle {
  const schedulerName = opts.schedulerName ?? DEFAULT_SCHEDULER_NAME;
  const log: SchedulerLog = opts.log ?? (() => {});
  const scale = opts.timeScale && opts.timeScale > 0 ? opts.timeScale : 1;
  const clock = opts.clock ?? realClock;
  const state = new ClusterState();
  const gangs = opts.gangScheduling
    ? new Coscheduling(client, {
        clock,
        timeScale: scale,
        podGroupBackoffSeconds: opts.podGroupBackoffSeconds,
        permitWaitingTimeSeconds: opts.permitWaitingTimeSeconds,
      })
    : undefined;
  const queue = new SchedulingQueue({
    initialBackoffMs: (opts.podInitialBackoffMs ?? 1000) / scale,
    maxBackoffMs: (opts.podMaxBackoffMs ?? 10_000) / scale,
    now: () => clock.now(),
    order: gangs && ((qp) => gangs.sortKey(qp.pod, qp.firstAttempt)),
  });
  const scheduleOpts: ScheduleOptions = {
    scoring: {
      ...opts.scoring,
      strategy: opts.scoringStrategy ?? opts.scoring?.strategy ?? 'LeastAllocated',
    },
    messages: opts.messages ?? MESSAGES_1_33,
    percentageOfNodesToScore: opts.percentageOfNodesToScore ?? 0,
    preemption: opts.preemption ?? true,
    preemptable: gangs && ((pods) => gangs.preemptable(pods)),
  };
  const recorder =
    opts.events === false
      ? undefined
      : new SeriesEventRecorder(client, {
          controller: schedulerName,
          instance: opts.instance ?? `${schedulerName}-troupe`,
          log: (msg, f) => log('debug', msg, f),
          clock,
        });
  // VolumeBinding: kept apart (volume-binder.ts); its events move the pods it rejected.
  const volumes =
    opts.volumeBinding === false
      ? undefined
      : new SchedulerVolumes(client, () => requestMove(new Set([VOLUME_BINDING])), scale, clock);
  /** uid → what VolumeBinding's Filter found on the node the pod is assumed on (PreBind's input). */
  const reservedVolumes = new Map<string, PodVolumes | undefined>();
  const budgetMs = opts.tickBudgetMs ?? 10;
  const maxUnschedulableMs = (opts.podMaxInUnschedulableMs ?? 300_000) / scale;

  /** uid → node of pods assumed and not yet seen bound. */
  const assumed = new Map<string, string>();
  /**
   * uid → the newest copy the watch delivered of a pod while it was assumed (the queue does not
   * take them): an unreserved pod goes back to the queue as its informer shows it now.
   */
  const seenAssumed = new Map<string, KubeObject>();
  /** Victims of a pod's last preemption: no new preemption while they still terminate. */
  const preempting = new Map<string, string[]>();
  const nodeSigs = new Map<string, NodeSignature>();
  const inflight = new Set<Promise<void>>();
  const stats = { bound: 0, bindErrors: 0, unschedulableAttempts: 0, preemptions: 0 };
  let move: MoveRequest;
  /**
   * Failed attempts by namespace and pod inputs, at state version `failedAt` (see attempt).
   * Keyed by the queued pod's own inputs string, whose hash V8 keeps: a key joined afresh
   * on each attempt was hashed again, a visible cost with gangs retried on every binding.
   */
  const failed = new Map<string, Map<string, ScheduleResult>>();
  let failedAt = -1;
  let stopped = false;
  let tickPending = false;
  let backoffTimer: TimerHandle | undefined;
  let backoffDue = Number.POSITIVE_INFINITY;

  const requestMove = (plugins: Set<string> | 'all') => {
    if (move === 'all') return;
    if (plugins === 'all') move = 'all';
    else if (!move) move = new Set(plugins);
    else for (const p of plugins) move.add(p);
    kick();
  };

  function kick(): void {
    if (tickPending || stopped) return;
    tickPending = true;
    // A virtual clock waits for the turn: pods active now are scheduled at this instant.
    const release = holdClock(clock, 'kube-scheduler');
    setImmediate(() => {
      release();
      tick();
    });
  }

  function armBackoff(due: number | undefined): void {
    if (due === undefined || stopped) return;
    if (backoffTimer && backoffDue <= due) return;
    backoffTimer?.cancel();
    backoffDue = due;
    backoffTimer = clock.setTimer(
      () => {
        backoffTimer = undefined;
        backoffDue = Number.POSITIVE_INFINITY;
        kick();
      },
      Math.max(0, due - clock.now()),
    );
  }

  function tick(): void {
    tickPending = false;
    if (stopped) return;
    if (move) {
      const m = move;
      move = undefined;
      queue.moveForEvent(m);
    }
    queue.flushBackoff();
    // Real time on purpose: the budget bounds how long one tick holds the event loop. On a
    // clock that idles (a simulation) it is counted in pods instead, so that where a turn
    // ends, and so what interleaves with it, does not depend on the machine's speed.
    const deadline = realClock.now() + budgetMs;
    const bounded = clock.hold ? (k: number) => k >= SIMULATED_TICK_PODS : () => realClock.now() > deadline;
    let n = 0;
    for (;;) {
      const qp = queue.pop();
      if (!qp) break;
      scheduleOne(qp);
      if ((++n & 15) === 0 && bounded(n)) break;
    }
    flushBackoff();
  }

  /**
   * Moves pods whose backoff is over to the active queue, then makes sure a turn runs for
   * them, or a timer waits for the next expiry: a backoff that ended during a turn's
   * scheduling leaves an active pod that no event may ever kick.
   */
  function flushBackoff(): void {
    const next = queue.flushBackoff();
    if (queue.counts().active > 0) kick();
    else armBackoff(next);
  }

  /**
   * schedulePod without extra plugins is a function of the pod's scheduling inputs and the
   * cluster state (a cycle that fails scans every node, so not even the scan's start moves):
   * an attempt whose pod has the inputs of one that failed since the state last changed fails
   * the same way. Under coscheduling every pod placed brings each parked gang member back while
   * nothing it needs has changed; each such attempt filtered every node and ran preemption's
   * dry run again.
   */
  function attempt(qp: QueuedPod, prepared: PreparedPod): ScheduleResult {
    if (failedAt !== state.version) {
      failed.clear();
      failedAt = state.version;
    }
    const namespace = qp.pod.metadata.namespace ?? '';
    const known = failed.get(namespace)?.get(qp.inputsJson);
    if (known) return known;
    const result = schedulePod(state, prepared, scheduleOpts);
    if (result.status === 'Unschedulable') {
      const byInputs = failed.get(namespace) ?? new Map<string, ScheduleResult>();
      failed.set(namespace, byInputs);
      byInputs.set(qp.inputsJson, result);
    }
    return result;
  }

  function scheduleOne(qp: QueuedPod): void {
    const pod = qp.pod as Pod;
    qp.requests ??= computePodRequests(pod);
    qp.prepared ??= preparePod(pod, qp.requests);
    // Coscheduling's PreFilter runs first (it is first in the plugin's profile): its
    // rejection is UnschedulableAndUnresolvable, so no preemption and no VolumeBinding.
    const veto = gangs?.preFilter(qp.pod);
    const vol = veto ? undefined : volumes?.attempt(qp.pod);
    const extra: ExtraPlugins | undefined = veto
      ? { preFilterReject: { code: 'UnschedulableAndUnresolvable', plugin: COSCHEDULING, reasons: [veto] } }
      : vol?.extra;
    const result = extra
      ? schedulePod(state, qp.prepared, { ...scheduleOpts, extra })
      : attempt(qp, qp.prepared);
    if (result.status === 'Scheduled') {
      queue.done(qp);
      if (vol) reservedVolumes.set(qp.uid, vol.byNode.get(result.nodeName));
      state.addPod(pod, result.nodeName, qp.requests);
      assumed.set(qp.uid, result.nodeName);
      const permit = gangs?.permit(qp, result.nodeName) ?? { status: 'allow' };
      if (permit.status === 'allow') track(bind(qp, result.nodeName));
      else if (permit.status === 'reject') unreserve(qp, permit.message);
      return;
    }
    onUnschedulable(qp, result);
  }

  /**
   * A pod assumed but not bound (held by Permit, or rejected there) goes back to the queue:
   * parked as rejected by `rejector` (its cluster events retry it), else after its backoff.
   */
  function unreserve(qp: QueuedPod, message: string, rejector?: string): void {
    const node = assumed.get(qp.uid);
    const seen = seenAssumed.get(qp.uid);
    assumed.delete(qp.uid);
    seenAssumed.delete(qp.uid);
    gangs?.unassumed(qp.uid);
    const e = state.getPod(qp.uid);
    if (e && e.nodeName === node) {
      state.removePod(qp.uid);
      requestMove(POD_REMOVED);
    }
    // kube-scheduler reads the pod from its informer here, not from the API server. No longer
    // assumed: the watch saw it deleted or bound.
    if (node === undefined) return;
    const cur = seen ?? qp.pod;
    if (!schedulable(cur)) return;
    const again =
      queue.get(qp.uid) ?? queue.add(cur, qp.uid, cur === qp.pod ? qp.inputsJson : schedulingInputs(cur));
    again.attempts = Math.max(again.attempts, qp.attempts);
    // What was worked out from the same inputs holds: a gang rejected over and over would
    // otherwise add up every member's requests again on each attempt.
    if (again.inputsJson === qp.inputsJson) {
      again.requests ??= qp.requests;
      again.prepared ??= qp.prepared;
    }
    if (rejector) queue.parkUnschedulable(again, new Set([rejector]));
    else queue.backoffAfterError(again);
    reportUnschedulable(again, message, undefined);
    flushBackoff();
  }

  function reportUnschedulable(qp: QueuedPod, message: string, nominated: string | undefined): void {
    writeUnschedulable(qp, message, nominated);
    // The pod as queued, before this condition update lands: that update changes its
    // resourceVersion, so the next verdict on it starts another Event (schedule_one.go).
    recorder?.event(qp.pod, undefined, 'Warning', 'FailedScheduling', 'Scheduling', truncateMessage(message));
    log('debug', 'unschedulable', { pod: qp.key, message });
  }

  function track(p: Promise<void>): void {
    inflight.add(p);
    void p.finally(() => inflight.delete(p));
  }

  async function bind(qp: QueuedPod, nodeName: string): Promise<void> {
    const { namespace = '', name = '' } = qp.pod.metadata;
    if (reservedVolumes.has(qp.uid)) {
      const reserved = reservedVolumes.get(qp.uid);
      reservedVolumes.delete(qp.uid);
      try {
        await volumes?.preBind(qp.pod, nodeName, reserved);
      } catch (err) {
        if (stopped) return;
        unreserve(qp, err instanceof Error ? err.message : String(err));
        return;
      }
    }
    try {
      await client.bind(namespace, name, nodeName);
      stats.bound++;
      recorder?.event(
        qp.pod,
        undefined,
        'Normal',
        'Scheduled',
        'Binding',
        `Successfully assigned ${namespace}/${name} to ${nodeName}`,
      );
    } catch (err) {
      stats.bindErrors++;
      // Forget the assumption unless the watch already saw the pod bound.
      if (assumed.get(qp.uid) === nodeName) {
        assumed.delete(qp.uid);
        seenAssumed.delete(qp.uid);
        gangs?.unassumed(qp.uid);
        const e = state.getPod(qp.uid);
        if (e && e.nodeName === nodeName) {
          state.removePod(qp.uid);
          // As an assigned pod deleted: it counted for spreading and anti-affinity too.
          requestMove(POD_REMOVED);
        }
      }
      if (isNotFound(err) || stopped) return;
      const cur = client.get(GVR.pods, namespace, name);
      if (!cur || cur.metadata.uid !== qp.uid || !schedulable(cur)) return;
      const message = err instanceof Error ? err.message : String(err);
      log('warn', 'binding rejected', { pod: qp.key, node: nodeName, error: message });
      recorder?.event(
        cur,
        undefined,
        'Warning',
        'FailedScheduling',
        'Scheduling',
        truncateMessage(`Binding rejected: ${message}`),
      );
      const again = queue.get(qp.uid) ?? queue.add(cur, qp.uid, schedulingInputs(cur));
      again.attempts = Math.max(again.attempts, qp.attempts);
      queue.backoffAfterError(again);
      flushBackoff();
    }
  }

  function onUnschedulable(qp: QueuedPod, result: Unschedulable): void {
    stats.unschedulableAttempts++;
    const err = result.error;
    queue.parkUnschedulable(qp, rejectingPlugins(err));
    // A gang member that fits nowhere fails its whole gang (the verdict names the gang).
    // Coscheduling's own PreFilter rejection is the gang's verdict already.
    const rejectedByGang = err.absentStatus?.plugin === COSCHEDULING;
    const message = (rejectedByGang ? undefined : gangs?.postFilter(qp.pod, err.message)) ?? err.message;
    let nominated: string | undefined;
    if (result.nominatedNodeName && result.victims) {
      const prior = preempting.get(qp.uid);
      const stillTerminating = prior?.some((uid) => state.getPod(uid) !== undefined) ?? false;
      if (!stillTerminating) {
        preempt(qp, result.nominatedNodeName, result.victims);
        preempting.set(
          qp.uid,
          result.victims.map((v) => v.uid),
        );
      }
      nominated = result.nominatedNodeName;
    }
    reportUnschedulable(qp, message, nominated);
  }

  function preempt(qp: QueuedPod, nodeName: string, victims: PodEntry[]): void {
    stats.preemptions++;
    for (const v of victims) {
      const slash = v.key.indexOf('/');
      const ns = v.key.slice(0, slash);
      const name = v.key.slice(slash + 1);
      track(
        (async () => {
          try {
            // The victim as the scheduler saw it (its cache's copy upstream), before this patch.
            const victim = client.get(GVR.pods, ns, name);
            await client.mutate(
              GVR.pods,
              ns,
              name,
              (cur) => {
                if (cur.metadata.uid !== v.uid) return;
                setPodCondition(cur, {
                  type: 'DisruptionTarget',
                  status: 'True',
                  reason: 'PreemptionByScheduler',
                  message: `${schedulerName}: preempting to accommodate a higher priority pod`,
                });
              },
              'status',
            );
            await client.delete(GVR.pods, ns, name, { preconditions: { uid: v.uid } });
            if (victim?.metadata.uid === v.uid)
              recorder?.event(
                victim,
                qp.pod,
                'Normal',
                'Preempted',
                'Preempting',
                `Preempted by pod ${qp.uid} on node ${nodeName}`,
              );
          } catch (err) {
            if (!isNotFound(err)) log('warn', 'preemption failed', { victim: v.key, error: String(err) });
          }
        })(),
      );
    }
  }

  function writeUnschedulable(qp: QueuedPod, message: string, nominated: string | undefined): void {
    const status = (qp.pod.status ?? {}) as {
      conditions?: Record<string, unknown>[];
      nominatedNodeName?: string;
    };
    const cur = status.conditions?.find((c) => c.type === 'PodScheduled');
    if (
      cur?.status === 'False' &&
      cur.reason === 'Unschedulable' &&
      cur.message === message &&
      (nominated === undefined || status.nominatedNodeName === nominated)
    ) {
      return;
    }
    const { namespace = '', name = '' } = qp.pod.metadata;
    track(
      client
        .mutate(
          GVR.pods,
          namespace,
          name,
          (pod) => {
            if (pod.metadata.uid !== qp.uid || (pod.spec as { nodeName?: string } | undefined)?.nodeName)
              return;
            setPodCondition(pod, { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message });
            if (nominated) (pod.status as Record<string, unknown>).nominatedNodeName = nominated;
          },
          'status',
        )
        .then(
          () => {},
          (err: unknown) => {
            if (!isNotFound(err))
              log('warn', 'cannot update pod condition', { pod: qp.key, error: String(err) });
          },
        ),
    );
  }

  function schedulable(pod: KubeObject): boolean {
    const spec = (pod.spec ?? {}) as {
      schedulerName?: string;
      nodeName?: string;
      schedulingGates?: unknown[];
    };
    if ((spec.schedulerName || DEFAULT_SCHEDULER_NAME) !== schedulerName) return false;
    if (spec.nodeName) return false;
    if ((spec.schedulingGates?.length ?? 0) > 0) return false;
    if (pod.metadata.deletionTimestamp) return false;
    const phase = (pod.status as { phase?: string } | undefined)?.phase;
    return phase !== 'Succeeded' && phase !== 'Failed';
  }

  function onPod(type: string, pod: KubeObject): void {
    const uid = pod.metadata.uid ?? '';
    // Coscheduling registers Pod/Add, but kube-scheduler's queue moves nothing when an
    // unscheduled pod arrives (addPodToSchedulingQueue; a new member that reaches Permit
    // activates its siblings); a pod placed is onBoundPod's.
    gangs?.observe(type, pod);
    if (type === 'DELETED') {
      queue.delete(uid);
      assumed.delete(uid);
      seenAssumed.delete(uid);
      preempting.delete(uid);
      gangs?.forget(uid);
      reservedVolumes.delete(uid);
      if (state.removePod(uid)) requestMove(POD_REMOVED);
      return;
    }
    const spec = (pod.spec ?? {}) as { nodeName?: string };
    const nodeName = spec.nodeName;
    if (nodeName) {
      if (queue.get(uid)) queue.delete(uid);
      const wasAssumed = assumed.delete(uid);
      seenAssumed.delete(uid);
      const phase = (pod.status as { phase?: string } | undefined)?.phase;
      if (phase === 'Succeeded' || phase === 'Failed') {
        if (state.removePod(uid)) requestMove(POD_REMOVED);
        return;
      }
      onBoundPod(pod, nodeName, wasAssumed);
      return;
    }
    // A binding in flight: the watch will show the pod bound, or the binding fails.
    if (assumed.has(uid)) {
      seenAssumed.set(uid, pod);
      return;
    }
    if (!schedulable(pod)) {
      queue.delete(uid);
      return;
    }
    const inputs = schedulingInputs(pod);
    const qp = queue.get(uid);
    if (qp) queue.update(qp, pod, inputs);
    else queue.add(pod, uid, inputs);
    kick();
  }

  /**
   * Keeps the accounted copy of a bound pod current where other pods' scheduling reads it:
   * its node, labels, whether it is terminating and when it started. Seeing a pod bound, even
   * one this scheduler assumed, is kube-scheduler's "assigned pod added" event.
   */
  function onBoundPod(pod: KubeObject, nodeName: string, wasAssumed: boolean): void {
    const cur = state.getPod(pod.metadata.uid ?? '');
    const placed = !cur || cur.nodeName !== nodeName;
    const relabelled = cur !== undefined && !sameLabels(cur.labels, pod.metadata.labels ?? {});
    const terminating = pod.metadata.deletionTimestamp != null;
    const startedTerminating = cur !== undefined && terminating !== cur.terminating;
    // The kubelet writes status.startTime after the binding: preemption orders victims by it.
    const started = cur !== undefined && podStartTime(pod as Pod) !== cur.startTime;
    if (placed || relabelled || startedTerminating || started)
      state.addPod(pod as Pod, nodeName, cur?.requests);
    if (placed || wasAssumed) requestMove(POD_PLACED);
    else if (relabelled) requestMove(POD_CHANGED);
    else if (startedTerminating) requestMove(POD_TERMINATING);
  }

  function onNode(type: string, node: KubeObject): void {
    const name = node.metadata.name ?? '';
    if (type === 'DELETED') {
      nodeSigs.delete(name);
      state.removeNode(name);
      // Its pods stop counting at once: a domain with the fewest matching pods may go
      // (raising the spread's minimum) and its pods' anti-affinity no longer holds.
      requestMove(new Set([SPREAD_PLUGIN, INTER_POD_PLUGIN]));
      return;
    }
    const sig = nodeSignature(node);
    const prev = nodeSigs.get(name);
    nodeSigs.set(name, sig);
    if (!prev) {
      state.upsertNode(node as Node);
      requestMove('all');
      return;
    }
    const plugins = new Set<string>();
    if (prev.allocatable !== sig.allocatable) plugins.add(RESOURCES_PLUGIN);
    if (prev.labels !== sig.labels) {
      plugins.add('NodeAffinity');
      plugins.add(SPREAD_PLUGIN);
      plugins.add(INTER_POD_PLUGIN);
    }
    if (prev.taints !== sig.taints) {
      plugins.add('TaintToleration');
      // Under nodeTaintsPolicy Honor a taint decides whether the node's domain counts.
      plugins.add(SPREAD_PLUGIN);
    }
    if (prev.unschedulable !== sig.unschedulable) plugins.add('NodeUnschedulable');
    if (plugins.size === 0) return;
    state.upsertNode(node as Node);
    requestMove(plugins);
  }

  function onNamespace(type: string, ns: KubeObject): void {
    const name = ns.metadata.name ?? '';
    if (type === 'DELETED') {
      state.namespaceLabels.delete(name);
      state.changed();
      return;
    }
    const before = state.namespaceLabels.get(name);
    const labels = ns.metadata.labels ?? {};
    state.namespaceLabels.set(name, labels);
    state.changed();
    // A namespace added or relabelled can start or stop matching a term's namespaceSelector.
    if (!before || !sameLabels(before, labels)) requestMove(new Set([INTER_POD_PLUGIN]));
  }

  function onService(type: string, svc: KubeObject): void {
    const { namespace = '', name = '' } = svc.metadata;
    const selector = (svc.spec as { selector?: Record<string, string> | null } | undefined)?.selector;
    if (type === 'DELETED') state.workloads.deleteService(namespace, name);
    else state.workloads.setService(namespace, name, selector);
    state.changed();
  }

  const onOwner = (kind: OwnerKind) => (type: string, obj: KubeObject) => {
    const { namespace = '', name = '' } = obj.metadata;
    if (type === 'DELETED') state.workloads.deleteOwner(kind, namespace, name);
    else
      state.workloads.setOwner(
        kind,
        namespace,
        name,
        (obj.spec as { selector?: unknown } | undefined)?.selector,
      );
    state.changed();
  };

  // Everything the pods' rules refer to is known before the first pod is scheduled.
  const stops: (() => void)[] = [client.watch(GVR.namespaces, onNamespace, { shared: true })];
  if (client.served(SERVICES)) stops.push(client.watch(SERVICES, onService, { shared: true }));
  for (const [kind, gvr] of OWNERS) {
    if (client.served(gvr)) stops.push(client.watch(gvr, onOwner(kind), { shared: true }));
  }
  stops.push(client.watch(GVR.nodes, onNode, { shared: true }));
  stops.push(client.watch(GVR.pods, onPod, { shared: true }));
  const flushTimer = setRepeating(
    clock,
    () => {
      if (queue.flushLeftover(maxUnschedulableMs) > 0) kick();
    },
    (opts.unschedulableFlushIntervalMs ?? 30_000) / scale,
  );
  gangs?.attach({
    state,
    bind: (qp, nodeName) => track(bind(qp, nodeName)),
    unreserve: (qp, message) => unreserve(qp, message, COSCHEDULING),
    activate: (uids) => {
      let moved = false;
      for (const uid of uids) moved = queue.activate(uid) || moved;
      if (moved) kick();
    },
    retry: (uids) => {
      let moved = false;
      for (const uid of uids) moved = queue.retry(uid) || moved;
      if (moved) kick();
    },
  });
  kick();

  return {
    state,
    stats(): SchedulerStats {
      const c = queue.counts();
      return {
        ...stats,
        ...c,
        binding: assumed.size,
        nodes: state.nodes.length,
        accountedPods: state.podCount,
      };
    },
    async stop(): Promise<void> {
      if (stopped) return;
      stopped = true;
      for (const stopWatch of stops) stopWatch();
      flushTimer.cancel();
      gangs?.stop();
      volumes?.stop();
      backoffTimer?.cancel();
      while (inflight.size > 0) await Promise.allSettled([...inflight]);
      await recorder?.stop();
    },
  };
}

/** The plugins whose rejection a cluster event may undo; every event for "no nodes". */
function rejectingPlugins(err: FitError): Set<string> {
  if (err.numAllNodes === 0) return new Set([ANY_PLUGIN]);
  const out = new Set<string>();
  // Nodes rejected alike mostly share one status object: skip the runs of it.
  let last: FilterStatus | undefined;
  for (const st of err.nodeStatuses.statuses) {
    if (st !== last) out.add(st.plugin);
    last = st;
  }
  if (err.absentStatus && err.nodeStatuses.size < err.numAllNodes) out.add(err.absentStatus.plugin);
  return out.size > 0 ? out : new Set(NO_MOVE);
}

/** What scheduling reads from a pending pod: a change to any of it is worth another attempt. */
function schedulingInputs(pod: KubeObject): string {
  return JSON.stringify([pod.spec ?? {}, pod.metadata.labels ?? {}, pod.metadata.ownerReferences ?? []]);
}

function nodeSignature(node: KubeObject): NodeSignature {
  const spec = (node.spec ?? {}) as { taints?: unknown[]; unschedulable?: boolean };
  const status = (node.status ?? {}) as { allocatable?: unknown };
  return {
    labels: JSON.stringify(node.metadata.labels ?? {}),
    taints: JSON.stringify(spec.taints ?? []),
    unschedulable: spec.unschedulable === true,
    allocatable: JSON.stringify(status.allocatable ?? {}),
  };
}

/** podutil.UpdatePodCondition: lastTransitionTime moves only when the status does. */
function setPodCondition(
  pod: KubeObject,
  cond: { type: string; status: string; reason: string; message: string },
): void {
  pod.status ??= {};
  const status = pod.status as { conditions?: Condition[] };
  status.conditions ??= [];
  setCondition(status.conditions, { ...cond, lastProbeTime: null });
}

/** Event notes are limited to 1 kB: schedule_one.go's truncateMessage (the condition keeps it whole). */
const NOTE_LENGTH_LIMIT = 1024;
export function truncateMessage(message: string): string {
  if (message.length <= NOTE_LENGTH_LIMIT) return message;
  const suffix = ' ...';
  return message.slice(0, NOTE_LENGTH_LIMIT - suffix.length) + suffix;
}
