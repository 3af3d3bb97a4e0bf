import assert from 'node:assert/strict';
import { ApiException } from '@kubernetes/client-node';

/** The HTTP code and Status body of a @kubernetes/client-node call that must fail. */
export async function statusOf(
  p: Promise<unknown>,
): Promise<{ code: number; body: Record<string, unknown> }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiException) return { code: err.code, body: JSON.parse(err.body as string) };
    throw err;
  }
  assert.fail('expected the request to fail');
}
