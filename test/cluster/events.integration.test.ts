import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startApiServer } from '../../src/cluster/apiserver/server.ts';
import { ClusterClient, GVR } from '../../src/cluster/client.ts';
import { type EventOccurrences, EventWriter } from '../../src/cluster/events.ts';
import { ManualClock } from '../../src/lib/clock.ts';

test('two writers recording about one object at the same instant both keep their Event', async () => {
  const server = await startApiServer({ port: 0, tls: false });
  try {
    const client = new ClusterClient(server.api, 'system:admin');
    // One clock reading milliseconds, as a virtual clock does: both writers' first names are
    // <object>.<the same nanoseconds>.
    const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
    const at = new Date(clock.now()).toISOString();
    const occurrence = (component: string, reason: string): EventOccurrences => ({
      involved: { apiVersion: 'v1', kind: 'Pod', namespace: 'default', name: 'web-0', uid: 'u-1' },
      source: { component },
      type: 'Normal',
      reason,
      message: `${reason} by ${component}`,
      first: at,
      last: at,
      count: 1,
    });
    await new EventWriter(client, clock).write('a', occurrence('kubelet', 'Started'));
    await new EventWriter(client, clock).write('b', occurrence('default-scheduler', 'Scheduled'));
    const events = (await client.list(GVR.events, 'default')) as unknown as {
      reason: string;
      metadata: { name: string };
    }[];
    assert.deepEqual(events.map((e) => e.reason).sort(), ['Scheduled', 'Started']);
    assert.equal(new Set(events.map((e) => e.metadata.name)).size, 2);
    assert.ok(events.every((e) => e.metadata.name.startsWith('web-0.')));
  } finally {
    await server.close();
  }
});
