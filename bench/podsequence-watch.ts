/**
 * What the PodSequence bench's driver observes: its own watches on pods and PodSequences,
 * timestamped as each line arrives.
 */
import { DEFAULT_GATE } from '../src/apis/scheduling.example.com/v1alpha1.ts';
import type { Http } from './support.ts';

export const podSequencesPath = (ns: string) =>
  `/apis/scheduling.example.com/v1alpha1/namespaces/${ns}/podsequences`;

interface WatchedPod {
  metadata: {
    name: string;
    namespace: string;
    resourceVersion: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: { schedulingGates?: { name: string }[] | null };
  status?: { conditions?: { type: string; status: string }[] };
}

export interface PodState {
  name: string;
  gated: boolean;
  ready: boolean;
  /** What the driver needs to build a release patch (floor) for this pod. */
  pod: WatchedPod;
  /** Labels, annotations and spec as last seen: changes outside status. */
  shape: string;
}

export interface PodChange {
  type: string;
  /** performance.now() when the line arrived. */
  t: number;
  before: PodState | undefined;
  after: PodState;
}

/** Every pod of one namespace as the driver's own watch shows it. */
export class PodWatch {
  readonly pods = new Map<string, PodState>();
  /** Changes to labels, annotations or spec (not status) of pods that existed: writes by others than the kubelet role. */
  shapeChanges = 0;
  private readonly listeners = new Set<(c: PodChange) => void>();
  private stop: (() => void) | undefined;

  /** Starts watching from `resourceVersion` (a list's, taken before anything was created). */
  start(http: Http, namespace: string, resourceVersion: string): void {
    this.stop = http.watch(
      `/api/v1/namespaces/${namespace}/pods?watch=true&resourceVersion=${resourceVersion}&timeoutSeconds=3600`,
      (line) => this.onLine(line),
    );
  }

  private onLine(line: string): void {
    if (!line.trim()) return;
    const t = performance.now();
    const ev = JSON.parse(line) as { type: string; object: WatchedPod };
    if (ev.type === 'ERROR' || ev.type === 'BOOKMARK') {
      if (ev.type === 'ERROR') throw new Error(`pod watch error: ${line.slice(0, 300)}`);
      return;
    }
    const obj = ev.object;
    const name = obj.metadata.name;
    const before = this.pods.get(name);
    if (ev.type === 'DELETED') {
      this.pods.delete(name);
      return;
    }
    const after: PodState = {
      name,
      gated: (obj.spec?.schedulingGates ?? []).some((g) => g.name === DEFAULT_GATE),
      ready: (obj.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
      pod: obj,
      shape: JSON.stringify([obj.metadata.labels, obj.metadata.annotations, obj.spec]),
    };
    if (before && before.shape !== after.shape) this.shapeChanges++;
    this.pods.set(name, after);
    for (const l of this.listeners) l({ type: ev.type, t, before, after });
  }

  on(listener: (c: PodChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves once `done` holds (checked now and after every change), or rejects after `timeoutMs`. */
  until(what: string, done: () => boolean, timeoutMs = 60_000): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const off = this.on(() => {
        if (!done()) return;
        clearTimeout(timer);
        off();
        resolve();
      });
    });
  }

  close(): void {
    this.stop?.();
  }
}

export interface SequenceStatus {
  phase?: string;
  currentIndex?: number;
  readyPodsInCurrentGroup?: number;
  message?: string;
}

/** One PodSequence as the driver's watch shows it: how often its status changed. */
export class SequenceWatch {
  statusChanges = 0;
  status: SequenceStatus = {};
  private last = '';
  private readonly listeners = new Set<() => void>();
  private stop: (() => void) | undefined;

  start(http: Http, namespace: string, resourceVersion: string): void {
    this.stop = http.watch(
      `${podSequencesPath(namespace)}?watch=true&resourceVersion=${resourceVersion}&timeoutSeconds=3600`,
      (line) => {
        if (!line.trim()) return;
        const ev = JSON.parse(line) as { type: string; object: { status?: SequenceStatus } };
        const status = JSON.stringify(ev.object.status ?? {});
        if (ev.type === 'MODIFIED' && status !== this.last) this.statusChanges++;
        this.last = status;
        this.status = ev.object.status ?? {};
        for (const l of this.listeners) l();
      },
    );
  }

  until(what: string, done: (s: SequenceStatus) => boolean, timeoutMs = 60_000): Promise<void> {
    if (done(this.status)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!done(this.status)) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for ${what}; status: ${JSON.stringify(this.status).slice(0, 400)}`,
          ),
        );
      }, timeoutMs);
      this.listeners.add(check);
    });
  }

  close(): void {
    this.stop?.();
  }
}
