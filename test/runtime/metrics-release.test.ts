import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { RuntimeMetrics } from '../../src/runtime/metrics.ts';

/** A queue probe that counts how often the gauges read it. */
function probe() {
  const reads = { n: 0 };
  return {
    reads,
    queue: {
      unfinishedWorkSeconds: () => {
        reads.n++;
        return 1;
      },
      longestRunningProcessorSeconds: () => 1,
    },
  };
}

test('release lets go of the queues and empties the registry the metrics made', async () => {
  // Process metrics on: their garbage-collection observer keeps the registry for good.
  const metrics = new RuntimeMetrics({ processMetrics: true });
  const { reads, queue } = probe();
  metrics.trackQueue('demo', queue);
  await metrics.registry.metrics();
  assert.equal(reads.n, 1);
  metrics.release();
  assert.deepEqual(metrics.registry.getMetricsAsArray(), []);
  await metrics.queueUnfinished.get();
  assert.equal(reads.n, 1, 'the gauge no longer reads the queue');
});

test('release leaves a registry it was given alone', () => {
  const registry = new Registry();
  const metrics = new RuntimeMetrics({ registry, processMetrics: false });
  metrics.release();
  assert.ok(registry.getSingleMetric('controller_runtime_reconcile_total'));
});
