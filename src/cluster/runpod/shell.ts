/**
 * The stand-in's container "process": a small POSIX-sh subset that runs a container's
 * argv without running anything on the host. A real RunPod pod runs an image; the stand-in
 * has no images, so it interprets the command line the pod was given (and, for images it
 * knows, the image's entrypoint and default command) well enough for what controllers
 * send: `sh -c SCRIPT NAME ARGS...`, statements separated by `;`, `&&`, `||` and newlines,
 * `"$@"`, `$?`, `$#`, `$1`…, `${VAR:-default}`, assignments, and the builtins `echo`,
 * `printf` (%s %d %%, \n), `sleep` (seconds, `infinity`), `exit`, `exec`, `true`, `false`,
 * `:`, `env` and `cat` of nothing. Anything else prints `sh: X: not found` and exits 127,
 * as a real shell would for a missing binary.
 *
 * Word splitting and quoting come from shell-quote (a library made for that); variables are
 * expanded by this file at run time because `$?` changes between statements.
 */
import { parse } from 'shell-quote';

export interface ProcessIO {
  env: Record<string, string>;
  /** One call per output line (stdout and stderr both go to the container log). */
  write(line: string, stream: 'stdout' | 'stderr'): void;
  /** Sleeps `ms` of simulated time; rejects when the process is killed. */
  sleep(ms: number): Promise<void>;
  /** Set when the container is stopped: statements stop at the next boundary. */
  signal: AbortSignal;
}

type Token = string | { op: string };

// Variables are marked with a private-use character while words are split, and expanded
// when each statement runs (shell-quote would otherwise expand them all up front).
const MARK = '\uE000';
const VAR = new RegExp(`${MARK}([^${MARK}]*)${MARK}`, 'g');
const SENTINEL = (name: string) => `${MARK}${name}${MARK}`;

class ExitSignal {
  readonly code: number;
  constructor(code: number) {
    this.code = code;
  }
}

const SHELLS = new Set(['sh', 'bash', '/bin/sh', '/bin/bash', '/usr/bin/sh', '/usr/bin/bash', 'dash']);

/** Runs an argv as PID 1 of the container; resolves with its exit code. */
export async function runProcess(argv: string[], io: ProcessIO): Promise<number> {
  try {
    return await runCommand(argv, io, { positional: [], vars: {}, last: 0 });
  } catch (err) {
    if (err instanceof ExitSignal) return err.code;
    throw err;
  }
}

/** Splits an `args` string the way a shell would, without expanding variables. */
export function splitArgs(args: string): string[] {
  const out: string[] = [];
  for (const t of parse(args, (k) => `$${k}`) as Token[]) {
    if (typeof t === 'string') out.push(t);
    else if ('op' in t && t.op === 'glob') out.push((t as unknown as { pattern: string }).pattern);
  }
  return out;
}

interface Frame {
  positional: string[];
  vars: Record<string, string>;
  last: number;
}

async function runScript(script: string, io: ProcessIO, frame: Frame): Promise<number> {
  for (const line of splitLines(script)) {
    const tokens = parse(line, SENTINEL) as Token[];
    let skip = false;
    let words: string[] = [];
    const flush = async () => {
      if (!skip && words.length > 0) frame.last = await runWords(words, io, frame);
      words = [];
    };
    for (const t of tokens) {
      if (io.signal.aborted) throw new ExitSignal(137);
      if (typeof t === 'string') {
        words.push(t);
        continue;
      }
      if ('comment' in t) break;
      const op = (t as { op: string }).op;
      if (op === ';' || op === '&&' || op === '||') {
        await flush();
        skip = (op === '&&' && frame.last !== 0) || (op === '||' && frame.last === 0);
        continue;
      }
      if (op === 'glob') {
        words.push((t as unknown as { pattern: string }).pattern);
        continue;
      }
      io.write(`sh: unsupported operator ${op}`, 'stderr');
      frame.last = 2;
      return frame.last;
    }
    await flush();
  }
  return frame.last;
}

/** Splits a script at newlines that are not inside quotes. */
function splitLines(script: string): string[] {
  const lines: string[] = [];
  let cur = '';
  let quote: string | undefined;
  for (let i = 0; i < script.length; i++) {
    const c = script[i]!;
    if (c === '\\' && quote !== "'" && i + 1 < script.length) {
      cur += c + script[++i];
      continue;
    }
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '\n') {
      lines.push(cur);
      cur = '';
      continue;
    }
    cur += c;
  }
  lines.push(cur);
  return lines.filter((l) => l.trim() !== '');
}

function lookup(name: string, io: ProcessIO, frame: Frame): string {
  const [base, fallback] = name.includes(':-') ? name.split(':-', 2) : [name, undefined];
  let v: string | undefined;
  if (base === '?') v = String(frame.last);
  else if (base === '#') v = String(Math.max(0, frame.positional.length - 1));
  else if (base === '$') v = '1';
  else if (base === '*' || base === '@') v = frame.positional.slice(1).join(' ');
  else if (/^\d+$/.test(base!)) v = frame.positional[Number(base)];
  else v = frame.vars[base!] ?? io.env[base!];
  if ((v === undefined || v === '') && fallback !== undefined) return fallback;
  return v ?? '';
}

function expandWords(words: string[], io: ProcessIO, frame: Frame): string[] {
  const out: string[] = [];
  for (const w of words) {
    if (w === SENTINEL('@')) {
      out.push(...frame.positional.slice(1));
      continue;
    }
    out.push(w.replace(VAR, (_, name: string) => lookup(name, io, frame)));
  }
  return out;
}

async function runWords(words: string[], io: ProcessIO, frame: Frame): Promise<number> {
  const argv = expandWords(words, io, frame);
  // Leading NAME=value words: plain assignments when nothing follows.
  let i = 0;
  const assigns: Record<string, string> = {};
  while (i < argv.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(argv[i]!)) {
    const eq = argv[i]!.indexOf('=');
    assigns[argv[i]!.slice(0, eq)] = argv[i]!.slice(eq + 1);
    i++;
  }
  if (i === argv.length) {
    Object.assign(frame.vars, assigns);
    return 0;
  }
  const env = { ...io.env, ...assigns };
  return runCommand(argv.slice(i), { ...io, env }, frame);
}

async function runCommand(argv: string[], io: ProcessIO, frame: Frame): Promise<number> {
  const [cmd, ...rest] = argv;
  if (cmd === undefined) return 0;
  const name = cmd.includes('/') && !SHELLS.has(cmd) ? cmd.slice(cmd.lastIndexOf('/') + 1) : cmd;
  if (SHELLS.has(name)) {
    const c = rest.indexOf('-c');
    if (c < 0 || rest[c + 1] === undefined) {
      // An interactive shell with no terminal reads EOF and exits at once.
      return 0;
    }
    const script = rest[c + 1]!;
    const child: Frame = { positional: rest.slice(c + 2), vars: {}, last: 0 };
    if (child.positional.length === 0) child.positional = [name];
    try {
      return await runScript(script, io, child);
    } catch (err) {
      if (err instanceof ExitSignal) return err.code;
      throw err;
    }
  }
  switch (name) {
    case 'echo': {
      let args = rest;
      let newline = true;
      if (args[0] === '-n') {
        newline = false;
        args = args.slice(1);
      }
      writeText(args.join(' '), io, newline);
      return 0;
    }
    case 'printf': {
      if (rest.length === 0) return 1;
      writeText(formatPrintf(rest[0]!, rest.slice(1)), io, false);
      return 0;
    }
    case 'sleep': {
      const ms = parseDuration(rest[0]);
      if (ms === undefined) {
        io.write(`sleep: invalid time interval '${rest[0] ?? ''}'`, 'stderr');
        return 1;
      }
      await io.sleep(ms);
      return 0;
    }
    case 'exit': {
      const code = rest[0] === undefined ? frame.last : Number.parseInt(rest[0], 10);
      throw new ExitSignal(Number.isFinite(code) ? code & 0xff : 2);
    }
    case 'exec':
      throw new ExitSignal(await runCommand(rest, io, frame));
    case 'true':
    case ':':
      return 0;
    case 'false':
      return 1;
    case 'env':
      for (const [k, v] of Object.entries(io.env)) io.write(`${k}=${v}`, 'stdout');
      return 0;
    case 'cat':
      return 0;
    default:
      io.write(`sh: ${cmd}: not found`, 'stderr');
      return 127;
  }
}

const partial = new WeakMap<ProcessIO, string>();

/** Writes text as log lines; a trailing partial line waits for the rest (echo -n). */
function writeText(text: string, io: ProcessIO, newline: boolean): void {
  const buffered = (partial.get(io) ?? '') + text + (newline ? '\n' : '');
  const lines = buffered.split('\n');
  partial.set(io, lines.pop() ?? '');
  for (const l of lines) io.write(l, 'stdout');
}

function formatPrintf(format: string, args: string[]): string {
  let i = 0;
  return format
    .replace(/%([sd%])/g, (_, f: string) => {
      if (f === '%') return '%';
      const a = args[i++] ?? '';
      return f === 'd' ? String(Number.parseInt(a, 10) || 0) : a;
    })
    .replace(/\\n/g, '\n')
    .replace(/\\t/g, '\t');
}

function parseDuration(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  if (s === 'infinity' || s === 'inf') return Number.POSITIVE_INFINITY;
  const m = /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(s);
  if (!m) return undefined;
  const unit = { '': 1000, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as '' | 's'] ?? 1000;
  return Number(m[1]) * unit;
}
