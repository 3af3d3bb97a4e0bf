/** Installs the PodSequence CRD and waits until the API server serves the kind. */

import { type Client, installCrds } from '../../runtime/index.ts';
import { podSequenceCrd } from './crd.ts';

/**
 * Creates or updates the CRD (server-side apply, field manager `troupe`) and resolves once it
 * is Established and PodSequences are served: the manager's informers need the kind when it starts.
 */
export async function ensurePodSequenceCrd(
  client: Client,
  opts: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<void> {
  await installCrds(client, [podSequenceCrd], opts);
}
