import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Loop } from '../../../src/cluster/workloads/loop.ts';
import { waitFor } from '../../support/wait.ts';

describe('work loop', () => {
  test('deduplicates queued keys', async () => {
    const runs: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const loop = new Loop({
      name: 't',
      workers: 1,
      sync: async (k) => {
        if (k === 'block') await gate;
        runs.push(k);
      },
    });
    loop.start();
    loop.enqueue('block');
    await waitFor('block running', () => !loop.idle && loop.depth === 0);
    loop.enqueue('a');
    loop.enqueue('a');
    loop.enqueue('b');
    loop.enqueue('a');
    assert.equal(loop.depth, 2);
    release();
    await waitFor('drained', () => loop.idle && runs.length === 3);
    assert.deepEqual(runs, ['block', 'a', 'b']);
    await loop.stop();
  });

  test('never runs one key twice at once, and reruns a key added while it ran', async () => {
    let concurrent = 0;
    let maxConcurrent = 0;
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const loop = new Loop({
      name: 't',
      workers: 4,
      sync: async () => {
        concurrent++;
        maxConcurrent = Math.max(maxConcurrent, concurrent);
        runs++;
        if (runs === 1) await gate;
        concurrent--;
      },
    });
    loop.start();
    loop.enqueue('k');
    await waitFor('first run started', () => runs === 1);
    loop.enqueue('k');
    loop.enqueue('k');
    assert.equal(loop.depth, 0, 'a running key is marked dirty, not queued');
    release();
    await waitFor('rerun once', () => runs === 2 && loop.idle);
    assert.equal(maxConcurrent, 1);
    await loop.stop();
  });

  test('retries a failing key with growing delays until it succeeds', async () => {
    const at: number[] = [];
    const loop = new Loop({
      name: 't',
      backoff: { baseMs: 20, maxMs: 1000 },
      sync: async () => {
        at.push(Date.now());
        if (at.length < 3) throw new Error('not yet');
      },
    });
    loop.start();
    loop.enqueue('k');
    await waitFor('third attempt', () => at.length === 3);
    // Timers never fire early, so these lower bounds hold however loaded the machine is.
    assert.ok(at[1]! - at[0]! >= 19, 'the first retry waits the base delay');
    assert.ok(at[2]! - at[1]! >= 39, 'the second retry waits twice as long');
    await loop.stop();
  });

  test('enqueueAfter keeps the earliest request and stop cancels pending ones', async () => {
    const runs: string[] = [];
    const loop = new Loop({ name: 't', sync: async (k) => void runs.push(k) });
    loop.start();
    loop.enqueueAfter('late', 60_000);
    loop.enqueueAfter('soon', 60_000);
    loop.enqueueAfter('soon', 5);
    await waitFor('soon ran', () => runs.includes('soon'));
    await loop.stop();
    assert.deepEqual(runs, ['soon']);
  });
});
