/**
 * The dashboard's HTTP server: the page, `GET /api/snapshot` and `GET /api/events` (the
 * server-sent events stream the page listens to). Read-only (GET and HEAD only) and
 * behind a token: the URL troupe prints carries it once, the server trades it for an
 * HttpOnly, SameSite=Strict cookie and redirects to a URL without it; scripts may send it
 * as `Authorization: Bearer <token>` instead.
 *
 * node:http directly: five routes and an event stream (a few lines of the SSE text format)
 * do not need a framework.
 */

import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../runtime/index.ts';
import type { Asset } from './assets.ts';
import type { SnapshotHub } from './hub.ts';

export interface DashboardServerOptions {
  host: string;
  port: number;
  token: string;
  assets: Map<string, Asset>;
  hub: SnapshotHub;
  log: Logger;
  /** Comment lines that keep idle streams open through proxies (ms). */
  heartbeatMs?: number;
}

const SECURITY_HEADERS: Record<string, string> = {
  // Only our own script and stylesheet, no inline code, no framing, nothing sent elsewhere.
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

function sameToken(given: string | undefined, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookieValue(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

export class DashboardServer {
  private readonly opts: DashboardServerOptions;
  private readonly server: Server;
  private readonly streams = new Set<ServerResponse>();
  private heartbeat: NodeJS.Timeout | undefined;
  private cookieName = 'troupe-dashboard';

  constructor(opts: DashboardServerOptions) {
    this.opts = opts;
    this.server = createServer((req, res) => this.handle(req, res));
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port, this.opts.host || undefined, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    // Cookies ignore ports: two dashboards on one host must not overwrite each other's.
    this.cookieName = `troupe-dashboard-${this.port}`;
    this.heartbeat = setInterval(() => {
      for (const res of this.streams) res.write(': keep-alive\n\n');
    }, this.opts.heartbeatMs ?? 15_000);
    this.heartbeat.unref();
  }

  async close(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    for (const res of this.streams) res.end();
    this.streams.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
  }

  private send(
    res: ServerResponse,
    code: number,
    type: string,
    body: string | Buffer,
    extra: Record<string, string> = {},
  ): void {
    res.writeHead(code, { ...SECURITY_HEADERS, 'content-type': type, ...extra });
    res.end(res.req.method === 'HEAD' ? undefined : body);
  }

  private authorized(req: IncomingMessage): boolean {
    const auth = req.headers.authorization;
    if (auth?.startsWith('Bearer ') && sameToken(auth.slice(7).trim(), this.opts.token)) return true;
    return sameToken(cookieValue(req, this.cookieName), this.opts.token);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      this.send(res, 405, 'text/plain; charset=utf-8', 'the dashboard is read-only\n', {
        allow: 'GET, HEAD',
      });
      return;
    }
    const url = new URL(req.url ?? '/', 'http://dashboard');
    const given = url.searchParams.get('token');
    if (given !== null) {
      if (!sameToken(given, this.opts.token)) {
        this.send(res, 401, 'text/plain; charset=utf-8', 'wrong token\n');
        return;
      }
      url.searchParams.delete('token');
      this.send(res, 303, 'text/plain; charset=utf-8', '', {
        location: `${url.pathname}${url.search}`,
        'set-cookie': `${this.cookieName}=${encodeURIComponent(this.opts.token)}; Path=/; HttpOnly; SameSite=Strict`,
      });
      return;
    }
    if (!this.authorized(req)) {
      this.send(
        res,
        401,
        'text/plain; charset=utf-8',
        'Open the dashboard with the URL troupe printed (it carries the access token).\n',
        { 'www-authenticate': 'Bearer realm="troupe dashboard"' },
      );
      return;
    }
    if (url.pathname === '/api/snapshot') {
      this.send(res, 200, 'application/json; charset=utf-8', this.opts.hub.current());
      return;
    }
    if (url.pathname === '/api/events') {
      this.stream(req, res);
      return;
    }
    const asset = this.opts.assets.get(url.pathname === '/index.html' ? '/' : url.pathname);
    if (!asset) {
      this.send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
      return;
    }
    this.send(res, 200, asset.contentType, asset.body);
  }

  /** Server-sent events: the current snapshot at once, then every changed one. */
  private stream(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    // JSON.stringify never emits a raw newline, so a snapshot is always one `data:` line.
    const push = (json: string) => res.write(`event: snapshot\ndata: ${json}\n\n`);
    res.write('retry: 2000\n\n');
    push(this.opts.hub.current());
    const unsubscribe = this.opts.hub.subscribe(push);
    this.streams.add(res);
    const done = () => {
      unsubscribe();
      this.streams.delete(res);
    };
    req.on('close', done);
    res.on('error', done);
  }
}
