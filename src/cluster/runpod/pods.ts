/**
 * The stand-in's pods: RunPod's lifecycle (PROVISIONING → STARTING → RUNNING, then EXITED
 * on stop, ERROR when the image cannot start, gone on terminate), GPU stock taken and
 * returned, billing per hour while running, and a simulated container that RunPod-style
 * restarts whenever its entrypoint exits (RunPod reports no exit code, so neither does
 * the stand-in: the logs only say the container stopped and started again).
 */
import { randomBytes } from 'node:crypto';
import { type Clock, realClock, type TimerHandle } from '../../lib/clock.ts';
import type { Cloud, GpuType, Stock } from './catalog.ts';
import { type ProcessIO, runProcess, splitArgs } from './shell.ts';

export type PodStatus = 'PROVISIONING' | 'STARTING' | 'RUNNING' | 'EXITED' | 'ERROR' | 'TERMINATED';
export type PodAction = 'start' | 'stop' | 'restart' | 'terminate';
export type LogSource = 'container' | 'system';

/** How a simulated image behaves: its ENTRYPOINT and CMD, or a pull failure. */
export interface ImageConfig {
  entrypoint?: string[];
  cmd?: string[];
  pullError?: boolean;
}

export interface LogEntry {
  ts: string;
  seq: number;
  source: LogSource;
  line: string;
}

export interface Timing {
  provisioningMs: number;
  startingMs: number;
  restartDelayMs: number;
  /** Divides every delay and every `sleep` of simulated containers. */
  timeScale: number;
}

export interface CreatePodInput {
  name: string;
  image: string;
  args?: string;
  disk?: number;
  ports?: string[];
  env?: Record<string, string>;
  registry?: string | null;
  cloud?: Cloud;
  dataCenterIds?: string[];
  gpu?: { id: string; count?: number; minRamPerGpu?: number; minVcpuCountPerGpu?: number };
  cpu?: { id: string; vcpuCount: number };
}

export interface PodRecord {
  id: string;
  name: string;
  image: string;
  args: string;
  disk: number;
  ports: string[];
  env: Record<string, string>;
  registry: string | null;
  cloud: Cloud;
  dataCenterId: string;
  gpu?: { id: string; count: number; vcpuCount: number; memory: number; unitPrice: number };
  cpu?: { id: string; vcpuCount: number; memory: number };
  status: PodStatus;
  createdAt: string;
  startedAt: string | null;
  startedMs: number;
  holdsStock: boolean;
  logs: LogEntry[];
  /** Times the container was (re)started. */
  starts: number;
  listeners: Set<(e: LogEntry | undefined) => void>;
  proc: AbortController | undefined;
  timers: Set<TimerHandle>;
}

/** One pod's life as the stand-in saw it, kept after it is terminated (for tests and benches). */
export interface PodHistory {
  id: string;
  name: string;
  env: Record<string, string>;
  /** Epoch ms the create was accepted. */
  createdMs: number;
  /** Every status the pod took, in order, with its epoch ms. */
  transitions: { status: PodStatus; at: number }[];
}

const MAX_LOG_LINES = 5000;
const CPU_PRICE_PER_VCPU = 0.03;

export class PodStore {
  private readonly pods = new Map<string, PodRecord>();
  private readonly histories = new Map<string, PodHistory>();
  private seq = 0;
  private readonly stock: Stock;
  private readonly gpus: () => readonly GpuType[];
  private readonly images: Record<string, ImageConfig>;
  private readonly defaultImage: ImageConfig;
  readonly timing: Timing;
  readonly clock: Clock;

  constructor(opts: {
    stock: Stock;
    gpus: () => readonly GpuType[];
    images: Record<string, ImageConfig>;
    defaultImage: ImageConfig;
    timing: Timing;
    clock?: Clock;
  }) {
    this.clock = opts.clock ?? realClock;
    this.stock = opts.stock;
    this.gpus = opts.gpus;
    this.images = opts.images;
    this.defaultImage = opts.defaultImage;
    this.timing = opts.timing;
  }

  list(): PodRecord[] {
    return [...this.pods.values()];
  }

  get(id: string): PodRecord | undefined {
    return this.pods.get(id);
  }

  /** Places a pod, or says why not: 'capacity' (no stock) or 'unknown-gpu'. */
  create(input: CreatePodInput): PodRecord | 'capacity' | 'unknown-gpu' {
    const cloud = input.cloud ?? 'SECURE';
    let gpu: PodRecord['gpu'];
    let cpu: PodRecord['cpu'];
    if (input.gpu) {
      const type = this.gpus().find((g) => g.id === input.gpu!.id);
      if (!type) return 'unknown-gpu';
      const count = input.gpu.count ?? 1;
      const unitPrice = cloud === 'SECURE' ? type.price.secure : type.price.community;
      const offered = cloud === 'SECURE' ? type.secure : type.community;
      const max = cloud === 'SECURE' ? type.maxCount.secure : type.maxCount.community;
      if (!offered || count > max || !this.stock.take(type.id, count)) return 'capacity';
      gpu = {
        id: type.id,
        count,
        vcpuCount: Math.max(count * 8, count * (input.gpu.minVcpuCountPerGpu ?? 0)),
        memory: Math.max(count * 31, count * (input.gpu.minRamPerGpu ?? 0)),
        unitPrice,
      };
    } else if (input.cpu) {
      cpu = { id: input.cpu.id, vcpuCount: input.cpu.vcpuCount, memory: input.cpu.vcpuCount * 2 };
    }
    const id = newPodId();
    const pod: PodRecord = {
      id,
      name: input.name,
      image: input.image,
      args: input.args ?? '',
      disk: input.disk ?? 50,
      ports: input.ports ?? [],
      env: input.env ?? {},
      registry: input.registry ?? null,
      cloud,
      dataCenterId: input.dataCenterIds?.[0] ?? 'US-TX-3',
      gpu,
      cpu,
      status: 'PROVISIONING',
      createdAt: new Date(this.clock.now()).toISOString(),
      startedAt: null,
      startedMs: 0,
      holdsStock: gpu !== undefined,
      logs: [],
      starts: 0,
      listeners: new Set(),
      proc: undefined,
      timers: new Set(),
    };
    this.pods.set(id, pod);
    const createdMs = Date.parse(pod.createdAt);
    this.histories.set(id, {
      id,
      name: pod.name,
      env: { ...pod.env },
      createdMs,
      transitions: [{ status: 'PROVISIONING', at: createdMs }],
    });
    this.log(pod, 'system', `pod ${id} scheduled on a ${gpu ? `${gpu.count}x ${gpu.id}` : 'CPU'} machine`);
    this.after(pod, this.timing.provisioningMs, () => this.boot(pod));
    return pod;
  }

  /** Every pod ever created, terminated ones included, in creation order. */
  history(): PodHistory[] {
    return [...this.histories.values()].map((h) => ({
      ...h,
      env: { ...h.env },
      transitions: [...h.transitions],
    }));
  }

  private setStatus(pod: PodRecord, status: PodStatus): void {
    pod.status = status;
    this.histories.get(pod.id)?.transitions.push({ status, at: this.clock.now() });
  }

  /** Valid actions by status, as RunPod publishes them in `actions`. */
  actionsFor(status: PodStatus): PodAction[] {
    switch (status) {
      case 'RUNNING':
        return ['stop', 'restart', 'terminate'];
      case 'EXITED':
      case 'ERROR':
        return ['start', 'terminate'];
      case 'PROVISIONING':
      case 'STARTING':
        return ['stop', 'terminate'];
      default:
        return [];
    }
  }

  /** Applies an action; 'invalid' when the status does not allow it, 'capacity' when start finds no stock. */
  action(pod: PodRecord, action: PodAction): 'ok' | 'invalid' | 'capacity' {
    if (!this.actionsFor(pod.status).includes(action)) return 'invalid';
    switch (action) {
      case 'terminate':
        this.terminate(pod);
        return 'ok';
      case 'stop':
        this.halt(pod);
        this.setStatus(pod, 'EXITED');
        this.releaseStock(pod);
        this.log(pod, 'system', 'pod stopped');
        return 'ok';
      case 'restart':
        this.halt(pod);
        this.setStatus(pod, 'STARTING');
        this.log(pod, 'system', 'restarting container');
        this.after(pod, this.timing.startingMs, () => this.run(pod));
        return 'ok';
      case 'start':
        if (pod.gpu && !pod.holdsStock) {
          if (!this.stock.take(pod.gpu.id, pod.gpu.count)) return 'capacity';
          pod.holdsStock = true;
        }
        this.setStatus(pod, 'STARTING');
        this.log(pod, 'system', 'starting pod');
        this.after(pod, this.timing.startingMs, () => this.run(pod));
        return 'ok';
    }
  }

  terminate(pod: PodRecord): void {
    this.halt(pod);
    this.releaseStock(pod);
    this.setStatus(pod, 'TERMINATED');
    this.pods.delete(pod.id);
    for (const l of pod.listeners) l(undefined);
    pod.listeners.clear();
  }

  /** Dollars per hour the pod bills now (0 when stopped or gone). */
  cost(pod: PodRecord): number {
    if (pod.status === 'EXITED' || pod.status === 'TERMINATED' || pod.status === 'ERROR') return 0;
    if (pod.gpu) return round(pod.gpu.unitPrice * pod.gpu.count);
    if (pod.cpu) return round(pod.cpu.vcpuCount * CPU_PRICE_PER_VCPU);
    return 0;
  }

  subscribe(pod: PodRecord, fn: (e: LogEntry | undefined) => void): () => void {
    pod.listeners.add(fn);
    return () => pod.listeners.delete(fn);
  }

  stopAll(): void {
    for (const pod of [...this.pods.values()]) {
      this.halt(pod);
      for (const l of pod.listeners) l(undefined);
      pod.listeners.clear();
    }
  }

  private boot(pod: PodRecord): void {
    this.setStatus(pod, 'STARTING');
    this.log(pod, 'system', `pulling image ${pod.image}`);
    this.after(pod, this.timing.startingMs, () => {
      if (this.imageOf(pod).pullError) {
        this.setStatus(pod, 'ERROR');
        this.releaseStock(pod);
        this.log(pod, 'system', `failed to pull image ${pod.image}: manifest unknown`);
        return;
      }
      this.run(pod);
    });
  }

  /** Starts the container; when its entrypoint exits, RunPod starts it again. */
  private run(pod: PodRecord): void {
    if (!this.pods.has(pod.id)) return;
    this.setStatus(pod, 'RUNNING');
    pod.starts++;
    pod.startedMs = this.clock.now();
    pod.startedAt = new Date(pod.startedMs).toISOString();
    this.log(pod, 'system', 'container started');
    const image = this.imageOf(pod);
    const argv = [...(image.entrypoint ?? []), ...(pod.args ? splitArgs(pod.args) : (image.cmd ?? []))];
    const abort = new AbortController();
    pod.proc = abort;
    const io: ProcessIO = {
      env: {
        PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        HOSTNAME: pod.id,
        RUNPOD_POD_ID: pod.id,
        RUNPOD_GPU_COUNT: String(pod.gpu?.count ?? 0),
        RUNPOD_DC_ID: pod.dataCenterId,
        ...pod.env,
      },
      write: (line) => this.log(pod, 'container', line),
      sleep: (ms) => abortableSleep(this.clock, ms / this.timing.timeScale, abort.signal),
      signal: abort.signal,
    };
    void runProcess(argv, io)
      .catch(() => 137)
      .then(() => {
        if (abort.signal.aborted || pod.proc !== abort) return;
        pod.proc = undefined;
        this.log(pod, 'system', 'container stopped; restarting');
        this.after(pod, this.timing.restartDelayMs, () => {
          if (pod.status === 'RUNNING' && !pod.proc) this.run(pod);
        });
      });
  }

  private halt(pod: PodRecord): void {
    for (const t of pod.timers) t.cancel();
    pod.timers.clear();
    pod.proc?.abort();
    pod.proc = undefined;
  }

  private releaseStock(pod: PodRecord): void {
    if (pod.gpu && pod.holdsStock) {
      this.stock.give(pod.gpu.id, pod.gpu.count);
      pod.holdsStock = false;
    }
  }

  private imageOf(pod: PodRecord): ImageConfig {
    return this.images[pod.image] ?? this.defaultImage;
  }

  private after(pod: PodRecord, ms: number, fn: () => void): void {
    const t = this.clock.setTimer(() => {
      pod.timers.delete(t);
      fn();
    }, ms / this.timing.timeScale);
    pod.timers.add(t);
  }

  log(pod: PodRecord, source: LogSource, line: string): void {
    const e: LogEntry = { ts: new Date(this.clock.now()).toISOString(), seq: ++this.seq, source, line };
    pod.logs.push(e);
    if (pod.logs.length > MAX_LOG_LINES) pod.logs.splice(0, pod.logs.length - MAX_LOG_LINES);
    for (const l of pod.listeners) l(e);
  }
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/** RunPod pod ids are short lowercase alphanumerics (e.g. `7h9k2m4n6p`). */
function newPodId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(14);
  let id = '';
  for (const b of bytes) id += alphabet[b % alphabet.length];
  return id;
}

/** Unlike `Clock.sleep` an abort rejects: the container's script stops where it waits. */
function abortableSleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error('killed'));
    const onAbort = () => {
      t?.cancel();
      reject(new Error('killed'));
    };
    const t = Number.isFinite(ms)
      ? clock.setTimer(() => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        }, ms)
      : undefined;
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
