import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../../src/lib/clock.ts';
import { ItemExponentialRateLimiter } from '../../src/lib/ratelimiter.ts';
import { WorkQueue } from '../../src/lib/workqueue.ts';

function newQueue(clock = new ManualClock()) {
  return {
    clock,
    q: new WorkQueue<string>({ clock, rateLimiter: new ItemExponentialRateLimiter<string>(5, 1_000_000) }),
  };
}

/** Resolves with whether `p` settled after pending microtasks ran. */
async function settled<T>(p: Promise<T>): Promise<{ done: boolean; value?: T }> {
  const marker = Symbol('pending');
  const value = await Promise.race([p, new Promise<typeof marker>((r) => setImmediate(() => r(marker)))]);
  return value === marker ? { done: false } : { done: true, value: value as T };
}

describe('WorkQueue', () => {
  test('deduplicates keys added before they are processed, in FIFO order', async () => {
    const { q } = newQueue();
    q.add('a');
    q.add('b');
    q.add('a');
    q.add('c');
    assert.equal(q.len(), 3);
    assert.equal(await q.get(), 'a');
    assert.equal(await q.get(), 'b');
    assert.equal(await q.get(), 'c');
    assert.equal(q.len(), 0);
  });

  test('never hands out a key that is being processed; re-adds it after done', async () => {
    const { q } = newQueue();
    q.add('a');
    const first = await q.get();
    assert.equal(first, 'a');
    q.add('a');
    q.add('a');
    assert.equal(q.len(), 0, 'in-flight key must not be queued');
    assert.equal(q.isDirty('a'), true);
    const second = q.get();
    assert.equal((await settled(second)).done, false);
    q.done('a');
    assert.deepEqual(await settled(second), { done: true, value: 'a' });
    q.done('a');
    assert.equal(q.len(), 0);
    assert.equal(q.inFlight(), 0);
  });

  test('a waiting worker receives the next added key', async () => {
    const { q } = newQueue();
    const waiting = q.get();
    assert.equal((await settled(waiting)).done, false);
    q.add('x');
    assert.equal(await waiting, 'x');
    assert.equal(q.inFlight(), 1);
  });

  test('concurrent workers each receive distinct keys', async () => {
    const { q } = newQueue();
    const workers = [q.get(), q.get(), q.get()];
    for (const k of ['a', 'b', 'a', 'c', 'b']) q.add(k);
    const got = await Promise.all(workers);
    assert.deepEqual(got.sort(), ['a', 'b', 'c']);
  });

  test('addAfter delays a key and keeps the earliest requested time', async () => {
    const { q, clock } = newQueue();
    q.addAfter('a', 1000);
    q.addAfter('a', 300);
    q.addAfter('a', 2000);
    assert.equal(q.len(), 0);
    assert.equal(q.delayedLen(), 1);
    clock.advance(299);
    assert.equal(q.len(), 0);
    clock.advance(1);
    assert.equal(q.len(), 1);
    assert.equal(q.delayedLen(), 0);
    assert.equal(await q.get(), 'a');
    q.done('a');
    clock.advance(5000);
    assert.equal(q.len(), 0, 'superseded delays must not fire again');
  });

  test('addAfter with a non-positive delay adds at once', () => {
    const { q } = newQueue();
    q.addAfter('a', 0);
    q.addAfter('b', -5);
    assert.equal(q.len(), 2);
  });

  test('delayed keys fire in time order across keys', async () => {
    const { q, clock } = newQueue();
    q.addAfter('late', 50);
    q.addAfter('early', 10);
    q.addAfter('mid', 30);
    clock.advance(100);
    assert.deepEqual([await q.get(), await q.get(), await q.get()], ['early', 'mid', 'late']);
  });

  test('addRateLimited backs off per key until forgotten', async () => {
    const { q, clock } = newQueue();
    q.addRateLimited('a');
    clock.advance(4);
    assert.equal(q.len(), 0);
    clock.advance(1);
    assert.equal(await q.get(), 'a');
    q.done('a');
    q.addRateLimited('a');
    clock.advance(9);
    assert.equal(q.len(), 0);
    clock.advance(1);
    assert.equal(q.len(), 1);
    assert.equal(q.numRequeues('a'), 2);
    q.forget('a');
    assert.equal(q.numRequeues('a'), 0);
  });

  test('shutDown releases waiting workers and ignores new keys', async () => {
    const { q } = newQueue();
    const waiting = q.get();
    q.shutDown();
    assert.equal(await waiting, undefined);
    q.add('a');
    q.addAfter('b', 10);
    q.addRateLimited('c');
    assert.equal(q.len(), 0);
    assert.equal(await q.get(), undefined);
    assert.equal(q.shuttingDown, true);
  });

  test('shutDownWithDrain waits for in-flight keys only', async () => {
    const { q, clock } = newQueue();
    q.add('a');
    q.add('b');
    q.addAfter('c', 100);
    const a = await q.get();
    assert.equal(a, 'a');
    const drained = q.shutDownWithDrain();
    assert.equal((await settled(drained)).done, false);
    assert.equal(await q.get(), undefined, 'queued keys are not started after shutdown');
    clock.advance(1000);
    q.done('a');
    assert.equal((await settled(drained)).done, true);
    assert.equal(q.len(), 1, 'b was never started');
  });

  test('shutDownWithDrain resolves at once when nothing is in flight', async () => {
    const { q } = newQueue();
    q.add('a');
    await q.shutDownWithDrain();
    await q.shutDownWithDrain();
  });

  test('reports adds, depth, latency, work duration, retries and unfinished work', async () => {
    const clock = new ManualClock();
    const seen = {
      added: 0,
      depth: [] as number[],
      latency: [] as number[],
      work: [] as number[],
      retried: 0,
    };
    const q = new WorkQueue<string>({
      clock,
      rateLimiter: new ItemExponentialRateLimiter<string>(5, 1_000_000),
      metrics: {
        added: () => seen.added++,
        depth: (n) => seen.depth.push(n),
        queueLatency: (s) => seen.latency.push(s),
        workDuration: (s) => seen.work.push(s),
        retried: () => seen.retried++,
      },
    });
    q.add('a');
    q.add('a');
    q.add('b');
    assert.equal(seen.added, 2);
    clock.advance(2000);
    await q.get();
    assert.deepEqual(seen.latency, [2]);
    clock.advance(1500);
    await q.get();
    clock.advance(500);
    assert.equal(q.unfinishedWorkSeconds(), 2 + 0.5);
    assert.equal(q.longestRunningProcessorSeconds(), 2);
    q.done('a');
    assert.deepEqual(seen.work, [2]);
    q.addRateLimited('a');
    assert.equal(seen.retried, 1);
    assert.deepEqual(seen.depth, [1, 2, 1, 0]);
  });
});
