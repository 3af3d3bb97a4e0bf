import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseAddress } from '../../src/runtime/address.ts';
import { HealthServer } from '../../src/runtime/health.ts';
import { RuntimeMetrics } from '../../src/runtime/metrics.ts';

describe('parseAddress', () => {
  test('accepts Go-style bind addresses', () => {
    assert.deepEqual(parseAddress(':8081'), { host: '0.0.0.0', port: 8081 });
    assert.deepEqual(parseAddress('127.0.0.1:0'), { host: '127.0.0.1', port: 0 });
    assert.deepEqual(parseAddress('[::1]:9443'), { host: '::1', port: 9443 });
    assert.deepEqual(parseAddress('8080'), { host: '0.0.0.0', port: 8080 });
    assert.throws(() => parseAddress('nope'), /invalid bind address/);
  });
});

describe('HealthServer', () => {
  const metrics = new RuntimeMetrics({ processMetrics: false });
  const server = new HealthServer({ address: '127.0.0.1:0', registry: metrics.registry });
  let synced = false;

  before(async () => {
    server.addReadyzCheck('informers', () => {
      if (!synced) throw new Error('caches not synced');
    });
    server.addHealthzCheck('loop', () => true);
    await server.start();
  });
  after(() => server.stop());

  test('readyz fails until its checks pass, with kube-style verbose output', async () => {
    let res = await fetch(`${server.url}/readyz`);
    assert.equal(res.status, 500);
    assert.match(await res.text(), /\[-\]informers failed: caches not synced/);
    synced = true;
    res = await fetch(`${server.url}/readyz`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'ok');
    res = await fetch(`${server.url}/readyz?verbose`);
    const body = await res.text();
    assert.match(body, /\[\+\]ping ok/);
    assert.match(body, /\[\+\]informers ok/);
    assert.match(body, /readyz check passed/);
  });

  test('serves individual checks and 404 for unknown ones', async () => {
    assert.equal((await fetch(`${server.url}/healthz/loop`)).status, 200);
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    assert.equal((await fetch(`${server.url}/healthz/nope`)).status, 404);
    assert.equal((await fetch(`${server.url}/other`)).status, 404);
  });

  test('serves controller-runtime metric names on /metrics', async () => {
    metrics.initController('demo', 2);
    metrics.reconcileTotal.inc({ controller: 'demo', result: 'success' });
    const hooks = metrics.queueHooks('demo');
    hooks.added?.();
    metrics.trackQueue('demo', { unfinishedWorkSeconds: () => 1.5, longestRunningProcessorSeconds: () => 1 });
    metrics.setLeader('troupe', true);
    const res = await fetch(`${server.url}/metrics`);
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /controller_runtime_reconcile_total\{controller="demo",result="success"\} 1/);
    assert.match(text, /controller_runtime_reconcile_total\{controller="demo",result="requeue_after"\} 0/);
    assert.match(text, /controller_runtime_max_concurrent_reconciles\{controller="demo"\} 2/);
    assert.match(text, /workqueue_adds_total\{name="demo",controller="demo"\} 1/);
    assert.match(text, /workqueue_unfinished_work_seconds\{name="demo",controller="demo"\} 1.5/);
    assert.match(text, /workqueue_longest_running_processor_seconds\{name="demo",controller="demo"\} 1/);
    assert.match(text, /leader_election_master_status\{name="troupe"\} 1/);
    for (const name of [
      'controller_runtime_reconcile_errors_total',
      'controller_runtime_reconcile_time_seconds',
      'controller_runtime_active_workers',
      'workqueue_depth',
      'workqueue_queue_duration_seconds',
      'workqueue_work_duration_seconds',
      'workqueue_retries_total',
    ]) {
      assert.match(text, new RegExp(`# TYPE ${name} `), name);
    }
  });
});
