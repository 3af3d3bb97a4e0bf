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
  // The kind's strategy holds ValidateSubjectAccessReviewSpec; reviews are answered, not stored.
  const errs =
    p.rt.strategy.validateCreate?.(body, { subresource: '', dryRun: false, user: user.name }) ?? [];
  if (errs.length > 0) throw errors.invalid(p.rt.kind, p.rt.group, '', errs);
  const spec = body.spec!;
  const subject =
    p.rt.resource === 'subjectaccessreviews'
      ? deps.authn.impersonated(spec.user ?? '', spec.groups ?? [])
      : user;
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
