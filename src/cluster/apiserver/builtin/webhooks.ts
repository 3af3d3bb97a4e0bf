/**
 * admissionregistration.k8s.io/v1 Mutating/ValidatingWebhookConfigurations: defaults,
 * validation (v1 create rules), generation bumps on webhook changes, printer.
 */

import { translateTimestampSince } from '../../../kube/duration.ts';
import { isObject, semanticEqual } from '../../../lib/json.ts';
import type { FieldError, KubeObject, Strategy, TablePrinter } from '../types.ts';
import {
  AGE_COLUMN,
  arrayOf,
  column,
  ensureRecord,
  type Json,
  NAME_COLUMN,
  recordOf,
  str,
} from './common.ts';
import {
  child,
  dedupe,
  duplicate,
  forbidden,
  index,
  invalid,
  notSupported,
  required,
} from './field-errors.ts';
import { validateLabelSelector } from './selector.ts';
import {
  isDNS1035Label,
  isDNS1123Subdomain,
  nameIsDNSSubdomain,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from './validation.ts';

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const SIDE_EFFECTS = ['None', 'NoneOnDryRun'];
const REINVOCATION_POLICIES = ['IfNeeded', 'Never'];
const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const REVIEW_VERSIONS = ['v1', 'v1beta1'];

function defaultWebhook(hook: Json, mutating: boolean): void {
  hook.failurePolicy ??= 'Fail';
  hook.matchPolicy ??= 'Equivalent';
  if (!isObject(hook.namespaceSelector)) hook.namespaceSelector = {};
  if (!isObject(hook.objectSelector)) hook.objectSelector = {};
  hook.timeoutSeconds ??= 10;
  if (mutating) hook.reinvocationPolicy ??= 'Never';
  for (const rule of arrayOf(hook.rules)) if (isObject(rule)) rule.scope ??= '*';
  const service = recordOf(recordOf(hook.clientConfig).service);
  if (isObject(recordOf(hook.clientConfig).service)) service.port ??= 443;
}

function isFullyQualifiedName(name: string, path: string): FieldError[] {
  if (!name) return [required(path)];
  const errs = isDNS1123Subdomain(name);
  if (errs.length > 0) return [invalid(path, name, errs.join(','))];
  if (name.split('.').length < 3)
    return [invalid(path, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

/** validateRuleWithOperations (shared with ValidatingAdmissionPolicies' resource rules). */
export function validateRule(rule: Json, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const ops = arrayOf<string>(rule.operations);
  if (ops.length === 0) errs.push(required(child(path, 'operations')));
  if (ops.length > 1 && ops.includes('*'))
    errs.push(
      invalid(child(path, 'operations'), ops, "if '*' is present, must not specify other operations"),
    );
  ops.forEach((op, i) => {
    if (!OPERATIONS.includes(String(op)))
      errs.push(notSupported(index(child(path, 'operations'), i), op, OPERATIONS));
  });
  for (const f of ['apiGroups', 'apiVersions', 'resources'])
    if (arrayOf(rule[f]).length === 0) errs.push(required(child(path, f)));
  if (rule.scope != null && !SCOPES.includes(str(rule.scope)))
    errs.push(notSupported(child(path, 'scope'), rule.scope, SCOPES));
  return errs;
}

function validateClientConfig(cc: Json, path: string): FieldError[] {
  const hasURL = cc.url != null;
  const hasService = cc.service != null;
  if (hasURL === hasService) return [required(path, 'exactly one of url or service is required')];
  if (hasURL) {
    const p = child(path, 'url');
    let u: URL;
    try {
      u = new URL(str(cc.url));
    } catch {
      return [invalid(p, cc.url, 'host must be specified')];
    }
    const errs: FieldError[] = [];
    if (u.protocol !== 'https:') errs.push(invalid(p, cc.url, "'https' is the only allowed URL scheme"));
    if (!u.hostname) errs.push(invalid(p, cc.url, 'host must be specified'));
    if (u.username || u.password)
      errs.push(invalid(p, cc.url, 'user information is not permitted in the URL'));
    if (u.hash) errs.push(invalid(p, cc.url, 'fragments are not permitted in the URL'));
    if (u.search) errs.push(invalid(p, cc.url, 'query parameters are not permitted in the URL'));
    return errs;
  }
  const svc = recordOf(cc.service);
  const p = child(path, 'service');
  const errs: FieldError[] = [];
  if (!str(svc.name)) errs.push(required(child(p, 'name'), 'service name is required'));
  if (!str(svc.namespace)) errs.push(required(child(p, 'namespace'), 'service namespace is required'));
  const port = svc.port;
  if (typeof port === 'number' && (port < 1 || port > 65535)) {
    errs.push(invalid(child(p, 'port'), port, 'port is not valid: must be between 1 and 65535, inclusive'));
  }
  if (svc.path != null && !str(svc.path).startsWith('/'))
    errs.push(invalid(child(p, 'path'), svc.path, "must start with a '/'"));
  return errs;
}

function validateReviewVersions(versions: unknown, path: string): FieldError[] {
  const list = arrayOf<string>(versions);
  if (list.length === 0) return [required(path, `must specify one of ${REVIEW_VERSIONS.join(', ')}`)];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  list.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(invalid(index(path, i), v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const m of isDNS1035Label(String(v))) errs.push(invalid(index(path, i), v, m));
  });
  if (!list.some((v) => REVIEW_VERSIONS.includes(v)))
    errs.push(invalid(path, list, `must include at least one of ${REVIEW_VERSIONS.join(', ')}`));
  return errs;
}

function validateWebhook(hook: Json, path: string, mutating: boolean): FieldError[] {
  const errs = isFullyQualifiedName(str(hook.name), child(path, 'name'));
  arrayOf(hook.rules).forEach((r, i) => {
    errs.push(...validateRule(r, index(child(path, 'rules'), i)));
  });
  if (hook.failurePolicy != null && !FAILURE_POLICIES.includes(str(hook.failurePolicy))) {
    errs.push(notSupported(child(path, 'failurePolicy'), hook.failurePolicy, FAILURE_POLICIES));
  }
  if (hook.matchPolicy != null && !MATCH_POLICIES.includes(str(hook.matchPolicy))) {
    errs.push(notSupported(child(path, 'matchPolicy'), hook.matchPolicy, MATCH_POLICIES));
  }
  if (hook.sideEffects == null)
    errs.push(required(child(path, 'sideEffects'), `must specify one of ${SIDE_EFFECTS.join(', ')}`));
  else if (!SIDE_EFFECTS.includes(str(hook.sideEffects)))
    errs.push(notSupported(child(path, 'sideEffects'), hook.sideEffects, SIDE_EFFECTS));
  const timeout = hook.timeoutSeconds;
  if (typeof timeout === 'number' && (timeout > 30 || timeout < 1)) {
    errs.push(
      invalid(child(path, 'timeoutSeconds'), timeout, 'the timeout value must be between 1 and 30 seconds'),
    );
  }
  errs.push(...validateLabelSelector(hook.namespaceSelector, child(path, 'namespaceSelector')));
  errs.push(...validateLabelSelector(hook.objectSelector, child(path, 'objectSelector')));
  errs.push(...validateClientConfig(recordOf(hook.clientConfig), child(path, 'clientConfig')));
  if (
    mutating &&
    hook.reinvocationPolicy != null &&
    !REINVOCATION_POLICIES.includes(str(hook.reinvocationPolicy))
  ) {
    errs.push(
      notSupported(child(path, 'reinvocationPolicy'), hook.reinvocationPolicy, REINVOCATION_POLICIES),
    );
  }
  if (!mutating && hook.reinvocationPolicy != null)
    errs.push(forbidden(child(path, 'reinvocationPolicy'), 'not allowed for validating webhooks'));
  errs.push(...validateReviewVersions(hook.admissionReviewVersions, child(path, 'admissionReviewVersions')));
  return errs;
}

function validateConfiguration(obj: KubeObject, mutating: boolean): FieldError[] {
  const errs = validateObjectMeta(obj.metadata, false, nameIsDNSSubdomain);
  const names = new Set<string>();
  arrayOf(obj.webhooks).forEach((hook, i) => {
    const p = index('webhooks', i);
    errs.push(...validateWebhook(hook, p, mutating));
    const name = str(hook.name);
    if (name) {
      if (names.has(name)) errs.push(duplicate(child(p, 'name'), name));
      names.add(name);
    }
  });
  return errs;
}

export const webhookConfigurationTable: TablePrinter = {
  columns: [
    NAME_COLUMN,
    column('Webhooks', 'integer', {
      description: 'Webhooks indicates the number of webhooks registered in this configuration',
    }),
    AGE_COLUMN,
  ],
  cells: (obj, now) => [
    obj.metadata?.name ?? '',
    arrayOf(obj.webhooks).length,
    translateTimestampSince(obj.metadata?.creationTimestamp, now),
  ],
};

export function webhookConfigurationStrategy(mutating: boolean): Strategy {
  return {
    default(obj) {
      for (const hook of arrayOf(obj.webhooks)) if (isObject(hook)) defaultWebhook(hook, mutating);
    },
    prepareForCreate(obj) {
      ensureRecord(obj, 'metadata');
      obj.metadata.generation = 1;
    },
    prepareForUpdate(obj, old) {
      // Generation follows `webhooks`, the closest thing these objects have to a spec.
      const gen = old.metadata?.generation ?? 1;
      obj.metadata.generation = semanticEqual(obj.webhooks, old.webhooks) ? gen : gen + 1;
    },
    validateCreate: (obj) => dedupe(validateConfiguration(obj, mutating)),
    validateUpdate: (obj, old) =>
      dedupe([
        ...validateObjectMetaUpdate(obj.metadata, old.metadata),
        ...validateConfiguration(obj, mutating),
      ]),
    table: webhookConfigurationTable,
  };
}
