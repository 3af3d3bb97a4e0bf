import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/lib/clock.ts';
import { type Client, EventRecorder, type KubeObject } from '../../src/runtime/index.ts';
import { waitFor } from '../support/wait.ts';
import { createNamespace, startCluster, type TestCluster } from './cluster.ts';

const EVENT = { apiVersion: 'events.k8s.io/v1', kind: 'Event' };

interface Ev extends KubeObject {
  reason: string;
  note: string;
  type: string;
  action: string;
  reportingController: string;
  reportingInstance: string;
  regarding: { kind: string; name: string; namespace: string; uid: string };
  series?: { count: number; lastObservedTime: string };
}

describe('EventRecorder against the embedded API server', () => {
  let cluster: TestCluster;
  let client: Client;
  let ns: string;
  let subject: KubeObject;

  before(async () => {
    cluster = await startCluster();
    client = cluster.client;
    ns = await createNamespace(client);
    subject = await client.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'subject', namespace: ns },
    });
  });
  after(() => cluster.close());

  const events = async (reason: string) =>
    (await client.list<Ev>(EVENT, { namespace: ns })).items.filter((e) => e.reason === reason);

  test('records an events.k8s.io/v1 Event about an object', async () => {
    const rec = new EventRecorder(client, { reportingController: 'troupe/test', reportingInstance: 'pod-1' });
    rec.normal(subject, 'Created', 'Create', 'made something');
    await rec.flush();
    const [ev] = await events('Created');
    assert.ok(ev);
    assert.equal(ev.type, 'Normal');
    assert.equal(ev.action, 'Create');
    assert.equal(ev.note, 'made something');
    assert.equal(ev.reportingController, 'troupe/test');
    assert.equal(ev.reportingInstance, 'pod-1');
    assert.deepEqual(
      [ev.regarding.kind, ev.regarding.name, ev.regarding.namespace, ev.regarding.uid],
      ['ConfigMap', 'subject', ns, subject.metadata.uid],
    );
    assert.equal(ev.series, undefined);
    assert.ok(ev.metadata.name?.startsWith('subject.'));
  });

  test('aggregates repeats into one Event with a series count', async () => {
    const rec = new EventRecorder(client, { reportingController: 'troupe/test', seriesUpdateMs: 0 });
    for (let i = 0; i < 5; i++) rec.warning(subject, 'Flapping', 'Check', 'it flaps');
    await rec.flush();
    await waitFor(async () => (await events('Flapping'))[0]?.series?.count === 5);
    assert.equal((await events('Flapping')).length, 1);
    // A different note is a different event.
    rec.warning(subject, 'Flapping', 'Check', 'it flaps differently');
    await rec.flush();
    assert.equal((await events('Flapping')).length, 2);
  });

  test('coalesces series updates and writes the final count on flush', async () => {
    const writes: string[] = [];
    const rec = new EventRecorder(client, {
      reportingController: 'troupe/test',
      seriesUpdateMs: 60_000,
      onRecorded: (_t, outcome) => writes.push(outcome),
    });
    rec.normal(subject, 'Busy', 'Work', 'working');
    await waitFor(() => writes.length === 1);
    rec.normal(subject, 'Busy', 'Work', 'working');
    await waitFor(() => writes.length === 2);
    assert.deepEqual(writes, ['created', 'series'], 'the first repeat is written at once');
    for (let i = 0; i < 18; i++) rec.normal(subject, 'Busy', 'Work', 'working');
    await rec.flush();
    assert.deepEqual(writes, ['created', 'series', 'series'], 'later repeats wait, then go as one patch');
    assert.equal((await events('Busy'))[0]?.series?.count, 20);
  });

  test('starts a new Event after the series window', async () => {
    const rec = new EventRecorder(client, { reportingController: 'troupe/test', seriesWindowMs: 0 });
    rec.normal(subject, 'Tick', 'Tick', 'tick');
    await rec.flush();
    rec.normal(subject, 'Tick', 'Tick', 'tick');
    await rec.flush();
    const ticks = await events('Tick');
    assert.equal(ticks.length, 2);
    assert.ok(ticks.every((e) => e.series === undefined));
  });

  test('two recorders at the same millisecond (a virtual clock) both keep their Event', async () => {
    // Both name the Event <object>.<nanoseconds>: the same name, from a clock that reads ms.
    const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
    const a = new EventRecorder(client, { reportingController: 'troupe/a', clock });
    const b = new EventRecorder(client, { reportingController: 'troupe/b', clock });
    a.normal(subject, 'SameInstantA', 'Do', 'from a');
    b.normal(subject, 'SameInstantB', 'Do', 'from b');
    await Promise.all([a.flush(), b.flush()]);
    const [ea] = await events('SameInstantA');
    const [eb] = await events('SameInstantB');
    assert.equal(ea?.reportingController, 'troupe/a');
    assert.equal(eb?.reportingController, 'troupe/b');
    assert.notEqual(ea.metadata.name, eb.metadata.name);
  });

  test('truncates long notes to the API limit', async () => {
    const rec = new EventRecorder(client, { reportingController: 'troupe/test' });
    rec.normal(subject, 'Long', 'Say', 'x'.repeat(5000));
    await rec.flush();
    const [ev] = await events('Long');
    assert.equal(ev?.note.length, 1024);
  });
});
