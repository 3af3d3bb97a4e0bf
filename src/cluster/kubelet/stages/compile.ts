/**
 * Stage validation and compilation: every expression and template is parsed once here, so
 * matching and planning only run prepared code. Problems come back as messages naming the
 * field, the way the API server words field errors.
 */

import { Template } from '../gotemplate/index.ts';
import { KWOK_FUNC_NAMES } from './funcs.ts';
import { compileJq, type JqQuery } from './jq.ts';
import type { ExpressionFrom, Stage, StagePatchSpec } from './types.ts';

export type SelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
const OPERATORS: readonly SelectorOperator[] = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

export interface CompiledRequirement {
  query: JqQuery;
  operator: SelectorOperator;
  values: ReadonlySet<string>;
}

export interface CompiledPatch {
  subresource: string;
  root: string;
  template: Template;
  /** Undefined means KWOK's default: strategic for Pods and Nodes, merge otherwise. */
  type: 'json' | 'merge' | 'strategic' | undefined;
  impersonation: { username: string } | undefined;
}

export interface CompiledStage {
  name: string;
  apiGroup: string;
  kind: string;
  /** False for a stage without a selector: KWOK ignores those, so they never match. */
  selectable: boolean;
  matchLabels: readonly [string, string][];
  matchAnnotations: readonly [string, string][];
  matchExpressions: readonly CompiledRequirement[];
  weight: number;
  weightFrom: JqQuery | undefined;
  delay:
    | {
        durationMs: number;
        durationFrom: JqQuery | undefined;
        jitterMs: number | undefined;
        jitterFrom: JqQuery | undefined;
        hasJitter: boolean;
      }
    | undefined;
  patches: readonly CompiledPatch[];
  finalizers: { add: string[]; remove: string[]; empty: boolean } | undefined;
  delete: boolean;
  event: { type: string; reason: string; message: string; messageTemplate: Template | undefined } | undefined;
  immediateNextStage: boolean;
  source: Stage;
}

export interface CompileOptions {
  /** Names of extra template functions the stages may call (supplied again at render time). */
  extraFuncNames?: Iterable<string>;
}

export type CompileResult = { ok: true; stage: CompiledStage } | { ok: false; errors: string[] };

function expressionOf(src: ExpressionFrom | undefined, field: string, errors: string[]): string | undefined {
  if (!src) return undefined;
  if (src.cel) {
    errors.push(`${field}.cel: Unsupported value: CEL expressions are not supported; use jq`);
    return undefined;
  }
  const expr = src.jq?.expression ?? src.expressionFrom;
  if (expr === undefined || expr.trim() === '') {
    errors.push(`${field}.expressionFrom: Required value`);
    return undefined;
  }
  return expr;
}

function jqField(expr: string | undefined, field: string, errors: string[]): JqQuery | undefined {
  if (expr === undefined) return undefined;
  const r = compileJq(expr);
  if (!r.ok) {
    errors.push(`${field}: Invalid value: ${JSON.stringify(expr)}: ${r.error}`);
    return undefined;
  }
  return r.query;
}

function nonNegativeInt(v: unknown, field: string, errors: string[]): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
    errors.push(`${field}: Invalid value: ${JSON.stringify(v)}: must be a non-negative integer`);
    return undefined;
  }
  return v;
}

export function compileStage(stage: Stage, opts: CompileOptions = {}): CompileResult {
  const errors: string[] = [];
  const funcNames = [...KWOK_FUNC_NAMES, ...(opts.extraFuncNames ?? [])];
  const parseTemplate = (text: string, field: string): Template | undefined => {
    const r = Template.parse(text.trim(), funcNames);
    if (!r.ok) {
      errors.push(`${field}: Invalid value: ${r.error}`);
      return undefined;
    }
    return r.value;
  };

  const name = stage?.metadata?.name;
  if (!name) errors.push('metadata.name: Required value');
  const spec = stage?.spec;
  if (!spec || typeof spec !== 'object') {
    return { ok: false, errors: [...errors, 'spec: Required value'] };
  }
  if ((spec as { steps?: unknown }).steps !== undefined) {
    errors.push('spec.steps: Unsupported value: use spec.next');
  }
  const kind = spec.resourceRef?.kind;
  if (!kind) errors.push('spec.resourceRef.kind: Required value');
  const apiGroup = spec.resourceRef?.apiGroup || 'v1';

  const sel = spec.selector;
  const matchLabels = Object.entries(sel?.matchLabels ?? {});
  const matchAnnotations = Object.entries(sel?.matchAnnotations ?? {});
  const matchExpressions: CompiledRequirement[] = [];
  for (const [i, req] of (sel?.matchExpressions ?? []).entries()) {
    const field = `spec.selector.matchExpressions[${i}]`;
    if (req.expression !== undefined && req.key === undefined && req.jq === undefined) {
      errors.push(
        `${field}.expression: Unsupported value: CEL expressions are not supported; use key with a JQ expression`,
      );
      continue;
    }
    const r = req.jq ?? req;
    const operator = r.operator as SelectorOperator;
    const values = r.values ?? [];
    if (!r.key) errors.push(`${field}.key: Required value`);
    if (!OPERATORS.includes(operator)) {
      errors.push(
        `${field}.operator: Unsupported value: ${JSON.stringify(r.operator ?? '')}: supported values: "In", "NotIn", "Exists", "DoesNotExist"`,
      );
    } else if ((operator === 'In' || operator === 'NotIn') && values.length === 0) {
      errors.push(`${field}.values: Required value: must be specified when operator is ${operator}`);
    } else if ((operator === 'Exists' || operator === 'DoesNotExist') && values.length > 0) {
      errors.push(`${field}.values: Forbidden: may not be specified when operator is ${operator}`);
    }
    const query = r.key ? jqField(r.key, `${field}.key`, errors) : undefined;
    if (query && OPERATORS.includes(operator))
      matchExpressions.push({ query, operator, values: new Set(values) });
  }

  const weight = nonNegativeInt(spec.weight, 'spec.weight', errors) ?? 0;
  const weightFrom = jqField(
    expressionOf(spec.weightFrom, 'spec.weightFrom', errors),
    'spec.weightFrom.expressionFrom',
    errors,
  );

  let delay: CompiledStage['delay'];
  if (spec.delay) {
    const d = spec.delay;
    const durationMs = nonNegativeInt(d.durationMilliseconds, 'spec.delay.durationMilliseconds', errors) ?? 0;
    const jitterMs = nonNegativeInt(
      d.jitterDurationMilliseconds,
      'spec.delay.jitterDurationMilliseconds',
      errors,
    );
    const durationFrom = jqField(
      expressionOf(d.durationFrom, 'spec.delay.durationFrom', errors),
      'spec.delay.durationFrom.expressionFrom',
      errors,
    );
    const jitterFrom = jqField(
      expressionOf(d.jitterDurationFrom, 'spec.delay.jitterDurationFrom', errors),
      'spec.delay.jitterDurationFrom.expressionFrom',
      errors,
    );
    delay = {
      durationMs,
      durationFrom,
      jitterMs,
      jitterFrom,
      hasJitter: d.jitterDurationMilliseconds !== undefined || d.jitterDurationFrom !== undefined,
    };
  }

  const next = spec.next ?? {};
  const patches: CompiledPatch[] = [];
  if (next.statusTemplate !== undefined && next.statusTemplate !== '') {
    // The deprecated status fields are shorthand for one patch rooted at `status`.
    const t = parseTemplate(next.statusTemplate, 'spec.next.statusTemplate');
    if (t) {
      patches.push({
        subresource: next.statusSubresource ?? 'status',
        root: 'status',
        template: t,
        type: undefined,
        impersonation: next.statusPatchAs,
      });
    }
  }
  for (const [i, p] of (next.patches ?? []).entries()) {
    const field = `spec.next.patches[${i}]`;
    const type = (p as StagePatchSpec).type;
    if (type !== undefined && type !== 'json' && type !== 'merge' && type !== 'strategic') {
      errors.push(
        `${field}.type: Unsupported value: ${JSON.stringify(type)}: supported values: "json", "merge", "strategic"`,
      );
    }
    if (!p.template) errors.push(`${field}.template: Required value`);
    const t = p.template ? parseTemplate(p.template, `${field}.template`) : undefined;
    if (t) {
      patches.push({
        subresource: p.subresource ?? '',
        root: p.root ?? '',
        template: t,
        type,
        impersonation: p.impersonation,
      });
    }
  }

  let finalizers: CompiledStage['finalizers'];
  if (next.finalizers) {
    const values = (items: { value?: string }[] | undefined, field: string) =>
      (items ?? []).map((f, i) => {
        if (!f.value) errors.push(`${field}[${i}].value: Required value`);
        return f.value ?? '';
      });
    finalizers = {
      add: values(next.finalizers.add, 'spec.next.finalizers.add'),
      remove: values(next.finalizers.remove, 'spec.next.finalizers.remove'),
      empty: next.finalizers.empty === true,
    };
  }

  let event: CompiledStage['event'];
  if (next.event) {
    const type = next.event.type ?? 'Normal';
    if (type !== 'Normal' && type !== 'Warning') {
      errors.push(
        `spec.next.event.type: Unsupported value: ${JSON.stringify(type)}: supported values: "Normal", "Warning"`,
      );
    }
    const message = next.event.message ?? '';
    event = {
      type,
      reason: next.event.reason ?? '',
      message,
      messageTemplate: message.includes('{{') ? parseTemplate(message, 'spec.next.event.message') : undefined,
    };
  }

  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    stage: {
      name: name!,
      apiGroup,
      kind: kind!,
      selectable: sel !== undefined && sel !== null,
      matchLabels,
      matchAnnotations,
      matchExpressions,
      weight,
      weightFrom,
      delay,
      patches,
      finalizers,
      delete: next.delete === true,
      event,
      immediateNextStage: spec.immediateNextStage === true,
      source: stage,
    },
  };
}

/** Compiles many stages, collecting each failure as `stage <name>: <field error>`. */
export function compileStages(
  stages: readonly Stage[],
  opts: CompileOptions = {},
): { stages: CompiledStage[]; errors: string[] } {
  const out: CompiledStage[] = [];
  const errors: string[] = [];
  for (const s of stages) {
    const r = compileStage(s, opts);
    if (r.ok) out.push(r.stage);
    else for (const e of r.errors) errors.push(`stage ${s?.metadata?.name ?? '<unnamed>'}: ${e}`);
  }
  return { stages: out, errors };
}
