/** Polls `fn` until it returns a truthy value (or stops throwing); fails after `timeoutMs`. */
export async function eventually<T>(
  fn: () => T | Promise<T>,
  opts: { timeoutMs?: number; intervalMs?: number; message?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + (opts.timeoutMs ?? 15_000);
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
      last = new Error(`condition returned ${String(v)}`);
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const why = last instanceof Error ? last.message : String(last);
      throw new Error(`${opts.message ?? 'condition not met in time'}: ${why}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 20));
  }
}
