import { InvalidArgumentError } from 'commander';

/** Commander argument parser for a TCP port (0 = any free port). */
export function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError(`"${value}" is not a port number (0-65535).`);
  return n;
}

export function parseNonNegativeInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new InvalidArgumentError(`"${value}" is not a non-negative integer.`);
  return n;
}

export function parseNonNegativeNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0)
    throw new InvalidArgumentError(`"${value}" is not a non-negative number.`);
  return n;
}

export function parsePositiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`"${value}" is not a positive number.`);
  return n;
}

/**
 * A copy of the first signal arriving this soon after it is the same request to stop, not a
 * second one: Ctrl+C in a terminal signals the whole foreground process group, and `npm
 * start` forwards its own copy to troupe as well (@npmcli/run-script's signal-manager), so
 * troupe under npm gets one Ctrl+C twice. A person's second Ctrl+C comes later than this.
 */
const SAME_SIGNAL_MS = 1000;

/**
 * Run by npm (which sets npm_lifecycle_event), the first repeat of the signal is npm's
 * forwarded copy however late it comes: a busy machine can delay npm's event loop, and
 * with it the copy, beyond SAME_SIGNAL_MS.
 */
const FORWARDED_BY_NPM = process.env.npm_lifecycle_event !== undefined;

/**
 * Resolves when the process is asked to stop (SIGINT or SIGTERM). Call it before starting
 * anything: a signal during startup is remembered and the command shuts down gracefully
 * once started, and a second signal (startup hangs, shutdown is slow) exits at once.
 * End the command with `exitStopped()` rather than letting the event loop drain.
 */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let first: { sig: NodeJS.Signals; at: number; copies: number } | undefined;
    const on = (sig: NodeJS.Signals) => {
      if (first) {
        const copy =
          sig === first.sig &&
          (performance.now() - first.at < SAME_SIGNAL_MS || (FORWARDED_BY_NPM && first.copies === 0));
        if (!copy) process.exit(1);
        first.copies++;
        return;
      }
      first = { sig, at: performance.now(), copies: 0 };
      resolve(sig);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

/**
 * Ends a command that `untilSignal` stopped, once it has stopped gracefully. Exiting
 * explicitly keeps the signal handlers installed to the last moment: when the event loop
 * drains instead, Node closes its signal handles and restores the default action while it
 * tears down, and a late copy of the signal (npm's, above) arriving then kills the process
 * with SIGINT, which npm re-raises as its own exit.
 */
export function exitStopped(): never {
  process.exit(0);
}
