/** How long waitFor polls and how often. */
export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

type Check<T> = () => T | undefined | null | false | Promise<T | undefined | null | false>;

/**
 * Polls `check` until it returns something other than undefined, null or false (a value, or
 * true), and returns that; a throw counts as "not yet". After the timeout it throws, naming
 * `what` (or, without it, the check's source) and the check's last error. The one way tests
 * wait for a condition: never a sleep, never a state asserted before it is waited for.
 */
export async function waitFor<T>(what: string, check: Check<T>, opts?: WaitOptions): Promise<T>;
export async function waitFor<T>(check: Check<T>, opts?: WaitOptions): Promise<T>;
export async function waitFor<T>(
  a: string | Check<T>,
  b?: Check<T> | WaitOptions,
  c?: WaitOptions,
): Promise<T> {
  const [what, check, opts] =
    typeof a === 'string' ? [a, b as Check<T>, c] : [String(a), a, b as WaitOptions | undefined];
  // A long default: it only bounds how long a failing test takes to say so, and a machine
  // loaded many times over its cores (the stress script, CI beside other work) is slow.
  const { timeoutMs = 60_000, intervalMs = 20 } = opts ?? {};
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== null && v !== false) return v;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastErr ? `: ${String(lastErr)}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
