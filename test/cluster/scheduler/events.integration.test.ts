/**
 * The scheduler's events.k8s.io/v1 recorder against the embedded API server, on a manual
 * clock: client-go's tools/events series (create, patch at the second occurrence, count in
 * memory after, the 30-minute refresh and the 6-minute finish), read back through both API
 * versions and kubectl.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { KubeObject } from '../../../src/cluster/apiserver/types.ts';
import { ClusterClient, GVR } from '../../../src/cluster/client.ts';
import { FINISH_MS, REFRESH_MS, SeriesEventRecorder } from '../../../src/cluster/scheduler/events.ts';
import { truncateMessage } from '../../../src/cluster/scheduler/scheduler.ts';
import { ManualClock } from '../../../src/lib/clock.ts';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';

const T0 = Date.UTC(2026, 0, 1);
const NS = 'default';

function pod(name: string, rv: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, uid: `uid-${name}`, resourceVersion: rv },
  };
}

interface EventV1 extends KubeObject {
  note: string;
  eventTime: string;
  series?: { count: number; lastObservedTime: string };
  regarding: Record<string, string>;
  related?: Record<string, string>;
}

describe('the scheduler’s Event series', () => {
  let t: TestServer;
  let client: ClusterClient;
  let clock: ManualClock;
  let rec: SeriesEventRecorder;

  before(async () => {
    t = await startTestServer();
    client = new ClusterClient(t.server.api, 'system:kube-scheduler');
  });
  after(async () => {
    await rec?.stop();
    await t.close();
  });
  beforeEach(async () => {
    await rec?.stop();
    for (const e of client.list(GVR.events, NS)) await client.delete(GVR.events, NS, e.metadata.name!);
    clock = new ManualClock(T0);
    rec = new SeriesEventRecorder(client, {
      controller: 'default-scheduler',
      instance: 'default-scheduler-troupe',
      clock,
    });
  });

  const events = () => client.list<EventV1>(GVR.eventsV1, NS);
  const fail = (p: KubeObject, note: string) =>
    rec.event(p, undefined, 'Warning', 'FailedScheduling', 'Scheduling', note);
  /** Moves the manual clock and lets the writes its timers queued finish. */
  const advance = async (ms: number) => {
    clock.advance(ms);
    await rec.flush();
  };

  test('the first occurrence creates the Event, the second patches series.count 2, later ones stay in memory', async () => {
    const p = pod('web-0', '7');
    fail(p, '0/3 nodes are available: 3 Insufficient cpu.');
    await rec.flush();
    const [created] = events();
    assert.ok(created);
    assert.equal(created.metadata.name, `web-0.${(BigInt(T0) * 1_000_000n).toString(16)}`);
    assert.equal(created.eventTime, '2026-01-01T00:00:00.000000Z');
    assert.equal(created.reportingController, 'default-scheduler');
    assert.equal(created.reportingInstance, 'default-scheduler-troupe');
    assert.equal(created.action, 'Scheduling');
    assert.equal(created.reason, 'FailedScheduling');
    assert.equal(created.type, 'Warning');
    assert.equal(created.note, '0/3 nodes are available: 3 Insufficient cpu.');
    assert.deepEqual(created.regarding, {
      kind: 'Pod',
      namespace: NS,
      name: 'web-0',
      uid: 'uid-web-0',
      apiVersion: 'v1',
      resourceVersion: '7',
    });
    assert.equal(created.series, undefined);

    // Another note on the same pod resourceVersion joins the series: the note is not in the key.
    await advance(1000);
    fail(p, 'a different verdict');
    await rec.flush();
    const [patched] = events();
    assert.equal(events().length, 1);
    assert.deepEqual(patched!.series, { count: 2, lastObservedTime: '2026-01-01T00:00:01.000000Z' });
    assert.equal(patched!.note, created.note);
    const rv = patched!.metadata.resourceVersion;

    await advance(1000);
    fail(p, 'a different verdict');
    fail(p, 'a different verdict');
    await rec.flush();
    assert.equal(
      events()[0]!.metadata.resourceVersion,
      rv,
      'the third and later occurrences are not written',
    );

    // The core/v1 view: what kubectl describe reads.
    const core = client.list(GVR.events, NS)[0]!;
    assert.equal(core.message, created.note);
    assert.equal(core.reportingComponent, 'default-scheduler');
    assert.deepEqual(core.series, patched!.series);
    assert.equal(core.count, undefined);

    // Another resourceVersion of the pod is another Event.
    fail(pod('web-0', '8'), 'a different verdict');
    await rec.flush();
    assert.equal(events().length, 2);
  });

  test('the related object is part of the key and of the Event', async () => {
    const victim = pod('low', '3');
    rec.event(
      victim,
      pod('high', '9'),
      'Normal',
      'Preempted',
      'Preempting',
      'Preempted by pod uid-high on node n',
    );
    rec.event(
      victim,
      pod('other', '4'),
      'Normal',
      'Preempted',
      'Preempting',
      'Preempted by pod uid-other on node n',
    );
    await rec.flush();
    const got = events().sort((a, b) => a.related!.name!.localeCompare(b.related!.name!));
    assert.deepEqual(
      got.map((e) => [e.related?.name, e.series]),
      [
        ['high', undefined],
        ['other', undefined],
      ],
    );
  });

  test('every 6 minutes a series not observed for 6 minutes is written a last time and forgotten', async () => {
    const p = pod('stuck', '1');
    fail(p, 'no room');
    await advance(1000);
    for (let i = 0; i < 4; i++) fail(p, 'no room');
    await rec.flush();
    assert.equal(events()[0]!.series?.count, 2);
    assert.equal(rec.remembered, 1);

    // At 6 minutes the last observation (00:00:01) is not yet 6 minutes old.
    await advance(FINISH_MS - 1000);
    assert.equal(events()[0]!.series?.count, 2);
    assert.equal(rec.remembered, 1);
    // At 12 minutes it is: the final count is written and the series forgotten.
    await advance(FINISH_MS);
    assert.deepEqual(events()[0]!.series, { count: 5, lastObservedTime: '2026-01-01T00:00:01.000000Z' });
    assert.equal(rec.remembered, 0);
    assert.equal(clock.pendingTimers(), 0, 'nothing remembered, no timer armed');

    // The next occurrence starts a new Event.
    fail(p, 'no room');
    await rec.flush();
    assert.equal(events().length, 2);
  });

  test('a single Event older than 6 minutes is forgotten without a write', async () => {
    fail(pod('once', '1'), 'no room');
    await rec.flush();
    const rv = events()[0]!.metadata.resourceVersion;
    await advance(2 * FINISH_MS);
    assert.equal(rec.remembered, 0);
    assert.equal(events()[0]!.metadata.resourceVersion, rv);
    fail(pod('once', '1'), 'no room');
    await rec.flush();
    assert.equal(events().length, 2, 'forgotten: the same occurrence creates another Event');
  });

  test('every 30 minutes each live series is written again', async () => {
    const p = pod('busy', '1');
    fail(p, 'no room');
    fail(p, 'no room');
    await rec.flush();
    // Observed every 5 minutes, the series never finishes.
    for (let at = 5; at < 30; at += 5) {
      await advance(5 * 60_000);
      fail(p, 'no room');
    }
    await rec.flush();
    assert.equal(events()[0]!.series?.count, 2);
    await advance(REFRESH_MS - 25 * 60_000);
    assert.deepEqual(events()[0]!.series, { count: 7, lastObservedTime: '2026-01-01T00:25:00.000000Z' });
    assert.equal(events().length, 1);
  });

  test('a series whose Event was deleted creates it again, series and all', async () => {
    const p = pod('gone', '1');
    fail(p, 'no room');
    await rec.flush();
    const name = events()[0]!.metadata.name!;
    await client.delete(GVR.eventsV1, NS, name);
    fail(p, 'no room');
    await rec.flush();
    const again = events();
    assert.equal(again.length, 1);
    assert.equal(again[0]!.metadata.name, name);
    assert.equal(again[0]!.note, 'no room');
    assert.equal(again[0]!.series?.count, 2);
  });

  test('kubectl reads the series: describe shows (x3 over …), get events the count', async () => {
    await client.create(GVR.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'shown', namespace: NS },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    const live = client.get(GVR.pods, NS, 'shown')!;
    fail(live, '0/1 nodes are available: 1 Insufficient cpu.');
    fail(live, '0/1 nodes are available: 1 Insufficient cpu.');
    fail(live, '0/1 nodes are available: 1 Insufficient cpu.');
    await advance(2 * FINISH_MS);
    const described = (await t.kubectl(['describe', 'pod', 'shown'])).stdout;
    assert.match(
      described,
      /Warning\s+FailedScheduling\s+\S+ \(x3 over \S+\)\s+default-scheduler\s+0\/1 nodes/,
    );
    const table = (
      await t.kubectl(['get', 'events', '-o', 'wide', '--field-selector', 'reason=FailedScheduling'])
    ).stdout;
    assert.match(
      table,
      /default-scheduler, default-scheduler-troupe\s+0\/1 nodes are available: 1 Insufficient cpu\.\s+\S+\s+3\s/,
    );
    await client.delete(GVR.pods, NS, 'shown', { gracePeriodSeconds: 0 });
  });

  test('the same occurrences on the same clock make the same Events', async () => {
    const run = async (): Promise<string> => {
      for (const e of client.list(GVR.events, NS)) await client.delete(GVR.events, NS, e.metadata.name!);
      await rec.stop();
      clock = new ManualClock(T0);
      rec = new SeriesEventRecorder(client, {
        controller: 'default-scheduler',
        instance: 'default-scheduler-troupe',
        clock,
      });
      for (let i = 0; i < 40; i++) {
        fail(pod(`p-${i % 5}`, String(1 + Math.floor(i / 20))), `verdict ${i}`);
        clock.advance(37_000);
      }
      await advance(REFRESH_MS);
      return JSON.stringify(
        events()
          .map((e) => [e.metadata.name, e.eventTime, e.note, e.series, e.regarding.resourceVersion])
          .sort(),
      );
    };
    const first = await run();
    assert.equal(await run(), first);
    assert.match(first, /"count":\d/);
  });

  test('stop cancels the periodic passes', async () => {
    fail(pod('late', '1'), 'no room');
    fail(pod('late', '1'), 'no room');
    assert.ok(clock.pendingTimers() > 0);
    await rec.stop();
    assert.equal(clock.pendingTimers(), 0);
    fail(pod('late', '1'), 'no room');
    await rec.flush();
    assert.equal(events().length, 1, 'nothing is recorded after stop; what was queued is written');
    assert.equal(events()[0]!.series?.count, 2);
  });
});

test('a verdict over 1 kB is cut for the note as kube-scheduler cuts it, and the API takes it', async () => {
  assert.equal(truncateMessage('short'), 'short');
  const long = `0/9 nodes are available: ${'x'.repeat(2000)}`;
  const cut = truncateMessage(long);
  assert.equal(cut.length, 1024);
  assert.ok(cut.endsWith(' ...'));
  assert.equal(cut.slice(0, 1020), long.slice(0, 1020));
  const t = await startTestServer();
  try {
    const client = new ClusterClient(t.server.api, 'system:kube-scheduler');
    const rec = new SeriesEventRecorder(client, { controller: 'default-scheduler', instance: 'i' });
    rec.event(pod('long', '1'), undefined, 'Warning', 'FailedScheduling', 'Scheduling', cut);
    rec.event(pod('longer', '1'), undefined, 'Warning', 'FailedScheduling', 'Scheduling', `${cut}!`);
    await rec.stop();
    const notes = client.list<EventV1>(GVR.eventsV1, NS).map((e) => e.note);
    assert.deepEqual(notes, [cut], 'a note over 1 kB is refused (note: can have at most 1024 characters)');
  } finally {
    await t.close();
  }
});
