import type { FieldError } from '../types.ts';

/**
 * A patch that the API server refuses, carrying what kube-apiserver would answer: the HTTP
 * status, the Status `reason` (metav1.StatusReason; '' is StatusReasonUnknown, which the real
 * server uses for errors that are not API statuses, such as most strategic-merge failures),
 * the Status `message`, and optional `causes`. `detail` keeps the underlying engine message
 * for logs when the real server's message is generic (JSON patch failures answer 422 with a
 * fixed sentence and drop the specific reason).
 */
export class PatchError extends Error {
  readonly status: number;
  readonly reason: string;
  readonly causes: FieldError[];
  readonly detail: string | undefined;

  constructor(
    status: number,
    reason: string,
    message: string,
    opts: { causes?: FieldError[]; detail?: string } = {},
  ) {
    super(message);
    this.name = 'PatchError';
    this.status = status;
    this.reason = reason;
    this.causes = opts.causes ?? [];
    this.detail = opts.detail;
  }
}

/** errors.NewBadRequest */
export function badRequest(message: string): PatchError {
  return new PatchError(400, 'BadRequest', message);
}

/**
 * errors.NewGenericServerResponse(422, ...) as the patch handler uses it: the specific
 * failure is not shown to the client, only this sentence.
 */
export function genericInvalid(detail: string): PatchError {
  return new PatchError(422, 'Invalid', 'the server rejected our request due to an error in our request', {
    detail,
  });
}

/** A plain Go error reaching the handler: 500 with an empty reason and the error text. */
export function internalError(message: string): PatchError {
  return new PatchError(500, '', message);
}
