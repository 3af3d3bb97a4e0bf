/** Parse tree of a Go text/template, the subset KWOK stages use. */

export type Arg =
  | { t: 'dot' }
  | { t: 'field'; chain: string[] }
  | { t: 'var'; name: string; chain: string[] }
  | { t: 'ident'; name: string }
  | { t: 'const'; value: string | number | boolean }
  | { t: 'nil' }
  | { t: 'pipe'; pipe: Pipe; chain: string[] };

export interface Command {
  args: Arg[];
}

export interface Pipe {
  /** Variables declared (`:=`) or assigned (`=`) by this pipeline. */
  decl: string[];
  assign: boolean;
  cmds: Command[];
  line: number;
}

export interface BlockNode {
  t: 'if' | 'with' | 'range';
  pipe: Pipe;
  list: Node[];
  elseList: Node[] | undefined;
}

export type Node =
  | { t: 'text'; text: string }
  | { t: 'action'; pipe: Pipe }
  | BlockNode
  | { t: 'break' | 'continue'; line: number };
