/**
 * What the objects of a namespace use of each quota resource, for the ResourceQuota
 * admission plugin and the quota controller (lifecycle/quota.ts). kube-controller-manager's
 * quota controller recounts from its informers' caches (pkg/controller/resourcequota,
 * pkg/quota/v1/evaluator/core for what each object uses); here the tally is counted once per
 * namespace and then kept current from the store's write stream, each object's share replaced
 * as it is written, so neither a create nor a recount walks the namespace again. Only the
 * namespaces someone asked about (those with a ResourceQuota) are tallied.
 */
import {
  addQuantities,
  compareQuantities,
  parseQuantity,
  type Quantity,
  subtractQuantities,
  tryParseQuantity,
} from '../../../kube/quantity.ts';
import type { Api } from '../api.ts';
import { arrayOf, type Json, recordOf, str } from '../builtin/common.ts';
import { storageKey } from '../registry.ts';
import type { StoredRecord, StoreEvent } from '../store.ts';
import type { KubeObject, ResourceType } from '../types.ts';

type Usage = Record<string, Quantity>;

interface Tally {
  /** Each object's usage, by storage and key. */
  readonly shares: Map<string, Usage>;
  readonly total: Map<string, Quantity>;
}

export class QuotaUsage {
  private readonly api: Api;
  private readonly tallies = new Map<string, Tally>();
  /** The resources counted from each storage: one per group and resource, at its group's preferred version. */
  private counted: Map<string, ResourceType[]> | undefined;

  constructor(api: Api) {
    this.api = api;
    api.store.subscribe((e) => this.onEvent(e));
    // A resource served or withdrawn (CRDs; a dropped table sends no events): count afresh.
    api.registry.on('changed', () => {
      this.counted = undefined;
      this.tallies.clear();
    });
  }

  /** The namespace's usage of each tracked resource now (zero for what nothing uses). */
  used(namespace: string, tracked: readonly string[]): Usage {
    const tally = this.tally(namespace);
    const out: Usage = {};
    for (const k of tracked) out[k] = tally.total.get(k) ?? parseQuantity(0);
    return out;
  }

  /** Stops tallying a namespace (its last quota is gone). */
  forget(namespace: string): void {
    this.tallies.delete(namespace);
  }

  private tally(namespace: string): Tally {
    let tally = this.tallies.get(namespace);
    if (tally) return tally;
    tally = { shares: new Map(), total: new Map() };
    for (const [storage, rts] of this.resources()) {
      for (const rec of this.api.store.table(storage).values()) {
        if (rec.namespace === namespace) this.share(tally, storage, rts, rec);
      }
    }
    this.tallies.set(namespace, tally);
    return tally;
  }

  private onEvent(e: StoreEvent): void {
    const tally = this.tallies.get(e.record.namespace);
    if (!tally) return;
    const rts = this.resources().get(e.storage);
    if (!rts) return;
    this.unshare(tally, `${e.storage}|${e.record.key}`);
    if (e.type !== 'DELETED') this.share(tally, e.storage, rts, e.record);
  }

  private share(tally: Tally, storage: string, rts: ResourceType[], rec: StoredRecord): void {
    let parsed: KubeObject | undefined;
    const usage: Usage = {};
    for (const rt of rts) {
      if (!rt.sharedStorage) parsed ??= JSON.parse(rec.json) as KubeObject;
      Object.assign(usage, quotaUsageOf(rt, rt.sharedStorage ? this.api.decode(rt, rec) : parsed!));
    }
    tally.shares.set(`${storage}|${rec.key}`, usage);
    for (const [k, q] of Object.entries(usage)) {
      // Totals start at a DecimalSI zero, as the quota controller's sums do.
      tally.total.set(k, addQuantities(tally.total.get(k) ?? parseQuantity(0), q));
    }
  }

  private unshare(tally: Tally, id: string): void {
    const usage = tally.shares.get(id);
    if (!usage) return;
    tally.shares.delete(id);
    for (const [k, q] of Object.entries(usage)) {
      tally.total.set(k, subtractQuantities(tally.total.get(k)!, q));
    }
  }

  private resources(): Map<string, ResourceType[]> {
    if (this.counted) return this.counted;
    const counted = new Map<string, ResourceType[]>();
    const reg = this.api.registry;
    for (const rt of reg.all()) {
      if (!rt.namespaced || rt.version !== (reg.versions(rt.group)[0] ?? rt.version)) continue;
      const sk = storageKey(rt);
      counted.set(sk, [...(counted.get(sk) ?? []), rt]);
    }
    this.counted = counted;
    return counted;
  }
}

function isTerminalPod(pod: KubeObject): boolean {
  const phase = recordOf(pod.status).phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/** The quota resources one object uses (the evaluators' Usage). */
export function quotaUsageOf(rt: Pick<ResourceType, 'group' | 'resource'>, obj: KubeObject): Usage {
  const out: Usage = {};
  const one = parseQuantity(1);
  const countKey = `count/${rt.resource}${rt.group ? `.${rt.group}` : ''}`;
  if (rt.group === '' && rt.resource === 'pods') {
    if (isTerminalPod(obj)) return out;
    out.pods = one;
    out[countKey] = one;
    const spec = recordOf(obj.spec);
    const req: Usage = {};
    const lim: Usage = {};
    for (const c of arrayOf(spec.containers)) {
      addInto(req, recordOf(recordOf(c.resources).requests));
      addInto(lim, recordOf(recordOf(c.resources).limits));
    }
    // Init containers run one at a time: the pod needs the largest of them, if more.
    for (const c of arrayOf(spec.initContainers)) {
      for (const [k, v] of Object.entries(recordOf(recordOf(c.resources).requests))) {
        const q = tryParseQuantity(v);
        if (q && (!req[k] || compareQuantities(q, req[k]!) > 0)) req[k] = q;
      }
    }
    addInto(req, recordOf(spec.overhead));
    for (const [k, q] of Object.entries(req)) {
      if (k === 'cpu' || k === 'memory' || k === 'ephemeral-storage') out[k] = q;
      out[`requests.${k}`] = q;
    }
    for (const [k, q] of Object.entries(lim)) out[`limits.${k}`] = q;
    return out;
  }
  if (rt.group === '') {
    switch (rt.resource) {
      case 'services': {
        out.services = one;
        const type = str(recordOf(obj.spec).type);
        if (type === 'NodePort' || type === 'LoadBalancer') {
          out['services.nodeports'] = parseQuantity(arrayOf(recordOf(obj.spec).ports).length);
        }
        if (type === 'LoadBalancer') out['services.loadbalancers'] = one;
        break;
      }
      case 'persistentvolumeclaims': {
        out.persistentvolumeclaims = one;
        const storage = tryParseQuantity(recordOf(recordOf(recordOf(obj.spec).resources).requests).storage);
        if (storage) out['requests.storage'] = storage;
        break;
      }
      case 'configmaps':
      case 'secrets':
      case 'replicationcontrollers':
      case 'resourcequotas':
        out[rt.resource] = one;
        break;
    }
  }
  out[countKey] = one;
  return out;
}

function addInto(acc: Usage, raw: Json): void {
  for (const [k, v] of Object.entries(raw)) {
    const q = tryParseQuantity(v);
    if (q) acc[k] = acc[k] ? addQuantities(acc[k]!, q) : q;
  }
}
