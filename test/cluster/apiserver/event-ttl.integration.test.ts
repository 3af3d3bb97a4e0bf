/**
 * Events expire one TTL after their last write (kube-apiserver's --event-ttl), and keep that
 * TTL across a restart from the data directory.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ManualClock } from '../../../src/lib/clock.ts';
import { startTestServer } from '../../support/apiserver.ts';
import { waitFor } from '../../support/wait.ts';

const event = (name: string) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: 'default' },
    involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
    reason: 'Testing',
    message: 'an event that expires',
    type: 'Normal',
  });

test('an Event is deleted one TTL after its last write; an update renews it', async () => {
  // Time moves by hand: how long the machine takes between requests cannot decide the test.
  const clock = new ManualClock(Date.now());
  const t = await startTestServer({ eventTtlMs: 1500, eventClock: clock });
  try {
    const created = await t.request('POST', '/api/v1/namespaces/default/events', { body: event('short') });
    assert.equal(created.status, 201);
    const kept = await t.request('POST', '/api/v1/namespaces/default/events', { body: event('renewed') });
    assert.equal(kept.status, 201);
    // An update renews the lease: 'renewed' outlives 'short'.
    clock.advance(1000);
    const upd = await t.request('PATCH', '/api/v1/namespaces/default/events/renewed', {
      body: JSON.stringify({ message: 'again' }),
      contentType: 'application/merge-patch+json',
    });
    assert.equal(upd.status, 200);
    clock.advance(600);
    await waitFor('the first Event to expire', async () => {
      return (await t.request('GET', '/api/v1/namespaces/default/events/short')).status === 404;
    });
    assert.equal((await t.request('GET', '/api/v1/namespaces/default/events/renewed')).status, 200);
    clock.advance(1000);
    await waitFor('the renewed Event to expire too', async () => {
      return (await t.request('GET', '/api/v1/namespaces/default/events/renewed')).status === 404;
    });
  } finally {
    await t.close();
  }
});

test('Events keep their TTL across a restart from the data directory', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-event-ttl-'));
  try {
    const first = await startTestServer({ dataDir: dir, eventTtlMs: 60 * 60 * 1000 });
    assert.equal(
      (await first.request('POST', '/api/v1/namespaces/default/events', { body: event('old') })).status,
      201,
    );
    await first.close();
    // Restarted two seconds later (by its clock) with a TTL the Event has already outlived:
    // it expires as soon as the restored Events are scheduled, which the clock's ticks fire.
    const clock = new ManualClock(Date.now() + 2000);
    const second = await startTestServer({ dataDir: dir, eventTtlMs: 1000, eventClock: clock });
    try {
      await waitFor('the restored Event to expire', async () => {
        clock.advance(0);
        return (await second.request('GET', '/api/v1/namespaces/default/events/old')).status === 404;
      });
    } finally {
      await second.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('an Event restored before its TTL ends expires on its original schedule, not one TTL after the restart', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-event-ttl-'));
  const ttl = 60_000;
  try {
    const first = await startTestServer({ dataDir: dir, eventTtlMs: ttl });
    const created = await first.request('POST', '/api/v1/namespaces/default/events', {
      body: event('later'),
    });
    await first.close();
    assert.equal(created.status, 201);
    // The latest time it carries, as stored (to the second): its expiry counts from there.
    const obj = created.json() as {
      metadata: { creationTimestamp: string; managedFields: { time: string }[] };
    };
    const written = Math.max(
      Date.parse(obj.metadata.creationTimestamp),
      ...obj.metadata.managedFields.map((f) => Date.parse(f.time)),
    );
    // Restarted half-way through its TTL (by the restarted server's clock).
    const clock = new ManualClock(written + ttl / 2);
    const second = await startTestServer({ dataDir: dir, eventTtlMs: ttl, eventClock: clock });
    const status = async () =>
      (await second.request('GET', '/api/v1/namespaces/default/events/later')).status;
    let beforeDue: number;
    try {
      // Not early: a second before its original expiry it is still there.
      clock.advanceTo(written + ttl - 1000);
      beforeDue = await status();
      // Gone at its original expiry; a TTL restarted with the server would keep it 30 s more.
      clock.advanceTo(written + ttl);
      await waitFor('the restored Event to expire at its original time', async () => {
        clock.advance(0);
        return (await status()) === 404;
      });
    } finally {
      await second.close();
    }
    assert.equal(beforeDue, 200);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
