/**
 * Evaluation of x-kubernetes-validations over a custom resource, node by node, with
 * kube-apiserver's error shapes: a failed rule is `Invalid value` (or the rule's reason) at the
 * node's path (plus fieldPath), its message / messageExpression / `failed rule: <rule>`;
 * transition rules (those reading oldSelf) run only on update where an old value correlates;
 * errors of unchanged values are ratcheted.
 */

import { isCelError } from '@bufbuild/cel';
import { isObject, jsonEqual } from '../../../../lib/json.ts';
import {
  child,
  duplicate,
  forbidden,
  index,
  internalError,
  invalid,
  key,
  OMIT,
  required,
} from '../../field-errors.ts';
import type { FieldError } from '../../types.ts';
import { additionalProps, correlateItem, isEmbedded, itemsSchema } from '../schema-util.ts';
import type { JSONSchemaProps, ValidationRule } from '../types.ts';
import type { OldValue } from '../value-validation.ts';
import { type CompiledRule, compileRules } from './compile.ts';
import { toCel } from './values.ts';

const NONE: OldValue = { found: false };

function ruleErrorString(rule: ValidationRule): string {
  const msg = (rule.message ?? '').trim();
  return msg !== '' ? msg : (rule.rule ?? '').trim();
}

function ruleMessageOrDefault(rule: ValidationRule): string {
  const msg = (rule.message ?? '').trim();
  return msg !== '' ? msg : `failed rule: ${ruleErrorString(rule)}`;
}

/** cel-go's wording for the runtime errors users see most. */
function celErrorText(message: string): string {
  const noKey = /^field not found: (.*)$/.exec(message);
  if (noKey) return `no such key: ${noKey[1]}`;
  const idx = /^index (-?\d+) out of bounds/.exec(message);
  if (idx) return `index out of bounds: ${idx[1]}`;
  if (message === 'int divide by zero') return 'division by zero';
  if (message === 'int modulus by zero') return 'modulus by zero';
  return message;
}

function errorForReason(
  path: string,
  value: unknown,
  detail: string,
  reason: string | undefined,
): FieldError {
  switch (reason) {
    case 'FieldValueForbidden':
      return forbidden(path, detail);
    case 'FieldValueRequired':
      return required(path, detail);
    case 'FieldValueDuplicate':
      return duplicate(path, value);
    default:
      return invalid(path, value, detail);
  }
}

function evalMessage(c: CompiledRule, bindings: Record<string, unknown>): string | undefined {
  if (!c.messageProgram) return undefined;
  let result: unknown;
  try {
    result = c.messageProgram(bindings);
  } catch {
    return undefined;
  }
  if (isCelError(result) || typeof result !== 'string') return undefined;
  const trimmed = result.trim();
  if (trimmed === '' || trimmed.includes('\n') || trimmed.length > 5 * 1024) return undefined;
  return trimmed;
}

interface Node {
  schema: JSONSchemaProps;
  value: unknown;
  path: string;
  old: OldValue;
  resourceRoot: boolean;
  /** Whether errors here are ratcheted: the nearest correlated value is unchanged. */
  ratchet: boolean;
  /** Off when validating defaults, which Kubernetes evaluates with oldSelf = self but no ratcheting. */
  ratcheting: boolean;
}

function evaluateRules(n: Node, rules: CompiledRule[], errs: FieldError[]): void {
  const s = n.schema;
  const type = s.type ?? '';
  let self: unknown;
  let oldSelf: unknown;
  for (const c of rules) {
    if (c.error) {
      errs.push(invalid(n.path, type, `rule compile error: ${c.error}`));
      continue;
    }
    if (!c.program) continue;
    if (c.usesOldSelf && !n.old.found) continue;
    self ??= toCel(n.value, s, n.resourceRoot);
    if (c.usesOldSelf) oldSelf ??= toCel(n.old.value, s, n.resourceRoot);
    const bindings: Record<string, unknown> = c.usesOldSelf ? { self, oldSelf } : { self };
    let result: unknown;
    try {
      result = c.program(bindings);
    } catch (e) {
      result = { message: (e as Error).message, celError: true };
    }
    const rs = ruleErrorString(c.rule);
    if (isCelError(result) || (isObject(result) && result.celError === true)) {
      const text = celErrorText(String((result as { message: string }).message));
      if (text.startsWith('found no matching overload')) {
        errs.push(
          invalid(
            n.path,
            type,
            `'no such overload': call arguments did not match a supported operator, function or macro signature for rule: ${rs}`,
          ),
        );
      } else errs.push(invalid(n.path, type, `${text} evaluating rule: ${rs}`));
      continue;
    }
    if (result === true) continue;
    if (result !== false) {
      errs.push(invalid(n.path, type, `rule did not evaluate to a bool evaluating rule: ${rs}`));
      continue;
    }
    if (!c.usesOldSelf && n.ratchet) continue;
    const path = c.fieldPath ? child(n.path, c.fieldPath) : n.path;
    const detail = evalMessage(c, bindings) ?? ruleMessageOrDefault(c.rule);
    const value = type === 'object' || type === 'array' ? OMIT : n.value;
    errs.push(errorForReason(path, value, detail, c.rule.reason));
  }
}

function walk(n: Node, errs: FieldError[]): void {
  const s = n.schema;
  if (n.value === null || n.value === undefined) return;
  evaluateRules(n, compileRules(s, n.resourceRoot), errs);
  for (const alt of s.allOf ?? []) {
    if (alt['x-kubernetes-validations']) evaluateRules(n, compileRules(alt, n.resourceRoot, s), errs);
  }
  const x = n.value;
  if (Array.isArray(x)) {
    const items = itemsSchema(s);
    if (!items) return;
    x.forEach((v, i) => {
      const c = n.old.found ? correlateItem(s, v, n.old.value, false) : { found: false };
      const old: OldValue = c.found ? { found: true, value: c.old } : NONE;
      const ratchet = old.found && n.ratcheting ? jsonEqual(v, old.value) : n.ratchet;
      walk(
        {
          ...n,
          schema: items,
          value: v,
          path: index(n.path, i),
          old,
          resourceRoot: isEmbedded(items),
          ratchet,
        },
        errs,
      );
    });
  } else if (isObject(x)) {
    const correlatable = s['x-kubernetes-map-type'] !== 'atomic';
    const oldObj = n.old.found && correlatable && isObject(n.old.value) ? n.old.value : undefined;
    const ap = additionalProps(s)?.schema;
    for (const [k, v] of Object.entries(x)) {
      const prop = s.properties?.[k];
      const sub = prop ?? ap;
      if (!sub) continue;
      const old: OldValue = oldObj && k in oldObj ? { found: true, value: oldObj[k] } : NONE;
      const ratchet = old.found && n.ratcheting ? jsonEqual(v, old.value) : n.ratchet;
      const path = prop ? child(n.path, k) : key(n.path, k);
      walk({ ...n, schema: sub, value: v, path, old, resourceRoot: isEmbedded(sub), ratchet }, errs);
    }
  }
}

/**
 * Evaluates every x-kubernetes-validations rule of `schema` over `obj`. With `old` (an
 * update), transition rules run and errors of unchanged values are ratcheted away.
 */
export function validateRules(
  schema: JSONSchemaProps,
  obj: unknown,
  old?: OldValue,
  resourceRoot = true,
  ratchet = true,
): FieldError[] {
  const errs: FieldError[] = [];
  const o = old ?? NONE;
  try {
    walk(
      {
        schema,
        value: obj,
        path: '',
        old: o,
        resourceRoot,
        ratchet: ratchet && o.found && jsonEqual(obj, o.value),
        ratcheting: ratchet,
      },
      errs,
    );
  } catch (e) {
    errs.push(internalError('', `validation rules could not be evaluated: ${(e as Error).message}`));
  }
  return errs;
}
