/**
 * ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding validation, as
 * pkg/apis/admissionregistration/validation/validation.go (`validateValidatingAdmissionPolicySpec`,
 * `validateValidatingAdmissionPolicyBindingSpec`, `validateParamRef`, `validateValidationActions`)
 * writes it: failure policy, paramKind, matchConstraints with at least one resource rule,
 * matchConditions, variables, validations or auditAnnotations, and each expression compiling
 * (`compilation failed: ERROR: <input>:1:5: Syntax error: …`); a binding's policy name, paramRef
 * (name xor selector, parameterNotFoundAction) and validation actions (not both Deny and Warn).
 *
 * Expressions are parsed, not type-checked: the CEL engine here is dynamically typed, so an
 * undeclared field or function is found when the expression runs, not when it is stored.
 */
import { parse } from '@bufbuild/cel';
import { isObject } from '../../../lib/json.ts';
import { syntaxError } from '../crd/cel/compile.ts';
import { CEL_RESERVED } from '../crd/cel/escape.ts';
import type { FieldError, KubeObject, Strategy } from '../types.ts';
import { arrayOf, type Json, recordOf, str } from './common.ts';
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
  isQualifiedName,
  isValidPathSegmentName,
  nameIsDNSSubdomain,
} from './validation.ts';
import { validateRule } from './webhooks.ts';

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge', 'Unauthorized'];
const ACTIONS = ['Audit', 'Deny', 'Warn'];
const MAX_AUDIT_ANNOTATIONS = 20;
const MAX_AUDIT_VALUE_EXPRESSION = 5 * 1024;

/** An expression that does not parse: the Invalid error cel-go's compiler gives. */
function compileErrors(expression: string, path: string): FieldError[] {
  try {
    parse(expression);
    return [];
  } catch (err) {
    return [invalid(path, expression, `compilation failed: ${syntaxError(expression, err)}`)];
  }
}

function validateMatchResources(m: unknown, path: string): FieldError[] {
  if (!isObject(m)) return [];
  const errs: FieldError[] = [];
  if (m.matchPolicy == null) errs.push(required(child(path, 'matchPolicy')));
  else if (!MATCH_POLICIES.includes(str(m.matchPolicy)))
    errs.push(notSupported(child(path, 'matchPolicy'), m.matchPolicy, MATCH_POLICIES));
  for (const sel of ['namespaceSelector', 'objectSelector']) {
    if (m[sel] == null) errs.push(required(child(path, sel)));
    else errs.push(...validateLabelSelector(m[sel], child(path, sel)));
  }
  for (const list of ['resourceRules', 'excludeResourceRules']) {
    arrayOf(m[list]).forEach((rule, i) => {
      const p = index(child(path, list), i);
      const seen = new Set<string>();
      arrayOf<string>(rule.resourceNames).forEach((name, j) => {
        const np = index(child(p, 'resourceNames'), j);
        for (const msg of isValidPathSegmentName(name)) errs.push(invalid(np, name, msg));
        if (seen.has(name)) errs.push(duplicate(np, name));
        seen.add(name);
      });
      errs.push(...validateRule(rule, p));
    });
  }
  return errs;
}

function validateParamKind(kind: Json, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const apiVersion = str(kind.apiVersion);
  if (!apiVersion) errs.push(required(child(path, 'apiVersion')));
  else {
    const parts = apiVersion.split('/');
    if (parts.length > 2)
      errs.push(
        invalid(child(path, 'apiVersion'), apiVersion, `unexpected GroupVersion string: ${apiVersion}`),
      );
    else {
      const [group, version] = parts.length === 2 ? parts : ['', parts[0]!];
      if (group) {
        const e = isDNS1123Subdomain(group!);
        if (e.length) errs.push(invalid(child(path, 'apiVersion'), group, e.join(',')));
      }
      if (!version) errs.push(invalid(child(path, 'apiVersion'), apiVersion, 'version must be specified'));
      else {
        const e = isDNS1035Label(version);
        if (e.length) errs.push(invalid(child(path, 'apiVersion'), version, e.join(',')));
      }
    }
  }
  const k = str(kind.kind);
  if (!k) errs.push(required(child(path, 'kind')));
  else {
    const e = isDNS1035Label(k.toLowerCase());
    if (e.length)
      errs.push(
        invalid(child(path, 'kind'), k, `may have mixed case, but should otherwise match: ${e.join(',')}`),
      );
  }
  return errs;
}

function validatePolicySpec(name: string, spec: Json): FieldError[] {
  const errs: FieldError[] = [];
  if (spec.failurePolicy == null) errs.push(required('spec.failurePolicy'));
  else if (!FAILURE_POLICIES.includes(str(spec.failurePolicy)))
    errs.push(notSupported('spec.failurePolicy', spec.failurePolicy, FAILURE_POLICIES));
  if (spec.paramKind != null) errs.push(...validateParamKind(recordOf(spec.paramKind), 'spec.paramKind'));
  if (spec.matchConstraints == null) errs.push(required('spec.matchConstraints'));
  else {
    errs.push(...validateMatchResources(spec.matchConstraints, 'spec.matchConstraints'));
    if (arrayOf(recordOf(spec.matchConstraints).resourceRules).length === 0)
      errs.push(required('spec.matchConstraints.resourceRules'));
  }
  const conditions = arrayOf(spec.matchConditions);
  if (conditions.length > 64)
    errs.push(invalid('spec.matchConditions', conditions.length, 'must have at most 64 items'));
  const conditionNames = new Set<string>();
  conditions.forEach((c, i) => {
    const p = index('spec.matchConditions', i);
    const expr = str(c.expression).trim();
    if (!expr) errs.push(required(child(p, 'expression')));
    else errs.push(...compileErrors(expr, child(p, 'expression')));
    const n = str(c.name);
    if (!n) errs.push(required(child(p, 'name')));
    else for (const m of isQualifiedName(n)) errs.push(invalid(child(p, 'name'), n, m));
    if (n && conditionNames.has(n)) errs.push(duplicate(child(p, 'name'), n));
    conditionNames.add(n);
  });
  arrayOf(spec.variables).forEach((v, i) => {
    const p = index('spec.variables', i);
    const n = str(v.name);
    if (!n.trim()) errs.push(required(child(p, 'name'), 'name is not specified'));
    else if (!/^[_a-zA-Z][_a-zA-Z0-9]*$/.test(n) || CEL_RESERVED.has(n))
      errs.push(invalid(child(p, 'name'), n, 'name is not a valid CEL identifier'));
    const expr = str(v.expression);
    if (!expr.trim()) errs.push(required(child(p, 'expression'), 'expression is not specified'));
    else errs.push(...compileErrors(expr, child(p, 'expression')));
  });
  const validations = arrayOf(spec.validations);
  const audits = arrayOf(spec.auditAnnotations);
  if (validations.length === 0 && audits.length === 0) {
    const msg = 'validations or auditAnnotations must contain at least one item';
    errs.push(required('spec.validations', msg), required('spec.auditAnnotations', msg));
    return errs;
  }
  validations.forEach((v, i) => {
    const p = index('spec.validations', i);
    const expr = str(v.expression);
    if (!expr.trim()) errs.push(required(child(p, 'expression'), 'expression is not specified'));
    else errs.push(...compileErrors(expr, child(p, 'expression')));
    const me = str(v.messageExpression);
    if (me && !me.trim())
      errs.push(invalid(child(p, 'messageExpression'), me, 'must be non-empty if specified'));
    else if (me.trim()) errs.push(...compileErrors(me, child(p, 'messageExpression')));
    const msg = str(v.message);
    if (msg && !msg.trim())
      errs.push(invalid(child(p, 'message'), msg, 'message must be non-empty if specified'));
    else if (/[\n\r]/.test(msg.trim()))
      errs.push(invalid(child(p, 'message'), msg, 'message must not contain line breaks'));
    if (v.reason != null && !REASONS.includes(str(v.reason)))
      errs.push(notSupported(child(p, 'reason'), v.reason, REASONS));
  });
  if (audits.length > MAX_AUDIT_ANNOTATIONS)
    errs.push(
      invalid(
        'spec.auditAnnotations',
        audits,
        `must not have more than ${MAX_AUDIT_ANNOTATIONS} auditAnnotations`,
      ),
    );
  const keys = new Set<string>();
  audits.forEach((a, i) => {
    const p = index('spec.auditAnnotations', i);
    const key = str(a.key);
    if (name)
      for (const m of isQualifiedName(`${name}/${key}`))
        errs.push(invalid(child(p, 'key'), `${name}/${key}`, m));
    else errs.push(invalid(child(p, 'key'), key, 'requires metadata.name be non-empty'));
    const value = str(a.valueExpression).trim();
    if (!value) errs.push(required(child(p, 'valueExpression'), 'valueExpression is not specified'));
    else if (value.length > MAX_AUDIT_VALUE_EXPRESSION)
      errs.push(
        required(
          child(p, 'valueExpression'),
          `must not exceed ${MAX_AUDIT_VALUE_EXPRESSION} bytes in length`,
        ),
      );
    else errs.push(...compileErrors(value, child(p, 'valueExpression')));
    if (keys.has(key)) errs.push(duplicate(child(p, 'key'), key));
    keys.add(key);
  });
  return errs;
}

function validateParamRef(ref: unknown, path: string): FieldError[] {
  if (!isObject(ref)) return [];
  const errs: FieldError[] = [];
  const name = str(ref.name);
  const exclusive = 'name and selector are mutually exclusive';
  if (name) {
    for (const m of isValidPathSegmentName(name)) errs.push(invalid(child(path, 'name'), name, m));
    if (ref.selector != null) errs.push(forbidden(child(path, 'name'), exclusive));
  }
  if (ref.selector != null) {
    errs.push(...validateLabelSelector(ref.selector, child(path, 'selector')));
    if (name) errs.push(forbidden(child(path, 'selector'), exclusive));
  }
  if (!name && ref.selector == null) errs.push(required(path, 'one of name or selector must be specified'));
  const action = str(ref.parameterNotFoundAction);
  if (!action) errs.push(required(child(path, 'parameterNotFoundAction')));
  else if (action !== 'Deny' && action !== 'Allow')
    errs.push(notSupported(child(path, 'parameterNotFoundAction'), action, ['Deny', 'Allow']));
  return errs;
}

function validateActions(actions: unknown, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const list = arrayOf<string>(actions);
  const seen = new Set<string>();
  list.forEach((a, i) => {
    if (!ACTIONS.includes(a)) errs.push(notSupported(index(path, i), a, ACTIONS));
    if (seen.has(a)) errs.push(duplicate(index(path, i), a));
    seen.add(a);
  });
  if (seen.has('Deny') && seen.has('Warn'))
    errs.push(
      invalid(
        path,
        list,
        'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
      ),
    );
  if (seen.size === 0) errs.push(required(path, 'at least one validation action is required'));
  return errs;
}

function validateBindingSpec(spec: Json): FieldError[] {
  const errs: FieldError[] = [];
  const policy = str(spec.policyName);
  if (!policy) errs.push(required('spec.policyName'));
  else for (const m of nameIsDNSSubdomain(policy, false)) errs.push(invalid('spec.policyName', policy, m));
  errs.push(...validateParamRef(spec.paramRef, 'spec.paramRef'));
  errs.push(...validateMatchResources(spec.matchResources, 'spec.matchResources'));
  errs.push(...validateActions(spec.validationActions, 'spec.validationActions'));
  return errs;
}

const policyErrors = (obj: KubeObject) => validatePolicySpec(str(obj.metadata.name), recordOf(obj.spec));
const bindingErrors = (obj: KubeObject) => validateBindingSpec(recordOf(obj.spec));

/** The rules the catalog's generic strategy adds for policies (`validatesStatus` stays off). */
export const validatingAdmissionPolicyStrategy: Strategy = {
  validateCreate: (obj) => dedupe(policyErrors(obj)),
  validateUpdate: (obj) => dedupe(policyErrors(obj)),
};

export const validatingAdmissionPolicyBindingStrategy: Strategy = {
  validateCreate: (obj) => dedupe(bindingErrors(obj)),
  validateUpdate: (obj) => dedupe(bindingErrors(obj)),
};
