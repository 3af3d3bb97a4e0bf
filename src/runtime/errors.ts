/**
 * API errors as the runtime sees them: the HTTP status plus the decoded metav1.Status,
 * with predicates named like apimachinery's (IsNotFound, IsConflict, ...).
 */

import type { KindRef } from './types.ts';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** metav1.Status, the body of every error response. */
export interface Status {
  apiVersion?: string;
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    causes?: StatusCause[];
    retryAfterSeconds?: number;
  };
}

export class ApiError extends Error {
  readonly statusCode: number;
  readonly reason: string;
  readonly status: Status | undefined;
  readonly method: string;
  readonly path: string;
  /** From the Retry-After header or Status.details.retryAfterSeconds. */
  readonly retryAfterSeconds: number | undefined;

  constructor(opts: {
    statusCode: number;
    method: string;
    path: string;
    status?: Status;
    body?: string;
    retryAfterSeconds?: number;
  }) {
    const status = opts.status;
    const message = status?.message ?? (opts.body ? opts.body.slice(0, 300) : `HTTP ${opts.statusCode}`);
    super(`${opts.method} ${opts.path}: ${opts.statusCode} ${message}`);
    this.name = 'ApiError';
    this.statusCode = opts.statusCode;
    this.reason = status?.reason ?? '';
    this.status = status;
    this.method = opts.method;
    this.path = opts.path;
    this.retryAfterSeconds = opts.retryAfterSeconds ?? status?.details?.retryAfterSeconds;
  }
}

function code(err: unknown): number | undefined {
  return err instanceof ApiError ? err.statusCode : undefined;
}

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}

export function isNotFound(err: unknown): boolean {
  return code(err) === 404;
}

export function isConflict(err: unknown): boolean {
  return code(err) === 409 && (err as ApiError).reason !== 'AlreadyExists';
}

export function isAlreadyExists(err: unknown): boolean {
  return code(err) === 409 && (err as ApiError).reason === 'AlreadyExists';
}

/** 410 Gone: a resourceVersion or continue token too old for the server's history. */
export function isGone(err: unknown): boolean {
  return code(err) === 410;
}

export function isInvalid(err: unknown): boolean {
  return code(err) === 422;
}

export function isForbidden(err: unknown): boolean {
  return code(err) === 403;
}

export function isTooManyRequests(err: unknown): boolean {
  return code(err) === 429;
}

/**
 * Discovery lists no resource for a kind (apimachinery's NoKindMatchError): its CRD is not
 * installed, or not yet served.
 */
export class NoKindMatchError extends Error {
  readonly kind: KindRef;
  constructor(kind: KindRef) {
    super(`no resource served for kind ${kind.kind} in ${kind.apiVersion}`);
    this.name = 'NoKindMatchError';
    this.kind = { apiVersion: kind.apiVersion, kind: kind.kind };
  }
}

export function isNoKindMatch(err: unknown): err is NoKindMatchError {
  return err instanceof NoKindMatchError;
}

/**
 * An error a reconcile throws to say that retrying cannot help (bad user input, an
 * unsupported spec). The runtime logs and counts it but does not requeue the key.
 */
export class TerminalError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

export function isTerminal(err: unknown): boolean {
  return err instanceof TerminalError;
}
