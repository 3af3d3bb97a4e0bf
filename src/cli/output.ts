/**
 * Terminal output for the read-only commands (status, explain): colour only where the
 * stream is a terminal, aligned tables, and errors that carry the exit code scripts see.
 */

import { stripVTControlCharacters, styleText } from 'node:util';
import { type Command, CommanderError } from 'commander';
import { isApiError } from '../runtime/index.ts';

/** Exit codes scripts can rely on. */
export const EXIT_OK = 0;
/** The cluster could not be read (connection, authentication, authorisation) or the object is missing. */
export const EXIT_FAILURE = 1;
/** The command line was wrong. */
export const EXIT_USAGE = 2;

/** An error that ends a command with a message and a specific exit code. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

type Format = Parameters<typeof styleText>[0];

export interface Painter {
  readonly colour: boolean;
  paint(format: Format, text: string): string;
  /** A phase or state coloured by what it means: green done/good, yellow in progress, red stuck. */
  phase(text: string): string;
}

const GOOD = new Set(['Running', 'Completed', 'Succeeded', 'Ready', 'Offloaded', 'True']);
const BAD = new Set(['Failed', 'Unschedulable', 'Error', 'False']);

/**
 * styleText with validateStream already honours FORCE_COLOR, TERM=dumb and
 * whether the stream is a TTY, so no colour library is needed.
 */
export function painterFor(stream: NodeJS.WritableStream = process.stdout): Painter {
  // Node lets FORCE_COLOR override NO_COLOR; an explicit request for no colour wins here.
  const colour = !process.env.NO_COLOR && styleText('red', 'x', { stream, validateStream: true }) !== 'x';
  const paint = (format: Format, text: string): string =>
    colour ? styleText(format, text, { validateStream: false }) : text;
  return {
    colour,
    paint,
    phase: (text) => {
      if (GOOD.has(text)) return paint('green', text);
      if (BAD.has(text)) return paint('red', text);
      if (text === '' || text === '-') return text;
      return paint('yellow', text);
    },
  };
}

/** Columns padded to their widest cell (measured without colour codes). */
export function table(header: string[], rows: string[][], p: Painter, indent = '  '): string {
  const width = (s: string) => stripVTControlCharacters(s).length;
  const widths = header.map((h, i) => Math.max(width(h), ...rows.map((r) => width(r[i] ?? ''))));
  const line = (cells: string[]) =>
    indent +
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + ' '.repeat(widths[i]! - width(c))))
      .join('  ')
      .trimEnd();
  return [p.paint('dim', line(header)), ...rows.map(line)].join('\n');
}

/**
 * A one-line, human message for a failure to talk to the API server (what failed, where,
 * what to do), or undefined when the error is not of that kind. `origin` is where the
 * address came from (the kubeconfig file).
 */
export function connectionProblem(err: unknown, server: string, origin?: string): string | undefined {
  if (isApiError(err)) {
    if (err.statusCode === 401)
      return `the API server at ${server} rejected the credentials (401 Unauthorized): check the user in ${origin ?? 'the kubeconfig'}`;
    if (err.statusCode === 403) return `not allowed: ${err.message}`;
    return undefined;
  }
  const e = err as
    | { code?: string; cause?: { code?: string; message?: string }; message?: string }
    | undefined;
  const code = e?.code ?? e?.cause?.code;
  const fix = origin
    ? `; is the cluster running, and does ${origin} name the right server?`
    : '; is the cluster running?';
  if (
    code &&
    /^(ECONN|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|EAI_|UND_ERR|CERT_|ERR_TLS|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO)/.test(
      code,
    )
  )
    return `cannot reach the API server at ${server}: ${e?.message ?? code}${fix}`;
  if (e?.message && /fetch failed|socket|timeout|certificate/i.test(e.message))
    return `cannot reach the API server at ${server}: ${e.message}${fix}`;
  return undefined;
}

/** Runs a command body, turning CliError into its message and exit code. */
export async function runReporting(body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (err) {
    if (!(err instanceof CliError)) throw err;
    process.stderr.write(`troupe: ${err.message}\n`);
    process.exitCode = err.exitCode;
  }
}

/**
 * Makes commander's own usage errors (unknown option, missing argument, bad choice) exit 2
 * like ours do; help and version still exit 0. main.ts turns the thrown error into the code.
 */
export function usageErrorsExit2(cmd: Command): Command {
  cmd.showHelpAfterError(`(run "troupe ${cmd.name()} --help" for usage)`);
  return cmd.exitOverride((err) => {
    throw err.exitCode === 0 ? err : new CommanderError(EXIT_USAGE, err.code, err.message);
  });
}
