import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import type { Cache } from '../../src/runtime/cache.ts';
import type { Client } from '../../src/runtime/client.ts';
import { ControllerRunner } from '../../src/runtime/controller.ts';
import type { EventRecorder } from '../../src/runtime/events.ts';
import type { EventHandler } from '../../src/runtime/informer.ts';
import { createLogger } from '../../src/runtime/log.ts';

const KIND = { apiVersion: 'v1', kind: 'ConfigMap' };

// The reconcile's logger is made on first use: every line still names the key and one reconcileID per reconcile.
test('a reconcile that logs, or fails, logs its key and reconcileID; one that logs nothing writes nothing', async () => {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  let handler: EventHandler | undefined;
  const cache = {
    informerFor: async () => ({
      addHandler(h: EventHandler) {
        handler = h;
        return { remove() {} };
      },
    }),
  } as unknown as Cache;
  const client = { withFence: () => client } as unknown as Client;
  const done = new Set<string>();
  let finished: () => void = () => {};
  const allDone = new Promise<void>((resolve) => {
    finished = resolve;
  });
  const runner = new ControllerRunner(
    {
      name: 'c',
      for: KIND,
      reconcile(key, ctx) {
        if (key === 'ns/talks') {
          ctx.log.info('one');
          ctx.log.info('two');
        }
        done.add(key);
        if (done.size === 3) finished();
        if (key === 'ns/fails') throw new Error('boom');
      },
    },
    {
      cache,
      client,
      recorder: {} as EventRecorder,
      logger: createLogger({ level: 'info', format: 'json', destination }),
    },
  );
  await runner.start();
  try {
    for (const name of ['talks', 'quiet', 'fails']) {
      handler?.add?.({ ...KIND, metadata: { name, namespace: 'ns' } }, false);
    }
    await allDone;
  } finally {
    await runner.stop(1000);
  }
  const byKey = (k: string) => lines.filter((l) => l.key === k);
  const talks = byKey('ns/talks');
  assert.deepEqual(
    talks.map((l) => l.msg),
    ['one', 'two'],
  );
  assert.ok(typeof talks[0]?.reconcileID === 'string' && talks[0].reconcileID === talks[1]?.reconcileID);
  assert.equal(byKey('ns/quiet').length, 0);
  const fails = byKey('ns/fails');
  assert.equal(fails[0]?.msg, 'reconcile failed; retrying with backoff');
  assert.ok(typeof fails[0]?.reconcileID === 'string' && fails[0].reconcileID !== talks[0]?.reconcileID);
});
