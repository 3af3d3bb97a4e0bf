/**
 * The stage player for one resource (pods or nodes): for every change of a managed object it
 * picks the stage to play next, waits for the stage to be due, checks the object still
 * matches, renders the plan against the object as it is then and applies it through the API.
 *
 * Scale: an object costs a small entry here (no cached copy: the watch's copy is dropped once
 * evaluated, and a due stage reads the object fresh). Changes are coalesced per object and
 * evaluated in batches off the watch callback; all delays share one TimerQueue; at most
 * `concurrency` plays are in flight.
 *
 * Choosing (KWOK's rule, with troupe's hooks): among the stages that match and are due at
 * some point (a hooked stage whose hook answers "never" does not count), the non-background
 * ones are drawn by weight as KWOK does, and a drawn stage stays chosen while it applies;
 * a background stage plays instead when it is due before the drawn one (or none is drawn).
 * A stage that was already played (or found to change nothing) at this resourceVersion is not
 * drawn again, so a stage that changes nothing cannot starve the others. A stage's delay
 * counts from when the object started matching it, not from the object's last change (KWOK
 * restarts it on every change, which starves slow stages on busy objects).
 *
 * Resuming (`resumeStoredTimers`): when to count from is kept in memory only, so an object
 * already stored when the player starts (a restarted cluster) counts from its last stored
 * write (managedFields' latest time, else creationTimestamp): its current state, hence its
 * match, is at least that old. A stage whose delay elapsed while troupe was down plays at
 * once; one still running plays when it was due, to the second the stored times keep.
 */

import { parseKey } from '../../kube/keys.ts';
import { backoffDelay } from '../../lib/backoff.ts';
import { realClock } from '../../lib/clock.ts';
import { random } from '../../lib/random.ts';
import type { QueuedTimer, TimerQueue } from '../../lib/timer-queue.ts';
import { ApiError } from '../apiserver/errors.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { type ClusterClient, type Gvr, isNotFound } from '../client.ts';
import { Fifo } from './fifo.ts';
import type { Anchors } from './runtime.ts';
import type { PlayableStage } from './stage-set.ts';
import {
  type PlanResult,
  parseRFC3339,
  type QueryMemo,
  type StagePlan,
  stageDelay,
  stageMatches,
  stageWeight,
} from './stages/index.ts';

export type LogFn = (
  level: 'debug' | 'info' | 'warn' | 'error',
  msg: string,
  fields?: Record<string, unknown>,
) => void;

export interface PlayerHooks {
  /** Renders a stage against an object with the kubelet's functions bound to `now`. */
  plan(stage: PlayableStage, obj: KubeObject, now: number, random: number): PlanResult;
  /** After a play: the object before and after (undefined when deleted). */
  played(
    stage: PlayableStage,
    plan: StagePlan,
    before: KubeObject,
    after: KubeObject | undefined,
    now: number,
  ): void;
  /** A stage that cannot be rendered or whose result the API refused. */
  stageFailed(stage: PlayableStage, obj: KubeObject, message: string): void;
  /** An event a stage's `next.event` asks for. */
  event(obj: KubeObject, event: NonNullable<StagePlan['event']>): void;
}

export interface PlayerOptions {
  client: ClusterClient;
  gvr: Gvr;
  stages: (obj: KubeObject) => readonly PlayableStage[];
  managed: (obj: KubeObject) => boolean;
  timers: TimerQueue;
  timeScale: number;
  anchors: Anchors;
  hooks: PlayerHooks;
  now?: () => number;
  /** Says "busy" to a virtual clock until a pending batch of objects is evaluated (`holdClock`). */
  hold?: (who: string) => () => void;
  random?: () => number;
  concurrency?: number;
  /** Objects last written before the player started count their delays from that write. */
  resumeStoredTimers?: boolean;
  log?: LogFn;
  /** Called whenever the player runs out of work (queued, dirty and in-flight plays). */
  onIdle?: () => void;
}

interface Job {
  stage: PlayableStage;
  rv: string;
  due: number;
  since: number;
  rand: number;
  /** The object the stage was found to match (watch copies are never written: no need to ask again). */
  matched: KubeObject;
  timer: QueuedTimer | undefined;
  queued: boolean;
}

interface Entry {
  key: string;
  namespace: string;
  name: string;
  rv: string;
  epoch: number;
  job: Job | undefined;
  busy: boolean;
  again: boolean;
  /** Stages played (or found to change nothing) at resourceVersion `rv`, and when. */
  played: { rv: string; at: Map<string, number> } | undefined;
  /** When the object started matching each stage it matches, and the stage's random draw. */
  sinces: Map<string, { since: number; rand: number }> | undefined;
  /** Until the first evaluation: the stored write time of an object that predates the player. */
  resumed: number | undefined;
  failures: number;
  /** The object last evaluated (the watch's shared copy: read, never written). */
  seen: KubeObject | undefined;
}

/** Objects evaluated per turn of the event loop, so HTTP clients are served in between. */
const BATCH = 500;
const RETRY_BASE_MS = 50;
const RETRY_MAX_MS = 10_000;

export class StagePlayer {
  private readonly o: PlayerOptions;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly concurrency: number;
  private readonly log: LogFn;
  /** When the player started: objects last written before it were stored before it. */
  private readonly startedAt: number;
  private readonly entries = new Map<string, Entry>();
  /** Keys to evaluate, with the object the watch delivered (null: read it fresh). */
  private readonly dirty = new Map<string, KubeObject | null>();
  private readonly runQueue = new Fifo<Entry>();
  private flushScheduled = false;
  private inFlight = 0;
  private epoch = 0;
  private stopped = false;
  private readonly idleWaiters: (() => void)[] = [];
  /** Plays applied, for tests and benchmarks. */
  plays = 0;

  constructor(o: PlayerOptions) {
    this.o = o;
    this.now = o.now ?? (() => realClock.now());
    this.random = o.random ?? random;
    this.concurrency = o.concurrency ?? 64;
    this.log = o.log ?? (() => {});
    this.startedAt = this.now();
  }

  get size(): number {
    return this.entries.size;
  }

  /** Feed from a watch. Runs inside someone else's API write: only records the change. */
  observe(type: string, obj: KubeObject): void {
    if (this.stopped) return;
    const key = keyOf(obj);
    if (type === 'DELETED') {
      this.forget(key);
      return;
    }
    if (!this.o.managed(obj)) {
      this.forget(key);
      return;
    }
    this.dirty.set(key, obj);
    this.scheduleFlush();
  }

  /** Re-evaluates an object (read fresh), e.g. when its node became managed. */
  touch(namespace: string, name: string): void {
    if (this.stopped) return;
    const key = namespace ? `${namespace}/${name}` : name;
    if (!this.dirty.has(key)) this.dirty.set(key, null);
    this.scheduleFlush();
  }

  /** Re-evaluates every known object: the stage set changed. */
  resyncAll(): void {
    this.epoch++;
    for (const e of this.entries.values()) this.touch(e.namespace, e.name);
  }

  forget(key: string): void {
    const e = this.entries.get(key);
    this.dirty.delete(key);
    if (!e) return;
    this.cancel(e);
    this.entries.delete(key);
  }

  /** Resolves when nothing is queued, dirty or in flight (delayed stages may still wait). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  /** The stage waiting to play for an object, for tests and diagnostics. */
  pending(namespace: string, name: string): { stage: string; due: number } | undefined {
    const e = this.entries.get(namespace ? `${namespace}/${name}` : name);
    return e?.job ? { stage: e.job.stage.name, due: e.job.due } : undefined;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const e of this.entries.values()) this.cancel(e);
    this.dirty.clear();
    this.runQueue.clear();
    while (this.inFlight > 0) await new Promise((r) => setTimeout(r, 5));
    for (const w of this.idleWaiters.splice(0)) w();
  }

  isIdle(): boolean {
    return this.dirty.size === 0 && this.runQueue.length === 0 && this.inFlight === 0;
  }

  private checkIdle(): void {
    if (!this.isIdle()) return;
    for (const w of this.idleWaiters.splice(0)) w();
    this.o.onIdle?.();
  }

  private cancel(e: Entry): void {
    if (e.job?.timer) this.o.timers.cancel(e.job.timer);
    e.job = undefined;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    const release = this.o.hold?.('kubelet');
    setImmediate(() => {
      release?.();
      this.flush();
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.stopped) return;
    let n = 0;
    for (const [key, obj] of this.dirty) {
      if (n++ >= BATCH) break;
      this.dirty.delete(key);
      try {
        this.evaluateKey(key, obj);
      } catch (err) {
        this.log('error', 'kubelet: evaluating an object failed', { key, error: errText(err) });
      }
    }
    if (this.dirty.size > 0) this.scheduleFlush();
    this.pump();
    this.checkIdle();
  }

  private evaluateKey(key: string, given: KubeObject | null): void {
    let obj = given;
    if (!obj) {
      const { namespace = '', name } = parseKey(key);
      obj = this.o.client.get(this.o.gvr, namespace, name) ?? null;
      if (!obj || !this.o.managed(obj)) {
        this.forget(key);
        return;
      }
    }
    let e = this.entries.get(key);
    if (!e) {
      const { namespace = '', name } = parseKey(key);
      e = {
        key,
        namespace,
        name,
        rv: '',
        epoch: -1,
        job: undefined,
        busy: false,
        again: false,
        played: undefined,
        sinces: undefined,
        resumed: this.o.resumeStoredTimers ? storedBefore(obj, this.startedAt) : undefined,
        failures: 0,
        seen: undefined,
      };
      this.entries.set(key, e);
    }
    this.evaluate(e, obj);
  }

  private evaluate(e: Entry, obj: KubeObject): void {
    if (e.busy) {
      e.again = true;
      return;
    }
    const rv = obj.metadata.resourceVersion ?? '';
    e.seen = obj;
    if (rv === e.rv && e.epoch === this.epoch) return;
    e.rv = rv;
    e.epoch = this.epoch;
    if (e.played && e.played.rv !== rv) e.played = undefined;
    const now = this.now();
    const chosen = this.choose(e, obj, now);
    if (!chosen) {
      this.cancel(e);
      return;
    }
    const prev = e.job;
    if (prev && prev.stage === chosen.stage && prev.due === chosen.due) {
      prev.rv = rv;
      prev.matched = obj;
      return;
    }
    this.cancel(e);
    const job: Job = { ...chosen, rv, matched: obj, timer: undefined, queued: false };
    e.job = job;
    if (job.due <= now) this.enqueue(e);
    else job.timer = this.o.timers.schedule(job.due, () => this.enqueue(e));
  }

  /** The stage to play next and when, or undefined when none applies. */
  private choose(
    e: Entry,
    obj: KubeObject,
    now: number,
  ): { stage: PlayableStage; due: number; since: number; rand: number } | undefined {
    const played = e.played?.rv === e.rv ? e.played.at : undefined;
    const cands: { stage: PlayableStage; due: number; since: number; rand: number }[] = [];
    const sinces = new Map<string, { since: number; rand: number }>();
    const memo: QueryMemo = new Map();
    for (const s of this.o.stages(obj)) {
      if (!stageMatches(s.compiled, obj, memo)) continue;
      // A stage's delay counts from when the object started matching it, across changes; for a
      // stage already played at this version, from that play (a delayed stage that changed
      // nothing, like a heartbeat within the same second, comes round again; an immediate
      // one does not, or it would spin).
      const playedAt = played?.get(s.name);
      const first = e.sinces?.get(s.name) ?? {
        since: playedAt ?? Math.min(e.resumed ?? now, now),
        rand: this.random(),
      };
      const due = this.dueOf(s, obj, now, first.since, first.rand);
      if (due === undefined || (playedAt !== undefined && due <= playedAt)) continue;
      sinces.set(s.name, first);
      cands.push({ stage: s, due, ...first });
    }
    e.sinces = sinces.size > 0 ? sinces : undefined;
    // Only the state found stored counts from its stored time; later matches count from now.
    e.resumed = undefined;
    if (cands.length === 0) return undefined;
    const fg = cands.filter((c) => !c.stage.background);
    const bg = cands.filter((c) => c.stage.background);
    let pick: (typeof cands)[number] | undefined;
    if (fg.length > 0) {
      // Keep a pending stage that still applies rather than drawing again on every change.
      pick = fg.find((c) => c.stage === e.job?.stage) ?? (fg.length === 1 ? fg[0] : this.draw(fg, obj));
    }
    // Background stages play when nothing else would play before them.
    for (const c of bg) if (!pick || c.due < pick.due) pick = c;
    return pick;
  }

  /** KWOK's weighted draw: uniform when every weight is 0, else by weight among positive ones. */
  private draw<T extends { stage: PlayableStage }>(pool: T[], obj: KubeObject): T {
    const weights = pool.map((c) => stageWeight(c.stage.compiled, obj));
    const total = weights.reduce((a, b) => a + b, 0);
    if (total === 0) return pool[Math.floor(this.random() * pool.length)]!;
    let off = Math.floor(this.random() * total);
    for (let i = 0; i < pool.length; i++) {
      if (weights[i]! <= 0) continue;
      off -= weights[i]!;
      if (off < 0) return pool[i]!;
    }
    return pool[pool.length - 1]!;
  }

  private dueOf(
    s: PlayableStage,
    obj: KubeObject,
    now: number,
    since: number,
    rand: number,
  ): number | undefined {
    const delay = stageDelay(s.compiled, obj, { now: () => now, random: () => rand });
    if (s.hook) {
      return s.hook(obj, {
        now,
        since,
        timeScale: this.o.timeScale,
        stageDelayMs: delay,
        anchors: this.o.anchors,
      });
    }
    return since + (delay ?? 0) / this.o.timeScale;
  }

  private enqueue(e: Entry): void {
    if (!e.job || e.job.queued || this.stopped) return;
    e.job.queued = true;
    e.job.timer = undefined;
    this.runQueue.push(e);
    this.pump();
  }

  private pump(): void {
    while (this.inFlight < this.concurrency && this.runQueue.length > 0) {
      const e = this.runQueue.shift()!;
      const job = e.job;
      if (!job?.queued || this.entries.get(e.key) !== e) continue;
      if (e.busy) {
        job.queued = false;
        e.again = true;
        e.rv = '';
        continue;
      }
      this.inFlight++;
      e.busy = true;
      this.run(e, job)
        .catch((err: unknown) =>
          this.log('error', 'kubelet: playing a stage failed', { key: e.key, error: errText(err) }),
        )
        .finally(() => {
          this.inFlight--;
          e.busy = false;
          if (this.entries.get(e.key) === e && e.again && !this.stopped) {
            e.again = false;
            this.touch(e.namespace, e.name);
          }
          this.pump();
          this.checkIdle();
        });
    }
  }

  private async run(e: Entry, job: Job): Promise<void> {
    const { client, gvr } = this.o;
    // The stored object, read afresh only when it moved on from the one last evaluated.
    const stored = client.storedVersion(gvr, e.namespace, e.name);
    const obj =
      stored === undefined
        ? undefined
        : e.seen?.metadata.resourceVersion === stored
          ? e.seen
          : client.get(gvr, e.namespace, e.name);
    if (e.job === job) e.job = undefined;
    if (!obj) {
      this.forget(e.key);
      return;
    }
    if (!this.o.managed(obj)) return;
    const rv = obj.metadata.resourceVersion ?? '';
    const stage = job.stage;
    if (rv !== job.rv || (obj !== job.matched && !stageMatches(stage.compiled, obj))) {
      e.again = true;
      return;
    }
    const now = this.now();
    const due = this.dueOf(stage, obj, now, job.since, job.rand);
    if (due === undefined || due > now + 1) {
      // A hook's answer moved (time passed differently than planned): plan again.
      e.again = true;
      e.rv = '';
      return;
    }
    const r = this.o.hooks.plan(stage, obj, now, job.rand);
    if (!r.ok) {
      this.markPlayed(e, rv, stage, now);
      this.o.hooks.stageFailed(stage, obj, r.error);
      e.again = true;
      return;
    }
    try {
      const after = await this.apply(obj, r.plan);
      this.plays++;
      e.failures = 0;
      // A stage that still matches after playing counts its next delay from now.
      e.sinces?.delete(stage.name);
      if (after && (after.metadata.resourceVersion ?? '') === rv) this.markPlayed(e, rv, stage, now);
      this.o.hooks.played(stage, r.plan, obj, after, now);
    } catch (err) {
      if (isNotFound(err)) {
        this.forget(e.key);
        return;
      }
      if (retryable(err)) {
        e.failures++;
        const wait = backoffDelay(e.failures - 1, RETRY_BASE_MS, RETRY_MAX_MS);
        this.log(e.failures > 3 ? 'warn' : 'debug', 'kubelet: stage play failed, retrying', {
          key: e.key,
          stage: stage.name,
          error: errText(err),
          retryInMs: wait,
        });
        if (!e.job) {
          const retry: Job = { ...job, queued: false, timer: undefined };
          e.job = retry;
          retry.timer = this.o.timers.schedule(now + wait, () => this.enqueue(e));
        }
        return;
      }
      this.markPlayed(e, rv, stage, now);
      this.o.hooks.stageFailed(stage, obj, errText(err));
    }
    e.again = true;
  }

  private markPlayed(e: Entry, rv: string, stage: PlayableStage, at: number): void {
    if (e.played?.rv !== rv) e.played = { rv, at: new Map() };
    e.played.at.set(stage.name, at);
    e.sinces?.delete(stage.name);
    e.rv = '';
  }

  /** Applies a plan in KWOK's order: event, finalizers, then delete or patches. */
  private async apply(obj: KubeObject, plan: StagePlan): Promise<KubeObject | undefined> {
    const { client, gvr } = this.o;
    const ns = obj.metadata.namespace ?? '';
    const name = obj.metadata.name!;
    let cur = obj;
    if (plan.event) this.o.hooks.event(obj, plan.event);
    if (plan.finalizers) cur = await client.patch(gvr, ns, name, 'json', plan.finalizers);
    if (plan.delete) {
      // The uid precondition keeps a stale play from deleting a recreated namesake (StatefulSets).
      await client.delete(gvr, ns, name, { gracePeriodSeconds: 0, preconditions: { uid: obj.metadata.uid } });
      return undefined;
    }
    for (const p of plan.patches) {
      const c = p.impersonate ? client.as(p.impersonate) : client;
      cur = await c.patch(gvr, ns, name, p.type, p.patch, p.subresource);
    }
    return cur;
  }
}

/**
 * The object's last stored write (managedFields' latest time, else its creationTimestamp;
 * both to the second) when that second ended before `start`, else undefined (an object
 * written in the player's first second may be new).
 */
function storedBefore(obj: KubeObject, start: number): number | undefined {
  let last = parseRFC3339(obj.metadata.creationTimestamp ?? '');
  for (const mf of obj.metadata.managedFields ?? []) {
    const t = typeof mf.time === 'string' ? parseRFC3339(mf.time) : undefined;
    if (t !== undefined && (last === undefined || t > last)) last = t;
  }
  return last !== undefined && last + 1000 <= start ? last : undefined;
}

function keyOf(obj: KubeObject): string {
  const ns = obj.metadata.namespace;
  return ns ? `${ns}/${obj.metadata.name}` : (obj.metadata.name ?? '');
}

function retryable(err: unknown): boolean {
  if (!(err instanceof ApiError)) return false;
  return err.code === 409 || err.code === 429 || err.code >= 500;
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
