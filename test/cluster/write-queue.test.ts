import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WriteQueue } from '../../src/cluster/events.ts';

test('a WriteQueue runs writes one at a time in order; a failure goes to onError and the rest still run', async () => {
  const ran: number[] = [];
  const failed: number[] = [];
  let running = 0;
  const q = new WriteQueue<number>(
    async (n) => {
      running++;
      assert.equal(running, 1, 'one write at a time');
      await new Promise((r) => setImmediate(r));
      running--;
      if (n === 2) throw new Error('refused');
      ran.push(n);
    },
    (n) => failed.push(n),
  );
  for (let i = 0; i < 2000; i++) q.push(i);
  await q.flush();
  assert.equal(ran.length, 1999);
  assert.deepEqual(ran.slice(0, 3), [0, 1, 3]);
  assert.deepEqual(failed, [2]);
  q.push(5000);
  await q.flush();
  assert.equal(ran.at(-1), 5000, 'a write queued after a flush runs too');
});
