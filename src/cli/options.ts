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
 * Resolves when the process is asked to stop (SIGINT or SIGTERM). Call it before starting
 * anything: a signal during startup is remembered and the command shuts down gracefully
 * once started, and a second signal (startup hangs, shutdown is slow) exits at once.
 */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let received = false;
    const on = (sig: NodeJS.Signals) => {
      if (received) process.exit(1);
      received = true;
      resolve(sig);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}
