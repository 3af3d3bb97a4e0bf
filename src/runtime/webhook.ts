/**
 * The admission webhook server: HTTPS, AdmissionReview admission.k8s.io/v1, one handler
 * per path. Mutating handlers return the object they want; the server computes the
 * JSONPatch (fast-json-patch) the API server expects. Certificates come from a directory
 * (reloaded on change without dropping connections, via setSecureContext) or are
 * generated at start, in which case `caBundle` is what to register with the API server.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import fastJsonPatch from 'fast-json-patch';
// Real time on purpose: HTTP latencies, credential lifetimes and certificates are about the wire.
import { realClock } from '../lib/clock.ts';
import { generateServingCert, readCertDir, type ServingCert, watchCertDir } from './certs.ts';
import type { JsonPatchOp } from './client.ts';
import { type Logger, silentLogger } from './log.ts';
import type { RuntimeMetrics } from './metrics.ts';
import type { KubeObject } from './types.ts';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  requestKind?: GroupVersionKind;
  requestResource?: { group: string; version: string; resource: string };
  name?: string;
  namespace?: string;
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  userInfo?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  object?: KubeObject | null;
  oldObject?: KubeObject | null;
  dryRun?: boolean;
  options?: unknown;
}

export interface AdmissionResponse {
  allowed: boolean;
  status?: { code?: number; message?: string; reason?: string };
  /** JSON patch ops to apply to `request.object` (mutating webhooks). */
  patch?: JsonPatchOp[];
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

export type AdmissionHandler = (
  request: AdmissionRequest,
  ctx: { log: Logger; signal: AbortSignal },
) => AdmissionResponse | Promise<AdmissionResponse>;

export function allowed(warnings?: string[]): AdmissionResponse {
  return warnings?.length ? { allowed: true, warnings } : { allowed: true };
}

export function denied(message: string, code = 403, reason = 'Forbidden'): AdmissionResponse {
  return { allowed: false, status: { code, message, reason } };
}

/** Allows with the JSON patch that turns `original` into `modified`. */
export function patched(original: unknown, modified: unknown, warnings?: string[]): AdmissionResponse {
  const ops = fastJsonPatch.compare(original as object, modified as object) as JsonPatchOp[];
  const res: AdmissionResponse = { allowed: true };
  if (ops.length) res.patch = ops;
  if (warnings?.length) res.warnings = warnings;
  return res;
}

export interface WebhookServerOptions {
  /** Default 9443; 0 picks a free port. */
  port?: number;
  host?: string;
  /** Directory with tls.crt and tls.key (and optionally ca.crt), watched for rotation. */
  certDir?: string;
  certName?: string;
  keyName?: string;
  /** Hosts for a generated certificate when no certDir is given. */
  hosts?: string[];
  logger?: Logger;
  metrics?: RuntimeMetrics;
  /** Largest accepted request body (bytes). */
  maxBodyBytes?: number;
}

export class WebhookServer {
  private readonly opts: WebhookServerOptions;
  private readonly handlers = new Map<string, AdmissionHandler>();
  private readonly log: Logger;
  private server: Server | undefined;
  private certs: ServingCert | undefined;
  private watcher: { close(): void } | undefined;
  private listening = false;

  constructor(opts: WebhookServerOptions = {}) {
    this.opts = opts;
    this.log = (opts.logger ?? silentLogger()).child({ component: 'webhook' });
  }

  /** Serves `handler` at `path` (e.g. `/mutate-v1-pod`). */
  register(path: string, handler: AdmissionHandler): void {
    if (this.handlers.has(path)) throw new Error(`a webhook is already registered at ${path}`);
    this.handlers.set(path, handler);
  }

  get paths(): string[] {
    return [...this.handlers.keys()];
  }

  /** True once listening. */
  get serving(): boolean {
    return this.listening;
  }

  get port(): number {
    return (this.server?.address() as AddressInfo | null)?.port ?? 0;
  }

  /** PEM of the CA clients should trust (the generated CA, or ca.crt from certDir). */
  get caBundle(): string | undefined {
    return this.certs?.ca;
  }

  async start(): Promise<void> {
    if (this.server) return;
    if (this.opts.certDir) {
      this.certs = readCertDir(this.opts.certDir, {
        certName: this.opts.certName,
        keyName: this.opts.keyName,
      });
    } else {
      this.certs = await generateServingCert(this.opts.hosts ?? ['localhost', '127.0.0.1']);
    }
    const server = createServer(
      { cert: this.certs.cert, key: this.certs.key, minVersion: 'TLSv1.2' },
      (req, res) => this.handle(req, res),
    );
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port ?? 9443, this.opts.host ?? '0.0.0.0', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.listening = true;
    if (this.opts.certDir) this.watcher = watchCertDir(this.opts.certDir, () => this.reloadCertificates());
    this.log.info({ port: this.port, paths: this.paths }, 'serving webhooks');
  }

  /** Re-reads certDir and swaps the serving certificate for new connections. */
  reloadCertificates(): boolean {
    if (!this.opts.certDir || !this.server) return false;
    try {
      const next = readCertDir(this.opts.certDir, {
        certName: this.opts.certName,
        keyName: this.opts.keyName,
      });
      if (next.cert === this.certs?.cert && next.key === this.certs?.key) return false;
      this.server.setSecureContext({ cert: next.cert, key: next.key });
      this.certs = next;
      this.log.info('reloaded serving certificate');
      return true;
    } catch (err) {
      // A half-written rotation (key updated, cert not yet): keep serving the old pair.
      this.log.warn({ err: (err as Error).message }, 'could not reload serving certificate');
      return false;
    }
  }

  async stop(): Promise<void> {
    this.watcher?.close();
    this.listening = false;
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const path = new URL(req.url ?? '/', 'https://localhost').pathname;
    const handler = this.handlers.get(path);
    const metrics = this.opts.metrics;
    if (!handler) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no webhook at this path\n');
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const started = realClock.monotonic();
    metrics?.webhookInFlight.inc({ webhook: path });
    const finish = (code: number) => {
      metrics?.webhookInFlight.dec({ webhook: path });
      metrics?.webhookRequests.inc({ webhook: path, code: String(code) });
      metrics?.webhookLatency.observe({ webhook: path }, (realClock.monotonic() - started) / 1000);
    };
    const limit = this.opts.maxBodyBytes ?? 7 * 1024 * 1024;
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        res.writeHead(413).end();
        req.destroy();
        finish(413);
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (size > limit) return;
      void this.review(handler, Buffer.concat(chunks).toString('utf8'), req).then(({ code, body }) => {
        res.writeHead(code, { 'content-type': 'application/json' }).end(body);
        finish(code);
      });
    });
  }

  private async review(
    handler: AdmissionHandler,
    text: string,
    req: IncomingMessage,
  ): Promise<{ code: number; body: string }> {
    let review: { apiVersion?: string; kind?: string; request?: AdmissionRequest };
    try {
      review = JSON.parse(text);
    } catch {
      return { code: 400, body: JSON.stringify({ message: 'request body is not JSON' }) };
    }
    const request = review.request;
    if (review.kind !== 'AdmissionReview' || !request?.uid) {
      return { code: 400, body: JSON.stringify({ message: 'expected an AdmissionReview with a request' }) };
    }
    const controller = new AbortController();
    req.once('close', () => controller.abort());
    let response: AdmissionResponse;
    try {
      response = await handler(request, {
        log: this.log.child({ uid: request.uid, op: request.operation, kind: request.kind?.kind }),
        signal: controller.signal,
      });
    } catch (err) {
      this.log.error({ err, uid: request.uid }, 'webhook handler failed');
      response = denied(`webhook error: ${(err as Error).message}`, 500, 'InternalError');
    }
    const out: Record<string, unknown> = { uid: request.uid, allowed: response.allowed };
    if (response.status) out.status = response.status;
    if (response.warnings?.length) out.warnings = response.warnings;
    if (response.auditAnnotations) out.auditAnnotations = response.auditAnnotations;
    if (response.patch?.length) {
      out.patchType = 'JSONPatch';
      out.patch = Buffer.from(JSON.stringify(response.patch)).toString('base64');
    }
    return {
      code: 200,
      body: JSON.stringify({
        apiVersion: review.apiVersion ?? 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: out,
      }),
    };
  }
}
