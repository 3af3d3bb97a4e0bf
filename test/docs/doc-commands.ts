/**
 * The shell commands the project's documentation tells a reader to run: every fenced
 * `sh`/`bash`/`shell` block and the `$ ` lines of `console` blocks in README.md, the other
 * top-level *.md files, everything under docs/, and the READMEs under config/ and
 * examples/. New documents are covered by being there.
 *
 * A block is split into its commands (a line, its `\` continuations and its here-document),
 * so the test can tell, command by command, what it runs, what it cannot run and why, and
 * what the document says a command prints (its trailing comment).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface DocBlock {
  /** `docs/install.md:88`, the line of the opening fence. */
  where: string;
  file: string;
  /** The block's lines as bash source (a console block: its commands only). */
  script: string;
  /** The words of `<!-- doc-test: … -->` comments just above the fence. */
  marks: string[];
  /** The block's language, lower-cased (`sh`, `yaml`, …). */
  lang: string;
}

/** One command of a block, or a comment line between commands. */
export type DocStep =
  | {
      kind: 'command';
      /** The whole command: continuation lines and here-document included, comments removed. */
      text: string;
      /** Its first line without its comment: how exclusions name it. */
      first: string;
      /** The trailing comment of its first line, without `#` (what the doc says of it). */
      comment: string;
    }
  | { kind: 'comment'; text: string };

const SHELL = new Set(['sh', 'bash', 'shell', 'zsh']);
const SESSION = new Set(['console', 'shell-session']);

/**
 * The Markdown files whose commands are run: top-level *.md, docs/ (recursively), and the
 * READMEs anywhere under config/ and examples/.
 */
export function docFiles(root: string): string[] {
  const top = readdirSync(root)
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(root, f));
  const walk = (dir: string, keep: (name: string) => boolean): string[] =>
    readdirSync(dir).flatMap((f) => {
      const p = join(dir, f);
      if (statSync(p).isDirectory()) return walk(p, keep);
      return keep(f) ? [p] : [];
    });
  const md = (f: string) => f.endsWith('.md');
  const readme = (f: string) => /^README.*\.md$/i.test(f);
  return [
    ...top,
    ...walk(join(root, 'docs'), md),
    ...walk(join(root, 'config'), readme),
    ...walk(join(root, 'examples'), readme),
  ].sort();
}

/** Every fenced block of one Markdown file, shell or not (a shell block's commands: `steps`). */
export function fencedBlocks(root: string, file: string): DocBlock[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const out: DocBlock[] = [];
  let open:
    | { lang: string; line: number; fence: string; indent: number; body: string[]; marks: string[] }
    | undefined;
  lines.forEach((text, i) => {
    const fence = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(text);
    if (!open) {
      if (fence)
        open = {
          lang: (fence[3] ?? '').toLowerCase(),
          line: i + 1,
          fence: fence[2]!,
          indent: fence[1]!.length,
          body: [],
          marks: marksAbove(lines, i),
        };
      return;
    }
    if (fence && fence[2]!.startsWith(open.fence) && text.trim() === fence[2]) {
      const where = `${relative(root, file)}:${open.line}`;
      const script = SESSION.has(open.lang) ? sessionCommands(open.body) : open.body.join('\n');
      out.push({ where, file, script, marks: open.marks, lang: open.lang });
      open = undefined;
      return;
    }
    // A block inside a list item is indented as the item; the shell sees it unindented
    // (a here-document's terminator must start its line).
    const indent = /^ */.exec(text)![0].length;
    open.body.push(text.slice(Math.min(indent, open.indent)));
  });
  return out;
}

/** The shell blocks of one Markdown file (console blocks with at least one command). */
export function shellBlocks(root: string, file: string): DocBlock[] {
  return fencedBlocks(root, file).filter(
    (b) => SHELL.has(b.lang) || (SESSION.has(b.lang) && b.script.trim() !== ''),
  );
}

/** `<!-- doc-test: a b -->` lines right above line `i` (the fence). */
function marksAbove(lines: string[], i: number): string[] {
  const marks: string[] = [];
  for (let j = i - 1; j >= 0; j--) {
    const m = /^\s*<!--\s*doc-test:\s*(.*?)\s*-->\s*$/.exec(lines[j]!);
    if (!m) break;
    marks.unshift(m[1]!);
  }
  return marks;
}

/** The commands of a console transcript: `$ ` lines and their `\` continuations. */
function sessionCommands(body: string[]): string {
  const cmds: string[] = [];
  let continuing = false;
  for (const line of body) {
    if (continuing) cmds.push(line);
    else if (line.startsWith('$ ')) cmds.push(line.slice(2));
    else continue;
    continuing = line.endsWith('\\');
  }
  return cmds.join('\n');
}

/**
 * A line split at its trailing comment: a `#` at the start or after whitespace, outside
 * quotes. (Enough of bash's lexing for documentation: quotes, backslash escapes.)
 */
export function splitComment(line: string): { code: string; comment: string } {
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'") {
      if (c === "'") quote = undefined;
    } else if (c === '\\') {
      i++;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) {
      return { code: line.slice(0, i).trimEnd(), comment: line.slice(i + 1).trim() };
    }
  }
  return { code: line.trimEnd(), comment: '' };
}

/** A block's script as its commands and comment lines, in order. */
export function steps(script: string): DocStep[] {
  const lines = script.split('\n');
  const out: DocStep[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    if (line.trim().startsWith('#')) {
      out.push({ kind: 'comment', text: line.trim() });
      continue;
    }
    const head = splitComment(line);
    const parts = [head.code];
    // `\` continuations: each continued line may carry its own comment only at the end.
    while (parts.at(-1)!.endsWith('\\') && i + 1 < lines.length) {
      parts.push(splitComment(lines[++i]!).code);
    }
    // A here-document: its body, verbatim, up to its terminator.
    const heredoc = /<<(-?)\s*(['"]?)([A-Za-z_]\w*)\2/.exec(parts.join('\n'));
    if (heredoc) {
      const strip = heredoc[1] === '-';
      while (i + 1 < lines.length) {
        const body = lines[++i]!;
        parts.push(body);
        if ((strip ? body.replace(/^\t+/, '') : body) === heredoc[3]) break;
      }
    }
    out.push({ kind: 'command', text: parts.join('\n'), first: head.code.trim(), comment: head.comment });
  }
  return out;
}

/** Bash run before each block: bounds watches and follows, checks what comments promise. */
export const PREAMBLE = `
kubectl() {
  local a streaming= logs=
  for a in "$@"; do
    case "$a" in
      logs) logs=1;;
      -w|--watch|--watch=true|--watch-only|--follow|--follow=true) streaming=1;;
      -f) [ -n "$logs" ] && streaming=1;;
    esac
  done
  if [ -z "$streaming" ]; then command kubectl "$@"; return; fi
  local out err pid
  out=$(mktemp); err=$(mktemp)
  command kubectl "$@" >"$out" 2>"$err" &
  pid=$!
  # Until it has printed a line (or ended by itself), for at most a minute.
  for _ in $(seq 600); do
    if [ -s "$out" ] || ! kill -0 "$pid" 2>/dev/null; then break; fi
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"; wait "$pid" 2>/dev/null || true
    cat "$out"; cat "$err" >&2
    [ -s "$out" ] || { echo "kubectl $*: printed nothing within a minute" >&2; return 1; }
    return 0
  fi
  local rc=0; wait "$pid" || rc=$?
  cat "$out"; cat "$err" >&2
  return "$rc"
}
# kubectl auth can-i … # yes|no: the answer printed (can-i exits 1 for no).
__answers() {
  local want=$1 got rc=0; shift
  got=$("$@") || rc=$?
  echo "$got"
  if [ "$got" != "$want" ] || { [ "$want" = yes ] && [ "$rc" != 0 ]; }; then
    echo "$*: answered '$got' (exit $rc), the document says '$want'" >&2; return 1
  fi
}
# … # prints nothing
__prints_nothing() {
  local got; got=$("$@")
  if [ -n "$got" ]; then echo "$*: printed '$got', the document says nothing" >&2; return 1; fi
}
`;

/** A command as bash source, with the check its trailing comment promises. */
export function withCheck(step: Extract<DocStep, { kind: 'command' }>, text: string): string {
  const answer = /^(yes|no)\b/.exec(step.comment);
  if (answer && /^kubectl auth can-i\b/.test(text)) return `__answers ${answer[1]} ${text}`;
  if (/^prints nothing\b/.test(step.comment)) return `__prints_nothing ${text}`;
  return text;
}

/**
 * The commands of `troupe up`'s banner: its lines indented by two spaces (the banner's own
 * convention for "type this").
 */
export function bannerCommands(banner: string): string {
  return banner
    .split('\n')
    .filter((l) => /^ {2}\S/.test(l))
    .map((l) => l.trim())
    .join('\n');
}
