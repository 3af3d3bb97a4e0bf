import { formatFieldError } from './field-errors.ts';
import type { FieldError } from './types.ts';

/** metav1.Status reasons the server emits. */
export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'RequestEntityTooLarge'
  | 'TooManyRequests'
  | 'InternalError'
  | 'Timeout'
  | 'ServiceUnavailable';

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: FieldError[] | { reason?: string; message: string; field?: string }[];
  retryAfterSeconds?: number;
}

export interface StatusObject {
  kind: 'Status';
  apiVersion: 'v1';
  /** metav1.ListMeta: only an expired list's fresh continue token is ever set. */
  metadata: { continue?: string };
  status: 'Failure' | 'Success';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code?: number;
}

/** An error that the HTTP layer renders as a metav1.Status with the given code. */
export class ApiError extends Error {
  readonly status: StatusObject;
  constructor(code: number, reason: StatusReason, message: string, details?: StatusDetails) {
    super(message);
    this.status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message,
      reason,
      code,
    };
    if (details) this.status.details = details;
  }
  get code(): number {
    return this.status.code ?? 500;
  }
}

/**
 * A metav1.Status as kube-apiserver's JSON serializer writes it: the Go struct's field order
 * (`details` before `code`), every `omitempty` field left out when empty (no `"group":""`, no
 * `"code":0`), and json.Encoder's trailing newline. Clients compare these bytes, so every
 * Status the server sends, errors and successes alike, goes through here.
 * (apimachinery `pkg/apis/meta/v1/types.go` Status, StatusDetails, StatusCause.)
 */
export function encodeStatus(s: StatusObject): string {
  const meta: Record<string, string> = {};
  if (s.metadata.continue) meta.continue = s.metadata.continue;
  const out: Record<string, unknown> = { kind: 'Status', apiVersion: 'v1', metadata: meta };
  if (s.status) out.status = s.status;
  if (s.message) out.message = s.message;
  if (s.reason) out.reason = s.reason;
  if (s.details) {
    const d = s.details;
    const details: Record<string, unknown> = {};
    if (d.name) details.name = d.name;
    if (d.group) details.group = d.group;
    if (d.kind) details.kind = d.kind;
    if (d.uid) details.uid = d.uid;
    if (d.causes?.length) {
      details.causes = d.causes.map((c) => {
        const cause: Record<string, string> = {};
        if (c.reason) cause.reason = c.reason;
        if (c.message) cause.message = c.message;
        if (c.field) cause.field = c.field;
        return cause;
      });
    }
    if (d.retryAfterSeconds) details.retryAfterSeconds = d.retryAfterSeconds;
    out.details = details;
  }
  if (s.code) out.code = s.code;
  return `${JSON.stringify(out)}\n`;
}

/** The Status of a successful call (deletions, bindings, evictions). */
export function successStatus(code?: number, details?: StatusDetails): StatusObject {
  const s: StatusObject = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' };
  if (details) s.details = details;
  if (code) s.code = code;
  return s;
}

/** The qualified resource as kube-apiserver prints it in messages: `pods`, `deployments.apps`. */
export interface QualifiedResource {
  group: string;
  resource: string;
}

export function qualified(qr: QualifiedResource): string {
  return qr.group ? `${qr.resource}.${qr.group}` : qr.resource;
}

function details(qr: QualifiedResource, name: string): StatusDetails {
  return { name, group: qr.group, kind: qr.resource };
}

export const errors = {
  notFound: (qr: QualifiedResource, name: string) =>
    new ApiError(404, 'NotFound', `${qualified(qr)} "${name}" not found`, details(qr, name)),
  alreadyExists: (qr: QualifiedResource, name: string) =>
    new ApiError(409, 'AlreadyExists', `${qualified(qr)} "${name}" already exists`, details(qr, name)),
  conflict: (qr: QualifiedResource, name: string, why: string) =>
    new ApiError(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualified(qr)} "${name}": ${why}`,
      details(qr, name),
    ),
  invalid: (kind: string, group: string, name: string, causes: FieldError[]) => {
    const list = causes.map(formatFieldError);
    const msg = list.length === 1 ? list[0]! : `[${list.join(', ')}]`;
    return new ApiError(422, 'Invalid', `${kind}${group ? `.${group}` : ''} "${name}" is invalid: ${msg}`, {
      name,
      group,
      kind,
      causes,
    });
  },
  badRequest: (message: string) => new ApiError(400, 'BadRequest', message),
  forbidden: (qr: QualifiedResource, name: string, why: string) =>
    new ApiError(403, 'Forbidden', `${qualified(qr)} "${name}" is forbidden: ${why}`, details(qr, name)),
  forbiddenRaw: (message: string, d?: StatusDetails) => new ApiError(403, 'Forbidden', message, d),
  unauthorized: () => new ApiError(401, 'Unauthorized', 'Unauthorized'),
  methodNotAllowed: (verb: string, qr: QualifiedResource) =>
    new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`, {
      group: qr.group,
      kind: qr.resource,
      causes: [{ message: `${verb} is not supported on ${qualified(qr)}` }],
    }),
  notFoundPath: () => new ApiError(404, 'NotFound', 'the server could not find the requested resource'),
  expired: (message: string, continueToken?: string) => {
    const e = new ApiError(410, 'Expired', message);
    if (continueToken) e.status.metadata.continue = continueToken;
    return e;
  },
  gone: (message: string) => new ApiError(410, 'Gone', message),
  unsupportedMediaType: (type: string) =>
    new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json; got ${type}`,
    ),
  tooLarge: (limit: number) =>
    new ApiError(413, 'RequestEntityTooLarge', `the request is too large: limit is ${limit} bytes`),
  tooManyRequests: (retryAfterSeconds: number) =>
    new ApiError(
      429,
      'TooManyRequests',
      'the server has received too many requests and has asked us to try again later',
      {
        retryAfterSeconds,
      },
    ),
  internal: (message: string) => new ApiError(500, 'InternalError', `Internal error occurred: ${message}`),
  timeout: (message: string) => new ApiError(504, 'Timeout', message),
};

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return errors.internal(message);
}
