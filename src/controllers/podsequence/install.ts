/** Installs the PodSequence CRD and waits until the API server serves the kind. */

import { PODSEQUENCE } from '../../apis/scheduling.example.com/v1alpha1.ts';
import { realClock } from '../../lib/clock.ts';
import { type Client, sleep } from '../../runtime/index.ts';
import { podSequenceCrd } from './crd.ts';

/**
 * Creates or updates the CRD (server-side apply, field manager `troupe`) and resolves once
 * PodSequences can be listed: the manager's informers need the kind to exist when it starts.
 */
export async function ensurePodSequenceCrd(
  client: Client,
  opts: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<void> {
  await client.apply(podSequenceCrd, { force: true, signal: opts.signal });
  const deadline = realClock.monotonic() + (opts.timeoutMs ?? 30_000);
  for (;;) {
    try {
      await client.list(PODSEQUENCE, { limit: 1, signal: opts.signal });
      return;
    } catch (err) {
      // 404 from discovery, or a group served before its kinds: not established yet.
      if (opts.signal?.aborted || realClock.monotonic() > deadline) throw err;
    }
    await sleep(50, opts.signal);
  }
}
