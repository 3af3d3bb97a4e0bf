/**
 * RBAC's escalation prevention, as kube-apiserver's RBAC storage does it
 * (pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased/storage.go,
 * pkg/registry/rbac/escalation_check.go, pkg/registry/rbac/validation/rule.go,
 * policy_comparator.go and policy_compact.go): a user may write a Role or ClusterRole only with
 * rules it already holds (or the `escalate` verb on it), and a RoleBinding or ClusterRoleBinding
 * only to a role whose rules it holds (or the `bind` verb on that role). Members of
 * system:masters, like the API server's own loopback clients, are never checked; writes that
 * only change ownerReferences and finalizers (the garbage collector's) are not either.
 */
import { semanticEqual } from '../../../lib/json.ts';
import { errors } from '../errors.ts';
import { goQuote } from '../gofmt.ts';
import type { KubeObject, ResourceType } from '../types.ts';
import type { UserInfo } from './authn.ts';
import { type Authorizer, type PolicyRule, ruleAllows } from './rbac.ts';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** A write to check: the request's namespace ('' when cluster-scoped), the stored object on update. */
export interface CheckedWrite {
  rt: ResourceType;
  namespace: string;
  obj: KubeObject;
  old?: KubeObject;
  user: UserInfo;
}

/** The check for one write; throws ApiError to refuse it. */
export type WriteGuard = (w: CheckedWrite) => void;

interface RoleRef {
  apiGroup?: string;
  kind?: string;
  name?: string;
}

export function rbacEscalationGuard(authz: Authorizer): WriteGuard {
  return (w) => {
    if (w.rt.group !== RBAC_GROUP) return;
    if (w.user.groups.includes('system:masters')) return;
    if (w.old && onlyGcFieldsChange(w.obj, w.old)) return;
    const name = w.obj.metadata.name ?? '';
    const qr = { group: RBAC_GROUP, resource: w.rt.resource };
    switch (w.rt.resource) {
      case 'roles':
      case 'clusterroles': {
        const escalate = authz.authorize(w.user, {
          verb: 'escalate',
          apiGroup: RBAC_GROUP,
          resource: w.rt.resource,
          name,
          namespace: w.namespace,
        });
        if (escalate.allowed) return;
        const rules = (w.obj.rules as PolicyRule[] | undefined) ?? [];
        const refused = confirmNoEscalation(authz, w.user, w.namespace, rules);
        if (refused) throw errors.forbidden(qr, name, refused);
        const aggregation = w.obj.aggregationRule as { clusterRoleSelectors?: unknown[] } | undefined;
        if (w.rt.resource === 'clusterroles' && (aggregation?.clusterRoleSelectors?.length ?? 0) > 0) {
          // An aggregated role can gather anything: setting one takes `*` on everything.
          if (confirmNoEscalation(authz, w.user, w.namespace, FULL_AUTHORITY)) {
            throw errors.forbidden(qr, name, 'must have cluster-admin privileges to use the aggregationRule');
          }
        }
        return;
      }
      case 'rolebindings':
      case 'clusterrolebindings': {
        const roleRef = (w.obj.roleRef as RoleRef | undefined) ?? {};
        if (bindingAuthorized(authz, w.user, roleRef, w.namespace)) return;
        const rules = roleReferenceRules(authz, roleRef, w.namespace);
        if (typeof rules === 'string') throw errors.forbidden(qr, name, rules);
        const refused = confirmNoEscalation(authz, w.user, w.namespace, rules);
        if (refused) throw errors.forbidden(qr, name, refused);
        return;
      }
      default:
        return;
    }
  };
}

const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

/** BindingAuthorized: the `bind` verb on the referenced role, in the binding's namespace. */
function bindingAuthorized(authz: Authorizer, user: UserInfo, ref: RoleRef, namespace: string): boolean {
  const resource = ref.kind === 'ClusterRole' ? 'clusterroles' : ref.kind === 'Role' ? 'roles' : undefined;
  if (!resource) return false;
  return authz.authorize(user, {
    verb: 'bind',
    apiGroup: ref.apiGroup ?? '',
    resource,
    name: ref.name ?? '',
    namespace,
  }).allowed;
}

/** GetRoleReferenceRules: the referenced role's rules, or the error naming what is missing. */
function roleReferenceRules(authz: Authorizer, ref: RoleRef, namespace: string): PolicyRule[] | string {
  if (ref.kind !== 'Role' && ref.kind !== 'ClusterRole')
    return `unsupported role reference kind: "${ref.kind}"`;
  const rules = authz.roleRules(ref.kind, ref.name ?? '', namespace);
  if (rules) return rules;
  return `${ref.kind === 'Role' ? 'roles' : 'clusterroles'}.${RBAC_GROUP} "${ref.name ?? ''}" not found`;
}

/**
 * ConfirmNoEscalation: undefined when the user's own rules (RulesFor in the request's namespace)
 * cover every rule granted, else the message naming what is not held.
 */
export function confirmNoEscalation(
  authz: Authorizer,
  user: UserInfo,
  namespace: string,
  rules: PolicyRule[],
): string | undefined {
  const own = authz.rulesFor(user, namespace);
  const missing = uncovered(own.rules, rules);
  if (missing.length === 0) return undefined;
  const descriptions = [...new Set(compactRules(missing).map(compactString))].sort();
  let msg = `user ${goQuote(user.name)} (groups=${goQuoteList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${descriptions.join('\n')}`;
  if (own.errors.length > 0) msg += `; resolution errors: [${own.errors.join(' ')}]`;
  return msg;
}

/** Go's %q of a []string: `["a" "b"]`. */
function goQuoteList(list: readonly string[]): string {
  return `[${list.map(goQuote).join(' ')}]`;
}

/** Covers: the servant rules, broken down to single tuples, that no owner rule covers. */
function uncovered(owner: PolicyRule[], servant: PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const sub of servant.flatMap(breakdown)) {
    if (!owner.some((o) => ruleCovers(o, sub))) out.push(sub);
  }
  return out;
}

function breakdown(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  const verbs = rule.verbs ?? [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of verbs) {
        if ((rule.resourceNames ?? []).length > 0) {
          for (const rn of rule.resourceNames!) {
            out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [rn] });
          }
        } else out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) {
    for (const verb of verbs) out.push({ nonResourceURLs: [url], verbs: [verb] });
  }
  return out;
}

/**
 * ruleCovers (pkg/registry/rbac/validation/policy_comparator.go) of one broken-down tuple: the
 * owner rule allows the tuple as a request (resourceCoversAll's `*\/<subresource>` included:
 * `deployments/status` is split at its first `/` as upstream splits it), and a tuple without a
 * resource name is covered only by a rule that names none.
 */
function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const name = sub.resourceNames?.[0];
  if (name === undefined && (owner.resourceNames?.length ?? 0) > 0) return false;
  const verb = sub.verbs?.[0] ?? '';
  const url = sub.nonResourceURLs?.[0];
  if (url !== undefined) return ruleAllows(owner, { verb, nonResourceURL: url });
  const combined = sub.resources?.[0] ?? '';
  const slash = combined.indexOf('/');
  return ruleAllows(owner, {
    verb,
    apiGroup: sub.apiGroups?.[0] ?? '',
    resource: slash < 0 ? combined : combined.slice(0, slash),
    subresource: slash < 0 ? undefined : combined.slice(slash + 1),
    name,
  });
}

/** CompactRules: single group/resource rules that differ only by verb become one rule. */
function compactRules(rules: PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const r of rules) {
    const isSimple =
      (r.resourceNames ?? []).length === 0 &&
      (r.nonResourceURLs ?? []).length === 0 &&
      r.apiGroups?.length === 1 &&
      r.resources?.length === 1;
    if (!isSimple) {
      out.push(r);
      continue;
    }
    const key = `${r.apiGroups![0]}\u0000${r.resources![0]}`;
    const existing = simple.get(key);
    if (existing) existing.verbs = [...(existing.verbs ?? []), ...(r.verbs ?? [])];
    else simple.set(key, { ...r, verbs: [...(r.verbs ?? [])] });
  }
  return [...out, ...simple.values()];
}

/** rbacv1helpers.CompactString: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}`. */
function compactString(r: PolicyRule): string {
  const parts: string[] = [];
  if (r.apiGroups?.length) parts.push(`APIGroups:${goQuoteList(r.apiGroups)}`);
  if (r.resources?.length) parts.push(`Resources:${goQuoteList(r.resources)}`);
  if (r.nonResourceURLs?.length) parts.push(`NonResourceURLs:${goQuoteList(r.nonResourceURLs)}`);
  if (r.resourceNames?.length) parts.push(`ResourceNames:${goQuoteList(r.resourceNames)}`);
  if (r.verbs?.length) parts.push(`Verbs:${goQuoteList(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/** IsOnlyMutatingGCFields: nothing but ownerReferences and finalizers differ (Semantic.DeepEqual). */
function onlyGcFieldsChange(obj: KubeObject, old: KubeObject): boolean {
  const {
    ownerReferences: _o,
    finalizers: _f,
    resourceVersion: _r,
    managedFields: _m,
    ...meta
  } = obj.metadata;
  const {
    ownerReferences: _oo,
    finalizers: _of,
    resourceVersion: _or,
    managedFields: _om,
    ...oldMeta
  } = old.metadata;
  return semanticEqual({ ...obj, metadata: meta }, { ...old, metadata: oldMeta });
}
