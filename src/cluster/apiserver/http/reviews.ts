/**
 * authorization.k8s.io access reviews: answered by evaluating RBAC, never stored.
 * This is what `kubectl auth can-i` (with or without --as) talks to.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UserInfo } from '../auth/authn.ts';
import type { RequestAttributes } from '../auth/rbac.ts';
import { errors } from '../errors.ts';
import type { KubeObject } from '../types.ts';
import { type HandlerDeps, readDecoded, sendJson } from './handler.ts';
import type { ResourcePath } from './router.ts';

interface ReviewSpec {
  resourceAttributes?: {
    namespace?: string;
    verb?: string;
    group?: string;
    resource?: string;
    subresource?: string;
    name?: string;
  };
  nonResourceAttributes?: { path?: string; verb?: string };
  user?: string;
  groups?: string[];
}

export async function serveAccessReview(
  deps: HandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  p: ResourcePath,
  user: UserInfo,
): Promise<void> {
  const body = (await readDecoded(req)) as KubeObject & { spec?: ReviewSpec };
  const spec = body.spec;
  if (!spec || (!spec.resourceAttributes && !spec.nonResourceAttributes)) {
    throw errors.invalid(p.rt.kind, p.rt.group, '', [
      {
        reason: 'FieldValueRequired',
        field: 'spec.resourceAttributes',
        message:
          'Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified',
      },
    ]);
  }
  let subject = user;
  if (p.rt.resource === 'subjectaccessreviews') {
    if (!spec.user && !spec.groups?.length) {
      throw errors.invalid(p.rt.kind, p.rt.group, '', [
        {
          reason: 'FieldValueInvalid',
          field: 'spec.user',
          message: 'Invalid value: "": at least one of user or group must be specified',
        },
      ]);
    }
    subject = deps.authn.impersonated(spec.user ?? '', spec.groups ?? []);
  }
  const ra = spec.resourceAttributes;
  const attrs: RequestAttributes = ra
    ? {
        verb: ra.verb ?? '',
        apiGroup: ra.group ?? '',
        resource: ra.resource ?? '',
        subresource: ra.subresource ?? '',
        namespace: ra.namespace ?? '',
        name: ra.name ?? '',
      }
    : {
        verb: spec.nonResourceAttributes!.verb ?? '',
        nonResourceURL: spec.nonResourceAttributes!.path ?? '',
      };
  const decision = deps.authz.authorize(subject, attrs);
  const status: Record<string, unknown> = { allowed: decision.allowed };
  if (decision.reason) status.reason = decision.reason;
  sendJson(res, 201, {
    ...body,
    apiVersion: 'authorization.k8s.io/v1',
    kind: p.rt.kind,
    metadata: { creationTimestamp: null },
    status,
  });
}
