/**
 * The HTTP transport of the runtime. Authentication, TLS and proxies come from
 * @kubernetes/client-node's KubeConfig (`applySecurityAuthentication`, which yields the
 * headers and the undici dispatcher); requests then go straight through that dispatcher.
 *
 * Why not the generated typed APIs or KubernetesObjectApi: they cannot address
 * subresources (/status), cannot send JSON patches (the body is the object), re-encode
 * every object through model classes (dropping unknown fields, costing CPU and memory
 * with 100k cached pods), and do not expose Retry-After. The watch needs streaming with
 * our own inactivity timeout, which the library's Watch class fixes at 30 s.
 */

import type { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { KubeConfig, RequestContext } from '@kubernetes/client-node';
import { Agent, type Dispatcher } from 'undici';
import { backoffDelay } from '../lib/backoff.ts';
// Real time on purpose: HTTP latencies, credential lifetimes and certificates are about the wire.
import { type Clock, holdClock, realClock } from '../lib/clock.ts';
import { SHARED_CLOCK_HEADER, SHARED_CLOCK_KEY } from '../lib/virtual-clock.ts';
import { ApiError, type Status } from './errors.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  method: HttpMethod;
  /** Absolute API path, e.g. `/api/v1/namespaces/default/pods`. */
  path: string;
  query?: Query;
  /** Serialized as JSON unless it is already a string. */
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
  /** Overrides the client's request timeout (ms). */
  timeoutMs?: number;
  /** The caller does not read a successful response: it is read to the end but not decoded. */
  ignoreBody?: boolean;
}

export interface StreamResponse {
  statusCode: number;
  body: Readable;
  /**
   * Set when the server shares this client's virtual clock: the key under which the server
   * counts the events it sent on this stream; the reader calls `clock.busy(key, -1)` for
   * each event it has handled (see src/lib/virtual-clock.ts).
   */
  clockKey?: string;
}

export interface RestMetrics {
  /** One finished HTTP exchange; `code` is 0 when no response arrived. */
  request?(method: string, code: number, seconds: number): void;
}

export interface RestClientOptions {
  userAgent?: string;
  /** Default per-request timeout in ms (headers and body). */
  timeoutMs?: number;
  /** Retries of responses that carry Retry-After (429, 5xx) and of GETs that hit network errors. */
  maxRetries?: number;
  /** Upper bound for honouring a server's Retry-After, in seconds. */
  maxRetryAfterSeconds?: number;
  metrics?: RestMetrics;
  /**
   * The clock of the controllers. A virtual clock is held while each request is in flight
   * (bytes on loopback belong to no process, so the client counts them), and named to the
   * server on watches so that both count the events in between.
   */
  clock?: Clock;
}

interface Auth {
  headers: Record<string, string>;
  dispatcher: Dispatcher;
  expires: number;
}

// Credentials (exec plugins, projected service-account tokens) rotate; re-read them this often.
const AUTH_TTL_MS = 60_000;

export class RestClient {
  readonly server: URL;
  // The server URL's path prefix without trailing slashes, once rather than per request.
  private readonly basePath: string;
  private readonly kc: KubeConfig;
  private readonly userAgent: string;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly maxRetryAfterSeconds: number;
  private readonly metrics: RestMetrics;
  private readonly clock: Clock;
  private readonly clockId: string | undefined;
  private auth: Promise<Auth> | undefined;
  private authValue: Auth | undefined;
  private readonly ownAgent: Agent;
  private closed = false;

  constructor(kc: KubeConfig, opts: RestClientOptions = {}) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.server = new URL(cluster.server);
    this.basePath = this.server.pathname.replace(/\/+$/, '');
    this.kc =
      this.server.protocol === 'http:' && !cluster.skipTLSVerify ? allowPlainHttp(kc, cluster.name) : kc;
    this.userAgent = opts.userAgent ?? 'troupe/0.1.0';
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.maxRetries = opts.maxRetries ?? 5;
    this.maxRetryAfterSeconds = opts.maxRetryAfterSeconds ?? 10;
    this.metrics = opts.metrics ?? {};
    this.clock = opts.clock ?? realClock;
    this.clockId = this.clock.id;
    // Used when the kubeconfig needs no TLS options (plain HTTP with no proxy): client-node
    // then returns no dispatcher and we still want pooled keep-alive connections.
    this.ownAgent = new Agent({ keepAliveTimeout: 30_000, connections: 64 });
  }

  /** A JSON request; resolves with the decoded body, rejects with ApiError on non-2xx. */
  async request<T = unknown>(opts: RequestOptions): Promise<T> {
    const release = holdClock(this.clock, `rest ${opts.method} ${opts.path}`);
    try {
      return await this.requestOnce<T>(opts);
    } finally {
      release();
    }
  }

  private async requestOnce<T>(opts: RequestOptions): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      let res: Dispatcher.ResponseData;
      const started = realClock.monotonic();
      try {
        res = await this.send(opts, opts.timeoutMs ?? this.timeoutMs, opts.timeoutMs ?? this.timeoutMs);
      } catch (err) {
        this.metrics.request?.(opts.method, 0, (realClock.monotonic() - started) / 1000);
        if (opts.method === 'GET' && attempt < this.maxRetries && isRetriableNetworkError(err, opts.signal)) {
          await delay(backoffDelay(attempt, 50, Number.POSITIVE_INFINITY), undefined, {
            signal: opts.signal,
          }).catch(() => {});
          continue;
        }
        throw err;
      }
      const text = await res.body.text();
      this.metrics.request?.(opts.method, res.statusCode, (realClock.monotonic() - started) / 1000);
      if (res.statusCode >= 200 && res.statusCode < 300) {
        return (text.length > 0 && !opts.ignoreBody ? JSON.parse(text) : undefined) as T;
      }
      const err = toApiError(opts, res.statusCode, res.headers, text);
      const retryAfter = err.retryAfterSeconds;
      if (
        retryAfter !== undefined &&
        (res.statusCode === 429 || res.statusCode >= 500) &&
        attempt < this.maxRetries &&
        !opts.signal?.aborted
      ) {
        const waitMs = Math.min(Math.max(retryAfter, 0), this.maxRetryAfterSeconds) * 1000;
        await delay(waitMs, undefined, { signal: opts.signal }).catch(() => {});
        continue;
      }
      throw err;
    }
  }

  /**
   * A streaming GET (watch). Resolves once headers arrive; non-2xx rejects with ApiError.
   * `idleTimeoutMs` bounds the silence between two chunks.
   */
  async stream(opts: RequestOptions & { idleTimeoutMs: number }): Promise<StreamResponse> {
    const started = realClock.monotonic();
    const release = holdClock(this.clock, `rest watch ${opts.path}`);
    try {
      let res: Dispatcher.ResponseData;
      try {
        res = await this.send(opts, this.timeoutMs, opts.idleTimeoutMs, this.clockId);
      } catch (err) {
        this.metrics.request?.(opts.method, 0, (realClock.monotonic() - started) / 1000);
        throw err;
      }
      this.metrics.request?.(opts.method, res.statusCode, (realClock.monotonic() - started) / 1000);
      if (res.statusCode < 200 || res.statusCode >= 300) {
        const text = await res.body.text().catch(() => '');
        throw toApiError(opts, res.statusCode, res.headers, text);
      }
      const key = res.headers[SHARED_CLOCK_KEY];
      return {
        statusCode: res.statusCode,
        body: res.body,
        clockKey: typeof key === 'string' ? key : undefined,
      };
    } finally {
      // Established (or failed): from here the server counts the stream's events.
      release();
    }
  }

  /**
   * Closes pooled connections. In-flight requests get `graceMs` to finish; then their
   * connections are destroyed (a hung request must not stall a 30 s shutdown).
   */
  async close(graceMs = 5_000): Promise<void> {
    this.closed = true;
    const auth = this.authValue;
    const dispatchers: Dispatcher[] = [this.ownAgent];
    if (auth && auth.dispatcher !== this.ownAgent) dispatchers.push(auth.dispatcher);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), graceMs);
      timer.unref();
    });
    const closed = Promise.allSettled(dispatchers.map((d) => d.close()));
    const outcome = await Promise.race([closed, timedOut]);
    clearTimeout(timer);
    if (outcome === 'timeout') await Promise.allSettled(dispatchers.map((d) => d.destroy()));
  }

  private async send(opts: RequestOptions, headersTimeout: number, bodyTimeout: number, clockId?: string) {
    if (this.closed) throw new Error('rest client is closed');
    const auth = await this.getAuth();
    const headers: Record<string, string> = {
      ...auth.headers,
      accept: 'application/json',
      'user-agent': this.userAgent,
    };
    if (clockId) headers[SHARED_CLOCK_HEADER] = clockId;
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['content-type'] = opts.contentType ?? 'application/json';
    }
    return auth.dispatcher.request({
      origin: this.server.origin,
      path: this.fullPath(opts.path, opts.query),
      method: opts.method,
      headers,
      body,
      signal: opts.signal,
      headersTimeout,
      bodyTimeout,
    });
  }

  private fullPath(path: string, query: Query | undefined): string {
    let qs = '';
    if (query) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
      const s = params.toString();
      if (s) qs = `?${s}`;
    }
    return `${this.basePath}${path}${qs}`;
  }

  private getAuth(): Promise<Auth> {
    const current = this.authValue;
    if (current && current.expires > realClock.monotonic()) return Promise.resolve(current);
    if (!this.auth) {
      this.auth = this.loadAuth().then(
        (auth) => {
          const previous = this.authValue;
          this.authValue = auth;
          this.auth = undefined;
          // A fresh dispatcher replaces the old one; close it once its requests finish.
          if (previous && previous.dispatcher !== auth.dispatcher && previous.dispatcher !== this.ownAgent) {
            previous.dispatcher.close().catch(() => {});
          }
          return auth;
        },
        (err) => {
          this.auth = undefined;
          throw err;
        },
      );
    }
    return this.auth;
  }

  private async loadAuth(): Promise<Auth> {
    const ctx = new RequestContext(this.server.toString(), 'GET');
    await this.kc.applySecurityAuthentication(ctx);
    const previous = this.authValue;
    const dispatcher = (ctx.getDispatcher() as Dispatcher | undefined) ?? this.ownAgent;
    const headers = ctx.getHeaders();
    // Keep the pooled connections when only headers could have changed.
    const reuse = previous && sameTls(this.kc) ? previous.dispatcher : dispatcher;
    if (reuse !== dispatcher && dispatcher !== this.ownAgent) dispatcher.close().catch(() => {});
    return { headers, dispatcher: reuse, expires: realClock.monotonic() + AUTH_TTL_MS };
  }
}

/**
 * client-node refuses `http:` servers unless skipTLSVerify is set, although plain HTTP has
 * no certificate to verify (kubectl accepts such kubeconfigs). A copy with the flag set
 * lets the embedded cluster's loopback kubeconfig work unchanged.
 */
function allowPlainHttp(kc: KubeConfig, clusterName: string): KubeConfig {
  const copy = new KubeConfig();
  copy.loadFromOptions({
    clusters: kc.clusters.map((c) => (c.name === clusterName ? { ...c, skipTLSVerify: true } : c)),
    users: kc.users,
    contexts: kc.contexts,
    currentContext: kc.currentContext,
  });
  return copy;
}

/** Client certificates from files or exec plugins can rotate; tokens alone cannot change TLS. */
function sameTls(kc: KubeConfig): boolean {
  const user = kc.getCurrentUser();
  return !user?.exec && !user?.certFile && !user?.keyFile && !user?.authProvider;
}

function isRetriableNetworkError(err: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted) return false;
  const code = (err as { code?: string } | undefined)?.code;
  return (
    code === 'ECONNRESET' ||
    code === 'ECONNREFUSED' ||
    code === 'EPIPE' ||
    code === 'UND_ERR_SOCKET' ||
    code === 'UND_ERR_CLOSED'
  );
}

function toApiError(
  opts: RequestOptions,
  statusCode: number,
  headers: Record<string, string | string[] | undefined>,
  text: string,
): ApiError {
  let status: Status | undefined;
  try {
    const parsed = JSON.parse(text) as Status;
    if (parsed && typeof parsed === 'object' && parsed.kind === 'Status') status = parsed;
  } catch {
    // Not a Status (a proxy's HTML page, an empty body): keep the raw text in the message.
  }
  const header = headers['retry-after'];
  const raw = Array.isArray(header) ? header[0] : header;
  let retryAfterSeconds: number | undefined;
  if (raw !== undefined) {
    const n = Number(raw);
    if (Number.isFinite(n)) retryAfterSeconds = n;
    else {
      const at = Date.parse(raw);
      if (!Number.isNaN(at)) retryAfterSeconds = Math.max(0, (at - realClock.now()) / 1000);
    }
  }
  return new ApiError({
    statusCode,
    method: opts.method,
    path: opts.path,
    status,
    body: text,
    retryAfterSeconds,
  });
}
