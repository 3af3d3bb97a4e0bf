/**
 * The RunPod provider on the current API, REST v2 (`https://api.runpod.io/v2`): pods are
 * created with `POST /v2/pods` on one GPU type at a time, cheapest first from
 * `GET /v2/catalog/gpus`, falling back to the next type when RunPod answers 400 (no
 * capacity) or 403 (no access to that pool); followed with `GET /v2/pods/{id}`; ended with
 * `DELETE /v2/pods/{id}`; and their logs are read as server-sent events from
 * `GET /v2/pods/{id}/logs` to catch the exit-code marker. Errors are RFC 9457 problem
 * details; 429 carries `Retry-After` in seconds.
 *
 * The seed used RunPod's GraphQL API (deprecated) and REST v1 (retired 2026-11-15); the
 * v2 API places exactly the GPU type asked for and never searches for capacity itself,
 * which is why the candidate loop lives here.
 */
import { createParser } from 'eventsource-parser';
import { quote } from 'shell-quote';
import { backoffDelay } from '../../lib/backoff.ts';
import { type Clock, realClock } from '../../lib/clock.ts';
import { EXIT_WRAPPER, exitCodeFromLogLine } from './core.ts';
import { type CatalogGpu, chooseGpuCandidates, classifyCreate, retryAfterMs } from './gpus.ts';
import * as K from './keys.ts';
import {
  type LaunchHooks,
  type LaunchLimits,
  type LaunchOutcome,
  type OffloadProvider,
  ProviderError,
} from './provider.ts';
import type { RemotePod } from './types.ts';
import type { LaunchRequest } from './workload.ts';

export interface RunPodProviderOptions {
  baseUrl: string;
  apiKey: string | undefined;
  clusterName: string;
  /** Per-request timeout (ms). */
  timeoutMs: number;
  /** How long a catalog read is reused (ms, default 60 s). */
  catalogTtlMs?: number;
  /** Attempts on the same candidate for 5xx and connection errors (default 3). */
  transientAttempts?: number;
  /** Backoff before the first transient retry (ms, default 200; doubles). */
  retryBaseMs?: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
  /** Time for the catalog's age and the retry waits (default the real clock). */
  clock?: Clock;
}

interface ApiPod {
  id: string;
  name: string;
  status: RemotePod['status'];
  cost?: number;
  env?: Record<string, string>;
  gpu?: { id: string };
  startedAt?: string | null;
  createdAt?: string;
}

interface Problem {
  title?: string;
  status?: number;
  detail?: string;
  errors?: string[];
}

/** The `args` string RunPod passes to the image's entrypoint. */
export function runpodArgs(req: Pick<LaunchRequest, 'command' | 'args' | 'wrapped'>): string {
  const argv = [...(req.command ?? []), ...(req.args ?? [])];
  if (req.wrapped) return quote(['sh', '-c', EXIT_WRAPPER, 'troupe', ...argv]);
  return argv.length ? quote(argv) : '';
}

export function toRemotePod(p: ApiPod): RemotePod {
  const env = p.env ?? {};
  return {
    id: p.id,
    name: p.name,
    status: p.status,
    costPerHr: typeof p.cost === 'number' ? p.cost : 0,
    gpuTypeId: p.gpu?.id,
    startedAt: p.startedAt ?? null,
    createdAt: p.createdAt,
    tags: {
      cluster: env[K.TAG_CLUSTER],
      namespace: env[K.TAG_NAMESPACE],
      job: env[K.TAG_JOB],
      jobUid: env[K.TAG_JOB_UID],
      marker: env[K.TAG_EXIT_MARKER],
    },
  };
}

function describe(p: Problem | undefined, status: number): string {
  const parts = [`${status}${p?.title ? ` ${p.title}` : ''}`];
  if (p?.detail) parts.push(p.detail);
  if (p?.errors?.length) parts.push(p.errors.join('; '));
  return parts.join(': ');
}

export class RunPodProvider implements OffloadProvider {
  readonly name = 'runpod';
  private readonly o: Required<Omit<RunPodProviderOptions, 'apiKey' | 'log'>> &
    Pick<RunPodProviderOptions, 'apiKey' | 'log'>;
  private catalog: { at: number; gpus: CatalogGpu[] } | undefined;

  constructor(opts: RunPodProviderOptions) {
    this.o = {
      catalogTtlMs: 60_000,
      transientAttempts: 3,
      retryBaseMs: 200,
      ...opts,
      clock: opts.clock ?? realClock,
      baseUrl: opts.baseUrl.replace(/\/+$/, ''),
    };
  }

  configured(): boolean {
    return !!this.o.apiKey;
  }

  private async call(
    method: string,
    path: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<{ status: number; json: unknown; headers: Headers }> {
    if (!this.o.apiKey)
      throw new ProviderError('no RunPod API key is configured (RUNPOD_KEY)', { status: 401 });
    const timeout = AbortSignal.timeout(this.o.timeoutMs);
    let res: Response;
    try {
      res = await fetch(`${this.o.baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.o.apiKey}`,
          accept: 'application/json',
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (err) {
      throw new ProviderError(
        `RunPod ${method} ${path} failed: ${err instanceof Error ? err.message : String(err)}`,
        { cause: err },
      );
    }
    const text = await res.text().catch(() => '');
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, json, headers: res.headers };
  }

  /** Calls and throws a ProviderError on anything but the expected statuses. */
  private async expect(method: string, path: string, ok: number[], signal?: AbortSignal) {
    const r = await this.call(method, path, undefined, signal);
    if (ok.includes(r.status)) return r;
    throw new ProviderError(`RunPod ${method} ${path}: ${describe(r.json as Problem, r.status)}`, {
      status: r.status,
      retryAfterMs:
        r.status === 429 ? retryAfterMs(r.headers.get('retry-after'), this.o.clock.now()) : undefined,
    });
  }

  async ping(signal?: AbortSignal): Promise<void> {
    if (!this.configured()) throw new Error('no RunPod API key is configured (RUNPOD_KEY)');
    await this.expect('GET', '/catalog/gpus', [200], signal);
  }

  private async gpuCatalog(signal?: AbortSignal): Promise<CatalogGpu[]> {
    if (this.catalog && this.o.clock.now() - this.catalog.at < this.o.catalogTtlMs) return this.catalog.gpus;
    const r = await this.expect('GET', '/catalog/gpus', [200], signal);
    const gpus = ((r.json as { gpus?: CatalogGpu[] })?.gpus ?? []).filter(
      (g) => g && typeof g.id === 'string',
    );
    this.catalog = { at: this.o.clock.now(), gpus };
    return gpus;
  }

  async launch(
    req: LaunchRequest,
    limits: LaunchLimits,
    signal?: AbortSignal,
    hooks?: LaunchHooks,
  ): Promise<LaunchOutcome> {
    let catalog: CatalogGpu[];
    try {
      catalog = await this.gpuCatalog(signal);
    } catch (err) {
      const s = err instanceof ProviderError ? err.status : undefined;
      if (s === 401 || s === 403)
        return { kind: 'failed', errorClass: 'Unauthorized', message: (err as Error).message };
      if (s === 429)
        return {
          kind: 'rateLimited',
          retryAfterMs: (err as ProviderError).retryAfterMs ?? 1000,
          message: (err as Error).message,
        };
      throw err;
    }
    const needs = {
      gpuCount: req.gpuCount,
      gpuMemoryGb: req.gpuMemoryGb,
      vendor: req.gpuVendor,
      cloud: req.cloud,
      maxPrice: limits.maxPrice,
    };
    const candidates = chooseGpuCandidates(catalog, { ...needs, budgetLeft: limits.budgetLeft });
    if (candidates.length === 0) {
      const withoutBudget = chooseGpuCandidates(catalog, { ...needs, budgetLeft: Number.POSITIVE_INFINITY });
      if (withoutBudget.length > 0) {
        return {
          kind: 'unavailable',
          errorClass: 'Budget',
          message: `the spending cap leaves $${limits.budgetLeft.toFixed(2)}/h; the cheapest fitting GPU costs $${withoutBudget[0]!.podPrice}/h`,
        };
      }
      return {
        kind: 'unavailable',
        errorClass: 'NoCapacity',
        message: `no ${req.gpuVendor} GPU type in the ${req.cloud} cloud has ${req.gpuMemoryGb} GB and costs at most $${limits.maxPrice}/h for ${req.gpuCount} GPU(s)`,
      };
    }
    const base = {
      name: req.name,
      image: req.image,
      args: runpodArgs(req),
      env: req.env,
      disk: req.diskGb,
      cloud: req.cloud,
      ...(req.registry ? { registry: req.registry } : {}),
    };
    const refusals: string[] = [];
    for (const cand of candidates) {
      const gpu: Record<string, unknown> = { id: cand.id, count: req.gpuCount };
      if (req.minRamGbPerGpu) gpu.minRamPerGpu = req.minRamGbPerGpu;
      if (req.minVcpuPerGpu) gpu.minVcpuCountPerGpu = req.minVcpuPerGpu;
      for (let attempt = 1; ; attempt++) {
        // A create that fails in transit (timeout, reset) may still have placed the pod, so
        // it is not retried here: the error reaches the caller, whose retry first looks for
        // the pod by its tags.
        await hooks?.beforeCreate?.();
        const r = await this.call('POST', '/pods', { ...base, gpu }, signal);
        const step = classifyCreate(r.status, r.headers.get('retry-after'), this.o.clock.now());
        const problem = r.json as Problem | undefined;
        if (step.step === 'done') {
          const pod = toRemotePod(r.json as ApiPod);
          this.o.log?.('runpod pod created', { id: pod.id, gpu: cand.id, price: cand.podPrice });
          return { kind: 'launched', pod, gpuTypeId: cand.id, costPerHr: pod.costPerHr || cand.podPrice };
        }
        if (step.step === 'next') {
          refusals.push(`${cand.id}: ${describe(problem, r.status)}`);
          break;
        }
        if (step.step === 'stop')
          return { kind: 'failed', errorClass: step.errorClass, message: describe(problem, r.status) };
        if (step.step === 'wait')
          return {
            kind: 'rateLimited',
            retryAfterMs: step.retryAfterMs,
            message: describe(problem, r.status),
          };
        if (attempt >= this.o.transientAttempts) {
          throw new ProviderError(`RunPod create on ${cand.id}: ${describe(problem, r.status)}`, {
            status: r.status,
          });
        }
        await this.o.clock.sleep(backoffDelay(attempt - 1, this.o.retryBaseMs, Number.POSITIVE_INFINITY));
      }
    }
    return {
      kind: 'unavailable',
      errorClass: 'NoCapacity',
      message: `every fitting GPU type was refused: ${refusals.join(' | ')}`,
    };
  }

  async get(id: string, signal?: AbortSignal): Promise<RemotePod | undefined> {
    const r = await this.expect('GET', `/pods/${encodeURIComponent(id)}`, [200, 404], signal);
    return r.status === 404 ? undefined : toRemotePod(r.json as ApiPod);
  }

  async list(signal?: AbortSignal): Promise<RemotePod[]> {
    const r = await this.expect('GET', '/pods', [200], signal);
    const pods = ((r.json as { pods?: ApiPod[] })?.pods ?? []).map(toRemotePod);
    return pods.filter((p) => p.tags.cluster === this.o.clusterName);
  }

  async terminate(id: string, signal?: AbortSignal): Promise<void> {
    await this.expect('DELETE', `/pods/${encodeURIComponent(id)}`, [200, 204, 404], signal);
  }

  watchExit(pod: RemotePod, onExit: (code: number) => void, signal: AbortSignal): () => void {
    const marker = pod.tags.marker;
    const stop = new AbortController();
    const both = AbortSignal.any([signal, stop.signal]);
    if (!marker || !this.o.apiKey) return () => stop.abort();
    let lastEventId: string | undefined;
    let done = false;
    const run = async () => {
      let delay = 500;
      while (!both.aborted && !done) {
        try {
          const url = `${this.o.baseUrl}/pods/${encodeURIComponent(pod.id)}/logs?source=container${lastEventId ? '' : '&tail=5000'}`;
          const res = await fetch(url, {
            headers: {
              authorization: `Bearer ${this.o.apiKey}`,
              accept: 'text/event-stream',
              ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
            },
            signal: both,
          });
          if (res.status === 404) return;
          if (res.status === 429) {
            delay = Math.max(delay, retryAfterMs(res.headers.get('retry-after'), this.o.clock.now()));
            throw new Error('rate limited');
          }
          if (res.status !== 200 || !res.body) throw new Error(`log stream answered ${res.status}`);
          delay = 500;
          const parser = createParser({
            onEvent: (ev) => {
              if (ev.id) lastEventId = ev.id;
              let line: string | undefined;
              try {
                line = (JSON.parse(ev.data) as { line?: string }).line;
              } catch {
                line = undefined;
              }
              const code = line === undefined ? undefined : exitCodeFromLogLine(line, marker);
              if (code !== undefined && !done) {
                done = true;
                onExit(code);
                stop.abort();
              }
            },
          });
          const decoder = new TextDecoder();
          for await (const chunk of res.body) {
            parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
            if (done) break;
          }
        } catch {
          // Reconnect below; Last-Event-ID resumes the stream where it stopped.
        }
        if (both.aborted || done) return;
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 30_000);
      }
    };
    void run();
    return () => stop.abort();
  }
}
