/**
 * A Go text/template engine for KWOK Stage templates.
 *
 * Hand-written because no npm package fits: @ctrl/golang-template has no variables (`$now :=`)
 * or `$` root access, and @mdfriday/text-template only executes asynchronously, ships a
 * minified/obfuscated bundle and took ~300 µs per pod-ready render. Templates here parse once
 * into a tree and execute synchronously over plain JSON.
 */

import type { Node } from './ast.ts';
import { BUILTIN_NAMES, executeTree, type FuncMap } from './exec.ts';
import { parseTemplate, TemplateParseError } from './parse.ts';

export {
  BUILTIN_NAMES,
  BUILTINS,
  type FuncMap,
  TemplateExecError,
  type TemplateFunc,
  truth,
} from './exec.ts';
export type { Value } from './format.ts';
export { formatValue, goQuote, sprint, sprintf } from './format.ts';
export { TemplateParseError } from './parse.ts';

export type Result<T> = { ok: true; value: T } | { ok: false; error: string };

export class Template {
  readonly source: string;
  readonly tree: readonly Node[];
  private constructor(source: string, tree: Node[]) {
    this.source = source;
    this.tree = tree;
  }

  /**
   * Parses `text`. `funcNames` lists the non-builtin functions the template may call; calling
   * any other name is a parse error, as with Go's Funcs() before Parse().
   */
  static parse(text: string, funcNames: Iterable<string> = []): Result<Template> {
    const names = new Set(BUILTIN_NAMES);
    for (const n of funcNames) names.add(n);
    try {
      return { ok: true, value: new Template(text, parseTemplate(text, names)) };
    } catch (e) {
      if (e instanceof TemplateParseError) return { ok: false, error: e.message };
      throw e;
    }
  }

  /** Renders against `data` (dot and `$`); `funcs` supplies the non-builtin functions. */
  execute(data: unknown, funcs: FuncMap = {}): Result<string> {
    try {
      return { ok: true, value: executeTree(this.tree, data, funcs) };
    } catch (e) {
      return { ok: false, error: e instanceof Error ? e.message : String(e) };
    }
  }
}
