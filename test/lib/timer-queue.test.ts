import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TimerQueue } from '../../src/lib/timer-queue.ts';

describe('TimerQueue', () => {
  test('fires callbacks in deadline order, past deadlines at once', async () => {
    const q = new TimerQueue();
    const fired: string[] = [];
    const now = Date.now();
    const all = new Promise<void>((resolve) => {
      q.schedule(now + 30, () => fired.push('c'));
      q.schedule(now + 10, () => fired.push('b'));
      q.schedule(now - 1000, () => fired.push('a'));
      q.schedule(now + 40, () => resolve());
    });
    await all;
    assert.deepEqual(fired, ['a', 'b', 'c']);
    assert.equal(q.size, 0);
    q.stop();
  });

  test('a cancelled timer never fires, and cancelled entries are compacted away', async () => {
    const q = new TimerQueue();
    let fired = 0;
    const far = Date.now() + 3_600_000;
    const handles = Array.from({ length: 3000 }, (_, i) => q.schedule(far + i, () => fired++));
    for (const h of handles.slice(0, 2500)) q.cancel(h);
    assert.ok(q.size <= 1500, `heap holds ${q.size} entries`);
    assert.equal(handles[0]!.active, false);
    assert.equal(handles[2999]!.active, true);
    await new Promise<void>((resolve) => {
      const h = q.schedule(Date.now() + 5, () => fired++);
      q.cancel(h);
      q.schedule(Date.now() + 10, () => resolve());
    });
    assert.equal(fired, 0);
    q.stop();
    assert.equal(handles[2999]!.active, false);
  });

  test('a callback that throws does not stop the queue', async () => {
    const q = new TimerQueue();
    await new Promise<void>((resolve) => {
      q.schedule(Date.now(), () => {
        throw new Error('boom');
      });
      q.schedule(Date.now() + 1, () => resolve());
    });
    q.stop();
  });
});
