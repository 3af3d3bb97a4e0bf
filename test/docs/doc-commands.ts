/**
 * The shell commands the project's documentation tells a reader to run: every fenced
 * `sh`/`bash`/`shell` block (a script, run whole) and the `$ ` lines of `console` blocks
 * in README.md, the other top-level *.md files and everything under docs/. New documents
 * are covered by being there.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface DocBlock {
  /** `docs/install.md:88`, the line of the opening fence. */
  where: string;
  file: string;
  /** The script to run, as bash source. */
  script: string;
}

const SHELL = new Set(['sh', 'bash', 'shell', 'zsh']);
const SESSION = new Set(['console', 'shell-session']);

/** The Markdown files whose commands are run: top-level *.md and docs/ (recursively). */
export function docFiles(root: string): string[] {
  const top = readdirSync(root)
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(root, f));
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((f) => {
      const p = join(dir, f);
      if (statSync(p).isDirectory()) return walk(p);
      return f.endsWith('.md') ? [p] : [];
    });
  return [...top, ...walk(join(root, 'docs'))].sort();
}

/** The shell blocks of one Markdown file. */
export function shellBlocks(root: string, file: string): DocBlock[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const out: DocBlock[] = [];
  let open: { lang: string; line: number; fence: string; indent: number; body: string[] } | undefined;
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
        };
      return;
    }
    if (fence && fence[2]!.startsWith(open.fence) && text.trim() === fence[2]) {
      const where = `${relative(root, file)}:${open.line}`;
      if (SHELL.has(open.lang)) out.push({ where, file, script: open.body.join('\n') });
      if (SESSION.has(open.lang)) {
        const script = sessionCommands(open.body);
        if (script) out.push({ where, file, script });
      }
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
