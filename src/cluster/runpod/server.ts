/**
 * The RunPod REST v2 stand-in's HTTP surface: the pod endpoints troupe uses
 * (`/v2/pods`, `/v2/pods/{id}`, `/v2/pods/{id}/action`, `/v2/pods/{id}/logs`) and the GPU
 * catalog (`/v2/catalog/gpus`), with RunPod's wire behaviour: Bearer API keys (401 without
 * one, 403 for a key that may not write), RFC 9457 problem details
 * (`application/problem+json` with title/status/detail/errors), 422 for bodies that break
 * the contract, 400 for rule violations and for "no capacity", 402 when the balance is
 * spent, 404, 405 with `Allow`, 409 for actions the pod's status does not allow, per-key
 * rate limits with `RateLimit`/`RateLimit-Policy` on every answer and 429 + `Retry-After`,
 * and logs as server-sent events with `Last-Event-ID` resumption.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock } from '../../lib/clock.ts';
import type { Cloud, GpuType, Stock } from './catalog.ts';
import type { Faults } from './faults.ts';
import type { CreatePodInput, LogEntry, LogSource, PodAction, PodRecord, PodStore } from './pods.ts';
import { actionViolations, createPodRuleViolation, createPodViolations } from './validation.ts';

export interface ServerDeps {
  store: PodStore;
  stock: Stock;
  gpus: () => readonly GpuType[];
  faults: Faults;
  /** API keys and what they may do. */
  keys: Map<string, 'full' | 'read'>;
  /** GPU types keys may not deploy (answered 403, as for a pool the account cannot access). */
  forbiddenGpuTypes: () => ReadonlySet<string>;
  /** Account balance in USD; creates and starts answer 402 once it is not positive. */
  balance: () => number;
  rateLimitPerMinute: number;
  keepAliveMs: number;
  /** Called for every request as it arrives, and again with its status once answered. */
  onRequest?: (r: RequestRecord) => void;
}

export interface RequestRecord {
  method: string;
  path: string;
  /** Epoch ms the request arrived. */
  at: number;
  /** Set once answered (undefined for a dropped connection or a stream still open). */
  status?: number;
}

const PROBLEM = 'application/problem+json';
const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export const NO_CAPACITY_DETAIL =
  'There are no instances currently available with the requested GPU type in this cloud; try another GPU type or data center.';

class RateLimiter {
  private readonly clock: Clock;
  private readonly windows = new Map<string, { start: number; used: number }>();
  private readonly quota: number;
  constructor(quota: number, clock: Clock) {
    this.clock = clock;
    this.quota = quota;
  }

  /** Counts one request; returns the remaining quota and the seconds until the window resets. */
  take(key: string): { ok: boolean; remaining: number; reset: number } {
    const now = this.clock.now();
    let w = this.windows.get(key);
    if (!w || now - w.start >= 60_000) {
      w = { start: now, used: 0 };
      this.windows.set(key, w);
    }
    const reset = Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000));
    if (w.used >= this.quota) return { ok: false, remaining: 0, reset };
    w.used++;
    return { ok: true, remaining: this.quota - w.used, reset };
  }
}

export function startHttpServer(deps: ServerDeps, host: string, port: number): Promise<Server> {
  const limiter = new RateLimiter(deps.rateLimitPerMinute, deps.store.clock);
  const server = createServer((req, res) => {
    if (deps.onRequest) {
      const record: RequestRecord = {
        method: req.method ?? 'GET',
        path: new URL(req.url ?? '/', 'http://localhost').pathname,
        at: deps.store.clock.now(),
      };
      deps.onRequest(record);
      res.on('finish', () => {
        record.status = res.statusCode;
      });
    }
    handle(req, res, deps, limiter).catch((err) => {
      if (!res.headersSent)
        problem(res, 500, `internal error: ${err instanceof Error ? err.message : String(err)}`);
      else res.destroy();
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

export function serverUrl(server: Server): string {
  const a = server.address() as AddressInfo;
  const h = a.family === 'IPv6' ? `[${a.address}]` : a.address;
  return `http://${h}:${a.port}`;
}

function problem(
  res: ServerResponse,
  status: number,
  detail: string,
  extra: { errors?: string[]; headers?: Record<string, string> } = {},
): void {
  const body: Record<string, unknown> = { title: TITLES[status] ?? 'Error', status, detail };
  if (extra.errors) body.errors = extra.errors;
  res.writeHead(status, { 'content-type': PROBLEM, ...(extra.headers ?? {}) });
  res.end(JSON.stringify(body));
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Bodies read ahead of a fault's delay (see `handle`). */
const bodies = new WeakMap<IncomingMessage, Promise<string>>();

function readBody(req: IncomingMessage): Promise<string> {
  let body = bodies.get(req);
  if (!body) {
    body = (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    })();
    bodies.set(req, body);
  }
  return body;
}

async function handle(req: IncomingMessage, res: ServerResponse, deps: ServerDeps, limiter: RateLimiter) {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const path = url.pathname.replace(/\/+$/, '');
  const method = req.method ?? 'GET';

  // Authentication comes first: RunPod answers 401 before anything else.
  const auth = req.headers.authorization ?? '';
  const m = /^Bearer\s+(\S+)$/i.exec(auth);
  if (!m) return problem(res, 401, 'missing bearer token');
  const access = deps.keys.get(m[1]!);
  if (!access) return problem(res, 401, 'invalid bearer token');

  const quota = limiter.take(m[1]!);
  const limitHeaders = {
    ratelimit: `"minute";r=${quota.remaining};t=${quota.reset}`,
    'ratelimit-policy': `"minute";q=${deps.rateLimitPerMinute};w=60`,
  };
  for (const [k, v] of Object.entries(limitHeaders)) res.setHeader(k, v);
  if (!quota.ok) {
    return problem(res, 429, 'rate limit exceeded for the minute window', {
      headers: { 'retry-after': String(quota.reset) },
    });
  }

  const fault = deps.faults.match(method, path);
  if (fault) {
    if (fault.delayMs) {
      // A slow server has the whole request before it is slow: it still acts on it after the
      // client gave up (a create that timed out on the client may have made a pod).
      if (!fault.drop && fault.status === undefined) await readBody(req).catch(() => '');
      await new Promise((r) => setTimeout(r, fault.delayMs));
    }
    if (fault.drop) {
      req.socket.destroy();
      return;
    }
    if (fault.status !== undefined) {
      const headers: Record<string, string> = {};
      if (fault.retryAfterSeconds !== undefined) headers['retry-after'] = String(fault.retryAfterSeconds);
      if (fault.status === 429) headers['retry-after'] ??= '1';
      return problem(res, fault.status, fault.detail ?? defaultDetail(fault.status), { headers });
    }
  }

  const segs = path.split('/').filter(Boolean);
  if (segs[0] !== 'v2') return problem(res, 404, 'resource not found');

  // /v2/catalog/gpus[/{id}]
  if (segs[1] === 'catalog' && segs[2] === 'gpus') {
    if (method !== 'GET') return notAllowed(res, 'GET');
    const includeAvailability = (url.searchParams.get('include') ?? '').split(',').includes('AVAILABILITY');
    const product = url.searchParams.get('product');
    if (includeAvailability !== (product !== null)) {
      return problem(res, 400, 'product is required with include=AVAILABILITY and valid only with it');
    }
    const render = (g: GpuType) =>
      includeAvailability ? { ...g, availability: deps.stock.level(g.id) } : (structuredClone(g) as GpuType);
    if (segs.length === 3) return json(res, 200, { gpus: deps.gpus().map(render) });
    if (segs.length === 4) {
      const id = decodeURIComponent(segs[3]!);
      const g = deps.gpus().find((x) => x.id === id);
      if (!g) return problem(res, 404, 'gpu type not found');
      return json(res, 200, render(g));
    }
    return problem(res, 404, 'resource not found');
  }

  if (segs[1] !== 'pods') return problem(res, 404, 'resource not found');

  // /v2/pods
  if (segs.length === 2) {
    if (method === 'GET') {
      return json(res, 200, { pods: deps.store.list().map((p) => podJson(deps.store, p)) });
    }
    if (method === 'POST') {
      if (access !== 'full') return problem(res, 403, 'access denied');
      const body = await parseJson(req, res);
      if (body === undefined) return;
      const violations = createPodViolations(body);
      if (violations.length) return problem(res, 422, 'Request validation failed.', { errors: violations });
      const rule = createPodRuleViolation(body as Record<string, unknown>);
      if (rule) return problem(res, 400, rule);
      const input = body as unknown as CreatePodInput & { templateId?: string };
      if (input.templateId) return problem(res, 404, 'template not found');
      if (input.gpu && deps.forbiddenGpuTypes().has(input.gpu.id)) {
        return problem(res, 403, `access denied to GPU type ${input.gpu.id}`);
      }
      if (deps.balance() <= 0) return problem(res, 402, 'insufficient balance to deploy this pod');
      const placed = deps.store.create(input);
      if (placed === 'unknown-gpu') return problem(res, 400, `unknown GPU type ${input.gpu?.id}`);
      if (placed === 'capacity') return problem(res, 400, NO_CAPACITY_DETAIL);
      return json(res, 201, podJson(deps.store, placed));
    }
    return notAllowed(res, 'GET, POST');
  }

  const pod = deps.store.get(decodeURIComponent(segs[2]!));

  // /v2/pods/{id}
  if (segs.length === 3) {
    if (method === 'GET') {
      if (!pod) return problem(res, 404, 'pod not found');
      return json(res, 200, podJson(deps.store, pod));
    }
    if (method === 'DELETE') {
      if (access !== 'full') return problem(res, 403, 'access denied');
      if (!pod) return problem(res, 404, 'pod not found');
      deps.store.terminate(pod);
      res.writeHead(204);
      return res.end();
    }
    if (method === 'PATCH') {
      if (access !== 'full') return problem(res, 403, 'access denied');
      if (!pod) return problem(res, 404, 'pod not found');
      const body = await parseJson(req, res);
      if (body === undefined) return;
      const b = body as Record<string, unknown>;
      const allowed = [
        'name',
        'image',
        'args',
        'disk',
        'ports',
        'env',
        'registry',
        'locked',
        'mounts',
        'globalNetworking',
      ];
      const extra = Object.keys(b).filter((k) => !allowed.includes(k));
      if (extra.length) {
        return problem(res, 422, 'Request validation failed.', {
          errors: extra.map((k) => `$: additional properties '${k}' not allowed`),
        });
      }
      if (typeof b.name === 'string') pod.name = b.name;
      if (typeof b.image === 'string') pod.image = b.image;
      if (typeof b.args === 'string') pod.args = b.args;
      if (b.env && typeof b.env === 'object') pod.env = b.env as Record<string, string>;
      return json(res, 200, podJson(deps.store, pod));
    }
    return notAllowed(res, 'GET, PATCH, DELETE');
  }

  // /v2/pods/{id}/action
  if (segs.length === 4 && segs[3] === 'action') {
    if (method !== 'POST') return notAllowed(res, 'POST');
    if (access !== 'full') return problem(res, 403, 'access denied');
    if (!pod) return problem(res, 404, 'pod not found');
    const body = await parseJson(req, res);
    if (body === undefined) return;
    const violations = actionViolations(body);
    if (violations.length) return problem(res, 422, 'Request validation failed.', { errors: violations });
    const action = (body as { action: PodAction }).action;
    if ((action === 'start' || action === 'restart') && deps.balance() <= 0) {
      return problem(res, 402, 'insufficient balance to start this pod');
    }
    const outcome = deps.store.action(pod, action);
    if (outcome === 'invalid')
      return problem(res, 409, `action ${action} is not valid for a pod in status ${pod.status}`);
    if (outcome === 'capacity') return problem(res, 400, NO_CAPACITY_DETAIL);
    if (action === 'terminate') {
      res.writeHead(204);
      return res.end();
    }
    return json(res, 200, podJson(deps.store, pod));
  }

  // /v2/pods/{id}/logs
  if (segs.length === 4 && segs[3] === 'logs') {
    if (method !== 'GET') return notAllowed(res, 'GET');
    if (!pod) return problem(res, 404, 'pod not found');
    return streamLogs(req, res, url, deps, pod);
  }
  return problem(res, 404, 'resource not found');
}

function notAllowed(res: ServerResponse, allow: string): void {
  problem(res, 405, 'The requested method is not allowed for this path.', { headers: { allow } });
}

function defaultDetail(status: number): string {
  if (status === 429) return 'rate limit exceeded for the minute window';
  if (status >= 500) return 'upstream service error';
  return TITLES[status] ?? 'error';
}

async function parseJson(req: IncomingMessage, res: ServerResponse): Promise<unknown | undefined> {
  const ct = req.headers['content-type'] ?? '';
  if (!/^application\/(.+\+)?json\b/i.test(ct)) {
    problem(res, 415, 'request body must be application/json');
    return undefined;
  }
  const text = await readBody(req);
  try {
    return JSON.parse(text);
  } catch {
    problem(res, 400, 'request body is not valid JSON');
    return undefined;
  }
}

export function podJson(store: PodStore, p: PodRecord): Record<string, unknown> {
  const running = p.status === 'RUNNING';
  return {
    id: p.id,
    name: p.name,
    image: p.image,
    args: p.args,
    disk: p.disk,
    ports: p.ports,
    env: p.env,
    registry: p.registry,
    status: p.status,
    actions: store.actionsFor(p.status),
    mounts: {},
    ...(p.gpu
      ? { gpu: { id: p.gpu.id, count: p.gpu.count, vcpuCount: p.gpu.vcpuCount, memory: p.gpu.memory } }
      : {}),
    ...(p.cpu ? { cpu: p.cpu } : {}),
    cloud: p.cloud as Cloud,
    dataCenterId: p.dataCenterId,
    cudaVersion: p.gpu ? '12.8' : null,
    ssh: {
      proxy: {
        host: 'ssh.runpod.io',
        port: 22,
        username: `${p.id}-64411eb2`,
        command: `ssh ${p.id}-64411eb2@ssh.runpod.io`,
      },
      direct: null,
    },
    template: null,
    cost: store.cost(p),
    locked: false,
    globalNetworking: { enabled: false },
    runtime: running
      ? {
          uptime: Math.floor((store.clock.now() - p.startedMs) / 1000),
          gpus: p.gpu ? Array.from({ length: p.gpu.count }, () => ({ util: 0, memoryUtil: 0 })) : [],
          cpu: { util: 0 },
          memory: { util: 0 },
          ports: [],
        }
      : null,
    createdAt: p.createdAt,
    startedAt: p.startedAt,
  };
}

/**
 * Server-sent events by hand: the framing is three lines per event (`id:`, `data:`, a blank
 * line) and the stand-in must control flushing and keep-alives itself, which an encoder
 * library would not save.
 */
function streamLogs(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  deps: ServerDeps,
  pod: PodRecord,
): void {
  const source = url.searchParams.get('source') as LogSource | null;
  if (source !== null && source !== 'container' && source !== 'system') {
    problem(res, 422, 'Request validation failed.', {
      errors: ['$.source: must be one of container, system'],
    });
    return;
  }
  const tailParam = url.searchParams.get('tail');
  const tail = tailParam === null ? 100 : Number(tailParam);
  if (!Number.isInteger(tail) || tail < 0 || tail > 5000) {
    problem(res, 422, 'Request validation failed.', { errors: ['$.tail: must be an integer in [0, 5000]'] });
    return;
  }
  const cursor =
    parseCursor(req.headers['last-event-id'] as string | undefined) ??
    parseCursor(url.searchParams.get('since') ?? undefined);
  const wanted = (e: LogEntry) => source === null || e.source === source;
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  const send = (e: LogEntry) => {
    res.write(
      `id: ${e.ts}/${String(e.seq).padStart(12, '0')}\ndata: ${JSON.stringify({ ts: e.ts, source: e.source, line: e.line })}\n\n`,
    );
  };
  let backlog = pod.logs.filter(wanted);
  if (cursor) backlog = backlog.filter((e) => after(e, cursor));
  else backlog = tail === 0 ? [] : backlog.slice(-tail);
  for (const e of backlog) send(e);
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), deps.keepAliveMs);
  const unsubscribe = deps.store.subscribe(pod, (e) => {
    if (e === undefined) {
      cleanup();
      res.end();
      return;
    }
    if (wanted(e)) send(e);
  });
  const cleanup = () => {
    clearInterval(keepAlive);
    unsubscribe();
  };
  req.on('close', cleanup);
  res.on('close', cleanup);
}

function parseCursor(v: string | undefined): { ts: number; seq?: number } | undefined {
  if (!v) return undefined;
  const [ts, seq] = v.split('/');
  const t = Date.parse(ts!);
  if (Number.isNaN(t)) return undefined;
  return { ts: t, seq: seq === undefined ? undefined : Number(seq) };
}

function after(e: LogEntry, c: { ts: number; seq?: number }): boolean {
  if (c.seq !== undefined && Number.isFinite(c.seq)) return e.seq > c.seq;
  return Date.parse(e.ts) > c.ts;
}
