/**
 * The resource quota controller a real cluster runs in kube-controller-manager
 * (pkg/controller/resourcequota): keeps each ResourceQuota's `status.hard` equal to its
 * `spec.hard` and `status.used` equal to what the namespace's objects use, recounted soon after
 * any write in a namespace that has a quota. Only namespaces with quotas cost anything, and
 * there the usage comes from a tally kept current from the store (admission/quota-usage.ts),
 * as the upstream controller's from its informers.
 */
import { formatQuantity } from '../../../kube/quantity.ts';
import { holdClock } from '../../../lib/clock.ts';
import { semanticEqual } from '../../../lib/json.ts';
import type { QuotaUsage } from '../admission/quota-usage.ts';
import type { Api } from '../api.ts';
import { recordOf } from '../builtin/common.ts';
import type { KubeObject, ResourceType } from '../types.ts';

const USER = 'system:serviceaccount:kube-system:resourcequota-controller';

export class QuotaController {
  private readonly api: Api;
  private readonly usage: QuotaUsage;
  /** Namespaces holding at least one ResourceQuota, with how many. */
  private readonly withQuota = new Map<string, number>();
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private releaseClock: (() => void) | undefined;

  constructor(api: Api, usage: QuotaUsage) {
    this.api = api;
    this.usage = usage;
    const rt = api.registry.get('', 'v1', 'resourcequotas');
    if (rt) {
      for (const rec of api.list(rt, undefined).records) {
        this.withQuota.set(rec.namespace, (this.withQuota.get(rec.namespace) ?? 0) + 1);
        this.schedule(rec.namespace);
      }
    }
  }

  onWrite(rt: ResourceType, type: string, obj: KubeObject): void {
    const ns = obj.metadata.namespace;
    if (!ns || !rt.namespaced) return;
    if (rt.group === '' && rt.resource === 'resourcequotas') {
      if (type === 'ADDED') this.withQuota.set(ns, (this.withQuota.get(ns) ?? 0) + 1);
      if (type === 'DELETED') {
        const left = (this.withQuota.get(ns) ?? 1) - 1;
        if (left > 0) this.withQuota.set(ns, left);
        else {
          this.withQuota.delete(ns);
          this.usage.forget(ns);
        }
      }
    }
    if (this.withQuota.has(ns)) this.schedule(ns);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.releaseClock?.();
    this.timer = undefined;
    this.pending.clear();
  }

  private schedule(ns: string): void {
    this.pending.add(ns);
    if (this.timer) return;
    // A recount due now holds a virtual clock until done (the retries after a conflict do not).
    const release = holdClock(this.api.clock, 'apiserver quota');
    this.releaseClock = release;
    this.timer = setTimeout(() => void this.drain().finally(release), 0);
  }

  private async drain(): Promise<void> {
    this.timer = undefined;
    const namespaces = [...this.pending];
    this.pending.clear();
    for (const ns of namespaces) {
      try {
        await this.sync(ns);
      } catch {
        // A conflicting write re-triggers a recount; try again shortly anyway.
        this.pending.add(ns);
        this.timer ??= setTimeout(() => void this.drain(), 100);
      }
    }
  }

  private async sync(ns: string): Promise<void> {
    const rt = this.api.registry.get('', 'v1', 'resourcequotas');
    if (!rt) return;
    for (const rec of this.api.list(rt, ns).records) {
      const q = this.api.decode(rt, rec);
      if (q.metadata.deletionTimestamp) continue;
      const hard = recordOf(recordOf(q.spec).hard) as Record<string, string>;
      const usage = this.usage.used(ns, Object.keys(hard));
      const used: Record<string, string> = {};
      for (const [k, v] of Object.entries(usage)) used[k] = formatQuantity(v);
      const status = { hard: { ...hard }, used };
      if (semanticEqual(q.status, status)) continue;
      await this.api.updateWith(
        rt,
        ns,
        q.metadata.name!,
        { user: USER, subresource: 'status' },
        (cur) => ({ ...cur, status }),
        false,
      );
    }
  }
}
