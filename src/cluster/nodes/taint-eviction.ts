/**
 * The taint eviction controller (kube-controller-manager's NoExecute taint manager): pods on
 * a node with NoExecute taints are deleted at once when they do not tolerate every such taint,
 * or once the shortest tolerationSeconds of the tolerations in use has passed (counted from
 * when the taint was observed, as upstream does). Pods that tolerate forever stay.
 *
 * Only tainted nodes cost anything: each gets a pod watch filtered on spec.nodeName, which the
 * API server evaluates per event without decoding, so untainted clusters pay nothing.
 */

import type { Taint, Toleration } from '../../kube/builtin.ts';
import { type Condition, setCondition } from '../../kube/conditions.ts';
import { type Clock, realClock, type TimerHandle } from '../../lib/clock.ts';
import { jsonEqual } from '../../lib/json.ts';
import type { KubeObject } from '../apiserver/types.ts';
import { type ClusterClient, GVR, isNotFound } from '../client.ts';
import { toleratesTaint } from '../scheduler/core/index.ts';
import type { EventRecorder } from './events.ts';
import { nodeTaints } from './node-object.ts';

export type NodesLog = (
  level: 'debug' | 'info' | 'warn',
  msg: string,
  fields?: Record<string, unknown>,
) => void;

interface TrackedPod {
  namespace: string;
  name: string;
  uid: string;
  tolerations: Toleration[];
  timer: TimerHandle | undefined;
  evicting: boolean;
}

interface TaintedNode {
  taints: Taint[];
  signature: string;
  stopWatch: () => void;
  pods: Map<string, TrackedPod>;
}

export class TaintEviction {
  private readonly client: ClusterClient;
  private readonly timeScale: number;
  private readonly clock: Clock;
  private readonly recorder: EventRecorder | undefined;
  private readonly log: NodesLog;
  private readonly nodes = new Map<string, TaintedNode>();
  private stopped = false;
  readonly inflight = new Set<Promise<void>>();

  constructor(
    client: ClusterClient,
    opts: { timeScale: number; recorder?: EventRecorder; log: NodesLog; clock?: Clock },
  ) {
    this.client = client;
    this.timeScale = opts.timeScale;
    this.clock = opts.clock ?? realClock;
    this.recorder = opts.recorder;
    this.log = opts.log;
  }

  nodeChanged(node: KubeObject): void {
    if (this.stopped) return;
    const name = node.metadata.name ?? '';
    const taints = nodeTaints(node).filter((t) => t.effect === 'NoExecute');
    if (taints.length === 0) {
      this.nodeDeleted(name);
      return;
    }
    const signature = JSON.stringify(taints.map((t) => [t.key, t.value ?? '']));
    let tn = this.nodes.get(name);
    if (tn && tn.signature === signature) return;
    if (!tn) {
      tn = { taints, signature, stopWatch: () => {}, pods: new Map() };
      this.nodes.set(name, tn);
      const entry = tn;
      entry.stopWatch = this.client.watch(GVR.pods, (type, pod) => this.onPod(entry, type, pod), {
        fieldSelector: `spec.nodeName=${name}`,
        shared: true,
      });
      return;
    }
    tn.taints = taints;
    tn.signature = signature;
    // A changed taint set restarts every pod's clock, as the taint manager does on node updates.
    for (const p of tn.pods.values()) {
      if (p.timer) p.timer.cancel();
      p.timer = undefined;
      this.evaluate(tn, p);
    }
  }

  nodeDeleted(name: string): void {
    const tn = this.nodes.get(name);
    if (!tn) return;
    tn.stopWatch();
    for (const p of tn.pods.values()) if (p.timer) p.timer.cancel();
    this.nodes.delete(name);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const name of [...this.nodes.keys()]) this.nodeDeleted(name);
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  private onPod(tn: TaintedNode, type: string, pod: KubeObject): void {
    const uid = pod.metadata.uid ?? '';
    const phase = (pod.status as { phase?: string } | undefined)?.phase;
    if (type === 'DELETED' || pod.metadata.deletionTimestamp || phase === 'Succeeded' || phase === 'Failed') {
      const p = tn.pods.get(uid);
      p?.timer?.cancel();
      tn.pods.delete(uid);
      return;
    }
    const tolerations = ((pod.spec as { tolerations?: Toleration[] } | undefined)?.tolerations ?? []).filter(
      (t) => !t.effect || t.effect === 'NoExecute',
    );
    let p = tn.pods.get(uid);
    if (!p) {
      p = {
        namespace: pod.metadata.namespace ?? '',
        name: pod.metadata.name ?? '',
        uid,
        tolerations,
        timer: undefined,
        evicting: false,
      };
      tn.pods.set(uid, p);
    } else {
      // Tolerations may only be added (or their seconds changed): re-evaluate from scratch.
      if (jsonEqual(p.tolerations, tolerations)) return;
      p.tolerations = tolerations;
      if (p.timer) p.timer.cancel();
      p.timer = undefined;
    }
    this.evaluate(tn, p);
  }

  private evaluate(tn: TaintedNode, p: TrackedPod): void {
    if (p.evicting) return;
    let minSeconds = Number.POSITIVE_INFINITY;
    for (const taint of tn.taints) {
      const used = p.tolerations.filter((t) => toleratesTaint(t, taint));
      if (used.length === 0) {
        this.evict(p);
        return;
      }
      for (const t of used) {
        if (typeof t.tolerationSeconds === 'number')
          minSeconds = Math.min(minSeconds, Math.max(0, t.tolerationSeconds));
      }
    }
    if (!Number.isFinite(minSeconds)) return;
    if (p.timer) return;
    const delay = (minSeconds * 1000) / this.timeScale;
    if (delay <= 0) {
      this.evict(p);
      return;
    }
    p.timer = this.clock.setTimer(() => {
      p.timer = undefined;
      this.evict(p);
    }, delay);
  }

  private evict(p: TrackedPod): void {
    if (p.evicting || this.stopped) return;
    p.evicting = true;
    const work = (async () => {
      // Watch handlers run inside another writer's commit: write only after it returns.
      await null;
      try {
        const pod = await this.client.mutate(
          GVR.pods,
          p.namespace,
          p.name,
          (cur) => {
            if (cur.metadata.uid !== p.uid) return;
            setDisruptionTarget(
              cur,
              'DeletionByTaintManager',
              'Taint manager: deleting due to NoExecute taint',
            );
          },
          'status',
        );
        if (pod.metadata.uid !== p.uid) return;
        this.recorder?.event(
          pod,
          'Normal',
          'TaintManagerEviction',
          `Marking for deletion Pod ${p.namespace}/${p.name}`,
        );
        await this.client.delete(GVR.pods, p.namespace, p.name, { preconditions: { uid: p.uid } });
        this.log('info', 'evicted pod from tainted node', { pod: `${p.namespace}/${p.name}` });
      } catch (err) {
        if (!isNotFound(err))
          this.log('warn', 'taint eviction failed', { pod: `${p.namespace}/${p.name}`, error: String(err) });
      }
    })();
    this.inflight.add(work);
    void work.finally(() => this.inflight.delete(work));
  }
}

/** The DisruptionTarget condition controllers add before deleting a pod (1.26+). */
export function setDisruptionTarget(pod: KubeObject, reason: string, message: string): void {
  pod.status ??= {};
  const status = pod.status as { conditions?: Condition[] };
  status.conditions ??= [];
  setCondition(status.conditions, {
    type: 'DisruptionTarget',
    status: 'True',
    lastProbeTime: null,
    reason,
    message,
  });
}
