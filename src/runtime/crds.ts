/**
 * Installing CRDs and waiting until they serve, once for everyone (`troupe up`,
 * `troupe run --install-crds`, the PodSequence installer): apply each CRD, then wait for its
 * Established condition (what `kubectl wait --for condition=Established` waits for) and for
 * discovery to list its kind, so an informer started next finds it.
 */

import { type Clock, realClock } from '../lib/clock.ts';
import type { Client } from './client.ts';
import { isNoKindMatch } from './errors.ts';
import type { KindRef, KubeObject } from './types.ts';

const CRD_KIND: KindRef = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' };

interface CrdShape extends KubeObject {
  spec?: { group?: string; names?: { kind?: string }; versions?: { name: string; served?: boolean }[] };
  status?: { conditions?: { type: string; status: string; message?: string }[] };
}

export interface InstallCrdsOptions {
  /** How long to wait for every CRD to serve (default 30 s), on the clock's monotonic reading. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Default the real clock: the wait is on API server I/O. */
  clock?: Clock;
  /** Called once per applied CRD. */
  onApplied?(crd: KubeObject): void;
}

/** The kinds a CRD serves: its kind in every served version. */
function servedKinds(crd: CrdShape): KindRef[] {
  const { group, names, versions } = crd.spec ?? {};
  if (!group || !names?.kind) return [];
  return (versions ?? [])
    .filter((v) => v.served !== false)
    .map((v) => ({ apiVersion: `${group}/${v.name}`, kind: names.kind! }));
}

/**
 * Applies `crds` (server-side, forced, field manager troupe) and resolves once each is
 * Established and its kinds are served; rejects naming the CRD that is not by the deadline.
 */
export async function installCrds(
  client: Client,
  crds: readonly KubeObject[],
  opts: InstallCrdsOptions = {},
): Promise<void> {
  const clock = opts.clock ?? realClock;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  for (const crd of crds) {
    await client.apply(crd, { force: true, signal: opts.signal });
    opts.onApplied?.(crd);
  }
  const deadline = clock.monotonic() + timeoutMs;
  for (const crd of crds as readonly CrdShape[]) {
    const name = crd.metadata.name ?? '';
    let why = 'not Established';
    for (;;) {
      const live = await client.tryGet<CrdShape>(CRD_KIND, name, undefined, { signal: opts.signal });
      const established = live?.status?.conditions?.find((c) => c.type === 'Established');
      if (established?.status === 'True') {
        const pending = await unservedKinds(client, servedKinds(crd));
        if (pending.length === 0) break;
        why = `Established, but discovery does not list ${pending.map((k) => `${k.kind} ${k.apiVersion}`).join(', ')} yet`;
      } else {
        why = established?.message ? `not Established: ${established.message}` : 'not Established';
      }
      if (opts.signal?.aborted) throw new Error(`installing CRD ${name}: aborted`);
      if (clock.monotonic() > deadline)
        throw new Error(`CRD ${name} does not serve after ${timeoutMs} ms: ${why}`);
      await clock.sleep(100, opts.signal);
    }
  }
}

async function unservedKinds(client: Client, kinds: KindRef[]): Promise<KindRef[]> {
  const out: KindRef[] = [];
  for (const k of kinds) {
    try {
      await client.mapper.resourceFor(k);
    } catch (err) {
      if (!isNoKindMatch(err)) throw err;
      out.push(k);
    }
  }
  return out;
}
