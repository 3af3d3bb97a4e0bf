/**
 * troupe's behaviour on top of KWOK's stages, as data plus named hooks.
 *
 * Data: the Stage files in ./troupe-stages/ (pod-ready, pod-container-lifecycle,
 * pod-complete, pod-terminate, pod-delete, pod-ephemeral-containers). They replace KWOK's stages of the same name and
 * join KWOK's node-initialize, node-heartbeat-with-lease and pod-remove-finalizer.
 *
 * Hooks, which any Stage (yours too) can name in its metadata.annotations:
 * - `kubelet.troupe.dev/hook: <name>` decides when the stage is due, from the object and the
 *   kubelet's clock, instead of spec.delay; a hook that answers "never" makes the stage not
 *   apply to that object for now (so it cannot shadow other stages).
 *   - `container-runtime`: the next container transition (probe passing, exit, restart).
 *   - `termination`: min(deletion grace period, 1 s) after the kubelet saw the deletion.
 *   - `no-run-hints`: spec.delay as usual, but never for pods that carry a run hint.
 * - `kubelet.troupe.dev/background: "true"`: the stage only plays when no other stage
 *   applies to the object.
 *
 * Template functions available to every Stage: `UnreadyAtStart pod` (names of containers
 * that start unready: readiness or startup probe), `AdvanceContainers pod` (the status after
 * the container transitions due now), `StopContainers pod "kill"|"complete"` (every
 * container terminated, with the phase that follows).
 */

import { readFileSync } from 'node:fs';
import type { Pod } from '../../kube/builtin.ts';
import type { FuncMap, Value } from './gotemplate/index.ts';
import {
  type Anchors,
  advanceContainers,
  hasRunHints,
  nextContainerChange,
  podBehaviour,
  stopAllContainers,
} from './runtime.ts';
import { loadDefaultStages, parseStagesYAML, type Stage } from './stages/index.ts';

export const HOOK_ANNOTATION = 'kubelet.troupe.dev/hook';
export const BACKGROUND_ANNOTATION = 'kubelet.troupe.dev/background';

export const TROUPE_STAGE_NAMES = [
  'pod-ready',
  'pod-container-lifecycle',
  'pod-complete',
  'pod-terminate',
  'pod-delete',
  'pod-ephemeral-containers',
] as const;

/** KWOK's node-initialize, node-heartbeat-with-lease and pod-remove-finalizer, then troupe's own. */
export function troupeDefaultStages(): Stage[] {
  const own = TROUPE_STAGE_NAMES.flatMap((name) =>
    parseStagesYAML(readFileSync(new URL(`./troupe-stages/${name}.yaml`, import.meta.url), 'utf8')),
  );
  const replaced = new Set(own.map((s) => s.metadata.name));
  return [...loadDefaultStages().filter((s) => !replaced.has(s.metadata.name)), ...own];
}

export interface HookContext {
  now: number;
  /**
   * When the kubelet first planned this stage for the object's current state (for an object
   * found stored at start with resumeStoredTimers, its last stored write).
   */
  since: number;
  timeScale: number;
  /** The delay spec.delay gives (unscaled), undefined without one. */
  stageDelayMs: number | undefined;
  anchors: Anchors;
}

/** Epoch ms when the stage is due for `obj`, or undefined when it does not apply now. */
export type DueHook = (obj: Pod, ctx: HookContext) => number | undefined;

const TERMINATION_CAP_MS = 1000;

export const HOOKS: Readonly<Record<string, DueHook>> = {
  'container-runtime': (pod, ctx) =>
    nextContainerChange(pod, { now: ctx.now, timeScale: ctx.timeScale, anchors: ctx.anchors }),
  termination: (pod, ctx) => {
    const grace = pod.metadata?.deletionGracePeriodSeconds;
    const ms = Math.min(typeof grace === 'number' ? grace * 1000 : TERMINATION_CAP_MS, TERMINATION_CAP_MS);
    return ctx.since + Math.max(0, ms) / ctx.timeScale;
  },
  'no-run-hints': (pod, ctx) =>
    hasRunHints(pod) ? undefined : ctx.since + (ctx.stageDelayMs ?? 0) / ctx.timeScale,
};

export const TROUPE_FUNC_NAMES = ['UnreadyAtStart', 'AdvanceContainers', 'StopContainers'] as const;

/** The troupe template functions, bound to one render's clock. */
export function troupeFuncs(env: { now: number; timeScale: number; anchors: Anchors }): FuncMap {
  return {
    UnreadyAtStart: (pod: Value) =>
      podBehaviour(pod as Pod)
        .filter((b) => b.readinessMs !== undefined || b.startupMs > 0)
        .map((b) => b.name),
    AdvanceContainers: (pod: Value) => (advanceContainers(pod as Pod, env)?.status ?? {}) as Value,
    StopContainers: (pod: Value, mode: Value) =>
      stopAllContainers(pod as Pod, mode === 'complete' ? 'complete' : 'kill', env).status as Value,
  };
}
