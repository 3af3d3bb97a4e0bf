/**
 * Executes a parsed template against JSON data with Go's semantics: truthiness, field access
 * on maps, variables scoped to their block, range over lists/maps (sorted keys)/integers,
 * short-circuit and/or, and the builtin comparison and formatting functions.
 */

import type { Arg, BlockNode, Command, Node, Pipe } from './ast.ts';
import { formatValue, goTypeName, sprint, sprintf, sprintln, type Value } from './format.ts';

/** A template function; throwing is how it reports an error, as a Go func returning (T, error) does. */
export type TemplateFunc = (...args: Value[]) => Value;
export type FuncMap = Readonly<Record<string, TemplateFunc>>;

export class TemplateExecError extends Error {
  override name = 'TemplateExecError';
}

export function truth(v: Value): boolean {
  if (v === undefined || v === null) return false;
  switch (typeof v) {
    case 'boolean':
      return v;
    case 'number':
      return v !== 0;
    case 'string':
      return v.length > 0;
    case 'object':
      return Array.isArray(v) ? v.length > 0 : Object.keys(v as object).length > 0;
    default:
      return true;
  }
}

function basicKind(v: Value): 'nil' | 'string' | 'number' | 'bool' | 'other' {
  if (v === undefined || v === null) return 'nil';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'bool';
  return 'other';
}

function eqOne(a: Value, b: Value): boolean {
  const ka = basicKind(a);
  const kb = basicKind(b);
  if (ka === 'nil' || kb === 'nil') return ka === kb;
  if (ka !== kb) {
    // Stored numbers are json.Number in KWOK, which compares equal to its string form.
    if ((ka === 'number' && kb === 'string') || (ka === 'string' && kb === 'number'))
      return String(a) === String(b);
    throw new TemplateExecError('error calling eq: incompatible types for comparison');
  }
  if (ka === 'other') throw new TemplateExecError(`error calling eq: non-comparable type ${goTypeName(a)}`);
  return a === b;
}

function compare(name: string, a: Value, b: Value): number {
  const ka = basicKind(a);
  const kb = basicKind(b);
  if (ka !== kb || (ka !== 'string' && ka !== 'number')) {
    if (ka === 'bool' && kb === 'bool')
      throw new TemplateExecError(`error calling ${name}: invalid type for comparison`);
    throw new TemplateExecError(`error calling ${name}: incompatible types for comparison`);
  }
  const x = a as string | number;
  const y = b as string | number;
  return x < y ? -1 : x > y ? 1 : 0;
}

function toIndex(v: Value, what: string): number {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return Number(v);
  throw new TemplateExecError(`error calling ${what}: cannot index slice/array with type ${goTypeName(v)}`);
}

function indexOne(item: Value, key: Value): Value {
  if (item === undefined || item === null)
    throw new TemplateExecError('error calling index: index of untyped nil');
  if (Array.isArray(item) || typeof item === 'string') {
    const i = toIndex(key, 'index');
    if (i < 0 || i >= item.length)
      throw new TemplateExecError(`error calling index: index out of range: ${i}`);
    return typeof item === 'string' ? item.charCodeAt(i) : item[i];
  }
  if (typeof item === 'object') {
    if (typeof key !== 'string') {
      throw new TemplateExecError(`error calling index: value has type ${goTypeName(key)}; should be string`);
    }
    const o = item as Record<string, Value>;
    return Object.hasOwn(o, key) ? o[key] : undefined;
  }
  throw new TemplateExecError(`error calling index: can't index item of type ${goTypeName(item)}`);
}

export const BUILTINS: FuncMap = {
  not: (v) => !truth(v),
  eq: (a, ...rest) => {
    if (rest.length === 0) throw new TemplateExecError('error calling eq: missing argument for comparison');
    for (const b of rest) if (eqOne(a, b)) return true;
    return false;
  },
  ne: (a, b) => !eqOne(a, b),
  lt: (a, b) => compare('lt', a, b) < 0,
  le: (a, b) => compare('le', a, b) <= 0,
  gt: (a, b) => compare('gt', a, b) > 0,
  ge: (a, b) => compare('ge', a, b) >= 0,
  len: (v) => {
    if (typeof v === 'string') return Buffer.byteLength(v, 'utf8');
    if (Array.isArray(v)) return v.length;
    if (v !== null && typeof v === 'object') return Object.keys(v).length;
    throw new TemplateExecError(`error calling len: len of type ${goTypeName(v)}`);
  },
  index: (item, ...keys) => {
    let cur = item;
    for (const k of keys) cur = indexOne(cur, k);
    return cur;
  },
  slice: (item, ...idx) => {
    if (!Array.isArray(item) && typeof item !== 'string') {
      throw new TemplateExecError(`error calling slice: can't slice item of type ${goTypeName(item)}`);
    }
    const lo = idx.length > 0 ? toIndex(idx[0], 'slice') : 0;
    const hi = idx.length > 1 ? toIndex(idx[1], 'slice') : item.length;
    if (lo < 0 || hi < lo || hi > item.length) {
      throw new TemplateExecError(`error calling slice: index out of range: ${lo}:${hi}`);
    }
    return item.slice(lo, hi);
  },
  print: (...args) => sprint(args),
  println: (...args) => sprintln(args),
  printf: (fmt, ...args) => sprintf(typeof fmt === 'string' ? fmt : formatValue(fmt, false), args),
  // and/or are evaluated lazily by the executor; these serve calls through a pipeline.
  and: (...args) => {
    for (const a of args) if (!truth(a)) return a;
    return args[args.length - 1];
  },
  or: (...args) => {
    for (const a of args) if (truth(a)) return a;
    return args[args.length - 1];
  },
};

export const BUILTIN_NAMES: ReadonlySet<string> = new Set(Object.keys(BUILTINS));

const BREAK = 1;
const CONTINUE = 2;

class State {
  readonly out: string[] = [];
  readonly vars: [string, Value][] = [];
  readonly funcs: FuncMap;
  line = 0;
  constructor(funcs: FuncMap, root: Value) {
    this.funcs = funcs;
    this.vars.push(['$', root]);
  }

  lookupVar(name: string): Value {
    for (let i = this.vars.length - 1; i >= 0; i--) if (this.vars[i]![0] === name) return this.vars[i]![1];
    throw new TemplateExecError(`undefined variable: ${name}`);
  }

  setVar(name: string, v: Value): void {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i]![0] === name) {
        this.vars[i]![1] = v;
        return;
      }
    }
    throw new TemplateExecError(`undefined variable: ${name}`);
  }

  fn(name: string): TemplateFunc {
    // Own properties only: names like toString must not reach Object.prototype.
    const f = Object.hasOwn(this.funcs, name)
      ? this.funcs[name]
      : Object.hasOwn(BUILTINS, name)
        ? BUILTINS[name]
        : undefined;
    if (!f) throw new TemplateExecError(`function "${name}" not defined`);
    return f;
  }
}

function fieldOf(recv: Value, name: string): Value {
  if (recv === undefined || recv === null) return undefined;
  if (typeof recv === 'object' && !Array.isArray(recv)) {
    const o = recv as Record<string, Value>;
    return Object.hasOwn(o, name) ? o[name] : undefined;
  }
  throw new TemplateExecError(`can't evaluate field ${name} in type ${goTypeName(recv)}`);
}

function walkChain(v: Value, chain: readonly string[]): Value {
  let cur = v;
  for (const f of chain) cur = fieldOf(cur, f);
  return cur;
}

function evalArg(s: State, dot: Value, a: Arg): Value {
  switch (a.t) {
    case 'dot':
      return dot;
    case 'field':
      return walkChain(dot, a.chain);
    case 'var':
      return walkChain(s.lookupVar(a.name), a.chain);
    case 'const':
      return a.value;
    case 'nil':
      return null;
    case 'pipe':
      return walkChain(evalPipe(s, dot, a.pipe, true), a.chain);
    case 'ident':
      return callFunc(s, dot, a.name, NO_ARGS, 0, undefined, false);
  }
}

/** Calls `name` with `args` from index `from` on (a command's first arg is the name itself). */
function callFunc(
  s: State,
  dot: Value,
  name: string,
  args: readonly Arg[],
  from: number,
  piped: Value,
  hasPiped: boolean,
): Value {
  if ((name === 'and' || name === 'or') && !Object.hasOwn(s.funcs, name)) {
    // Short-circuit: stop at the first argument that decides the result.
    const n = args.length - from + (hasPiped ? 1 : 0);
    if (n === 0) throw new TemplateExecError(`wrong number of args for ${name}: want at least 1 got 0`);
    let v: Value;
    for (let i = from; i < from + n; i++) {
      v = i < args.length ? evalArg(s, dot, args[i]!) : piped;
      if (truth(v) === (name === 'or')) return v;
    }
    return v;
  }
  const f = s.fn(name);
  // A plain loop, not slice+map: this runs for every function call of every render.
  const vals: Value[] = [];
  for (let i = from; i < args.length; i++) vals.push(evalArg(s, dot, args[i]!));
  if (hasPiped) vals.push(piped);
  try {
    return f(...vals);
  } catch (e) {
    if (e instanceof TemplateExecError) throw e;
    throw new TemplateExecError(`error calling ${name}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function evalCommand(s: State, dot: Value, cmd: Command, piped: Value, hasPiped: boolean): Value {
  const first = cmd.args[0]!;
  if (first.t === 'ident') return callFunc(s, dot, first.name, cmd.args, 1, piped, hasPiped);
  return evalArg(s, dot, first);
}

const NO_ARGS: readonly Arg[] = [];

/** `nested`: a parenthesized pipeline or a range's, whose declarations are not made here. */
function evalPipe(s: State, dot: Value, pipe: Pipe, nested = false): Value {
  s.line = pipe.line;
  let v: Value;
  let has = false;
  for (const cmd of pipe.cmds) {
    v = evalCommand(s, dot, cmd, v, has);
    has = true;
  }
  if (!nested && pipe.decl.length > 0) {
    if (pipe.assign) s.setVar(pipe.decl[0]!, v);
    else s.vars.push([pipe.decl[0]!, v]);
  }
  return v;
}

function execList(s: State, dot: Value, list: readonly Node[]): number {
  for (const node of list) {
    const r = execNode(s, dot, node);
    if (r !== 0) return r;
  }
  return 0;
}

/** An if/with block: its variables end with it (inline, not a closure: this runs per render). */
function execIf(s: State, dot: Value, node: BlockNode): number {
  const mark = s.vars.length;
  try {
    const v = evalPipe(s, dot, node.pipe);
    if (truth(v)) return execList(s, node.t === 'with' ? v : dot, node.list);
    return node.elseList ? execList(s, dot, node.elseList) : 0;
  } finally {
    s.vars.length = mark;
  }
}

function execNode(s: State, dot: Value, node: Node): number {
  switch (node.t) {
    case 'text':
      s.out.push(node.text);
      return 0;
    case 'action': {
      const v = evalPipe(s, dot, node.pipe);
      // A declaration prints nothing; its variable lives until the enclosing block ends.
      if (node.pipe.decl.length === 0) s.out.push(formatValue(v, true));
      return 0;
    }
    case 'if':
    case 'with':
      return execIf(s, dot, node);
    case 'range': {
      const mark = s.vars.length;
      try {
        return execRange(s, dot, node);
      } finally {
        s.vars.length = mark;
      }
    }
    case 'break':
      return BREAK;
    case 'continue':
      return CONTINUE;
  }
}

function execRange(s: State, dot: Value, node: BlockNode): number {
  const pipe = node.pipe;
  const decl = pipe.decl;
  // Nested: the range's variables are declared per element below, not by the pipeline.
  const val = evalPipe(s, dot, pipe, true);
  let entries: [Value, Value][];
  if (val === undefined || val === null) entries = [];
  else if (Array.isArray(val)) entries = val.map((v, i) => [i, v]);
  else if (typeof val === 'number' && Number.isInteger(val)) {
    entries = [];
    for (let i = 0; i < val; i++) entries.push([i, i]);
  } else if (typeof val === 'object') {
    const o = val as Record<string, Value>;
    entries = Object.keys(o)
      .sort()
      .map((k) => [k, o[k]]);
  } else throw new TemplateExecError(`range can't iterate over ${formatValue(val, false)}`);
  if (entries.length === 0) return node.elseList ? execList(s, dot, node.elseList) : 0;
  const mark = s.vars.length;
  for (const [k, v] of entries) {
    s.vars.length = mark;
    if (decl.length === 1) s.vars.push([decl[0]!, v]);
    else if (decl.length === 2) {
      s.vars.push([decl[0]!, k]);
      s.vars.push([decl[1]!, v]);
    }
    const r = execList(s, v, node.list);
    if (r === BREAK) break;
  }
  return 0;
}

export function executeTree(tree: readonly Node[], data: Value, funcs: FuncMap): string {
  const s = new State(funcs, data);
  try {
    execList(s, data, tree);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    throw new TemplateExecError(`template: _:${s.line}: executing "_": ${msg}`);
  }
  return s.out.join('');
}
