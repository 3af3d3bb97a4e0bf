/**
 * The `authorizer` variable of ValidatingAdmissionPolicy expressions: the Kubernetes CEL
 * authorization library (staging/src/k8s.io/apiserver/pkg/cel/library/authz.go).
 *
 *   authorizer.group('apps').resource('deployments').namespace('ns').name('x').check('update').allowed()
 *   authorizer.requestResource.subresource('scale').check('update').reason()
 *   authorizer.path('/healthz').check('get').allowed()
 *   authorizer.serviceAccount('ns', 'sa').group('').resource('pods').check('list').errored()
 *
 * Checks are answered by the server's RBAC authorizer for the request's user (as access reviews
 * are, whatever the authorization mode). The library's values (Authorizer, PathCheck,
 * GroupCheck, ResourceCheck, Decision) are CEL maps tagged with their kind under a key no
 * expression can name as a field, and the methods dispatch on that tag: @bufbuild/cel's
 * object types are protobuf messages, which these are not.
 */
import { type CelFunc, type CelMap, CelScalar, celMap, celMethod, isCelMap, mapType } from '@bufbuild/cel';
import type { UserInfo } from '../auth/authn.ts';
import type { Authorizer, RequestAttributes } from '../auth/rbac.ts';

const KIND = '@kind';
const M = mapType(CelScalar.STRING, CelScalar.DYN);

type Kind = 'Authorizer' | 'PathCheck' | 'GroupCheck' | 'ResourceCheck' | 'Decision';

function value(kind: Kind, fields: Record<string, string | boolean>): CelMap {
  return celMap(new Map<string, string | boolean>([[KIND, kind], ...Object.entries(fields)]));
}

function field(m: CelMap, key: string): string {
  const v = m.get(key);
  return typeof v === 'string' ? v : '';
}

function expect(m: unknown, ...kinds: Kind[]): CelMap {
  if (!isCelMap(m) || !kinds.includes(field(m, KIND) as Kind))
    throw new Error(
      `no such overload: ${kinds.join(' or ')} method on ${isCelMap(m) ? field(m, KIND) || 'map' : typeof m}`,
    );
  return m;
}

function withField(m: CelMap, kind: Kind, key: string, v: string): CelMap {
  const out: Record<string, string | boolean> = {};
  for (const [k, x] of m)
    if (k !== KIND && (typeof x === 'string' || typeof x === 'boolean')) out[String(k)] = x;
  out[key] = v;
  return value(kind, out);
}

/** The principal a check is made for: the request's user, or a named service account. */
function principal(m: CelMap): UserInfo {
  const groups = field(m, 'groups');
  return { name: field(m, 'user'), groups: groups ? groups.split('\n') : [] };
}

/** The library's functions, answering checks with `authz`. */
export function authorizerLibrary(authz: Authorizer): CelFunc[] {
  const decide = (m: CelMap, attrs: RequestAttributes): CelMap => {
    try {
      const d = authz.authorize(principal(m), attrs);
      return value('Decision', { allowed: d.allowed, reason: d.reason ?? '', error: '' });
    } catch (err) {
      return value('Decision', {
        allowed: false,
        reason: '',
        error: err instanceof Error ? err.message : String(err),
      });
    }
  };
  return [
    celMethod('group', M, [CelScalar.STRING], M, function (g) {
      return withField(expect(this, 'Authorizer'), 'GroupCheck', 'group', g);
    }),
    celMethod('resource', M, [CelScalar.STRING], M, function (r) {
      return withField(expect(this, 'GroupCheck'), 'ResourceCheck', 'resource', r);
    }),
    celMethod('subresource', M, [CelScalar.STRING], M, function (s) {
      return withField(expect(this, 'ResourceCheck'), 'ResourceCheck', 'subresource', s);
    }),
    celMethod('namespace', M, [CelScalar.STRING], M, function (ns) {
      return withField(expect(this, 'ResourceCheck'), 'ResourceCheck', 'namespace', ns);
    }),
    celMethod('name', M, [CelScalar.STRING], M, function (n) {
      return withField(expect(this, 'ResourceCheck'), 'ResourceCheck', 'name', n);
    }),
    celMethod('path', M, [CelScalar.STRING], M, function (p) {
      return withField(expect(this, 'Authorizer'), 'PathCheck', 'path', p);
    }),
    celMethod('serviceAccount', M, [CelScalar.STRING, CelScalar.STRING], M, function (ns, name) {
      expect(this, 'Authorizer');
      return serviceAccountAuthorizer(ns, name);
    }),
    celMethod('check', M, [CelScalar.STRING], M, function (verb) {
      const m = expect(this, 'PathCheck', 'ResourceCheck');
      if (field(m, KIND) === 'PathCheck')
        return decide(m, { verb: verb.toLowerCase(), nonResourceURL: field(m, 'path') });
      return decide(m, {
        verb,
        apiGroup: field(m, 'group'),
        resource: field(m, 'resource'),
        subresource: field(m, 'subresource'),
        namespace: field(m, 'namespace'),
        name: field(m, 'name'),
      });
    }),
    celMethod('allowed', M, [], CelScalar.BOOL, function () {
      return expect(this, 'Decision').get('allowed') === true;
    }),
    celMethod('reason', M, [], CelScalar.STRING, function () {
      return field(expect(this, 'Decision'), 'reason');
    }),
    celMethod('errored', M, [], CelScalar.BOOL, function () {
      return field(expect(this, 'Decision'), 'error') !== '';
    }),
    celMethod('error', M, [], CelScalar.STRING, function () {
      return field(expect(this, 'Decision'), 'error');
    }),
  ];
}

function serviceAccountAuthorizer(ns: string, name: string): CelMap {
  return value('Authorizer', {
    user: `system:serviceaccount:${ns}:${name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'].join('\n'),
  });
}

export interface RequestResource {
  group: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

/** The `authorizer` binding for a request's user, with its `requestResource` check. */
export function authorizerFor(user: string, groups: string[], request: RequestResource): CelMap {
  const who = { user, groups: groups.join('\n') };
  return celMap(
    new Map<string, string | CelMap>([
      [KIND, 'Authorizer'],
      ['user', who.user],
      ['groups', who.groups],
      ['requestResource', value('ResourceCheck', { ...who, ...request })],
    ]),
  );
}
