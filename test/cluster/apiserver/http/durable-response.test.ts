import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { test } from 'node:test';
import { holdUntilDurable, shows } from '../../../../src/cluster/apiserver/http/durable-response.ts';

/** A response that records what is sent, and a store whose writes after rv 5 are not yet on disk. */
function fixture() {
  const sent: string[] = [];
  const res = {
    destroyed: false,
    write: (s: string) => {
      sent.push(s);
      return true;
    },
    end: (s?: string) => {
      sent.push(`end:${s ?? ''}`);
    },
  } as unknown as ServerResponse;
  let commit!: () => void;
  const pending = new Promise<void>((r) => {
    commit = r;
  });
  let durableRv = 5;
  const store = {
    currentRv: 7,
    durableAt: (rv: number) => (rv <= durableRv ? undefined : pending),
  };
  const settle = async () => {
    durableRv = 7;
    commit();
    await pending;
    await new Promise((r) => setImmediate(r));
  };
  holdUntilDurable(res, store);
  return { res, sent, settle };
}

test('a response showing a resourceVersion already on disk goes out at once', () => {
  const { res, sent } = fixture();
  shows(res, 4);
  res.end('old object');
  assert.deepEqual(sent, ['end:old object']);
});

test('a response showing a newer resourceVersion waits for its commit; later writes keep their order', async () => {
  const { res, sent, settle } = fixture();
  shows(res, 6);
  res.write('event at 6');
  shows(res, 3);
  res.write('event at 3');
  assert.deepEqual(sent, [], 'held, and what follows queues behind it');
  await settle();
  assert.deepEqual(sent, ['event at 6', 'event at 3']);
});

test('a response naming no resourceVersion (an error) waits for the latest write; 0 shows no stored state', async () => {
  const { res, sent, settle } = fixture();
  res.end('404');
  assert.deepEqual(sent, []);
  await settle();
  assert.deepEqual(sent, ['end:404']);
  const health = fixture();
  shows(health.res, 0);
  health.res.end('ok');
  assert.deepEqual(health.sent, ['end:ok']);
});
