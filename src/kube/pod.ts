/**
 * Pod facts every part needs: readiness, the resource requests the scheduler charges a
 * pod for, its QoS class, and the READY / STATUS / RESTARTS cells `kubectl get pods` prints
 * (kube-apiserver's printPod), so the embedded server and any controller agree on them.
 */

import type { Container, PodCondition, PodSpec, PodStatus } from './builtin.ts';
import { findCondition } from './conditions.ts';
import { translateTimestampSince } from './duration.ts';
import type { ObjectMeta } from './object.ts';
import {
  addResourceList,
  compareQuantities,
  maxResourceList,
  milliValue,
  parseResourceList,
  type ResourceList,
} from './quantity.ts';

/**
 * A pod as these functions read it: Kubernetes' Pod fields (src/kube/builtin.ts) with the
 * object's metadata optional, so the stored objects of every part fit without a copy of
 * their own.
 */
export interface PodLike {
  metadata?: Partial<ObjectMeta> & { deletionTimestamp?: string | null };
  spec?: PodSpec;
  status?: PodStatus;
}

/** kubelet's reason for pods on a lost node (util/node.NodeUnreachablePodReason). */
export const NODE_UNREACHABLE_POD_REASON = 'NodeLost';
export const POD_REASON_SCHEDULING_GATED = 'SchedulingGated';

export function podReadyCondition(pod: PodLike): PodCondition | undefined {
  return findCondition(pod.status?.conditions, 'Ready');
}

/** True when the pod's Ready condition is True (podutil.IsPodReady). */
export function isPodReady(pod: PodLike): boolean {
  return podReadyCondition(pod)?.status === 'True';
}

export function isPodTerminal(pod: PodLike): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/** A sidecar: an init container with restartPolicy Always. */
export function isRestartableInitContainer(c: Container | undefined): boolean {
  return c?.restartPolicy === 'Always';
}

const POD_LEVEL_RESOURCES = new Set(['cpu', 'memory']);

function isPodLevelResource(name: string): boolean {
  return POD_LEVEL_RESOURCES.has(name) || name.startsWith('hugepages-');
}

/**
 * What the scheduler charges for a pod (component-helpers' PodRequests): the larger of the
 * summed app containers (plus sidecars) and the peak of the init sequence, where each init
 * container runs next to the sidecars started before it; then pod-level requests override
 * cpu/memory/hugepages when set, and spec.overhead is added.
 */
export function podRequests(pod: PodLike, opts: { excludeOverhead?: boolean } = {}): ResourceList {
  const reqs: ResourceList = {};
  for (const c of pod.spec?.containers ?? []) addResourceList(reqs, parseResourceList(c.resources?.requests));

  const sidecars: ResourceList = {};
  const initPeak: ResourceList = {};
  for (const c of pod.spec?.initContainers ?? []) {
    const own = parseResourceList(c.resources?.requests);
    let during: ResourceList;
    if (isRestartableInitContainer(c)) {
      addResourceList(reqs, own);
      addResourceList(sidecars, own);
      during = { ...sidecars };
    } else {
      during = addResourceList(addResourceList({}, own), sidecars);
    }
    maxResourceList(initPeak, during);
  }
  maxResourceList(reqs, initPeak);

  const podLevel = parseResourceList(pod.spec?.resources?.requests);
  for (const [name, q] of Object.entries(podLevel)) if (isPodLevelResource(name)) reqs[name] = q;

  if (!opts.excludeOverhead) addResourceList(reqs, parseResourceList(pod.spec?.overhead));
  return reqs;
}

/** podRequests in milli-units (cpu: millicores; memory: milli-bytes, divide by 1000 for bytes). */
export function podRequestsMilli(
  pod: PodLike,
  opts: { excludeOverhead?: boolean } = {},
): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  for (const [name, q] of Object.entries(podRequests(pod, opts))) out[name] = milliValue(q);
  return out;
}

export type PodQOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/** The QoS class the API server stamps on create (qos.ComputePodQOS). */
export function podQOSClass(pod: PodLike): PodQOSClass {
  const requests: ResourceList = {};
  const limits: ResourceList = {};
  let guaranteed = true;
  const positive = (list: unknown): ResourceList => {
    const out: ResourceList = {};
    for (const [name, q] of Object.entries(parseResourceList(list))) {
      if ((name === 'cpu' || name === 'memory') && q.nanos > 0n) out[name] = q;
    }
    return out;
  };
  const podLevel = pod.spec?.resources;
  if (podLevel && (podLevel.requests || podLevel.limits)) {
    addResourceList(requests, positive(podLevel.requests));
    const lim = positive(podLevel.limits);
    addResourceList(limits, lim);
    if (!('cpu' in lim && 'memory' in lim)) guaranteed = false;
  } else {
    for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
      addResourceList(requests, positive(c.resources?.requests));
      const lim = positive(c.resources?.limits);
      addResourceList(limits, lim);
      if (!('cpu' in lim && 'memory' in lim)) guaranteed = false;
    }
  }
  if (Object.keys(requests).length === 0 && Object.keys(limits).length === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, req] of Object.entries(requests)) {
      const lim = limits[name];
      if (!lim || compareQuantities(lim, req) !== 0) {
        guaranteed = false;
        break;
      }
    }
  }
  if (guaranteed && Object.keys(requests).length === Object.keys(limits).length) return 'Guaranteed';
  return 'Burstable';
}

/** The cells kubectl prints for a pod, computed together because they share one pass. */
export interface PodDisplay {
  ready: number;
  total: number;
  /** The STATUS column. */
  status: string;
  restarts: number;
  /** finishedAt of the most recent restart, when known. */
  lastRestart?: string;
}

function later(a: string | undefined, b: string | undefined): string | undefined {
  if (!b) return a;
  if (!a) return b;
  return Date.parse(b) > Date.parse(a) ? b : a;
}

/** Mirrors printPod in kube-apiserver's internalversion printers, line for line in spirit. */
export function podDisplay(pod: PodLike): PodDisplay {
  const status = pod.status ?? {};
  const phase = status.phase ?? '';
  let reason = status.reason ? status.reason : phase;
  for (const c of status.conditions ?? []) {
    if (c.type === 'PodScheduled' && c.reason === POD_REASON_SCHEDULING_GATED)
      reason = POD_REASON_SCHEDULING_GATED;
  }

  const initSpecs = new Map<string, Container>();
  let total = pod.spec?.containers?.length ?? 0;
  for (const c of pod.spec?.initContainers ?? []) {
    if (c.name !== undefined) initSpecs.set(c.name, c);
    if (isRestartableInitContainer(c)) total++;
  }

  let ready = 0;
  let restarts = 0;
  let sidecarRestarts = 0;
  let lastRestart: string | undefined;
  let lastSidecarRestart: string | undefined;
  let initializing = false;
  const initStatuses = status.initContainerStatuses ?? [];
  const initCount = pod.spec?.initContainers?.length ?? 0;
  for (let i = 0; i < initStatuses.length; i++) {
    const cs = initStatuses[i]!;
    const finished = cs.lastState?.terminated ? cs.lastState.terminated.finishedAt : undefined;
    restarts += cs.restartCount ?? 0;
    lastRestart = later(lastRestart, finished);
    const sidecar = isRestartableInitContainer(initSpecs.get(cs.name ?? ''));
    if (sidecar) {
      sidecarRestarts += cs.restartCount ?? 0;
      lastSidecarRestart = later(lastSidecarRestart, finished);
    }
    const terminated = cs.state?.terminated;
    const waiting = cs.state?.waiting;
    if (terminated && (terminated.exitCode ?? 0) === 0) continue;
    if (sidecar && cs.started) {
      if (cs.ready) ready++;
      continue;
    }
    if (terminated) {
      if (!terminated.reason) {
        reason = terminated.signal
          ? `Init:Signal:${terminated.signal}`
          : `Init:ExitCode:${terminated.exitCode ?? 0}`;
      } else {
        reason = `Init:${terminated.reason}`;
      }
    } else if (waiting?.reason && waiting.reason !== 'PodInitializing') {
      reason = `Init:${waiting.reason}`;
    } else {
      reason = `Init:${i}/${initCount}`;
    }
    initializing = true;
    break;
  }

  const initializedTrue = findCondition(status.conditions, 'Initialized')?.status === 'True';
  if (!initializing || initializedTrue) {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const statuses = status.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i]!;
      restarts += cs.restartCount ?? 0;
      if (cs.lastState?.terminated) lastRestart = later(lastRestart, cs.lastState.terminated.finishedAt);
      const waiting = cs.state?.waiting;
      const terminated = cs.state?.terminated;
      if (waiting?.reason) {
        reason = waiting.reason;
      } else if (terminated?.reason) {
        reason = terminated.reason;
      } else if (terminated) {
        reason = terminated.signal ? `Signal:${terminated.signal}` : `ExitCode:${terminated.exitCode ?? 0}`;
      } else if (cs.ready && cs.state?.running) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      reason = findCondition(status.conditions, 'Ready')?.status === 'True' ? 'Running' : 'NotReady';
    }
  }

  const deleting = pod.metadata?.deletionTimestamp != null && pod.metadata.deletionTimestamp !== '';
  if (deleting && status.reason === NODE_UNREACHABLE_POD_REASON) {
    reason = 'Unknown';
  } else if (deleting && phase !== 'Succeeded' && phase !== 'Failed') {
    reason = 'Terminating';
  }

  const out: PodDisplay = { ready, total, status: reason, restarts };
  if (lastRestart) out.lastRestart = lastRestart;
  return out;
}

/** The STATUS column of `kubectl get pods`. */
export function podStatusString(pod: PodLike): string {
  return podDisplay(pod).status;
}

/** The READY column, `n/m`. */
export function podReadyString(pod: PodLike): string {
  const d = podDisplay(pod);
  return `${d.ready}/${d.total}`;
}

/** The RESTARTS column: `0`, or `3 (5m ago)` once a restart time is known. */
export function podRestartsString(pod: PodLike, now: Date): string {
  const d = podDisplay(pod);
  if (d.restarts !== 0 && d.lastRestart)
    return `${d.restarts} (${translateTimestampSince(d.lastRestart, now)} ago)`;
  return String(d.restarts);
}

/** The pod's primary IP as printers show it: status.podIPs[0], else status.podIP. */
export function podIP(pod: PodLike): string {
  return pod.status?.podIPs?.[0]?.ip ?? pod.status?.podIP ?? '';
}

/**
 * One line on a pod's own progress, as `troupe explain` prints it: gated, unschedulable
 * (the scheduler's PodScheduled reason and message), starting, running and ready, finished.
 */
export function podProgress(pod: PodLike): string {
  const phase = pod.status?.phase ?? 'Pending';
  const node = pod.spec?.nodeName;
  const gates = ((pod.spec?.schedulingGates ?? []) as { name: string }[]).map((g) => g.name);
  if (pod.metadata?.deletionTimestamp) return `${phase}, being deleted`;
  if (phase === 'Pending') {
    if (gates.length > 0) return `Pending: held by scheduling gate ${gates.join(', ')}`;
    const scheduled = findCondition(pod.status?.conditions, 'PodScheduled');
    if (!node && scheduled?.status === 'False')
      return `Pending: not scheduled (${scheduled.reason ?? 'Unschedulable'}${scheduled.message ? `: ${scheduled.message}` : ''})`;
    if (!node) return 'Pending: waiting for the scheduler';
    return `Pending on node ${node}: containers starting`;
  }
  if (phase === 'Running') {
    const ready = findCondition(pod.status?.conditions, 'Ready')?.status === 'True';
    return `Running on node ${node ?? '?'}, ${ready ? 'ready' : 'not ready'}`;
  }
  return `${phase}${pod.status?.reason ? ` (${pod.status.reason})` : ''}${node ? ` on node ${node}` : ''}`;
}
