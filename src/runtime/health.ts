/**
 * The probe and metrics HTTP server: `/healthz` and `/readyz` (each with named checks,
 * `/readyz/<check>` for one, `?verbose` for a per-check listing in kube-apiserver's
 * format) and `/metrics` in Prometheus text format.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { parseAddress } from './address.ts';
import { type Logger, silentLogger } from './log.ts';

/** Healthy when it returns true or nothing; unhealthy when it returns false or throws (the message is shown). */
export type Check = () => unknown;

export interface HealthServerOptions {
  /** `host:port`; port 0 picks a free one. */
  address: string;
  /** Serve /metrics from this registry. */
  registry?: Registry;
  /** Serve /healthz and /readyz (default true). */
  probes?: boolean;
  logger?: Logger;
  /** Serve HTTPS with this certificate (the secure metrics endpoint). */
  tls?: { cert: string; key: string };
  /** Decides each request first: undefined lets it through, else its code and text message. */
  guard?: (req: IncomingMessage, path: string) => Promise<{ code: number; message: string } | undefined>;
}

export class HealthServer {
  private readonly opts: HealthServerOptions;
  private readonly healthz = new Map<string, Check>();
  private readonly readyz = new Map<string, Check>();
  private readonly log: Logger;
  private server: Server | undefined;

  constructor(opts: HealthServerOptions) {
    this.opts = opts;
    this.log = opts.logger ?? silentLogger();
    this.healthz.set('ping', () => true);
    this.readyz.set('ping', () => true);
  }

  addHealthzCheck(name: string, check: Check): void {
    this.healthz.set(name, check);
  }

  addReadyzCheck(name: string, check: Check): void {
    this.readyz.set(name, check);
  }

  /** The bound port (after `start`). */
  get port(): number {
    return (this.server?.address() as AddressInfo | null)?.port ?? 0;
  }

  get url(): string {
    const addr = this.server?.address() as AddressInfo | null;
    if (!addr) return '';
    const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    const scheme = this.opts.tls ? 'https' : 'http';
    return `${scheme}://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${addr.port}`;
  }

  /** The address as bound (`0.0.0.0:8443`, `[::]:8081`), which the log names. */
  get boundAddress(): string {
    const addr = this.server?.address() as AddressInfo | null;
    if (!addr) return '';
    return addr.family === 'IPv6' ? `[${addr.address}]:${addr.port}` : `${addr.address}:${addr.port}`;
  }

  async start(): Promise<void> {
    const { host, port } = parseAddress(this.opts.address);
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      this.handle(req, res).catch((err) => {
        this.log.error({ err }, 'health server request failed');
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    };
    const tls = this.opts.tls;
    const server = tls
      ? createHttpsServer({ cert: tls.cert, key: tls.key, minVersion: 'TLSv1.2' }, handler)
      : createServer(handler);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    const serving = [this.opts.probes !== false ? 'health probes' : '', this.opts.registry ? 'metrics' : '']
      .filter(Boolean)
      .join(' and ');
    this.log.info(
      { address: this.boundAddress, secure: Boolean(tls), authenticated: Boolean(this.opts.guard) },
      `serving ${serving}`,
    );
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const denied = await this.opts.guard?.(req, url.pathname);
    if (denied) {
      // Go's http.Error: the message as plain text with a newline.
      res.writeHead(denied.code, {
        'content-type': 'text/plain; charset=utf-8',
        'x-content-type-options': 'nosniff',
      });
      res.end(`${denied.message}\n`);
      return;
    }
    if (path === '/metrics' && this.opts.registry) {
      const body = await this.opts.registry.metrics();
      res.writeHead(200, { 'content-type': this.opts.registry.contentType });
      res.end(body);
      return;
    }
    if (this.opts.probes !== false) {
      for (const [prefix, checks] of [
        ['/healthz', this.healthz],
        ['/readyz', this.readyz],
        ['/livez', this.healthz],
      ] as const) {
        if (path === prefix) {
          await this.respond(res, checks, url.searchParams.has('verbose'), prefix.slice(1));
          return;
        }
        if (path.startsWith(`${prefix}/`)) {
          const name = path.slice(prefix.length + 1);
          const check = checks.get(name);
          if (!check) {
            res.writeHead(404, { 'content-type': 'text/plain' });
            res.end(`no check named ${name}\n`);
            return;
          }
          await this.respond(res, new Map([[name, check]]), url.searchParams.has('verbose'), prefix.slice(1));
          return;
        }
      }
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found\n');
  }

  private async respond(res: ServerResponse, checks: Map<string, Check>, verbose: boolean, what: string) {
    const lines: string[] = [];
    let ok = true;
    for (const [name, check] of checks) {
      let passed: boolean;
      let reason = '';
      try {
        passed = (await check()) !== false;
      } catch (err) {
        passed = false;
        reason = err instanceof Error ? err.message : String(err);
      }
      if (!passed) ok = false;
      lines.push(passed ? `[+]${name} ok` : `[-]${name} failed${reason ? `: ${reason}` : ''}`);
    }
    res.writeHead(ok ? 200 : 500, {
      'content-type': 'text/plain; charset=utf-8',
      'x-content-type-options': 'nosniff',
    });
    if (ok && !verbose) res.end('ok');
    else res.end(`${lines.join('\n')}\n${what} check ${ok ? 'passed' : 'failed'}\n`);
  }
}
