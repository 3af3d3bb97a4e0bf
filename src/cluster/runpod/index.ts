/**
 * A local stand-in for RunPod's REST API v2, for the embedded cluster and for tests: an
 * HTTP server on loopback speaking the endpoints a burst-offloading controller uses, with
 * RunPod's statuses, errors, rate limits, capacity, log streaming and fault injection.
 *
 * ```ts
 * const runpod = await startRunPodStandIn({ timeScale: 10 });
 * // point a client at runpod.url (…/v2) with `Authorization: Bearer ${runpod.apiKey}`
 * runpod.faults.inject({ method: 'POST', path: '/v2/pods', status: 429, retryAfterSeconds: 1, times: 1 });
 * runpod.setCapacity('NVIDIA RTX A4000', 0);  // creates of that type answer 400 "no capacity"
 * await runpod.stop();
 * ```
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { Clock } from '../../lib/clock.ts';
import { DEFAULT_GPU_TYPES, type GpuType, Stock } from './catalog.ts';
import { type FaultRule, Faults } from './faults.ts';
import { type ImageConfig, type LogEntry, type PodHistory, type PodStatus, PodStore } from './pods.ts';
import { podJson, type RequestRecord, serverUrl, startHttpServer } from './server.ts';

export type { Cloud, GpuType } from './catalog.ts';
export { DEFAULT_GPU_TYPES } from './catalog.ts';
export type { FaultRule } from './faults.ts';
export { NO_CAPACITY_DETAIL, type RequestRecord } from './server.ts';
export type { ImageConfig, LogEntry, PodHistory, PodStatus };

export interface RunPodStandInOptions {
  /** Pod lifecycle times, uptimes and the rate-limit window; default the real clock. */
  clock?: Clock;
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** The account's API key (generated when absent). */
  apiKey?: string;
  /** Keys that may only read (writes answer 403). */
  readOnlyKeys?: string[];
  /** GPU catalog (default: DEFAULT_GPU_TYPES). */
  gpuTypes?: readonly GpuType[];
  /** Free GPUs per GPU type id; types not listed have `defaultCapacity`. */
  capacity?: Record<string, number>;
  /** Free GPUs of every type not in `capacity` (default 8). */
  defaultCapacity?: number;
  /** GPU types the key may not use (403, as for an inaccessible pool). */
  forbiddenGpuTypes?: string[];
  /** Account balance in USD (default 100); creates answer 402 once it is not positive. */
  balance?: number;
  /** Requests per key per minute (default 3000). */
  rateLimitPerMinute?: number;
  /** Simulated images by reference; others behave like `defaultImage`. */
  images?: Record<string, ImageConfig>;
  /** What an image the stand-in does not know runs (default: logs, works 2 s, exits 0). */
  defaultImage?: ImageConfig;
  /** Speeds every simulated delay up (10 = ten times faster). */
  timeScale?: number;
  /** Time in PROVISIONING (default 2000 ms before timeScale). */
  provisioningMs?: number;
  /** Time in STARTING (default 1000 ms before timeScale). */
  startingMs?: number;
  /** Delay before RunPod restarts an exited container (default 1000 ms before timeScale). */
  restartDelayMs?: number;
  /** SSE keep-alive comment period (default 15 s). */
  keepAliveMs?: number;
  /** Random source of fault `probability` draws (default Math.random; seed it to replay a run). */
  random?: () => number;
}

export interface RunPodPodView {
  id: string;
  name: string;
  status: PodStatus;
  env: Record<string, string>;
  args: string;
  image: string;
  gpuTypeId: string | undefined;
  cost: number;
  /** Times the container was started (RunPod restarts it whenever it exits). */
  starts: number;
  logs: LogEntry[];
}

export interface RunPodStandIn {
  /** Base URL of the API, ending in `/v2` (like `https://api.runpod.io/v2`). */
  url: string;
  /** The account's full-access key. */
  apiKey: string;
  faults: Faults;
  /** Snapshot of every pod that exists (terminated pods are gone, as on RunPod). */
  pods(): RunPodPodView[];
  /** Every request served (the last 10 000), in arrival order. */
  requests(): RequestRecord[];
  /** Every pod ever created (terminated ones too) with its status transitions, in creation order. */
  history(): PodHistory[];
  /** The pod as the API would return it, or undefined. */
  podJson(id: string): Record<string, unknown> | undefined;
  setCapacity(gpuTypeId: string, freeGpus: number): void;
  setBalance(usd: number): void;
  setForbidden(gpuTypeIds: string[]): void;
  inject(rule: FaultRule): () => void;
  stop(): Promise<void>;
}

export const DEFAULT_STAND_IN_IMAGE: ImageConfig = {
  entrypoint: [],
  cmd: ['sh', '-c', 'echo "starting"; sleep 2; echo "done"'],
};

export async function startRunPodStandIn(opts: RunPodStandInOptions = {}): Promise<RunPodStandIn> {
  const apiKey = opts.apiKey ?? `rpa_${randomBytes(20).toString('hex').toUpperCase()}`;
  const keys = new Map<string, 'full' | 'read'>([[apiKey, 'full']]);
  for (const k of opts.readOnlyKeys ?? []) keys.set(k, 'read');
  const gpus = opts.gpuTypes ?? DEFAULT_GPU_TYPES;
  const stock = new Stock(opts.capacity, opts.defaultCapacity ?? 8);
  let balance = opts.balance ?? 100;
  let forbidden = new Set(opts.forbiddenGpuTypes ?? []);
  const faults = new Faults(opts.random);
  const requests: RequestRecord[] = [];
  const store = new PodStore({
    stock,
    gpus: () => gpus,
    images: opts.images ?? {},
    defaultImage: opts.defaultImage ?? DEFAULT_STAND_IN_IMAGE,
    timing: {
      provisioningMs: opts.provisioningMs ?? 2000,
      startingMs: opts.startingMs ?? 1000,
      restartDelayMs: opts.restartDelayMs ?? 1000,
      timeScale: opts.timeScale ?? 1,
    },
    clock: opts.clock,
  });
  const server: Server = await startHttpServer(
    {
      store,
      stock,
      gpus: () => gpus,
      faults,
      keys,
      forbiddenGpuTypes: () => forbidden,
      balance: () => balance,
      rateLimitPerMinute: opts.rateLimitPerMinute ?? 3000,
      keepAliveMs: opts.keepAliveMs ?? 15_000,
      onRequest: (r) => {
        requests.push(r);
        if (requests.length > 10_000) requests.splice(0, requests.length - 10_000);
      },
    },
    opts.host ?? '127.0.0.1',
    opts.port ?? 0,
  );
  return {
    url: `${serverUrl(server)}/v2`,
    apiKey,
    faults,
    pods: () =>
      store.list().map((p) => ({
        id: p.id,
        name: p.name,
        status: p.status,
        env: { ...p.env },
        args: p.args,
        image: p.image,
        gpuTypeId: p.gpu?.id,
        cost: store.cost(p),
        starts: p.starts,
        logs: [...p.logs],
      })),
    history: () => store.history(),
    requests: () => requests.map((r) => ({ ...r })),
    podJson: (id) => {
      const p = store.get(id);
      return p ? podJson(store, p) : undefined;
    },
    setCapacity: (id, n) => stock.set(id, n),
    setBalance: (usd) => {
      balance = usd;
    },
    setForbidden: (ids) => {
      forbidden = new Set(ids);
    },
    inject: (rule) => faults.inject(rule),
    stop: async () => {
      store.stopAll();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
