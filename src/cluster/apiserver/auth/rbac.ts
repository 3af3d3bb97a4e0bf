/**
 * RBAC evaluation over the stored Role/ClusterRole/RoleBinding/ClusterRoleBinding
 * objects, as kube-apiserver's RBAC authorizer does. Used to answer access and rules reviews
 * (`kubectl auth can-i`, `kubectl auth can-i --list`) and, with --authorization-mode=RBAC, to
 * enforce permissions of service-account tokens.
 */
import type { Api } from '../api.ts';
import { Lister } from '../listers.ts';
import type { KubeObject } from '../types.ts';
import type { UserInfo } from './authn.ts';

export interface RequestAttributes {
  verb: string;
  apiGroup?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  nonResourceURL?: string;
}

export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

interface Subject {
  kind: string;
  name: string;
  namespace?: string;
}

interface Binding extends KubeObject {
  subjects?: Subject[];
  roleRef: { kind: string; name: string; apiGroup?: string };
}

export interface Decision {
  allowed: boolean;
  reason: string;
}

export class Authorizer {
  /** Roles and bindings from listers (see listers.ts): every request of a checked user reads them. */
  private readonly clusterRoleBindings: Lister;
  private readonly roleBindings: Lister;
  private readonly clusterRoles: Lister;
  private readonly roles: Lister;

  constructor(api: Api) {
    const lister = (resource: string) => new Lister(api, 'rbac.authorization.k8s.io', 'v1', resource);
    this.clusterRoleBindings = lister('clusterrolebindings');
    this.roleBindings = lister('rolebindings');
    this.clusterRoles = lister('clusterroles');
    this.roles = lister('roles');
  }

  authorize(user: UserInfo, a: RequestAttributes): Decision {
    if (user.groups.includes('system:masters')) return { allowed: true, reason: 'member of system:masters' };
    for (const b of this.clusterRoleBindings.list() as readonly Binding[]) {
      if (!appliesTo(b.subjects ?? [], user, '')) continue;
      if (b.roleRef.kind !== 'ClusterRole') continue;
      if ((this.rulesOf('ClusterRole', b.roleRef.name, '') ?? []).some((r) => ruleAllows(r, a))) {
        return {
          allowed: true,
          reason: `RBAC: allowed by ClusterRoleBinding "${b.metadata.name}" of ClusterRole "${b.roleRef.name}" to ${describeUser(user)}`,
        };
      }
    }
    if (a.namespace && !a.nonResourceURL) {
      for (const b of this.roleBindings.list(a.namespace) as readonly Binding[]) {
        if (!appliesTo(b.subjects ?? [], user, a.namespace)) continue;
        const rules = this.rulesOf(b.roleRef.kind, b.roleRef.name, a.namespace) ?? [];
        if (rules.some((r) => ruleAllows(r, a))) {
          return {
            allowed: true,
            reason: `RBAC: allowed by RoleBinding "${b.metadata.name}/${a.namespace}" of ${b.roleRef.kind} "${b.roleRef.name}" to ${describeUser(user)}`,
          };
        }
      }
    }
    return { allowed: false, reason: '' };
  }

  /**
   * RulesFor: the rules of every binding that applies to the user, cluster-wide and then in
   * the namespace, unmerged; bindings to missing roles are reported, not fatal.
   */
  rulesFor(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[] } {
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    const visit = (bindings: readonly KubeObject[], bindingNamespace: string) => {
      for (const b of bindings as readonly Binding[]) {
        if (!appliesTo(b.subjects ?? [], user, bindingNamespace)) continue;
        const { kind, name } = b.roleRef;
        const found = this.rulesOf(kind, name, bindingNamespace);
        if (found) rules.push(...found);
        else if (kind === 'ClusterRole' || kind === 'Role')
          errors.push(`${kind.toLowerCase()}.rbac.authorization.k8s.io "${name}" not found`);
        else errors.push(`unsupported role reference kind: "${kind}"`);
      }
    };
    visit(this.clusterRoleBindings.list(), '');
    if (namespace) visit(this.roleBindings.list(namespace), namespace);
    return { rules, errors };
  }

  /** A role's rules; undefined when it does not exist (a Role outside any namespace never does). */
  roleRules(kind: string, name: string, namespace: string): PolicyRule[] | undefined {
    return this.rulesOf(kind, name, namespace);
  }

  private rulesOf(kind: string, name: string, namespace: string): PolicyRule[] | undefined {
    if (kind !== 'ClusterRole' && (kind !== 'Role' || !namespace)) return undefined;
    const role = kind === 'ClusterRole' ? this.clusterRoles.get(name) : this.roles.get(name, namespace);
    if (!role) return undefined;
    return ((role.rules as PolicyRule[] | undefined) ?? []).filter(Boolean);
  }
}

function describeUser(u: UserInfo): string {
  const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(u.name);
  return sa ? `ServiceAccount "${sa[2]}/${sa[1]}"` : `User "${u.name}"`;
}

function appliesTo(subjects: Subject[], user: UserInfo, bindingNamespace: string): boolean {
  for (const s of subjects) {
    switch (s.kind) {
      case 'User':
        if (s.name === user.name) return true;
        break;
      case 'Group':
        if (user.groups.includes(s.name)) return true;
        break;
      case 'ServiceAccount': {
        const ns = s.namespace || bindingNamespace;
        if (user.name === `system:serviceaccount:${ns}:${s.name}`) return true;
        break;
      }
    }
  }
  return false;
}

/**
 * RuleAllows (plugin/pkg/auth/authorizer/rbac/rbac.go) with the matchers of
 * pkg/apis/rbac/v1/evaluation_helpers.go: the one place a rule is matched, by the authorizer
 * and, one broken-down tuple at a time, by the escalation check (escalation.ts). A resource
 * matches `*`, its own name (`pods/log` with the subresource) or `*\/<subresource>`; there is no
 * `<resource>/*` form upstream. A request without a name (a list) matches named rules only by
 * the empty name, as upstream's string comparison does.
 */
export function ruleAllows(r: PolicyRule, a: RequestAttributes): boolean {
  if (!matchesOrAll(r.verbs, a.verb, '*')) return false;
  if (a.nonResourceURL !== undefined) return nonResourceURLMatches(r.nonResourceURLs, a.nonResourceURL);
  if (!matchesOrAll(r.apiGroups, a.apiGroup ?? '', '*')) return false;
  const sub = a.subresource ?? '';
  const combined = sub ? `${a.resource ?? ''}/${sub}` : (a.resource ?? '');
  const resourceOk = (r.resources ?? []).some(
    (res) => res === '*' || res === combined || (sub !== '' && res === `*/${sub}`),
  );
  if (!resourceOk) return false;
  const names = r.resourceNames ?? [];
  return names.length === 0 || names.includes(a.name ?? '');
}

function matchesOrAll(list: string[] | undefined, v: string, all: string): boolean {
  return !!list && (list.includes(all) || list.includes(v));
}

/** NonResourceURLMatches: `*`, the path itself, or a prefix ending in `*`. */
function nonResourceURLMatches(urls: string[] | undefined, path: string): boolean {
  return (urls ?? []).some(
    (u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.replace(/\*+$/, ''))),
  );
}

/** Objects every real cluster bootstraps and that RBAC checks rely on. */
export function bootstrapRbacObjects(): KubeObject[] {
  const crApi = 'rbac.authorization.k8s.io/v1';
  const bootstrap = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
  return [
    {
      apiVersion: crApi,
      kind: 'ClusterRole',
      metadata: { name: 'cluster-admin', labels: bootstrap },
      rules: [
        { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
        { nonResourceURLs: ['*'], verbs: ['*'] },
      ],
    },
    {
      apiVersion: crApi,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'cluster-admin', labels: bootstrap },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:masters' }],
    },
    {
      apiVersion: crApi,
      kind: 'ClusterRole',
      metadata: { name: 'system:discovery', labels: bootstrap },
      rules: [
        {
          nonResourceURLs: [
            '/api',
            '/api/*',
            '/apis',
            '/apis/*',
            '/healthz',
            '/livez',
            '/readyz',
            '/openapi',
            '/openapi/*',
            '/version',
            '/version/',
          ],
          verbs: ['get'],
        },
      ],
    },
    {
      apiVersion: crApi,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'system:discovery', labels: bootstrap },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:discovery' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' }],
    },
    {
      apiVersion: crApi,
      kind: 'ClusterRole',
      metadata: { name: 'system:basic-user', labels: bootstrap },
      rules: [
        {
          apiGroups: ['authorization.k8s.io'],
          resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
          verbs: ['create'],
        },
      ],
    },
    {
      apiVersion: crApi,
      kind: 'ClusterRoleBinding',
      metadata: { name: 'system:basic-user', labels: bootstrap },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:basic-user' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' }],
    },
  ];
}
