/**
 * Releases sent whose effect the cache has not shown yet (client-go's controller
 * "expectations", keyed by the resourceVersion the release was decided on). A reconcile
 * that runs before the pod's update reaches the cache sees the pod still gated and would
 * send the same patch again, to be refused with 409 Conflict (the patch carries the old
 * resourceVersion): harmless, but a wasted write and a retry per pod. While the cache
 * shows the pod at the resourceVersion a release was sent from, that release is in
 * flight and is not sent again. Entries expire, so a lost watch event cannot hold a pod
 * back forever.
 */

const TTL_MS = 30_000;
const SWEEP_AT = 10_000;

export class ReleaseExpectations {
  private readonly sent = new Map<string, { rv: string; at: number }>();

  /** True when a release of `pod` (namespace/name) was sent from resourceVersion `rv`; `now` in clock ms. */
  pending(pod: string, rv: string | undefined, now: number): boolean {
    const e = this.sent.get(pod);
    if (!e) return false;
    if (e.rv === rv && now - e.at < TTL_MS) return true;
    this.sent.delete(pod);
    return false;
  }

  /** A release of `pod` decided on resourceVersion `rv` was accepted. */
  expect(pod: string, rv: string | undefined, now: number): void {
    if (rv === undefined) return;
    if (this.sent.size >= SWEEP_AT) this.sweep(now);
    this.sent.set(pod, { rv, at: now });
  }

  private sweep(now: number): void {
    for (const [k, e] of this.sent) if (now - e.at >= TTL_MS) this.sent.delete(k);
  }

  get size(): number {
    return this.sent.size;
  }
}
