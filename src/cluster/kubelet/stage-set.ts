/**
 * The stages the kubelet plays, and the rule that combines them:
 *
 * - troupe's defaults (KWOK's node and finalizer stages plus troupe's pod stages) apply
 *   unless switched off (`defaultStages: false`, or by name in `disabledStages`);
 * - every Stage object in the cluster is added to them; one named like a default replaces
 *   that default (so a Stage named `pod-complete` without a selector switches KWOK's Job
 *   completion off, as KWOK ignores selector-less stages), and deleting it brings the
 *   default back;
 * - Stages given in the options (`stages`, e.g. from files) are added like cluster ones, and
 *   a cluster Stage of the same name wins over them.
 *
 * A Stage that does not compile is reported and left out; if it replaced a default, the
 * default stays out too (the user asked for their version, which is broken).
 */

import type { KubeObject } from '../apiserver/types.ts';
import { type CompiledStage, compileStage, type Stage } from './stages/index.ts';
import {
  BACKGROUND_ANNOTATION,
  type DueHook,
  HOOK_ANNOTATION,
  HOOKS,
  TROUPE_FUNC_NAMES,
} from './troupe-stages.ts';

export type StageOrigin = 'default' | 'option' | 'cluster';

export interface PlayableStage {
  name: string;
  origin: StageOrigin;
  compiled: CompiledStage;
  hook: DueHook | undefined;
  background: boolean;
}

export type CompiledOrErrors = { ok: true; stage: PlayableStage } | { ok: false; errors: string[] };

export function compilePlayable(stage: Stage, origin: StageOrigin): CompiledOrErrors {
  const r = compileStage(stage, { extraFuncNames: TROUPE_FUNC_NAMES });
  const errors = r.ok ? [] : [...r.errors];
  const ann = (stage?.metadata?.annotations ?? {}) as Record<string, unknown>;
  const hookName = ann[HOOK_ANNOTATION];
  let hook: DueHook | undefined;
  if (hookName !== undefined) {
    hook = typeof hookName === 'string' ? HOOKS[hookName] : undefined;
    if (!hook) {
      errors.push(
        `metadata.annotations[${HOOK_ANNOTATION}]: Unsupported value: ${JSON.stringify(hookName)}: supported values: ${Object.keys(
          HOOKS,
        )
          .map((h) => JSON.stringify(h))
          .join(', ')}`,
      );
    }
  }
  if (!r.ok || errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    stage: {
      name: r.stage.name,
      origin,
      compiled: r.stage,
      hook,
      background: ann[BACKGROUND_ANNOTATION] === 'true',
    },
  };
}

/** What the kubelet can play: Pod and Node stages. */
export const PLAYED_KINDS = new Set(['Pod', 'Node']);

function kindKey(apiGroup: string, kind: string): string {
  // `v1` (core) is what stages write for Pods and Nodes; a bare group matches any version.
  const group = apiGroup.includes('/')
    ? apiGroup.slice(0, apiGroup.indexOf('/'))
    : apiGroup === 'v1'
      ? ''
      : apiGroup;
  return `${group}/${kind}`;
}

export class StageSet {
  private readonly defaults = new Map<string, PlayableStage>();
  private readonly options = new Map<string, PlayableStage | undefined>();
  private readonly cluster = new Map<string, PlayableStage | undefined>();
  private byKind = new Map<string, PlayableStage[]>();
  private listeners: (() => void)[] = [];

  constructor(defaults: readonly Stage[], extra: readonly Stage[] = []) {
    for (const s of defaults) {
      const r = compilePlayable(s, 'default');
      // Shipped stages are tested; a failure here is a bug worth failing loudly on.
      if (!r.ok) throw new Error(`default stage ${s.metadata?.name}: ${r.errors.join('; ')}`);
      this.defaults.set(r.stage.name, r.stage);
    }
    for (const s of extra) {
      const r = compilePlayable(s, 'option');
      if (!r.ok) throw new Error(`stage ${s.metadata?.name ?? '<unnamed>'}: ${r.errors.join('; ')}`);
      this.options.set(r.stage.name, r.stage);
    }
    this.rebuild();
  }

  onChange(fn: () => void): void {
    this.listeners.push(fn);
  }

  /** Sets (or, with `stage` undefined, breaks) the cluster Stage of this name. */
  setCluster(name: string, stage: PlayableStage | undefined): void {
    this.cluster.set(name, stage);
    this.rebuild();
  }

  removeCluster(name: string): void {
    if (!this.cluster.delete(name)) return;
    this.rebuild();
  }

  /** Stages for objects of this apiVersion/kind, in a stable order. */
  forKind(apiVersion: string, kind: string): readonly PlayableStage[] {
    return this.byKind.get(kindKey(apiVersion, kind)) ?? [];
  }

  all(): PlayableStage[] {
    return [...this.byKind.values()].flat();
  }

  private rebuild(): void {
    const effective = new Map<string, PlayableStage | undefined>(this.defaults);
    for (const [k, v] of this.options) effective.set(k, v);
    for (const [k, v] of this.cluster) effective.set(k, v);
    const byKind = new Map<string, PlayableStage[]>();
    for (const s of effective.values()) {
      if (!s) continue;
      const k = kindKey(s.compiled.apiGroup, s.compiled.kind);
      const list = byKind.get(k) ?? [];
      list.push(s);
      byKind.set(k, list);
    }
    this.byKind = byKind;
    for (const fn of this.listeners) fn();
  }
}

export function isStageObject(obj: KubeObject): obj is KubeObject & Stage {
  return obj.kind === 'Stage';
}
