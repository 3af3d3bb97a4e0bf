/**
 * A controller's own metrics (the definition's `metrics` hook) served by the manager's
 * /metrics over HTTP: gauges computed from the cache at scrape time, counters fed from
 * reconciles through ctx.metrics, and a manager started again in the same process with
 * the very same definition.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type Client,
  type ControllerDefinition,
  cacheGauge,
  counter,
  type KubeObject,
  Manager,
} from '../../src/runtime/index.ts';
import { createNamespace, startCluster, type TestCluster } from './cluster.ts';
import { CONFIGMAP, SECRET } from './example-controller.ts';
import { scrapeUntil } from './scrape.ts';

interface TallyMetrics {
  reconciled(): void;
}

/** Reconciles ConfigMaps, counting reconciles and reporting ConfigMaps by their `colour` label. */
function tallyController(name = 'tally'): ControllerDefinition<TallyMetrics> {
  return {
    name,
    for: CONFIGMAP,
    metrics(m) {
      cacheGauge(m, {
        name: 'test_configmaps',
        help: 'ConfigMaps by colour.',
        labelNames: ['colour'],
        kind: CONFIGMAP,
        samples(objects) {
          const counts = new Map<string, number>();
          for (const o of objects) {
            const colour = o.metadata.labels?.colour;
            if (colour) counts.set(colour, (counts.get(colour) ?? 0) + 1);
          }
          return [...counts].map(([colour, n]) => [{ colour }, n]);
        },
      });
      // Nobody watches Secrets: the gauge must say it does not know rather than start an informer.
      cacheGauge(m, {
        name: 'test_secrets',
        help: 'Secrets.',
        labelNames: [],
        kind: SECRET,
        samples: (objects) => [[{}, objects.length]],
      });
      const reconciles = counter(m, { name: 'test_reconciles_total', help: 'Reconciles.' });
      return { reconciled: () => reconciles.inc() };
    },
    reconcile(_key, ctx) {
      ctx.metrics.reconciled();
    },
  };
}

function configMap(ns: string, name: string, colour: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels: { colour } } };
}

describe("a controller's own metrics", () => {
  let cluster: TestCluster;
  let client: Client;
  let ns: string;
  const def = tallyController();
  const newManager = () => {
    const mgr = new Manager({
      kubeConfig: cluster.newKubeConfig(),
      namespace: ns,
      healthProbeAddress: '127.0.0.1:0',
      processMetrics: false,
    });
    mgr.add(def);
    return mgr;
  };

  before(async () => {
    cluster = await startCluster();
    client = cluster.client;
    ns = await createNamespace(client, 'metrics');
  });
  after(() => cluster.close());

  test('are served at /metrics: gauges from the cache at scrape time, counters from reconciles', async () => {
    const mgr = newManager();
    await mgr.start();
    try {
      for (const [name, colour] of [
        ['a', 'red'],
        ['b', 'red'],
        ['c', 'blue'],
      ] as const) {
        await client.create(configMap(ns, name, colour));
      }
      const s = await scrapeUntil(
        mgr,
        'two red and one blue ConfigMap, each reconciled',
        (s) =>
          s.value('test_configmaps', { colour: 'red' }) === 2 &&
          s.value('test_configmaps', { colour: 'blue' }) === 1 &&
          (s.value('test_reconciles_total') ?? 0) >= 3,
      );
      assert.ok(Number.isNaN(s.value('test_secrets')));

      // A value no object has any more is not reported as a stale series.
      await client.delete(configMap(ns, 'c', 'blue'));
      await scrapeUntil(mgr, 'the blue series gone', (s) => s.all('test_configmaps').length === 1);
    } finally {
      await mgr.stop();
    }
  });

  test('two controllers of one kind in one manager share the metric names they both register', async () => {
    const mgr = new Manager({
      kubeConfig: cluster.newKubeConfig(),
      namespace: ns,
      healthProbeAddress: '127.0.0.1:0',
      processMetrics: false,
    });
    mgr.add(tallyController('tally-a'));
    mgr.add(tallyController('tally-b'));
    await mgr.start();
    try {
      await client.create(configMap(ns, 'shared', 'violet'));
      await scrapeUntil(
        mgr,
        'both controllers counted in the one counter',
        (s) =>
          (s.value('controller_runtime_reconcile_total', { controller: 'tally-a', result: 'success' }) ??
            0) >= 1 &&
          (s.value('controller_runtime_reconcile_total', { controller: 'tally-b', result: 'success' }) ??
            0) >= 1 &&
          (s.value('test_reconciles_total') ?? 0) >= 2 &&
          s.value('test_configmaps', { colour: 'violet' }) === 1,
      );
    } finally {
      await mgr.stop();
      await client.delete(configMap(ns, 'shared', 'violet'));
    }
  });

  test('a manager started again in the same process, with the same definition, registers them anew', async () => {
    const first = newManager();
    await first.start();
    await scrapeUntil(first, 'the first manager to count the ConfigMaps', (s) => {
      return s.value('test_configmaps', { colour: 'red' }) === 2;
    });
    const firstCount = (await first.metrics.registry.getSingleMetric('test_reconciles_total')?.get())
      ?.values[0]?.value;
    assert.ok(firstCount);
    await first.stop();
    // Stopped, the manager's registry is emptied: nothing it held stays reachable through it.
    assert.deepEqual(first.metrics.registry.getMetricsAsArray(), []);

    const second = newManager();
    await second.start();
    try {
      await client.create(configMap(ns, 'd', 'green'));
      const s = await scrapeUntil(
        second,
        'the second manager to report the cache and count its own reconciles',
        (s) =>
          s.value('test_configmaps', { colour: 'red' }) === 2 &&
          s.value('test_configmaps', { colour: 'green' }) === 1 &&
          (s.value('test_reconciles_total') ?? 0) >= 3,
      );
      assert.ok(s.value('controller_runtime_reconcile_total', { controller: 'tally', result: 'success' }));
      // The second manager's reconciles went to its own registry, not to the stopped one's.
      assert.deepEqual(first.metrics.registry.getMetricsAsArray(), []);
      assert.notEqual(second.metrics.registry, first.metrics.registry);
    } finally {
      await second.stop();
    }
  });
});
