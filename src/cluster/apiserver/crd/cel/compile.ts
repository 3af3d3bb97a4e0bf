/**
 * Compilation of x-kubernetes-validations rules with @bufbuild/cel. That library parses and
 * evaluates but has no type checker, so the checks Kubernetes' compiler makes that users hit
 * most (syntax errors, `undefined field 'x'` against the schema, whether a rule reads oldSelf)
 * are done here on the parsed AST, with cel-go's error layout.
 */

import { type CelResult, parse, plan } from '@bufbuild/cel';
import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import { additionalProps, isEmbedded, isIntOrString, itemsSchema, preservesUnknown } from '../schema-util.ts';
import type { JSONSchemaProps, ValidationRule } from '../types.ts';
import { escapeProperty } from './escape.ts';
import { ruleEnv } from './library.ts';

export type Program = (bindings: Record<string, unknown>) => CelResult;

export interface CompiledRule {
  rule: ValidationRule;
  program?: Program;
  messageProgram?: Program;
  usesOldSelf: boolean;
  /** `compilation failed: ERROR: <input>:1:6: ...` when the rule does not compile. */
  error?: string;
  messageError?: string;
  /** rule.fieldPath as a field path (`spec.foo[bar]`), when it is valid for the schema. */
  fieldPath?: string;
  fieldPathError?: string;
}

/** cel-go's `ERROR: <input>:L:C: msg` followed by the source line and a caret under the column. */
function displayError(source: string, offset: number, message: string): string {
  const before = source.slice(0, offset);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const col = [...source.slice(lineStart, offset)].length;
  const text = (source.split('\n')[line - 1] ?? '').replace(/\t/g, ' ');
  return `ERROR: <input>:${line}:${col + 1}: ${message}\n | ${text}\n | ${'.'.repeat(col)}^`;
}

/** cel-go's rendering of a parse failure (`ERROR: <input>:1:5: Syntax error: …` and a caret line). */
export function syntaxError(source: string, err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  const m = /^<input>:(\d+):(\d+): (.*)$/s.exec(msg);
  if (!m) return `ERROR: <input>:1:1: Syntax error: ${msg}`;
  const lines = source.split('\n');
  const lineNo = Number(m[1]);
  let offset = 0;
  for (let i = 0; i < lineNo - 1; i++) offset += (lines[i]?.length ?? 0) + 1;
  return displayError(source, offset + Number(m[2]) - 1, `Syntax error: ${m[3]}`);
}

/** What the checker knows about an expression: the schema it is typed by, if any. */
interface Typed {
  schema: JSONSchemaProps;
  resourceRoot: boolean;
  /** metadata of a resource root: only name and generateName are visible. */
  meta?: boolean;
}

const META_VISIBLE = new Set(['name', 'generateName']);

class FieldChecker {
  readonly errors: { offset: number; message: string }[] = [];
  usesOldSelf = false;
  private readonly positions: Record<string, number>;
  private readonly self: Typed;

  constructor(positions: Record<string, number>, self: Typed) {
    this.positions = positions;
    this.self = self;
  }

  private fieldOf(t: Typed, field: string, id: bigint): Typed | undefined {
    if (t.meta) {
      if (!META_VISIBLE.has(field)) this.undefinedField(field, id);
      return undefined;
    }
    const s = t.schema;
    if (isIntOrString(s)) return undefined;
    if (t.resourceRoot || isEmbedded(s)) {
      if (field === 'metadata') return { schema: {}, resourceRoot: false, meta: true };
      if (field === 'apiVersion' || field === 'kind') return undefined;
    }
    const props = s.properties;
    if (props) {
      for (const [k, ps] of Object.entries(props)) {
        if (escapeProperty(k) === field) return { schema: ps, resourceRoot: false };
      }
      this.undefinedField(field, id);
      return undefined;
    }
    const ap = additionalProps(s)?.schema;
    if (ap) return { schema: ap, resourceRoot: false };
    if (s.type === 'object' && !preservesUnknown(s)) this.undefinedField(field, id);
    return undefined;
  }

  private undefinedField(field: string, id: bigint): void {
    this.errors.push({ offset: this.positions[id.toString()] ?? 0, message: `undefined field '${field}'` });
  }

  check(e: Expr | undefined, scope: Map<string, Typed | undefined>): Typed | undefined {
    if (!e) return undefined;
    const k = e.exprKind;
    switch (k.case) {
      case 'identExpr': {
        if (scope.has(k.value.name)) return scope.get(k.value.name);
        if (k.value.name === 'self') return this.self;
        if (k.value.name === 'oldSelf') {
          this.usesOldSelf = true;
          return this.self;
        }
        return undefined;
      }
      case 'selectExpr': {
        const operand = this.check(k.value.operand, scope);
        return operand ? this.fieldOf(operand, k.value.field, e.id) : undefined;
      }
      case 'callExpr': {
        const target = this.check(k.value.target, scope);
        const args = k.value.args.map((a) => this.check(a, scope));
        if (k.value.function === '_[_]' && args[0]) {
          const s = args[0].schema;
          if (s.type === 'array') return wrap(itemsSchema(s));
          const ap = additionalProps(s)?.schema;
          if (ap && !s.properties) return wrap(ap);
        }
        void target;
        return undefined;
      }
      case 'comprehensionExpr': {
        const c = k.value;
        const range = this.check(c.iterRange, scope);
        this.check(c.accuInit, scope);
        const inner = new Map(scope);
        let iterType: Typed | undefined;
        if (range?.schema.type === 'array') iterType = wrap(itemsSchema(range.schema));
        inner.set(c.iterVar, iterType);
        inner.set(c.accuVar, undefined);
        this.check(c.loopCondition, inner);
        this.check(c.loopStep, inner);
        const resultScope = new Map(scope);
        resultScope.set(c.accuVar, undefined);
        this.check(c.result, resultScope);
        return undefined;
      }
      case 'listExpr':
        for (const el of k.value.elements) this.check(el, scope);
        return undefined;
      case 'structExpr':
        for (const entry of k.value.entries) {
          if (entry.keyKind.case === 'mapKey') this.check(entry.keyKind.value, scope);
          this.check(entry.value, scope);
        }
        return undefined;
      default:
        return undefined;
    }
  }
}

function wrap(s: JSONSchemaProps | undefined): Typed | undefined {
  return s ? { schema: s, resourceRoot: isEmbedded(s) } : undefined;
}

interface Checked {
  program?: Program;
  usesOldSelf: boolean;
  error?: string;
}

function compileExpression(source: string, schema: JSONSchemaProps, resourceRoot: boolean): Checked {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(source);
  } catch (err) {
    return { usesOldSelf: false, error: syntaxError(source, err) };
  }
  const positions: Record<string, number> = {};
  for (const [id, pos] of Object.entries(parsed.sourceInfo?.positions ?? {})) positions[id] = pos as number;
  const checker = new FieldChecker(positions, { schema, resourceRoot });
  checker.check(parsed.expr, new Map());
  if (checker.errors.length > 0) {
    return {
      usesOldSelf: checker.usesOldSelf,
      error: checker.errors.map((e) => displayError(source, e.offset, e.message)).join('\n'),
    };
  }
  const program = plan(ruleEnv(), parsed) as unknown as Program;
  return { program, usesOldSelf: checker.usesOldSelf };
}

/** Parses a rule's fieldPath (`.spec.foo`, `['x-y']`) against the schema, like ValidFieldPath. */
export function normalizeFieldPath(
  fieldPath: string,
  schema: JSONSchemaProps,
): { path?: string; error?: string } {
  const tokens = fieldPath.match(/'(?:[^'\\]|\\.)*'|[.[\]]|[^.[\]']+/g) ?? [];
  let path = '';
  let s: JSONSchemaProps | undefined = schema;
  const step = (name: string): string | undefined => {
    if (!s) return 'does not refer to a valid field';
    if (s.properties) {
      const next: JSONSchemaProps | undefined = s.properties[name];
      if (!next) return 'does not refer to a valid field';
      path = path === '' ? name : `${path}.${name}`;
      s = next;
      return undefined;
    }
    const ap = additionalProps(s);
    if (ap) {
      path = `${path}[${name}]`;
      s = ap.schema;
      return undefined;
    }
    return 'does not refer to a valid field';
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t === '.') {
      const name = tokens[++i];
      if (name === undefined) return { error: 'unexpected end of JSON path' };
      const err = step(name);
      if (err) return { error: err };
    } else if (t === '[') {
      const quoted = tokens[++i];
      if (quoted === undefined) return { error: 'unexpected end of JSON path' };
      if (quoted.length < 2 || !quoted.startsWith("'") || !quoted.endsWith("'")) {
        return { error: `expected single quoted string but got ${quoted}` };
      }
      const err = step(quoted.slice(1, -1).replace(/\\(.)/g, '$1'));
      if (err) return { error: err };
      if (tokens[++i] !== ']') return { error: `expected ] but got ${tokens[i] ?? ''}` };
    } else return { error: `expected [ or . but got: ${t}` };
  }
  return { path };
}

const cache = new WeakMap<JSONSchemaProps, CompiledRule[]>();

/**
 * Compiles (once per schema node) the x-kubernetes-validations declared on `schema`; `typed`
 * is the structural node the rules see as self (differs for rules inside allOf).
 */
export function compileRules(schema: JSONSchemaProps, resourceRoot: boolean, typed = schema): CompiledRule[] {
  const cached = cache.get(schema);
  if (cached) return cached;
  const compiled = (schema['x-kubernetes-validations'] ?? []).map((rule) => {
    const source = (rule.rule ?? '').trim();
    const c = compileExpression(source, typed, resourceRoot);
    const out: CompiledRule = { rule, usesOldSelf: c.usesOldSelf };
    if (c.program) out.program = c.program;
    if (c.error) out.error = `compilation failed: ${c.error}`;
    const msgExpr = (rule.messageExpression ?? '').trim();
    if (msgExpr !== '') {
      const m = compileExpression(msgExpr, typed, resourceRoot);
      if (m.program) out.messageProgram = m.program;
      if (m.error) out.messageError = `messageExpression compilation failed: ${m.error}`;
    }
    if (rule.fieldPath !== undefined && rule.fieldPath.trim() !== '') {
      const fp = normalizeFieldPath(rule.fieldPath.trim(), typed);
      if (fp.path !== undefined) out.fieldPath = fp.path;
      else out.fieldPathError = fp.error ?? 'invalid';
    }
    return out;
  });
  cache.set(schema, compiled);
  return compiled;
}
