/** rbac.authorization.k8s.io: defaults, ValidateRole/ClusterRole/RoleBinding/ClusterRoleBinding, printers. */

import { translateTimestampSince } from '../../../kube/duration.ts';
import { isObject, semanticEqual } from '../../../lib/json.ts';
import type { FieldError, KubeObject, Strategy, TablePrinter } from '../types.ts';
import {
  AGE_COLUMN,
  arrayOf,
  column,
  DEFAULT_TABLE_COLUMNS,
  defaultTableCells,
  NAME_COLUMN,
  recordOf,
  str,
} from './common.ts';
import { child, dedupe, index, invalid, notSupported, required } from './field-errors.ts';
import { validateLabelSelector } from './selector.ts';
import {
  isDNS1123Subdomain,
  nameIsPathSegment,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './validation.ts';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';

function validatePolicyRule(rule: Record<string, unknown>, namespaced: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (arrayOf(rule.verbs).length === 0)
    errs.push(required(child(path, 'verbs'), 'verbs must contain at least one value'));
  if (arrayOf(rule.nonResourceURLs).length > 0) {
    if (namespaced)
      errs.push(
        invalid(
          child(path, 'nonResourceURLs'),
          rule.nonResourceURLs,
          'namespaced rules cannot apply to non-resource URLs',
        ),
      );
    if (
      arrayOf(rule.apiGroups).length > 0 ||
      arrayOf(rule.resources).length > 0 ||
      arrayOf(rule.resourceNames).length > 0
    ) {
      errs.push(
        invalid(
          child(path, 'nonResourceURLs'),
          rule.nonResourceURLs,
          'rules cannot apply to both regular resources and non-resource URLs',
        ),
      );
    }
    return errs;
  }
  if (arrayOf(rule.apiGroups).length === 0)
    errs.push(required(child(path, 'apiGroups'), 'resource rules must supply at least one api group'));
  if (arrayOf(rule.resources).length === 0)
    errs.push(required(child(path, 'resources'), 'resource rules must supply at least one resource'));
  return errs;
}

function validateRules(obj: KubeObject, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  arrayOf(obj.rules).forEach((r, i) => {
    errs.push(...validatePolicyRule(r, namespaced, index('rules', i)));
  });
  return errs;
}

function validateRole(obj: KubeObject): FieldError[] {
  return [...validateObjectMeta(obj.metadata, true, nameIsPathSegment), ...validateRules(obj, true)];
}

function validateClusterRole(obj: KubeObject): FieldError[] {
  const errs = [...validateObjectMeta(obj.metadata, false, nameIsPathSegment), ...validateRules(obj, false)];
  if (obj.aggregationRule != null) {
    const selectors = arrayOf(recordOf(obj.aggregationRule).clusterRoleSelectors);
    if (selectors.length === 0) {
      errs.push(
        required(
          'aggregationRule.clusterRoleSelectors',
          'at least one clusterRoleSelector required if aggregationRule is non-nil',
        ),
      );
    }
    selectors.forEach((s, i) => {
      errs.push(...validateLabelSelector(s, index('aggregationRule.clusterRoleSelectors', i)));
    });
  }
  return errs;
}

export function defaultBinding(obj: KubeObject): void {
  if (isObject(obj.roleRef) && !obj.roleRef.apiGroup) obj.roleRef.apiGroup = RBAC_GROUP;
  for (const s of arrayOf(obj.subjects)) {
    if (!isObject(s) || s.apiGroup) continue;
    if (s.kind === 'ServiceAccount') s.apiGroup = '';
    else if (s.kind === 'User' || s.kind === 'Group') s.apiGroup = RBAC_GROUP;
  }
}

function validateSubject(s: Record<string, unknown>, namespaced: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const name = str(s.name);
  if (!name) errs.push(required(child(path, 'name')));
  switch (s.kind) {
    case 'ServiceAccount':
      if (name) for (const m of isDNS1123Subdomain(name)) errs.push(invalid(child(path, 'name'), name, m));
      if (str(s.apiGroup)) errs.push(notSupported(child(path, 'apiGroup'), s.apiGroup, ['']));
      if (!namespaced && !str(s.namespace)) errs.push(required(child(path, 'namespace')));
      break;
    case 'User':
    case 'Group':
      if (s.apiGroup !== RBAC_GROUP)
        errs.push(notSupported(child(path, 'apiGroup'), s.apiGroup ?? '', [RBAC_GROUP]));
      break;
    default:
      errs.push(notSupported(child(path, 'kind'), s.kind ?? '', ['ServiceAccount', 'User', 'Group']));
  }
  return errs;
}

function validateBinding(obj: KubeObject, namespaced: boolean): FieldError[] {
  const errs = validateObjectMeta(obj.metadata, namespaced, nameIsPathSegment);
  const ref = recordOf(obj.roleRef);
  if (ref.apiGroup !== RBAC_GROUP)
    errs.push(notSupported('roleRef.apiGroup', ref.apiGroup ?? '', [RBAC_GROUP]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(str(ref.kind))) errs.push(notSupported('roleRef.kind', ref.kind ?? '', kinds));
  const roleName = str(ref.name);
  if (!roleName) errs.push(required('roleRef.name'));
  else for (const m of nameIsPathSegment(roleName, false)) errs.push(invalid('roleRef.name', roleName, m));
  arrayOf(obj.subjects).forEach((s, i) => {
    errs.push(...validateSubject(s, namespaced, index('subjects', i)));
  });
  return errs;
}

function validateBindingUpdate(obj: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateObjectMetaUpdate(obj.metadata, old.metadata);
  if (!semanticEqual(obj.roleRef, old.roleRef))
    errs.push(invalid('roleRef', obj.roleRef ?? null, 'cannot change roleRef'));
  return errs;
}

/** Roles and ClusterRoles have no printer upstream: the default Name / Created At table. */
const roleTable: TablePrinter = { columns: DEFAULT_TABLE_COLUMNS, cells: defaultTableCells };

function subjectsOf(obj: KubeObject): [string, string, string] {
  const users: string[] = [];
  const groups: string[] = [];
  const sas: string[] = [];
  for (const s of arrayOf(obj.subjects)) {
    if (s.kind === 'User') users.push(str(s.name));
    else if (s.kind === 'Group') groups.push(str(s.name));
    else if (s.kind === 'ServiceAccount') sas.push(`${str(s.namespace)}/${str(s.name)}`);
  }
  return [users.join(', '), groups.join(', '), sas.join(', ')];
}

const bindingTable: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Role', 'string'),
    AGE_COLUMN,
    column('Users', 'string', { priority: 1 }),
    column('Groups', 'string', { priority: 1 }),
    column('ServiceAccounts', 'string', { priority: 1 }),
  ],
  cells(obj, now) {
    const ref = recordOf(obj.roleRef);
    return [
      obj.metadata?.name ?? '',
      `${str(ref.kind)}/${str(ref.name)}`,
      translateTimestampSince(obj.metadata?.creationTimestamp, now),
      ...subjectsOf(obj),
    ];
  },
};

export function roleStrategy(clusterScoped: boolean): Strategy {
  const validate = clusterScoped ? validateClusterRole : validateRole;
  return {
    validateCreate: (obj) => dedupe(validate(obj)),
    validateUpdate: (obj, old) =>
      dedupe([...validateObjectMetaUpdate(obj.metadata, old.metadata), ...validate(obj)]),
    table: roleTable,
  };
}

export function roleBindingStrategy(clusterScoped: boolean): Strategy {
  return {
    default: defaultBinding,
    validateCreate: (obj) => dedupe(validateBinding(obj, !clusterScoped)),
    validateUpdate: (obj, old) =>
      dedupe([...validateBinding(obj, !clusterScoped), ...validateBindingUpdate(obj, old)]),
    table: bindingTable,
  };
}
