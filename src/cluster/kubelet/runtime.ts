/**
 * troupe's simulated container runtime: what each container of a pod does over time, read
 * from the pod itself. Pure functions of (pod, now, time scale, remembered start times).
 *
 * - A container runs for `troupe.dev/run-duration` (a Go duration, for every container; or
 *   `troupe.dev/run-duration.<container>` for one), or N seconds when its command is a plain
 *   `sleep N` (`["sleep","10"]`, `["sh","-c","sleep 10"]`), then exits with
 *   `troupe.dev/exit-code` (`troupe.dev/exit-code.<container>`; default 0; sleep exits 0).
 *   Anything else runs until the pod is deleted, like a server.
 * - Readiness: a container with a readinessProbe turns ready `initialDelaySeconds` plus
 *   (successThreshold-1) x periodSeconds after it started (after a startupProbe's own delay,
 *   which also gates `started`); without one it is ready as soon as it runs.
 * - restartPolicy: Always restarts every exit, OnFailure non-zero exits, Never none. Restarts
 *   follow the kubelet's crash-loop back-off: the first restart is immediate, then 10 s, 20 s,
 *   40 s ... capped at 5 min, reset after a run of 10 min.
 * - The pod turns Succeeded (all exits 0) or Failed once no container runs or will restart.
 *
 * Every duration is divided by the time scale. Timestamps in the API have whole seconds, so
 * the kubelet remembers the exact start and finish times it wrote (Anchors) and falls back to
 * the object's timestamps when it has none (e.g. after a restart of troupe).
 */

import type { Pod } from '../../kube/builtin.ts';
import { parseGoDuration } from '../../kube/duration.ts';
import { backoffDelay } from '../../lib/backoff.ts';
import { recordOf as rec } from '../../lib/json.ts';
import { formatRFC3339Nano, parseRFC3339 } from './stages/index.ts';

export const RUN_DURATION_ANNOTATION = 'troupe.dev/run-duration';
export const EXIT_CODE_ANNOTATION = 'troupe.dev/exit-code';

const BACKOFF_INITIAL_MS = 10_000;
const BACKOFF_MAX_MS = 300_000;
/** The kubelet forgets a container's back-off once it has not crashed for 2 x the cap. */
const BACKOFF_RESET_MS = 2 * BACKOFF_MAX_MS;

/**
 * Pods are typed as Kubernetes' Pod, but their containers, statuses and conditions are read
 * through `rec`/`arr` as unstructured JSON: stage templates hand the runtime partial objects
 * (a status a stage wrote, a container list it cut short), and the statuses built here go back
 * into templates as plain values.
 */
type Json = Record<string, unknown>;

export interface ContainerBehaviour {
  name: string;
  image: string;
  /** Undefined: runs until killed. */
  runMs: number | undefined;
  exitCode: number;
  /** Time from start until `started` (startupProbe). */
  startupMs: number;
  /** Time from `started` until ready; undefined means no readiness probe (ready when started). */
  readinessMs: number | undefined;
}

function arr(v: unknown): Json[] {
  return Array.isArray(v) ? (v.filter((x) => x !== null && typeof x === 'object') as Json[]) : [];
}

function num(v: unknown, dflt: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : dflt;
}

const SHELLS = new Set(['sh', 'bash', 'ash', 'dash', 'zsh']);
const SLEEP_UNITS: Record<string, number> = { '': 1000, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function basename(s: string): string {
  const i = s.lastIndexOf('/');
  return i < 0 ? s : s.slice(i + 1);
}

/** `sleep N` arguments (GNU sleep: several operands add up, suffixes s/m/h/d); 'forever' for `sleep infinity`. */
function sleepArgs(words: readonly string[]): number | 'forever' | undefined {
  if (words.length === 0) return undefined;
  let total = 0;
  for (const w of words) {
    if (w === 'infinity' || w === 'inf') return 'forever';
    const m = /^(\d+(?:\.\d*)?|\.\d+)([smhd]?)$/.exec(w);
    if (!m) return undefined;
    total += Number(m[1]) * SLEEP_UNITS[m[2]!]!;
  }
  return total;
}

/**
 * How long a container whose command+args is a plain `sleep N` runs: `["sleep","10"]`,
 * `["/bin/sleep","10"]`, `["sh","-c","sleep 10"]`. Undefined for anything else (including
 * `sleep infinity` and compound shell scripts).
 */
export function sleepDurationMs(command: unknown, args: unknown): number | undefined {
  const words = [...(Array.isArray(command) ? command : []), ...(Array.isArray(args) ? args : [])].map(
    String,
  );
  if (words.length === 0) return undefined;
  let argv = words;
  if (SHELLS.has(basename(words[0]!)) && words[1] === '-c' && words.length === 3) {
    const script = words[2]!.trim();
    if (!/^[\w./ ]+$/.test(script)) return undefined;
    argv = script.split(/\s+/);
    if (argv[0] === 'exec') argv = argv.slice(1);
  }
  if (basename(argv[0] ?? '') !== 'sleep') return undefined;
  const d = sleepArgs(argv.slice(1));
  return typeof d === 'number' ? d : undefined;
}

function annotationFor(ann: Record<string, string>, key: string, container: string): string | undefined {
  return ann[`${key}.${container}`] ?? ann[key];
}

function probeDelayMs(probe: unknown): number | undefined {
  if (probe === null || typeof probe !== 'object') return undefined;
  const p = probe as Json;
  const initial = Math.max(0, num(p.initialDelaySeconds, 0));
  const period = Math.max(1, num(p.periodSeconds, 10));
  const success = Math.max(1, num(p.successThreshold, 1));
  return (initial + (success - 1) * period) * 1000;
}

export function containerBehaviour(pod: Pod, c: Json): ContainerBehaviour {
  const name = String(c.name ?? '');
  const ann = pod.metadata?.annotations ?? {};
  let runMs: number | undefined;
  let exitCode = 0;
  const rd = annotationFor(ann, RUN_DURATION_ANNOTATION, name);
  if (rd !== undefined) {
    const d = parseGoDuration(rd.trim());
    if (d !== undefined && d >= 0) runMs = d;
    const ec = annotationFor(ann, EXIT_CODE_ANNOTATION, name);
    if (ec !== undefined && /^-?\d+$/.test(ec.trim())) exitCode = Number(ec.trim());
  } else {
    runMs = sleepDurationMs(c.command, c.args);
    const ec = annotationFor(ann, EXIT_CODE_ANNOTATION, name);
    if (runMs !== undefined && ec !== undefined && /^-?\d+$/.test(ec.trim())) exitCode = Number(ec.trim());
  }
  return {
    name,
    image: String(c.image ?? ''),
    runMs,
    exitCode,
    startupMs: probeDelayMs(c.startupProbe) ?? 0,
    readinessMs: probeDelayMs(c.readinessProbe),
  };
}

export function podBehaviour(pod: Pod): ContainerBehaviour[] {
  return arr(rec(pod.spec).containers).map((c) => containerBehaviour(pod, c));
}

/** Whether any container of the pod has a finite run (the pod carries a run hint). */
export function hasRunHints(pod: Pod): boolean {
  return podBehaviour(pod).some((b) => b.runMs !== undefined);
}

/** Whether the kubelet has anything timed to track for this pod (probes, runs). */
export function isTimed(pod: Pod): boolean {
  return podBehaviour(pod).some(
    (b) => b.runMs !== undefined || b.startupMs > 0 || b.readinessMs !== undefined,
  );
}

/** Crash-loop back-off before restart number `restartCount + 1`. */
export function backoffMs(restartCount: number, ranMs: number): number {
  if (restartCount <= 0 || ranMs >= BACKOFF_RESET_MS) return 0;
  return backoffDelay(restartCount - 1, BACKOFF_INITIAL_MS, BACKOFF_MAX_MS);
}

/** Go's time.Duration String() for whole seconds and minutes, as back-off messages print it. */
export function goDurationString(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  const r = s % 60;
  if (m < 60) return `${m}m${r}s`;
  return `${Math.floor(m / 60)}h${m % 60}m${r}s`;
}

/**
 * Exact times the kubelet wrote for containers, keyed by pod uid, container name and restart
 * count; the API keeps only whole seconds.
 */
export class Anchors {
  private readonly pods = new Map<string, Map<string, { started?: number; finished?: number }>>();

  record(uid: string, name: string, restarts: number, what: 'started' | 'finished', at: number): void {
    let pod = this.pods.get(uid);
    if (!pod) {
      pod = new Map();
      this.pods.set(uid, pod);
    }
    const k = `${name}\u0000${restarts}`;
    const e = pod.get(k) ?? {};
    e[what] = at;
    pod.set(k, e);
  }

  /** The remembered time when it agrees with the object's (second-precision) timestamp. */
  resolve(
    uid: string,
    name: string,
    restarts: number,
    what: 'started' | 'finished',
    stamp: unknown,
  ): number | undefined {
    const parsed = typeof stamp === 'string' ? parseRFC3339(stamp) : undefined;
    const known = this.pods.get(uid)?.get(`${name}\u0000${restarts}`)?.[what];
    if (
      known !== undefined &&
      (parsed === undefined || Math.floor(known / 1000) === Math.floor(parsed / 1000))
    ) {
      return known;
    }
    return parsed;
  }

  forgetPod(uid: string): void {
    this.pods.delete(uid);
  }

  /** Pods with remembered times. */
  get size(): number {
    return this.pods.size;
  }
}

export interface RuntimeEnv {
  now: number;
  timeScale: number;
  anchors: Anchors;
}

interface ContainerView {
  b: ContainerBehaviour;
  s: Json;
  restarts: number;
}

function views(pod: Pod): ContainerView[] {
  const statuses = new Map(arr(rec(pod.status).containerStatuses).map((s) => [String(s.name), s]));
  return podBehaviour(pod).map((b) => {
    const s = statuses.get(b.name) ?? {};
    return { b, s, restarts: num(s.restartCount, 0) };
  });
}

function scaled(ms: number, env: RuntimeEnv): number {
  return ms / env.timeScale;
}

/** Due times of one container's next transitions, from its current status. */
function dues(pod: Pod, v: ContainerView, env: RuntimeEnv) {
  const uid = String(pod.metadata?.uid ?? '');
  const state = rec(v.s.state);
  const out: { exit?: number; started?: number; ready?: number; restart?: number } = {};
  if (state.running) {
    const startedAt =
      env.anchors.resolve(uid, v.b.name, v.restarts, 'started', rec(state.running).startedAt) ?? env.now;
    if (v.b.runMs !== undefined) out.exit = startedAt + scaled(v.b.runMs, env);
    if (v.s.started !== true && v.b.startupMs > 0) out.started = startedAt + scaled(v.b.startupMs, env);
    if (v.s.ready !== true) out.ready = startedAt + scaled(v.b.startupMs + (v.b.readinessMs ?? 0), env);
  } else if (rec(state.waiting).reason === 'CrashLoopBackOff') {
    const last = rec(rec(v.s.lastState).terminated);
    const finished = env.anchors.resolve(uid, v.b.name, v.restarts, 'finished', last.finishedAt) ?? env.now;
    const started = env.anchors.resolve(uid, v.b.name, v.restarts, 'started', last.startedAt) ?? finished;
    out.restart = finished + scaled(backoffMs(v.restarts, (finished - started) * env.timeScale), env);
  }
  return out;
}

/** The earliest time a container of this running pod changes by itself; undefined if never. */
export function nextContainerChange(pod: Pod, env: RuntimeEnv): number | undefined {
  let min: number | undefined;
  for (const v of views(pod)) {
    const d = dues(pod, v, env);
    for (const t of [d.exit, d.started, d.ready, d.restart]) {
      if (t !== undefined && (min === undefined || t < min)) min = t;
    }
  }
  // Pod conditions that disagree with the containers (another component wrote Ready=False
  // while the node was unreachable, say) are put right at once, as a kubelet's status sync does.
  if ((min === undefined || min > env.now) && conditionsStale(pod, env.now)) return env.now;
  return min;
}

function conditionsStale(pod: Pod, now: number): boolean {
  const statuses = arr(rec(pod.status).containerStatuses);
  if (statuses.length === 0) return false;
  const have = new Map(arr(rec(pod.status).conditions).map((c) => [String(c.type), c.status]));
  return readinessConditions(pod, statuses, false, now).some((c) => have.get(String(c.type)) !== c.status);
}

function restarts(policy: string, exitCode: number): boolean {
  return policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0);
}

function runningStatus(
  b: ContainerBehaviour,
  restartCount: number,
  at: number,
  lastState: Json | undefined,
): Json {
  const s: Json = {
    name: b.name,
    image: b.image,
    ready: b.startupMs === 0 && b.readinessMs === undefined,
    started: b.startupMs === 0,
    restartCount,
    state: { running: { startedAt: formatRFC3339Nano(at) } },
  };
  if (lastState) s.lastState = lastState;
  return s;
}

export interface StatusChange {
  status: Json;
}

function podRef(pod: Pod): string {
  const m = pod.metadata ?? {};
  return `${m.name}_${m.namespace}(${m.uid})`;
}

function readinessConditions(pod: Pod, statuses: Json[], terminal: boolean, now: number): Json[] {
  const old = new Map(arr(rec(pod.status).conditions).map((c) => [String(c.type), c]));
  const stamp = formatRFC3339Nano(now);
  const cond = (type: string, ok: boolean, reason: string | undefined, message: string | undefined): Json => {
    const status = ok ? 'True' : 'False';
    const prev = old.get(type);
    const c: Json = { type, status, lastProbeTime: null };
    c.lastTransitionTime =
      prev?.status === status && prev.lastTransitionTime ? prev.lastTransitionTime : stamp;
    if (reason) c.reason = reason;
    if (message) c.message = message;
    return c;
  };
  if (terminal) {
    return [
      cond('ContainersReady', false, 'PodCompleted', undefined),
      cond('Ready', false, 'PodCompleted', undefined),
    ];
  }
  const unready = statuses.filter((s) => s.ready !== true).map((s) => String(s.name));
  const gates = arr(rec(pod.spec).readinessGates).map((g) => String(g.conditionType));
  const unmetGates = gates.filter((g) => old.get(g)?.status !== 'True');
  const containersOk = unready.length === 0;
  const msg = `containers with unready status: [${unready.join(' ')}]`;
  let readyMsg: string | undefined;
  if (!containersOk) readyMsg = msg;
  else if (unmetGates.length > 0)
    readyMsg = `corresponding condition of pod readiness gate "${unmetGates[0]}" does not exist.`;
  return [
    cond(
      'ContainersReady',
      containersOk,
      containersOk ? undefined : 'ContainersNotReady',
      containersOk ? undefined : msg,
    ),
    cond(
      'Ready',
      containersOk && unmetGates.length === 0,
      containersOk ? (unmetGates.length > 0 ? 'ReadinessGatesNotReady' : undefined) : 'ContainersNotReady',
      readyMsg,
    ),
  ];
}

/**
 * The status of a Running pod after every container transition due by `env.now`: probes
 * passing, containers exiting, restarting or backing off, and the phase that follows.
 * Undefined when nothing is due.
 */
export function advanceContainers(pod: Pod, env: RuntimeEnv): StatusChange | undefined {
  const policy = String(rec(pod.spec).restartPolicy ?? 'Always');
  const now = env.now;
  const uid = String(pod.metadata?.uid ?? '');
  let changed = false;
  const next: Json[] = [];
  for (const v of views(pod)) {
    const d = dues(pod, v, env);
    const state = rec(v.s.state);
    if (!v.s.name) {
      // A container the last status did not list (a stage wrote a partial list): start it.
      next.push(runningStatus(v.b, 0, now, undefined));
      changed = true;
      continue;
    }
    if (state.running && d.exit !== undefined && d.exit <= now) {
      changed = true;
      const startedAt = d.exit - scaled(v.b.runMs ?? 0, env);
      const terminated: Json = {
        exitCode: v.b.exitCode,
        reason: v.b.exitCode === 0 ? 'Completed' : 'Error',
        startedAt: formatRFC3339Nano(startedAt),
        finishedAt: formatRFC3339Nano(d.exit),
      };
      if (!restarts(policy, v.b.exitCode)) {
        next.push({ ...v.s, ready: false, started: false, state: { terminated } });
        continue;
      }
      env.anchors.record(uid, v.b.name, v.restarts, 'finished', d.exit);
      const wait = scaled(backoffMs(v.restarts, v.b.runMs ?? 0), env);
      if (d.exit + wait <= now) {
        next.push(runningStatus(v.b, v.restarts + 1, now, { terminated }));
      } else {
        next.push({
          ...v.s,
          ready: false,
          started: false,
          lastState: { terminated },
          state: {
            waiting: {
              reason: 'CrashLoopBackOff',
              message: `back-off ${goDurationString(wait * env.timeScale)} restarting failed container=${v.b.name} pod=${podRef(pod)}`,
            },
          },
        });
      }
      continue;
    }
    if (d.restart !== undefined && d.restart <= now) {
      changed = true;
      next.push(runningStatus(v.b, v.restarts + 1, now, rec(v.s.lastState)));
      continue;
    }
    const s = { ...v.s };
    if (d.started !== undefined && d.started <= now) {
      s.started = true;
      changed = true;
    }
    if (d.ready !== undefined && d.ready <= now) {
      s.ready = true;
      s.started = true;
      changed = true;
    }
    next.push(s);
  }
  if (!changed && !conditionsStale(pod, now)) return undefined;
  const stillRuns = next.some((s) => !rec(s.state).terminated);
  const status: Json = { containerStatuses: next };
  if (!stillRuns) {
    const allZero = next.every((s) => rec(rec(s.state).terminated).exitCode === 0);
    status.phase = allZero ? 'Succeeded' : 'Failed';
  }
  status.conditions = readinessConditions(pod, next, !stillRuns, now);
  return { status };
}

/**
 * Every container stopped: by the kubelet for a deleted pod (`kill`), or as the default
 * pod-complete stage finishes a Job's pod (`complete`, exit 0). Killed containers that do
 * finite work (a run hint or a Job's pod) report 137, as a SIGKILLed process does; servers
 * stop cleanly on SIGTERM with 0. The phase follows: Succeeded if every exit is 0, else Failed.
 */
export function stopAllContainers(pod: Pod, mode: 'kill' | 'complete', env: RuntimeEnv): StatusChange {
  const now = env.now;
  const stamp = formatRFC3339Nano(now);
  const uid = String(pod.metadata?.uid ?? '');
  const jobOwned = (pod.metadata?.ownerReferences ?? []).some((o) => o.kind === 'Job');
  const next: Json[] = views(pod).map((v) => {
    const state = rec(v.s.state);
    if (state.terminated) return { ...v.s, ready: false, started: false };
    let exitCode = 0;
    if (mode === 'kill') {
      if (state.waiting) exitCode = num(rec(rec(v.s.lastState).terminated).exitCode, 137);
      else exitCode = v.b.runMs !== undefined || jobOwned ? 137 : 0;
    }
    const startedAt = state.running
      ? formatRFC3339Nano(
          env.anchors.resolve(uid, v.b.name, v.restarts, 'started', rec(state.running).startedAt) ?? now,
        )
      : stamp;
    return {
      name: v.b.name,
      image: v.b.image,
      ...v.s,
      ready: false,
      started: false,
      restartCount: v.restarts,
      state: {
        terminated: {
          exitCode,
          reason: exitCode === 0 ? 'Completed' : 'Error',
          startedAt,
          finishedAt: stamp,
        },
      },
    };
  });
  const allZero = next.every((s) => rec(rec(s.state).terminated).exitCode === 0);
  return {
    status: {
      phase: allZero ? 'Succeeded' : 'Failed',
      conditions: readinessConditions(pod, next, true, now),
      containerStatuses: next,
    },
  };
}
