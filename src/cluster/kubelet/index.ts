/**
 * troupe's kubelet simulator, KWOK-compatible: it serves the `kwok.x-k8s.io/v1alpha1` Stage
 * kind and drives the nodes it manages (annotated `kwok.x-k8s.io/node: fake`), and the pods
 * bound to them, through Stages: troupe's defaults (see troupe-stages.ts and stage-set.ts
 * for how they combine with yours) plus every Stage object in the cluster. It also renews the
 * nodes' Leases and records the Events a kubelet records. It talks to the API server only
 * through the Kubernetes API (ClusterClient), so a real KWOK could take its place.
 *
 * `timeScale` divides every delay: stage delays, probe delays, run durations, back-offs.
 */

import { type Clock, holdClock, realClock } from '../../lib/clock.ts';
import { TimerQueue } from '../../lib/timer-queue.ts';
import type { ExecIO } from '../apiserver/http/streaming.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { type ClusterClient, GVR, type Gvr } from '../client.ts';
import { ensureStageCRD } from './crd.ts';
import { type LogFn, type PlayerHooks, StagePlayer } from './engine.ts';
import { EphemeralProcesses } from './ephemeral.ts';
import { KubeletEvents, targetOf } from './events.ts';
import { NodeLeases } from './leases.ts';
import { ensureLogsCRDs } from './logs.ts';
import { Anchors } from './runtime.ts';
import { StageObjects } from './stage-objects.ts';
import { type PlayableStage, StageSet } from './stage-set.ts';
import { createIPAM, planNext, type Stage } from './stages/index.ts';
import { nodeTransitions, podTransitions } from './transitions.ts';
import { troupeDefaultStages, troupeFuncs } from './troupe-stages.ts';

export { STAGE_CRD_NAME, STAGE_GVR, stageCRD } from './crd.ts';
export type { LogFn } from './engine.ts';
export { LEASE_DURATION_SECONDS, LEASE_NAMESPACE } from './leases.ts';
export {
  EXIT_CODE_ANNOTATION,
  RUN_DURATION_ANNOTATION,
  sleepDurationMs,
} from './runtime.ts';
export {
  BACKGROUND_ANNOTATION,
  HOOK_ANNOTATION,
  HOOKS,
  TROUPE_FUNC_NAMES,
  troupeDefaultStages,
} from './troupe-stages.ts';

import { random as programRandom } from '../../lib/random.ts';

/** The annotation KWOK manages nodes by, and its value. */
export const MANAGED_NODE_ANNOTATION = 'kwok.x-k8s.io/node';
export const MANAGED_NODE_VALUE = 'fake';

export interface KubeletOptions {
  /** Divides every simulated delay (10 = ten times faster). A number > 0; default 1. */
  timeScale?: number;
  /** Which nodes are simulated: `key=value` of an annotation; default `kwok.x-k8s.io/node=fake`. */
  manageNodesWithAnnotation?: string;
  /** Simulate every node, whatever its annotations (KWOK's --manage-all-nodes). */
  manageAllNodes?: boolean;
  /** troupe's default stages (default true). */
  defaultStages?: boolean;
  /** Default stages to leave out, by name (e.g. `pod-complete`). */
  disabledStages?: readonly string[];
  /** Extra stages (e.g. read from files), added like Stage objects; cluster Stages of the same name win. */
  stages?: readonly Stage[];
  /** Create the Stage CRD and play Stage objects from the cluster (default true). */
  clusterStages?: boolean;
  /** Record kubelet Events for pods and nodes (default true). */
  events?: boolean;
  /** Renew node Leases in kube-node-lease (default true). */
  leases?: boolean;
  /** The time stages are played by (delays, timestamps, leases); default the real clock. */
  clock?: Clock;
  /**
   * Addresses for nodes that have no InternalIP of their own (default 10.200.0.0/16, apart from
   * the 10.240.0.0/16 the nodes component hands out, so adopted nodes never share one).
   */
  nodeCIDR?: string;
  /** Pod addresses (default 10.0.0.0/12). */
  podCIDR?: string;
  /** Stage plays in flight at once (default 64). */
  concurrency?: number;
  log?: LogFn;
  /** [0, 1) source for weighted choices and jitter (tests). */
  random?: () => number;
  /**
   * Objects that were last written before the kubelet started count their stage delays from
   * that stored write rather than from the start (a restart of a stored cluster resumes its
   * Stage timers). Default false: delays count from when the kubelet first sees an object.
   */
  resumeStoredTimers?: boolean;
}

export interface KubeletStats {
  nodes: number;
  pods: number;
  plays: number;
  timers: number;
  leaseRenewals: number;
  eventsWritten: number;
  eventsDropped: number;
}

export interface Kubelet {
  readonly timeScale: number;
  /** Names, origins and kinds of the stages in play. */
  stages(): { name: string; origin: PlayableStage['origin']; kind: string }[];
  /** Resolves once no stage play is queued or running (delayed plays may still wait). */
  idle(): Promise<void>;
  stats(): KubeletStats;
  /** The stage waiting to play for a pod or node and when (epoch ms), if any. */
  pending(kind: 'Pod' | 'Node', namespace: string, name: string): { stage: string; due: number } | undefined;
  /**
   * An attach with stdin to an interactive ephemeral container: the session is its process
   * (ephemeral.ts). Undefined for any other container.
   */
  attach(pod: KubeObject, container: string, io: ExecIO): Promise<number> | undefined;
  /** What an ephemeral container's process wrote, undefined when the kubelet ran none. */
  containerOutput(pod: KubeObject, container: string): string | undefined;
  stop(): Promise<void>;
}

/** The time scale as given, checked: a finite number greater than 0 (the CLI can reuse it). */
export function validateTimeScale(v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
    throw new Error(
      `invalid time scale ${JSON.stringify(v)}: must be a number greater than 0 (10 = ten times faster)`,
    );
  }
  return v;
}

function parseAnnotationSelector(s: string): { key: string; value: string | undefined } {
  const i = s.indexOf('=');
  if (i < 0) return { key: s.trim(), value: undefined };
  return { key: s.slice(0, i).trim(), value: s.slice(i + 1).trim() };
}

/** Stage failures are reported at most this often per stage, however many objects hit them. */
const FAILURE_REPORT_MS = 10_000;

export async function startKubelet(client: ClusterClient, opts: KubeletOptions = {}): Promise<Kubelet> {
  const timeScale = validateTimeScale(opts.timeScale ?? 1);
  const log: LogFn = opts.log ?? (() => {});
  const random = opts.random ?? programRandom;
  const podEvents = opts.events !== false;
  const selector = parseAnnotationSelector(
    opts.manageNodesWithAnnotation ?? `${MANAGED_NODE_ANNOTATION}=${MANAGED_NODE_VALUE}`,
  );
  const disabled = new Set(opts.disabledStages ?? []);
  const defaults =
    opts.defaultStages === false ? [] : troupeDefaultStages().filter((s) => !disabled.has(s.metadata.name));
  const set = new StageSet(defaults, opts.stages ?? []);

  const clock = opts.clock ?? realClock;
  const startTime = clock.now();
  const timers = new TimerQueue({ clock });
  const anchors = new Anchors();
  const ipam = createIPAM({ nodeCIDR: opts.nodeCIDR ?? '10.200.0.0/16', podCIDR: opts.podCIDR });
  // Event writes yield to status work (see events.ts); the players are defined below.
  let busy = () => false;
  const events = new KubeletEvents(client, { busy: () => busy(), clock });
  const leases =
    opts.leases === false ? undefined : new NodeLeases(client, timers, { timeScale, log, clock });

  const ephemeral = new EphemeralProcesses(client, { clock, timeScale, log });
  const managedNodes = new Set<string>();
  const nodeAddresses = new Map<string, string>();
  const podsByNode = new Map<string, Set<string>>();

  const isManagedNode = (node: KubeObject): boolean => {
    if (opts.manageAllNodes) return true;
    const v = node.metadata.annotations?.[selector.key];
    return v !== undefined && (selector.value === undefined || v === selector.value);
  };
  const nodeIPWith = (name: string): string => nodeAddresses.get(name) ?? ipam.nodeIP(name);

  let stageObjects: StageObjects | undefined;
  const lastFailure = new Map<string, number>();
  const stageFailed = (stage: PlayableStage, obj: KubeObject, message: string) => {
    const now = clock.now();
    if ((lastFailure.get(stage.name) ?? 0) + FAILURE_REPORT_MS > now) return;
    lastFailure.set(stage.name, now);
    const text = `playing on ${obj.kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}: ${message}`;
    log('warn', `kubelet: stage ${stage.name} failed`, { stage: stage.name, error: text });
    if (stage.origin === 'cluster') stageObjects?.reportPlayFailure(stage.name, text);
  };

  const hostOf = (obj: KubeObject): string =>
    obj.kind === 'Node'
      ? (obj.metadata.name ?? '')
      : String((obj.spec as { nodeName?: string } | undefined)?.nodeName ?? '');

  const player = (gvr: Gvr, managed: (obj: KubeObject) => boolean, played: PlayerHooks['played']) =>
    new StagePlayer({
      client,
      gvr,
      stages: (obj) => set.forKind(obj.apiVersion, obj.kind),
      managed,
      timers,
      timeScale,
      anchors,
      random,
      now: () => clock.now(),
      hold: (who) => holdClock(clock, who),
      concurrency: opts.concurrency,
      resumeStoredTimers: opts.resumeStoredTimers,
      log,
      onIdle: () => events.pump(),
      hooks: {
        plan: (stage, obj, now, rand) =>
          planNext(stage.compiled, obj, {
            now: () => now,
            random: () => rand,
            version: 'troupe',
            nodeIPWith,
            podIPWith: (node: string, hostNetwork: boolean, uid: string) =>
              hostNetwork ? nodeIPWith(node) : ipam.podIP(node, false, uid),
            startTime,
            extra: troupeFuncs({ now, timeScale, anchors }),
          }),
        stageFailed,
        event: (obj, ev) => events.record({ target: targetOf(obj), ...ev, host: hostOf(obj) }),
        played,
      },
    });
  const pods = player(
    GVR.pods,
    (pod) => managedNodes.has(String((pod.spec as { nodeName?: string } | undefined)?.nodeName ?? '')),
    (_stage, _plan, before, after, now) => {
      if (!after) return;
      const evs = podTransitions(before, after, now, anchors);
      if (podEvents) for (const ev of evs) events.record(ev);
    },
  );
  const nodes = player(
    GVR.nodes,
    (node) => managedNodes.has(node.metadata.name ?? ''),
    (_stage, _plan, before, after) => {
      if (!after || !podEvents) return;
      for (const ev of nodeTransitions(before, after)) events.record(ev);
    },
  );

  busy = () => !pods.isIdle() || !nodes.isIdle();

  const stops: (() => void)[] = [];
  let started = false;
  set.onChange(() => {
    if (!started) return;
    pods.resyncAll();
    nodes.resyncAll();
  });

  if (opts.clusterStages !== false) {
    await ensureStageCRD(client);
    await ensureLogsCRDs(client);
    stageObjects = new StageObjects(client, set, events, log, clock);
    stageObjects.start();
  }

  const onNode = (type: string, node: KubeObject) => {
    const name = node.metadata.name ?? '';
    const wasManaged = managedNodes.has(name);
    const manage = type !== 'DELETED' && isManagedNode(node);
    const addr = (
      node.status as { addresses?: { type?: string; address?: string }[] } | undefined
    )?.addresses?.find((a) => a.type === 'InternalIP')?.address;
    if (addr && type !== 'DELETED') nodeAddresses.set(name, addr);
    if (manage && !wasManaged) {
      managedNodes.add(name);
      leases?.start(name, node.metadata.uid ?? '');
      for (const key of podsByNode.get(name) ?? []) {
        const i = key.indexOf('/');
        pods.touch(key.slice(0, i), key.slice(i + 1));
      }
    } else if (!manage && wasManaged) {
      managedNodes.delete(name);
      leases?.stop(name);
      for (const key of podsByNode.get(name) ?? []) pods.forget(key);
    }
    if (type === 'DELETED') {
      nodeAddresses.delete(name);
      ipam.releaseNode(name);
    }
    nodes.observe(type, node);
  };

  const onPod = (type: string, pod: KubeObject) => {
    const node = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    if (node) {
      let keys = podsByNode.get(node);
      if (type === 'DELETED') {
        keys?.delete(key);
        if (keys?.size === 0) podsByNode.delete(node);
      } else {
        if (!keys) {
          keys = new Set();
          podsByNode.set(node, keys);
        }
        keys.add(key);
      }
    }
    if (type === 'DELETED' && pod.metadata.uid) {
      ipam.releasePod(pod.metadata.uid);
      anchors.forgetPod(pod.metadata.uid);
    }
    pods.observe(type, pod);
    // Only pods of simulated nodes: another node's kubelet runs its own ephemeral containers.
    if (
      type === 'DELETED' ||
      (node &&
        managedNodes.has(node) &&
        (pod.spec as { ephemeralContainers?: unknown } | undefined)?.ephemeralContainers)
    )
      ephemeral.observe(type, pod);
  };

  // Nodes first, so the pods listed next already find their nodes managed.
  stops.push(client.watch(GVR.nodes, onNode, { shared: true }));
  stops.push(client.watch(GVR.pods, onPod, { shared: true }));
  started = true;

  return {
    timeScale,
    stages: () => set.all().map((s) => ({ name: s.name, origin: s.origin, kind: s.compiled.kind })),
    idle: async () => {
      // A play can wake the other player (a node turning managed touches its pods): settle both.
      for (;;) {
        await Promise.all([pods.idle(), nodes.idle(), stageObjects?.flush()]);
        await new Promise((r) => setImmediate(r));
        if (pods.isIdle() && nodes.isIdle()) return;
      }
    },
    pending: (kind, namespace, name) =>
      kind === 'Pod' ? pods.pending(namespace, name) : nodes.pending('', name),
    attach: (pod, container, io) => ephemeral.attach(pod, container, io),
    containerOutput: (pod, container) => ephemeral.output(pod, container),
    stats: () => ({
      nodes: managedNodes.size,
      pods: pods.size,
      plays: pods.plays + nodes.plays,
      timers: timers.size,
      leaseRenewals: leases?.renewals ?? 0,
      eventsWritten: events.written,
      eventsDropped: events.dropped,
    }),
    stop: async () => {
      for (const s of stops.splice(0)) s();
      ephemeral.stop();
      leases?.stopAll();
      await stageObjects?.stop();
      await Promise.all([pods.stop(), nodes.stop()]);
      timers.stop();
      await events.stop();
    },
  };
}
