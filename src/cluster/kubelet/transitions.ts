/**
 * What a kubelet says about what it just did. Events are read off the status transitions the
 * kubelet itself wrote (whichever stage wrote them, yours included), because that is when a
 * real kubelet emits them: a container that starts gets Pulled/Created/Started, one that is
 * stopped for a deleted pod gets Killing, one left waiting in CrashLoopBackOff gets BackOff; a
 * node that turns Ready gets the kubelet's start-up events. The same diff records the exact
 * times containers started (see Anchors).
 */

import { recordOf as rec } from '../../lib/json.ts';
import type { KubeObject } from '../apiserver/types.ts';
import type { KubeletEvent } from './events.ts';
import { targetOf } from './events.ts';
import { type Anchors, isTimed } from './runtime.ts';

type Json = Record<string, unknown>;

function statuses(obj: KubeObject | undefined): Map<string, Json> {
  const list = rec(obj?.status).containerStatuses;
  const out = new Map<string, Json>();
  if (Array.isArray(list)) for (const s of list) out.set(String(rec(s).name), rec(s));
  return out;
}

function runningSince(s: Json | undefined): string | undefined {
  const r = rec(rec(s?.state).running);
  return typeof r.startedAt === 'string' ? r.startedAt : undefined;
}

/** Events and start times for a pod whose status went from `before` to `after`. */
export function podTransitions(
  before: KubeObject,
  after: KubeObject,
  at: number,
  anchors: Anchors,
): KubeletEvent[] {
  const host = String(rec(after.spec).nodeName ?? '');
  const uid = after.metadata.uid ?? '';
  const pod = after.metadata.name ?? '';
  const ns = after.metadata.namespace ?? '';
  const out: KubeletEvent[] = [];
  const prev = statuses(before);
  const next = statuses(after);
  const timed = isTimed(after);
  const images = new Map<string, string>();
  const containers = rec(after.spec).containers;
  if (Array.isArray(containers))
    for (const c of containers) images.set(String(rec(c).name), String(rec(c).image ?? ''));
  const ev = (name: string, type: string, reason: string, message: string) =>
    out.push({ target: targetOf(after, `spec.containers{${name}}`), type, reason, message, host });
  for (const [name, s] of next) {
    if (!images.has(name)) continue;
    const old = prev.get(name);
    const restarts = typeof s.restartCount === 'number' ? s.restartCount : 0;
    const started = runningSince(s);
    const oldStarted = runningSince(old);
    const oldRestarts = typeof old?.restartCount === 'number' ? old.restartCount : 0;
    if (
      started !== undefined &&
      (oldStarted === undefined || restarts !== oldRestarts || started !== oldStarted)
    ) {
      if (timed) anchors.record(uid, name, restarts, 'started', at);
      ev(name, 'Normal', 'Pulled', `Container image "${images.get(name)}" already present on machine`);
      ev(name, 'Normal', 'Created', `Created container: ${name}`);
      ev(name, 'Normal', 'Started', `Started container ${name}`);
    }
    const terminated = rec(rec(s.state).terminated);
    if (after.metadata.deletionTimestamp && Object.keys(terminated).length > 0 && oldStarted !== undefined) {
      ev(name, 'Normal', 'Killing', `Stopping container ${name}`);
    }
    const waiting = rec(rec(s.state).waiting);
    const oldWaiting = rec(rec(old?.state).waiting);
    if (waiting.reason === 'CrashLoopBackOff' && oldWaiting.reason !== 'CrashLoopBackOff') {
      ev(
        name,
        'Warning',
        'BackOff',
        `Back-off restarting failed container ${name} in pod ${pod}_${ns}(${uid})`,
      );
    }
  }
  return out;
}

function nodeReady(obj: KubeObject | undefined): boolean {
  const conds = rec(obj?.status).conditions;
  return Array.isArray(conds) && conds.some((c) => rec(c).type === 'Ready' && rec(c).status === 'True');
}

/** A node the kubelet brought to Ready gets the events of a kubelet starting up. */
export function nodeTransitions(before: KubeObject, after: KubeObject): KubeletEvent[] {
  if (nodeReady(before) || !nodeReady(after)) return [];
  const name = after.metadata.name ?? '';
  // A kubelet's events about its node use the node name as the object's UID.
  const target = { ...targetOf(after), uid: name };
  const ev = (reason: string, message: string): KubeletEvent => ({
    target,
    type: 'Normal',
    reason,
    message,
    host: name,
  });
  return [
    ev('Starting', 'Starting kubelet.'),
    ev('NodeHasSufficientMemory', `Node ${name} status is now: NodeHasSufficientMemory`),
    ev('NodeHasNoDiskPressure', `Node ${name} status is now: NodeHasNoDiskPressure`),
    ev('NodeHasSufficientPID', `Node ${name} status is now: NodeHasSufficientPID`),
    ev('NodeReady', `Node ${name} status is now: NodeReady`),
  ];
}
