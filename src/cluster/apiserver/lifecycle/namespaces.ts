/**
 * The namespace lifecycle a real cluster runs in kube-controller-manager: a deleted
 * namespace has its contents deleted, then its `kubernetes` spec finalizer removed, and
 * every new namespace gets its `default` ServiceAccount.
 */
import { holdClock } from '../../../lib/clock.ts';
import type { Api } from '../api.ts';
import { ApiError } from '../errors.ts';
import type { KubeObject, ResourceType } from '../types.ts';

const SYSTEM_USER = 'system:serviceaccount:kube-system:namespace-controller';

export class NamespaceLifecycle {
  private readonly api: Api;
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private releaseClock: (() => void) | undefined;

  constructor(api: Api) {
    this.api = api;
  }

  onWrite(rt: ResourceType, type: string, obj: KubeObject): void {
    if (rt.group !== '' || rt.resource !== 'namespaces') return;
    const name = obj.metadata.name!;
    if (type === 'ADDED') {
      const release = holdClock(this.api.clock, 'apiserver namespace lifecycle');
      setImmediate(() => void this.ensureDefaultServiceAccount(name).finally(release));
    }
    if (type !== 'DELETED' && obj.metadata.deletionTimestamp) this.schedule(name);
  }

  private schedule(name: string): void {
    this.pending.add(name);
    if (this.timer) return;
    // Work due now holds a virtual clock until done; the 200 ms retries below wait for others
    // (pods terminating in virtual time) and must not.
    const release = holdClock(this.api.clock, 'apiserver namespace lifecycle');
    this.releaseClock = release;
    this.timer = setTimeout(() => void this.drain().finally(release), 0);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.releaseClock?.();
    this.pending.clear();
  }

  private async drain(): Promise<void> {
    this.timer = undefined;
    const names = [...this.pending];
    this.pending.clear();
    for (const name of names) {
      try {
        const done = await this.cleanup(name);
        if (!done) this.retryLater(name);
      } catch {
        this.retryLater(name);
      }
    }
  }

  private retryLater(name: string): void {
    this.pending.add(name);
    this.timer ??= setTimeout(() => void this.drain(), 200);
  }

  /** Deletes everything in the namespace; true once it is empty and finalized. */
  private async cleanup(name: string): Promise<boolean> {
    let remaining = 0;
    for (const rt of this.api.registry.all()) {
      if (!rt.namespaced || !rt.verbs.includes('delete')) continue;
      if (this.api.registry.versions(rt.group)[0] !== rt.version) continue;
      for (const rec of this.api.list(rt, name).records) {
        remaining++;
        try {
          await this.api.delete(rt, name, rec.name, { user: SYSTEM_USER, gracePeriodSeconds: 0 });
        } catch (err) {
          if (!(err instanceof ApiError && err.code === 404)) throw err;
        }
      }
    }
    if (remaining > 0) {
      // Some objects may wait on finalizers; look again shortly.
      return this.isEmpty(name) ? this.finalize(name) : false;
    }
    return this.finalize(name);
  }

  private isEmpty(name: string): boolean {
    for (const rt of this.api.registry.all()) {
      if (rt.namespaced && this.api.list(rt, name).records.length > 0) return false;
    }
    return true;
  }

  private async finalize(name: string): Promise<boolean> {
    const nsType = this.api.registry.get('', 'v1', 'namespaces')!;
    const ns = this.api.tryGet(nsType, '', name);
    if (!ns) return true;
    await this.api.updateWith(
      nsType,
      '',
      name,
      { user: SYSTEM_USER, subresource: 'finalize' },
      (cur) => ({ ...cur, spec: { ...(cur.spec as object), finalizers: [] } }),
      false,
    );
    return true;
  }

  private async ensureDefaultServiceAccount(ns: string): Promise<void> {
    const sa = this.api.registry.get('', 'v1', 'serviceaccounts');
    if (!sa || this.api.tryGet(sa, ns, 'default')) return;
    try {
      await this.api.create(
        sa,
        ns,
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } },
        { user: SYSTEM_USER },
      );
    } catch {
      // The namespace may already be terminating, or a user created the account first.
    }
  }
}
