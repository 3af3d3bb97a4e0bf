import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';
import { WebhookGate } from './webhook-gate.ts';

const SERVICES = '/api/v1/namespaces/default/services';

/** A NodePort Service asking for `nodePort` on port 80. */
function nodePortService(name: string, nodePort: number): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name },
    spec: { type: 'NodePort', ports: [{ port: 80, nodePort }] },
  });
}

describe('Service addresses while admission webhooks run', () => {
  let t: TestServer;
  let gate: WebhookGate;
  before(async () => {
    t = await startTestServer();
    gate = await WebhookGate.start();
    await gate.register(t, ['CREATE', 'UPDATE', 'DELETE']);
  });
  after(async () => {
    await t.close();
    gate.close();
  });

  const deleting = (name: string) => (r: { operation: string; name: string }) =>
    r.operation === 'DELETE' && r.name === name;
  const toNodePort = (nodePort: number) =>
    JSON.stringify({ spec: { type: 'NodePort', ports: [{ port: 80, protocol: 'TCP', nodePort }] } });
  const create = (name: string, nodePort: number) =>
    t.request('POST', SERVICES, { body: nodePortService(name, nodePort) });

  test('a delete acts on the Service as stored once its webhooks answer', async () => {
    // Given a node port while the delete waited: the delete gives it back.
    await t.kubectl(['create', 'service', 'clusterip', 'grows', '--tcp=80:80']);
    let held = gate.hold(deleting('grows'));
    let gone = t.request('DELETE', `${SERVICES}/grows`);
    let release = await held;
    await t.kubectl(['patch', 'svc', 'grows', '-p', toNodePort(30200)]);
    release();
    assert.equal((await gone).status, 200);
    assert.equal((await create('after-grows', 30200)).status, 201);

    // Its node port given up, and taken by another, while the delete waited: the delete
    // leaves it to its new owner.
    assert.equal((await create('shrinks', 30201)).status, 201);
    held = gate.hold(deleting('shrinks'));
    gone = t.request('DELETE', `${SERVICES}/shrinks`);
    release = await held;
    await t.kubectl(['patch', 'svc', 'shrinks', '-p', '{"spec":{"type":"ClusterIP"}}']);
    assert.equal((await create('taker', 30201)).status, 201);
    release();
    assert.equal((await gone).status, 200);
    const twice = await create('twice', 30201);
    assert.equal(twice.status, 422);
    assert.match(String(twice.json().message), /provided port is already allocated/);

    // A delete that waits on a finalizer keeps what was written meanwhile.
    await t.kubectl(
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'final', finalizers: ['example.com/hold'] },
        spec: { ports: [{ port: 80 }] },
      }),
    );
    held = gate.hold(deleting('final'));
    const marking = t.request('DELETE', `${SERVICES}/final`);
    release = await held;
    await t.kubectl(['label', 'svc', 'final', 'changed=yes']);
    release();
    const marked = await marking;
    assert.equal(marked.status, 200);
    const meta = marked.json().metadata as { labels?: Record<string, string>; deletionTimestamp?: string };
    assert.equal(meta.labels?.changed, 'yes');
    assert.ok(meta.deletionTimestamp);
    await t.kubectl(['patch', 'svc', 'final', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
  });

  test('a PUT retried after a conflict starts again from its body', async () => {
    await t.kubectl(['create', 'service', 'clusterip', 'retried', '--tcp=80:80']);
    const held = gate.hold(
      (r) => r.operation === 'UPDATE' && r.name === 'retried' && r.object?.spec?.type === 'NodePort',
    );
    const put = t.request('PUT', `${SERVICES}/retried?fieldManager=putter`, {
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'retried' },
        spec: { type: 'NodePort', selector: { app: 'retried' }, ports: [{ port: 80, protocol: 'TCP' }] },
      }),
    });
    const release = await held;
    await t.kubectl(['label', 'svc', 'retried', 'touched=yes']);
    release();
    const replaced = await put;
    assert.equal(replaced.status, 200);
    const { managedFields } = replaced.json().metadata as {
      managedFields: { manager: string; fieldsV1: unknown }[];
    };
    // The node port the server picked belongs to no one, on the retry as on the first try.
    const putter = managedFields.find((m) => m.manager === 'putter');
    assert.ok(putter);
    assert.doesNotMatch(JSON.stringify(putter.fieldsV1), /f:nodePort/);
  });

  test('a dry run holds no node port while its webhooks run', async () => {
    const held = gate.hold((r) => r.dryRun && r.name === 'trial');
    const dry = t.request('POST', `${SERVICES}?dryRun=All`, { body: nodePortService('trial', 30300) });
    const release = await held;
    assert.equal((await create('real', 30300)).status, 201);
    release();
    const trial = await dry;
    assert.equal(trial.status, 201);
    assert.equal((trial.json().spec as { ports: { nodePort: number }[] }).ports[0]!.nodePort, 30300);
  });
});
