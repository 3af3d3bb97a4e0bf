/**
 * Lexer and parser for Go text/template syntax: text, `{{ }}` actions with `-` trim markers,
 * comments, pipelines, variables, if/else if/else, range (with `$i, $v :=`), with/else with,
 * break/continue. define/template/block are rejected: stage templates never need them.
 */

import type { Arg, BlockNode, Command, Node, Pipe } from './ast.ts';

export class TemplateParseError extends Error {
  override name = 'TemplateParseError';
}

type Tok =
  | { k: 'field'; v: string; adj: boolean }
  | { k: 'var'; v: string }
  | { k: 'dot' }
  | { k: 'ident'; v: string }
  | { k: 'str'; v: string }
  | { k: 'num'; v: number }
  | { k: 'bool'; v: boolean }
  | { k: 'nil' }
  | { k: '(' | ')' | '|' | ',' | ':=' | '=' }
  | { k: 'kw'; v: string };

const KEYWORDS = new Set([
  'if',
  'else',
  'end',
  'range',
  'with',
  'break',
  'continue',
  'define',
  'template',
  'block',
]);
const SPACE = /[ \t\r\n]/;
const TRAILING_SPACE = /[ \t\r\n]+$/;
const LEADING_SPACE = /^[ \t\r\n]+/;

function isIdentChar(c: string | undefined): boolean {
  return c !== undefined && /[A-Za-z0-9_]/.test(c);
}

function decodeQuoted(body: string, quote: string, line: number): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = body[++i];
    switch (e) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'a':
        out += '\x07';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'v':
        out += '\v';
        break;
      case '\\':
      case '"':
      case "'":
        out += e;
        break;
      case 'x':
      case 'u':
      case 'U': {
        const len = e === 'x' ? 2 : e === 'u' ? 4 : 8;
        const hex = body.slice(i + 1, i + 1 + len);
        if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) {
          throw new TemplateParseError(`template: _:${line}: invalid syntax in ${quote}-quoted string`);
        }
        out += String.fromCodePoint(Number.parseInt(hex, 16));
        i += len;
        break;
      }
      default:
        throw new TemplateParseError(`template: _:${line}: invalid escape \\${e ?? ''} in quoted string`);
    }
  }
  return out;
}

function tokenize(src: string, line: number): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  let spaced = true;
  const n = src.length;
  while (i < n) {
    const c = src[i]!;
    if (SPACE.test(c)) {
      i++;
      spaced = true;
      continue;
    }
    const wasSpaced = spaced;
    spaced = false;
    if (c === '(' || c === ')' || c === '|' || c === ',') {
      toks.push({ k: c });
      i++;
    } else if (c === ':' && src[i + 1] === '=') {
      toks.push({ k: ':=' });
      i += 2;
    } else if (c === '=') {
      toks.push({ k: '=' });
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (j < n && src[j] !== '"') j += src[j] === '\\' ? 2 : 1;
      if (j >= n) throw new TemplateParseError(`template: _:${line}: unterminated quoted string`);
      toks.push({ k: 'str', v: decodeQuoted(src.slice(i + 1, j), '"', line) });
      i = j + 1;
    } else if (c === '`') {
      const j = src.indexOf('`', i + 1);
      if (j < 0) throw new TemplateParseError(`template: _:${line}: unterminated raw quoted string`);
      toks.push({ k: 'str', v: src.slice(i + 1, j) });
      i = j + 1;
    } else if (c === "'") {
      let j = i + 1;
      while (j < n && src[j] !== "'") j += src[j] === '\\' ? 2 : 1;
      if (j >= n) throw new TemplateParseError(`template: _:${line}: unterminated character constant`);
      const ch = decodeQuoted(src.slice(i + 1, j), "'", line);
      if ([...ch].length !== 1)
        throw new TemplateParseError(`template: _:${line}: malformed character constant`);
      toks.push({ k: 'num', v: ch.codePointAt(0)! });
      i = j + 1;
    } else if (c === '$') {
      let j = i + 1;
      while (isIdentChar(src[j])) j++;
      toks.push({ k: 'var', v: src.slice(i, j) });
      i = j;
    } else if (c === '.') {
      if (isIdentChar(src[i + 1]) && !/[0-9]/.test(src[i + 1]!)) {
        let j = i + 1;
        while (isIdentChar(src[j])) j++;
        toks.push({ k: 'field', v: src.slice(i + 1, j), adj: !wasSpaced });
        i = j;
      } else if (/[0-9]/.test(src[i + 1] ?? '')) {
        i = lexNumber(src, i, toks, line);
      } else {
        toks.push({ k: 'dot' });
        i++;
      }
    } else if (/[0-9]/.test(c) || ((c === '-' || c === '+') && /[0-9.]/.test(src[i + 1] ?? ''))) {
      i = lexNumber(src, i, toks, line);
    } else if (isIdentChar(c)) {
      let j = i;
      while (isIdentChar(src[j])) j++;
      const word = src.slice(i, j);
      if (word === 'true' || word === 'false') toks.push({ k: 'bool', v: word === 'true' });
      else if (word === 'nil') toks.push({ k: 'nil' });
      else if (KEYWORDS.has(word)) toks.push({ k: 'kw', v: word });
      else toks.push({ k: 'ident', v: word });
      i = j;
    } else {
      throw new TemplateParseError(`template: _:${line}: unexpected "${c}" in command`);
    }
  }
  return toks;
}

function lexNumber(src: string, start: number, toks: Tok[], line: number): number {
  const m = /^[+-]?(0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(\d[\d_]*)?(\.\d*)?([eE][+-]?\d+)?)/.exec(
    src.slice(start),
  );
  const text = m?.[0] ?? '';
  if (text === '' || text === '+' || text === '-' || isIdentChar(src[start + text.length])) {
    throw new TemplateParseError(
      `template: _:${line}: bad number syntax: "${src.slice(start).split(/[ \t\r\n)|]/)[0]}"`,
    );
  }
  const clean = text.replace(/_/g, '');
  const sign = clean.startsWith('-') ? -1 : 1;
  const body = clean.replace(/^[+-]/, '');
  const v = /^0[xXoObB]/.test(body) ? Number(body) : Number.parseFloat(body);
  toks.push({ k: 'num', v: sign * v });
  return start + text.length;
}

class Cursor {
  i = 0;
  readonly toks: Tok[];
  readonly line: number;
  /** Variables in scope, checked at parse time as Go does. */
  readonly scope: string[];
  constructor(toks: Tok[], line: number, scope: string[]) {
    this.toks = toks;
    this.line = line;
    this.scope = scope;
  }
  peek(): Tok | undefined {
    return this.toks[this.i];
  }
  next(): Tok | undefined {
    return this.toks[this.i++];
  }
  fail(msg: string): never {
    throw new TemplateParseError(`template: _:${this.line}: ${msg}`);
  }
}

function parseChain(c: Cursor): string[] {
  const chain: string[] = [];
  for (let t = c.peek(); t?.k === 'field' && t.adj; t = c.peek()) {
    chain.push(t.v);
    c.next();
  }
  return chain;
}

function parseOperand(c: Cursor, funcs: ReadonlySet<string>): Arg | undefined {
  const t = c.peek();
  if (!t) return undefined;
  switch (t.k) {
    case 'field': {
      c.next();
      return { t: 'field', chain: [t.v, ...parseChain(c)] };
    }
    case 'dot':
      c.next();
      return { t: 'dot' };
    case 'var':
      c.next();
      if (!c.scope.includes(t.v)) c.fail(`undefined variable "${t.v}"`);
      return { t: 'var', name: t.v, chain: parseChain(c) };
    case 'ident':
      c.next();
      if (!funcs.has(t.v)) c.fail(`function "${t.v}" not defined`);
      return { t: 'ident', name: t.v };
    case 'str':
    case 'num':
    case 'bool':
      c.next();
      return { t: 'const', value: t.v };
    case 'nil':
      c.next();
      return { t: 'nil' };
    case '(': {
      c.next();
      const pipe = parsePipe(c, funcs, false, true);
      if (c.next()?.k !== ')') c.fail('unclosed left paren');
      return { t: 'pipe', pipe, chain: parseChain(c) };
    }
    default:
      return undefined;
  }
}

function parsePipe(
  c: Cursor,
  funcs: ReadonlySet<string>,
  allowDecl: boolean,
  inParens = false,
  isRange = false,
): Pipe {
  const pipe: Pipe = { decl: [], assign: false, cmds: [], line: c.line };
  if (allowDecl) {
    const save = c.i;
    const a = c.peek();
    if (a?.k === 'var') {
      c.next();
      let b = c.peek();
      const names = [a.v];
      if (b?.k === ',' && isRange) {
        c.next();
        const v2 = c.next();
        if (v2?.k !== 'var') c.fail('range can only initialize variables');
        names.push(v2.v);
        b = c.peek();
      }
      if (b?.k === ':=' || b?.k === '=') {
        c.next();
        pipe.decl = names;
        pipe.assign = b.k === '=';
      } else c.i = save;
    }
  }
  let cmd: Command = { args: [] };
  for (;;) {
    const t = c.peek();
    if (!t || (inParens && t.k === ')')) break;
    if (t.k === '|') {
      c.next();
      if (cmd.args.length === 0) c.fail('missing command');
      pipe.cmds.push(cmd);
      cmd = { args: [] };
      continue;
    }
    const arg = parseOperand(c, funcs);
    if (!arg) c.fail(`unexpected ${describe(t)} in operand`);
    cmd.args.push(arg);
  }
  if (cmd.args.length === 0) c.fail(pipe.cmds.length > 0 ? 'missing command' : 'missing value for command');
  pipe.cmds.push(cmd);
  if (pipe.assign) {
    for (const v of pipe.decl) if (!c.scope.includes(v)) c.fail(`undefined variable "${v}"`);
  } else c.scope.push(...pipe.decl);
  // A non-function value cannot take arguments, in the first command or after a pipe.
  for (const [i, k] of pipe.cmds.entries()) {
    const first = k.args[0]!;
    if (first.t === 'nil' && k.args.length === 1) c.fail('nil is not a command');
    if (first.t !== 'ident' && (k.args.length > 1 || i > 0))
      c.fail(`can't give argument to non-function ${argText(first)}`);
  }
  return pipe;
}

function argText(a: Arg): string {
  switch (a.t) {
    case 'field':
      return `.${a.chain.join('.')}`;
    case 'var':
      return a.name + (a.chain.length ? `.${a.chain.join('.')}` : '');
    case 'dot':
      return '.';
    case 'const':
      return JSON.stringify(a.value);
    default:
      return a.t;
  }
}

function describe(t: Tok): string {
  if ('v' in t) return `"${String(t.v)}"`;
  return `"${t.k}"`;
}

interface Frame {
  kind: 'root' | 'if' | 'with' | 'range';
  node: BlockNode | undefined;
  list: Node[];
  inElse: boolean;
  /** Opened by `else if`/`else with`: closed by the same `end` as its parent. */
  chained: boolean;
  line: number;
  /** Scope length when the block opened; its variables go out of scope at {{end}}. */
  varMark: number;
}

/**
 * Parses a template into its tree. `funcs` names the functions the template may call; an
 * unknown name is a parse error, as in Go.
 */
export function parseTemplate(text: string, funcs: ReadonlySet<string>): Node[] {
  const root: Frame = {
    kind: 'root',
    node: undefined,
    list: [],
    inElse: false,
    chained: false,
    line: 1,
    varMark: 0,
  };
  const scope: string[] = ['$'];
  const stack: Frame[] = [root];
  let pos = 0;
  let line = 1;
  let trimNext = false;
  const top = () => stack[stack.length - 1]!;
  const emitText = (s: string) => {
    if (s !== '') top().list.push({ t: 'text', text: s });
  };

  for (;;) {
    const open = text.indexOf('{{', pos);
    let chunk = open < 0 ? text.slice(pos) : text.slice(pos, open);
    if (trimNext) chunk = chunk.replace(LEADING_SPACE, '');
    if (open < 0) {
      emitText(chunk);
      break;
    }
    line += countNewlines(text, pos, open);
    let start = open + 2;
    const trimLeft = text[start] === '-' && SPACE.test(text[start + 1] ?? '');
    if (trimLeft) {
      chunk = chunk.replace(TRAILING_SPACE, '');
      start += 1;
    }
    emitText(chunk);
    const close = findClose(text, start, line);
    const trimRight = text[close - 1] === '-' && SPACE.test(text[close - 2] ?? '');
    const body = text.slice(start, trimRight ? close - 1 : close);
    const actionLine = line;
    line += countNewlines(text, start, close);
    pos = close + 2;
    trimNext = trimRight;

    const trimmed = body.trim();
    if (trimmed.startsWith('/*')) {
      if (!trimmed.endsWith('*/'))
        throw new TemplateParseError(`template: _:${actionLine}: unclosed comment`);
      continue;
    }
    const c: Cursor = new Cursor(tokenize(body, actionLine), actionLine, scope);
    const first = c.peek();
    if (first?.k !== 'kw') {
      if (!first) c.fail('missing value for command');
      top().list.push({ t: 'action', pipe: parsePipe(c, funcs, true) });
      continue;
    }
    c.next();
    switch (first.v) {
      case 'if':
      case 'with':
      case 'range': {
        const varMark = scope.length;
        const pipe = parsePipe(c, funcs, true, false, first.v === 'range');
        const node: BlockNode = { t: first.v, pipe, list: [], elseList: undefined };
        top().list.push(node);
        stack.push({
          kind: first.v,
          node,
          list: node.list,
          inElse: false,
          chained: false,
          line: actionLine,
          varMark,
        });
        break;
      }
      case 'else': {
        const f = top();
        if (f.kind === 'root' || !f.node) c.fail('unexpected {{else}}');
        if (f.inElse) c.fail('expected end; found {{else}}');
        f.node.elseList = [];
        f.inElse = true;
        f.list = f.node.elseList;
        const kw = c.peek();
        if (kw?.k === 'kw' && (kw.v === 'if' || kw.v === 'with')) {
          if (kw.v !== f.kind) c.fail(`unexpected {{else ${kw.v}}} in {{${f.kind}}}`);
          c.next();
          const varMark = scope.length;
          const pipe = parsePipe(c, funcs, true);
          const node: BlockNode = { t: kw.v, pipe, list: [], elseList: undefined };
          f.list.push(node);
          stack.push({
            kind: kw.v,
            node,
            list: node.list,
            inElse: false,
            chained: true,
            line: actionLine,
            varMark,
          });
        } else if (c.peek()) c.fail('unexpected tokens after else');
        break;
      }
      case 'end': {
        if (c.peek()) c.fail('unexpected tokens after end');
        if (stack.length === 1) c.fail('unexpected {{end}}');
        let f = stack.pop()!;
        while (f.chained) f = stack.pop()!;
        scope.length = f.varMark;
        break;
      }
      case 'break':
      case 'continue': {
        if (!stack.some((f) => f.kind === 'range')) c.fail(`{{${first.v}}} outside {{range}}`);
        top().list.push({ t: first.v, line: actionLine });
        break;
      }
      default:
        c.fail(`{{${first.v}}} is not supported in stage templates`);
    }
  }
  if (stack.length > 1) {
    const f = stack[stack.length - 1]!;
    throw new TemplateParseError(`template: _:${f.line}: unexpected EOF (unclosed {{${f.kind}}})`);
  }
  return root.list;
}

function countNewlines(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (s.charCodeAt(i) === 10) n++;
  return n;
}

/** Index of the `}}` closing an action that starts at `from`, skipping quoted text. */
function findClose(s: string, from: number, line: number): number {
  let i = from;
  while (i < s.length) {
    const c = s[i];
    if (c === '"' || c === "'") {
      i++;
      while (i < s.length && s[i] !== c) i += s[i] === '\\' ? 2 : 1;
      i++;
    } else if (c === '`') {
      const j = s.indexOf('`', i + 1);
      if (j < 0) break;
      i = j + 1;
    } else if (c === '/' && s[i + 1] === '*') {
      const j = s.indexOf('*/', i + 2);
      if (j < 0) break;
      i = j + 2;
    } else if (c === '}' && s[i + 1] === '}') return i;
    else i++;
  }
  throw new TemplateParseError(`template: _:${line}: unclosed action`);
}
