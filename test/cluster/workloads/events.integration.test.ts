import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type ApiServerHandle, startApiServer } from '../../../src/cluster/apiserver/server.ts';
import { ClusterClient, GVR } from '../../../src/cluster/client.ts';
import { EventRecorder } from '../../../src/cluster/workloads/events.ts';

describe('event recorder', () => {
  let handle: ApiServerHandle;
  let client: ClusterClient;
  before(async () => {
    handle = await startApiServer();
    client = new ClusterClient(handle.api, 'system:test');
  });
  after(async () => {
    await handle.close();
  });

  test('records core/v1 Events and aggregates repeats into count and lastTimestamp', async () => {
    const cm = await client.create(
      { group: '', version: 'v1', resource: 'configmaps' },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' } },
    );
    const rec = new EventRecorder(client, 'test-controller');
    rec.event(cm, 'Normal', 'Poked', 'poked once');
    rec.event(cm, 'Normal', 'Poked', 'poked once');
    rec.event(cm, 'Normal', 'Poked', 'poked once');
    rec.event(cm, 'Warning', 'Poked', 'poked differently');
    await rec.flush();
    const evs = client
      .list(GVR.events, 'default')
      .filter((e) => (e.involvedObject as { name: string }).name === 'x');
    assert.equal(evs.length, 2);
    const normal = evs.find((e) => e.type === 'Normal')!;
    assert.equal(normal.count, 3);
    assert.equal(normal.reason, 'Poked');
    assert.equal(normal.message, 'poked once');
    assert.match(normal.metadata.name!, /^x\.[0-9a-f]+$/);
    assert.deepEqual(normal.source, { component: 'test-controller' });
    assert.equal(normal.reportingComponent, 'test-controller');
    assert.deepEqual(normal.involvedObject, {
      kind: 'ConfigMap',
      namespace: 'default',
      name: 'x',
      uid: cm.metadata.uid,
      apiVersion: 'v1',
      resourceVersion: cm.metadata.resourceVersion,
    });
    assert.ok(normal.firstTimestamp && normal.lastTimestamp && normal.lastTimestamp >= normal.firstTimestamp);
    assert.equal(evs.find((e) => e.type === 'Warning')!.count, 1);
    await rec.stop();
  });

  test('events about cluster-scoped objects go to the default namespace', async () => {
    const node = await client.create(GVR.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
    const rec = new EventRecorder(client, 'test-controller');
    rec.event(node, 'Normal', 'Seen', 'a node');
    await rec.stop();
    const ev = client.list(GVR.events, 'default').find((e) => e.reason === 'Seen')!;
    assert.equal((ev.involvedObject as { namespace?: string }).namespace, undefined);
    assert.equal((ev.involvedObject as { kind: string }).kind, 'Node');
  });
});
