/**
 * Metrics a controller adds to its manager's registry (controller-runtime's
 * `metrics.Registry`, without the global). A controller's `metrics` hook is called once
 * by each manager it is added to, with that manager's registry and a read-only view of
 * its cache; what the hook returns reaches every reconcile as `ctx.metrics`. Each manager
 * has a registry of its own, so a manager started again in the same process, or two
 * managers in one test, never register a name twice.
 *
 * Gauges of current state (objects by phase) are best computed from the cache at scrape
 * time with `cacheGauge` rather than kept by hand: they then cannot drift from the objects
 * they count, and a restarted manager reports them right from its first scrape.
 */

import {
  Counter,
  type CounterConfiguration,
  Gauge,
  Histogram,
  type HistogramConfiguration,
  type Registry,
} from 'prom-client';
import type { Cache } from './cache.ts';
import { type KindRef, type KubeObject, kindKey } from './types.ts';

/** The cache as scrape-time metrics read it: never starts an informer, never waits for one. */
export interface CacheView {
  /**
   * The objects of `kind` held by the manager's unfiltered informer of that kind, or
   * undefined while there is none or it has not synced (a scrape then reports nothing,
   * or NaN for a gauge without labels, rather than counts that are not true yet).
   */
  list<T extends KubeObject = KubeObject>(kind: KindRef): readonly T[] | undefined;
}

export interface MetricsContext {
  /** The manager's registry, served at /metrics. */
  registry: Registry;
  cache: CacheView;
}

export function cacheView(cache: Cache): CacheView {
  return {
    list<T extends KubeObject>(kind: KindRef): readonly T[] | undefined {
      const want = kindKey(kind);
      const inf = cache
        .allInformers()
        .find(
          (i) =>
            kindKey(i.kind) === want &&
            !i.labelSelector &&
            !i.fieldSelector &&
            (i.namespace === undefined || i.namespace === cache.namespace),
        );
      return inf?.hasSynced ? (inf.list() as unknown as T[]) : undefined;
    },
  };
}

export interface CacheGaugeOptions<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  /** The kind whose cached objects are counted. */
  kind: KindRef;
  /** The samples, from every cached object of `kind`: pure, called at each scrape. */
  samples(objects: readonly KubeObject[]): Iterable<[Record<L, string>, number]>;
}

/**
 * Samples of a cache gauge counting objects by one label (`cacheGauge`'s `samples`). Every
 * known value is reported, zero or not, so a series never vanishes; an object whose value
 * is not known counts under `fallback`, or not at all without one.
 */
export function countBy<L extends string>(
  objects: readonly KubeObject[],
  label: L,
  known: readonly string[],
  labelOf: (o: KubeObject) => string | undefined,
  fallback?: string,
): [Record<L, string>, number][] {
  const counts = new Map<string, number>([...known, ...(fallback ? [fallback] : [])].map((v) => [v, 0]));
  for (const o of objects) {
    const v = labelOf(o);
    const key = v !== undefined && counts.has(v) ? v : fallback;
    if (key !== undefined) counts.set(key, counts.get(key)! + 1);
  }
  return [...counts].map(([v, n]) => [{ [label]: v } as Record<L, string>, n]);
}

/**
 * The registry's metric of this name, made the first time. A capability added to one
 * manager twice (two PodGroup controllers of different names) then shares its metrics
 * instead of failing to register the same names again.
 */
function once<T>(m: MetricsContext, name: string, make: () => T): T {
  return (m.registry.getSingleMetric(name) as T | undefined) ?? make();
}

/** A counter in the manager's registry (shared by every controller that asks for its name). */
export function counter<L extends string>(
  m: MetricsContext,
  opts: Omit<CounterConfiguration<L>, 'registers'>,
): Counter<L> {
  return once(m, opts.name, () => new Counter<L>({ ...opts, registers: [m.registry] }));
}

/** A histogram in the manager's registry (shared by every controller that asks for its name). */
export function histogram<L extends string>(
  m: MetricsContext,
  opts: Omit<HistogramConfiguration<L>, 'registers'>,
): Histogram<L> {
  return once(m, opts.name, () => new Histogram<L>({ ...opts, registers: [m.registry] }));
}

/** A gauge recomputed from the cached objects of one kind at every scrape. */
export function cacheGauge<L extends string>(m: MetricsContext, opts: CacheGaugeOptions<L>): Gauge<L> {
  return once(m, opts.name, () => makeCacheGauge(m, opts));
}

function makeCacheGauge<L extends string>(m: MetricsContext, opts: CacheGaugeOptions<L>): Gauge<L> {
  const { cache } = m;
  return new Gauge<L>({
    name: opts.name,
    help: opts.help,
    labelNames: opts.labelNames,
    registers: [m.registry],
    collect() {
      // Series of values no longer present go: each scrape says only what is true now.
      this.reset();
      const objects = cache.list(opts.kind);
      if (!objects) {
        // prom-client always reports a gauge without labels: NaN says "not known yet", not 0.
        if (opts.labelNames.length === 0) this.set(Number.NaN);
        return;
      }
      for (const [labels, value] of opts.samples(objects)) this.set(labels, value);
    },
  });
}
