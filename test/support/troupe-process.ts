/**
 * Test support: the troupe command (or `npm start`) as a child process, the way a user
 * starts it, with its output collected and its banner awaited.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { waitFor } from './wait.ts';

export const ROOT = resolve(import.meta.dirname, '../..');

/**
 * How long a test waits for a troupe process it spawned to come up (its banner, its first
 * log lines): a guard against a hang, not a deadline the product keeps. Loading the sources
 * and starting takes 2-3 s on an idle machine and over a minute on two cores running the
 * suite beside other work (scripts/stress-test.sh with other suites running measured 67 s
 * for two `troupe up` at once), so far longer than waitFor's default.
 */
export const START_TIMEOUT_MS = 180_000;
export const MAIN = resolve(ROOT, 'src/cli/main.ts');

export interface TroupeProcess {
  child: ChildProcess;
  /** Everything written so far. */
  stdout(): string;
  stderr(): string;
  /** The exit code (null when killed by a signal), listened for from the start. */
  exited: Promise<number | null>;
  /** Waits for `troupe up`/`cluster` to print "Press Ctrl+C", failing early if it exits. */
  banner(): Promise<string>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** Spawns `command args` (default: node src/cli/main.ts). */
export function spawnTroupe(
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; command?: string } = {},
): TroupeProcess {
  const command = opts.command ?? process.execPath;
  const argv = opts.command ? args : [MAIN, ...args];
  const child = spawn(command, argv, {
    cwd: opts.cwd ?? ROOT,
    env: opts.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    banner: async () => {
      // A check that throws only means "not yet" to waitFor: an exit ends the wait, then fails.
      const ended = () => child.exitCode !== null || child.signalCode !== null;
      const banner = await waitFor(
        `${[command, ...args].join(' ')} to print its banner`,
        () => ended() || (out.includes('Press Ctrl+C') && out),
        { timeoutMs: START_TIMEOUT_MS },
      );
      if (banner === true)
        assert.fail(`exited ${child.exitCode ?? child.signalCode} before serving:\n${out}\n${err}`);
      return banner;
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Every process below `pid` (children, grandchildren, …), from `ps`. */
export function descendants(pid: number): number[] {
  const rows = execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number) as [number, number]);
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift();
    for (const [p, pp] of rows) {
      if (pp === parent) {
        found.push(p);
        queue.push(p);
      }
    }
  }
  return found;
}

/** Whether a process is still running (a zombie counts as gone). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).trim();
    return stat !== '' && !stat.startsWith('Z');
  } catch {
    return false;
  }
}

/**
 * A scratch directory that looks like the checkout (a symlink to each top-level entry but
 * `.troupe` and `.git`), so `npm start` and the docs' relative paths work there while the
 * instance's `.troupe/` stays apart from the developer's own.
 */
export async function scratchCheckout(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-checkout-'));
  for (const entry of await readdir(ROOT)) {
    if (entry === '.troupe' || entry === '.git') continue;
    await symlink(join(ROOT, entry), join(dir, entry));
  }
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
