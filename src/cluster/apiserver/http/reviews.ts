/**
 * authorization.k8s.io reviews: answered by evaluating RBAC, never stored. This is what
 * `kubectl auth can-i` (with or without --as, and with --list) talks to.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isObject } from '../../../lib/json.ts';
import type { UserInfo } from '../auth/authn.ts';
import type { PolicyRule, RequestAttributes } from '../auth/rbac.ts';
import { errors } from '../errors.ts';
import { goJsonKind } from '../gofmt.ts';
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
  const local = p.rt.resource === 'localsubjectaccessreviews';
  if (local) {
    if (!isObject(body.metadata)) body.metadata = {};
    const ns = p.namespace ?? '';
    if (!body.metadata.namespace) body.metadata.namespace = ns;
    // LocalSubjectAccessReview REST: the object's namespace is the request's.
    if (body.metadata.namespace !== ns) {
      throw errors.badRequest(`spec.resourceAttributes.namespace must match namespace: ${ns}`);
    }
  }
  // The kind's strategy holds ValidateSubjectAccessReviewSpec; reviews are answered, not stored.
  const errs =
    p.rt.strategy.validateCreate?.(body, { subresource: '', dryRun: false, user: user.name }) ?? [];
  if (errs.length > 0) throw errors.invalid(p.rt.kind, p.rt.group, '', errs);
  const spec = body.spec!;
  const subject =
    p.rt.resource === 'subjectaccessreviews' || local
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
    metadata: local
      ? { namespace: body.metadata.namespace, creationTimestamp: null }
      : { creationTimestamp: null },
    status,
  });
}

function userInfoOf(user: UserInfo): Record<string, unknown> {
  return { username: user.name, groups: user.groups };
}

/**
 * SelfSubjectReview (pkg/registry/authentication/selfsubjectreview/rest.go): the caller's
 * user info, what `kubectl auth whoami` prints.
 */
export async function serveSelfSubjectReview(
  _deps: HandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  user: UserInfo,
): Promise<void> {
  await readDecoded(req);
  sendJson(res, 201, {
    kind: 'SelfSubjectReview',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { creationTimestamp: null },
    status: { userInfo: userInfoOf(user) },
  });
}

/**
 * TokenReview (pkg/registry/authentication/tokenreview/storage.go): whether spec.token
 * authenticates, and as whom; an empty token is a bad request.
 */
export async function serveTokenReview(
  deps: HandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const body = await readDecoded(req);
  const spec = isObject(body) && isObject(body.spec) ? body.spec : {};
  const token = typeof spec.token === 'string' ? spec.token : '';
  if (token === '') throw errors.badRequest('token is required for TokenReview in authentication');
  const user = deps.authn.authenticateToken(token);
  const status: Record<string, unknown> = user
    ? { authenticated: true, user: userInfoOf(user), audiences: deps.authn.audiences }
    : { authenticated: false, user: {} };
  sendJson(res, 201, {
    kind: 'TokenReview',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec: { token, ...(Array.isArray(spec.audiences) ? { audiences: spec.audiences } : {}) },
    status,
  });
}

/**
 * SelfSubjectRulesReview: every rule RBAC gives the caller in spec.namespace, split into
 * resource and non-resource rules, as the RBAC authorizer's RulesFor lists them (unmerged;
 * kubectl compacts them for printing).
 */
export async function serveRulesReview(
  deps: HandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  user: UserInfo,
): Promise<void> {
  const body = await readDecoded(req);
  if (!isObject(body)) throw errors.badRequest('the body of the request must be a JSON or YAML object');
  const namespace = isObject(body.spec) ? body.spec.namespace : undefined;
  if (namespace != null && typeof namespace !== 'string') {
    throw errors.badRequest(
      `SelfSubjectRulesReview in version "v1" cannot be handled as a SelfSubjectRulesReview: json: cannot unmarshal ${goJsonKind(namespace)} into Go struct field SelfSubjectRulesReviewSpec.spec.namespace of type string`,
    );
  }
  if (!namespace) throw errors.badRequest('no namespace on request');
  const { rules, errors: failures } = deps.authz.rulesFor(user, namespace);
  const status: Record<string, unknown> = {
    resourceRules: rules.filter((r) => (r.resources ?? []).length > 0).map(resourceRule),
    nonResourceRules: rules
      .filter((r) => (r.nonResourceURLs ?? []).length > 0)
      .map((r) => ({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs })),
    incomplete: false,
  };
  // An error aggregate's message: each distinct message once, bracketed only when several.
  const distinct = [...new Set(failures)];
  if (distinct.length > 0)
    status.evaluationError = distinct.length === 1 ? distinct[0] : `[${distinct.join(', ')}]`;
  sendJson(res, 201, {
    kind: 'SelfSubjectRulesReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { creationTimestamp: null },
    spec: {},
    status,
  });
}

function resourceRule(r: PolicyRule): Record<string, unknown> {
  const out: Record<string, unknown> = { verbs: r.verbs };
  if (r.apiGroups?.length) out.apiGroups = r.apiGroups;
  out.resources = r.resources;
  if (r.resourceNames?.length) out.resourceNames = r.resourceNames;
  return out;
}
