/**
 * Stage objects in the cluster: each is compiled when its spec changes (generation), joins
 * the stage set, and gets an `Accepted` condition saying whether it is played or why not. A
 * Stage that fails to compile gets `Accepted=False, reason InvalidStage` with the field
 * errors, and a Warning Event, and is left out; nothing else is affected.
 */

import { type Clock, realClock } from '../../lib/clock.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { type ClusterClient, isNotFound } from '../client.ts';
import { STAGE_GVR } from './crd.ts';
import type { LogFn } from './engine.ts';
import { type KubeletEvents, targetOf } from './events.ts';
import { compilePlayable, PLAYED_KINDS, type StageSet } from './stage-set.ts';
import type { Stage } from './stages/index.ts';
import { formatRFC3339Nano } from './stages/index.ts';

interface Verdict {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

export class StageObjects {
  private readonly client: ClusterClient;
  private readonly set: StageSet;
  private readonly events: KubeletEvents | undefined;
  private readonly log: LogFn;
  private readonly clock: Clock;
  /** name -> uid/generation last compiled. */
  private readonly compiled = new Map<string, string>();
  private chain: Promise<void> = Promise.resolve();
  private stopWatch: (() => void) | undefined;

  constructor(
    client: ClusterClient,
    set: StageSet,
    events: KubeletEvents | undefined,
    log: LogFn,
    clock: Clock = realClock,
  ) {
    this.clock = clock;
    this.client = client;
    this.set = set;
    this.events = events;
    this.log = log;
  }

  start(): void {
    this.stopWatch = this.client.watch(STAGE_GVR, (type, obj) => this.onEvent(type, obj), { shared: true });
  }

  async stop(): Promise<void> {
    this.stopWatch?.();
    this.stopWatch = undefined;
    await this.chain;
  }

  /** Waits for pending status writes. */
  flush(): Promise<void> {
    return this.chain;
  }

  private onEvent(type: string, obj: KubeObject): void {
    const name = obj.metadata.name ?? '';
    if (type === 'DELETED') {
      this.compiled.delete(name);
      this.set.removeCluster(name);
      return;
    }
    const version = `${obj.metadata.uid}/${obj.metadata.generation ?? 0}`;
    if (this.compiled.get(name) === version) return;
    this.compiled.set(name, version);
    const r = compilePlayable(obj as unknown as Stage, 'cluster');
    let verdict: Verdict;
    if (!r.ok) {
      this.set.setCluster(name, undefined);
      verdict = { status: 'False', reason: 'InvalidStage', message: r.errors.join('; ') };
      this.events?.record({
        target: targetOf(obj),
        type: 'Warning',
        reason: 'InvalidStage',
        message: `Stage ${name} is not played: ${verdict.message}`,
        host: '',
      });
      this.log('warn', 'kubelet: invalid Stage', { stage: name, errors: r.errors });
    } else {
      this.set.setCluster(name, r.stage);
      verdict = PLAYED_KINDS.has(r.stage.compiled.kind)
        ? {
            status: 'True',
            reason: 'Accepted',
            message: r.stage.compiled.selectable
              ? `Played on ${r.stage.compiled.kind} objects`
              : 'The stage has no selector, so it matches nothing (as in KWOK); a default stage of the same name stays off',
          }
        : {
            status: 'False',
            reason: 'UnsupportedKind',
            message: `troupe's kubelet plays stages on Pod and Node objects only, not ${r.stage.compiled.kind}`,
          };
    }
    const generation = obj.metadata.generation;
    this.chain = this.chain
      .then(() => this.writeStatus(name, verdict, generation))
      .catch((err: unknown) => {
        if (!isNotFound(err)) {
          this.log('warn', 'kubelet: Stage status not written', {
            stage: name,
            error: err instanceof Error ? err.message : String(err),
          });
        }
      });
  }

  private async writeStatus(name: string, v: Verdict, generation: number | undefined): Promise<void> {
    const cur = this.client.get(STAGE_GVR, '', name);
    if (!cur) return;
    const conds = (
      (cur.status as { conditions?: Record<string, unknown>[] } | undefined)?.conditions ?? []
    ).filter((c) => c.type !== 'Accepted');
    const prev = (
      (cur.status as { conditions?: Record<string, unknown>[] } | undefined)?.conditions ?? []
    ).find((c) => c.type === 'Accepted');
    const cond: Record<string, unknown> = {
      type: 'Accepted',
      status: v.status,
      reason: v.reason,
      message: v.message,
      lastTransitionTime:
        prev?.status === v.status && typeof prev.lastTransitionTime === 'string'
          ? prev.lastTransitionTime
          : formatRFC3339Nano(Math.floor(this.clock.now() / 1000) * 1000),
    };
    if (generation !== undefined) cond.observedGeneration = generation;
    await this.client.patch(
      STAGE_GVR,
      '',
      name,
      'merge',
      { status: { conditions: [...conds, cond] } },
      'status',
    );
  }

  /** Reports a stage that failed while playing (rate-limited per stage by the caller). */
  reportPlayFailure(stageName: string, message: string): void {
    const obj = this.client.get(STAGE_GVR, '', stageName);
    if (!obj) return;
    this.events?.record({ target: targetOf(obj), type: 'Warning', reason: 'StageFailed', message, host: '' });
  }
}
