import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startApiServer } from '../../../src/cluster/apiserver/server.ts';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';

/** kubectl get svc's columns by service name: TYPE, CLUSTER-IP, EXTERNAL-IP, PORT(S). */
async function serviceRows(t: TestServer, ...names: string[]): Promise<Map<string, string[]>> {
  const out = (await t.kubectl(['get', 'svc', ...names, '--no-headers'])).stdout;
  return new Map(
    out
      .trim()
      .split('\n')
      .map((line) => line.split(/\s+/))
      .map(([name, ...cells]) => [name!, cells.slice(0, 4)]),
  );
}

interface ManagedFieldsEntry {
  manager: string;
  operation: string;
  fieldsV1: { 'f:spec': Record<string, unknown> };
}

async function spec(t: TestServer, name: string): Promise<Record<string, unknown>> {
  return JSON.parse((await t.kubectl(['get', 'svc', name, '-o', 'json'])).stdout).spec;
}

function inServiceRange(ip: string): boolean {
  const [a, b] = ip.split('.').map(Number);
  return a === 10 && b! >= 96 && b! <= 111;
}

describe('Service cluster IPs and node ports', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(() => t.close());

  test('kubectl create service gets a cluster IP; the kubernetes Service holds the first one', async () => {
    await t.kubectl(['create', 'service', 'clusterip', 'web', '--tcp=80:8080']);
    const rows = await serviceRows(t, 'web', 'kubernetes');
    assert.deepEqual(rows.get('kubernetes'), ['ClusterIP', '10.96.0.1', '<none>', '443/TCP']);
    const [type, ip, external, ports] = rows.get('web')!;
    assert.deepEqual([type, external, ports], ['ClusterIP', '<none>', '80/TCP']);
    assert.ok(inServiceRange(ip!), `${ip} is in 10.96.0.0/12`);
    // Dynamic addresses come from above the static band (10.96.0.1-10.96.1.0) while they can.
    assert.ok(!ip!.startsWith('10.96.0.'), `${ip} is outside the static band`);
    const s = await spec(t, 'web');
    assert.deepEqual(s.clusterIPs, [ip]);
    assert.deepEqual(s.ipFamilies, ['IPv4']);
    assert.equal(s.ipFamilyPolicy, 'SingleStack');
  });

  test('the kubernetes Service comes back when deleted, so no other Service gets its address', async () => {
    const { uid } = JSON.parse((await t.kubectl(['get', 'svc', 'kubernetes', '-o', 'json'])).stdout).metadata;
    await t.kubectl(['delete', 'svc', 'kubernetes']);
    const taker = await t.kubectlResult([
      'create',
      'service',
      'clusterip',
      'taker',
      '--clusterip=10.96.0.1',
      '--tcp=80:80',
    ]);
    assert.match(taker.stderr, /failed to allocate IP 10\.96\.0\.1: provided IP is already allocated/);
    const back = JSON.parse((await t.kubectl(['get', 'svc', 'kubernetes', '-o', 'json'])).stdout);
    assert.notEqual(back.metadata.uid, uid);
    assert.equal(back.spec.clusterIP, '10.96.0.1');
  });

  test('a requested cluster IP is honoured once, and free again once its Service is gone', async () => {
    await t.kubectl(['create', 'service', 'clusterip', 'dns', '--clusterip=10.96.0.10', '--tcp=53:53']);
    assert.equal((await serviceRows(t, 'dns')).get('dns')![1], '10.96.0.10');
    const taken = await t.kubectlResult([
      'create',
      'service',
      'clusterip',
      'dns2',
      '--clusterip=10.96.0.10',
      '--tcp=53:53',
    ]);
    assert.equal(taken.code, 1);
    assert.equal(
      taken.stderr.trim(),
      'error: failed to create ClusterIP service: Service "dns2" is invalid: spec.clusterIPs: Invalid value: ["10.96.0.10"]: failed to allocate IP 10.96.0.10: provided IP is already allocated',
    );
    const foreign = await t.request('POST', '/api/v1/namespaces/default/services', {
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'far' },
        spec: { clusterIP: '10.0.0.5', ports: [{ port: 53 }] },
      }),
    });
    assert.equal(foreign.status, 422);
    const status = foreign.json();
    assert.equal(status.reason, 'Invalid');
    assert.deepEqual((status.details as { causes: unknown }).causes, [
      {
        reason: 'FieldValueInvalid',
        field: 'spec.clusterIPs',
        message:
          'Invalid value: ["10.0.0.5"]: failed to allocate IP 10.0.0.5: the provided IP (10.0.0.5) is not in the valid range. The range of valid IPs is 10.96.0.0/12',
      },
    ]);
    await t.kubectl(['delete', 'service', 'dns']);
    await t.kubectl(['create', 'service', 'clusterip', 'dns2', '--clusterip=10.96.0.10', '--tcp=53:53']);
    assert.equal((await serviceRows(t, 'dns2')).get('dns2')![1], '10.96.0.10');
  });

  test('a server-side dry run shows an address but keeps none', async () => {
    const dry = await t.kubectl([
      'create',
      'service',
      'clusterip',
      'trial',
      '--clusterip=10.96.0.20',
      '--tcp=80:80',
      '--dry-run=server',
      '-o',
      'json',
    ]);
    assert.equal(JSON.parse(dry.stdout).spec.clusterIP, '10.96.0.20');
    await t.kubectl(['create', 'service', 'clusterip', 'trial', '--clusterip=10.96.0.20', '--tcp=80:80']);
  });

  test('headless and ExternalName Services get no address', async () => {
    await t.kubectl(['create', 'service', 'clusterip', 'headless', '--clusterip=None']);
    await t.kubectl(['create', 'service', 'externalname', 'ext', '--external-name=example.com']);
    const rows = await serviceRows(t, 'headless', 'ext');
    assert.deepEqual(rows.get('headless'), ['ClusterIP', 'None', '<none>', '<none>']);
    assert.deepEqual(rows.get('ext'), ['ExternalName', '<none>', 'example.com', '<none>']);
    const ext = await spec(t, 'ext');
    assert.equal(ext.clusterIP, undefined);
    assert.equal(ext.ipFamilies, undefined);
  });

  test('NodePort Services get node ports; taken and out-of-range ones are refused', async () => {
    await t.kubectl(['create', 'service', 'nodeport', 'np', '--tcp=80:8080']);
    const [, ip, , ports] = (await serviceRows(t, 'np')).get('np')!;
    assert.ok(inServiceRange(ip!));
    const nodePort = Number(/^80:(\d+)\/TCP$/.exec(ports!)?.[1]);
    assert.ok(nodePort >= 30000 && nodePort <= 32767, `${ports} has a node port in 30000-32767`);
    await t.kubectl(['create', 'service', 'nodeport', 'fixed', '--tcp=80:8080', '--node-port=30080']);
    assert.equal((await serviceRows(t, 'fixed')).get('fixed')![3], '80:30080/TCP');
    const taken = await t.kubectlResult([
      'create',
      'service',
      'nodeport',
      'again',
      '--tcp=80:8080',
      '--node-port=30080',
    ]);
    assert.match(
      taken.stderr,
      /Service "again" is invalid: spec\.ports\[0\]\.nodePort: Invalid value: 30080: provided port is already allocated/,
    );
    const low = await t.kubectlResult([
      'create',
      'service',
      'nodeport',
      'low',
      '--tcp=80:8080',
      '--node-port=29999',
    ]);
    assert.match(
      low.stderr,
      /spec\.ports\[0\]\.nodePort: Invalid value: 29999: provided port is not in the valid range\. The range of valid ports is 30000-32767/,
    );
    await t.kubectl(['create', 'service', 'loadbalancer', 'lb', '--tcp=443:8443']);
    assert.match((await serviceRows(t, 'lb')).get('lb')![3]!, /^443:3\d{4}\/TCP$/);
  });

  test('updates keep the addresses; the cluster IP may not change; a type change frees node ports', async () => {
    const manifest = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'kept' },
      spec: { type: 'NodePort', selector: { app: 'kept' }, ports: [{ name: 'http', port: 80 }] },
    });
    await t.kubectl(['create', '-f', '-'], manifest);
    const before = await spec(t, 'kept');
    // A replace with the manifest as first written keeps what was allocated.
    await t.kubectl(['replace', '-f', '-'], manifest);
    const kept = await spec(t, 'kept');
    assert.equal(kept.clusterIP, before.clusterIP);
    assert.deepEqual(kept.ports, before.ports);
    const moved = await t.kubectlResult([
      'patch',
      'svc',
      'kept',
      '-p',
      '{"spec":{"clusterIP":"10.96.0.99"}}',
    ]);
    assert.equal(
      moved.stderr.trim(),
      'The Service "kept" is invalid: spec.clusterIPs[0]: Invalid value: ["10.96.0.99"]: may not change once set',
    );
    await t.kubectl(['patch', 'svc', 'fixed', '-p', '{"spec":{"type":"ClusterIP"}}']);
    const fixed = await spec(t, 'fixed');
    assert.equal(fixed.type, 'ClusterIP');
    assert.equal((fixed.ports as { nodePort?: number }[])[0]!.nodePort, undefined);
    await t.kubectl(['create', 'service', 'nodeport', 'reuse', '--tcp=80:8080', '--node-port=30080']);
    // To ExternalName and back: the address is released, and a new one allocated.
    await t.kubectl([
      'patch',
      'svc',
      'kept',
      '--type=merge',
      '-p',
      '{"spec":{"type":"ExternalName","externalName":"example.com"}}',
    ]);
    const external = await spec(t, 'kept');
    assert.equal(external.clusterIP, undefined);
    assert.equal((external.ports as { nodePort?: number }[])[0]!.nodePort, undefined);
    await t.kubectl([
      'patch',
      'svc',
      'kept',
      '--type=merge',
      '-p',
      '{"spec":{"type":"ClusterIP","externalName":null}}',
    ]);
    assert.ok(inServiceRange(String((await spec(t, 'kept')).clusterIP)));
  });

  test('allocated fields belong to no field manager, so another manager applies them without conflict', async () => {
    const managed = async (name: string) =>
      JSON.parse((await t.kubectl(['get', 'svc', name, '-o', 'json', '--show-managed-fields'])).stdout)
        .metadata.managedFields as ManagedFieldsEntry[];
    await t.kubectl(['create', 'service', 'clusterip', 'owned', '--tcp=80:8080']);
    const [created] = await managed('owned');
    assert.equal(created!.manager, 'kubectl-create');
    // What the client sent and what defaulting filled in are the creator's; what the
    // allocator chose is not.
    assert.deepEqual(Object.keys(created!.fieldsV1['f:spec']).sort(), [
      'f:internalTrafficPolicy',
      'f:ports',
      'f:selector',
      'f:sessionAffinity',
      'f:type',
    ]);
    const yaml = (await t.kubectl(['get', 'svc', 'owned', '-o', 'yaml', '--show-managed-fields'])).stdout;
    assert.match(yaml, /manager: kubectl-create/);
    assert.doesNotMatch(yaml, /f:clusterIP/);
    const { clusterIP } = await spec(t, 'owned');
    const applied = await t.kubectl(
      ['apply', '--server-side', '--field-manager=pinner', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'owned' },
        spec: { clusterIP, ports: [{ port: 80, protocol: 'TCP', targetPort: 8080 }] },
      }),
    );
    assert.match(applied.stdout, /service\/owned serverside-applied/);
    const pinner = (await managed('owned')).find((m) => m.manager === 'pinner')!;
    assert.equal(pinner.operation, 'Apply');
    assert.deepEqual(pinner.fieldsV1['f:spec']['f:clusterIP'], {});

    // A node port the server picked may be replaced by one a manager asks for.
    await t.kubectl(['create', 'service', 'nodeport', 'picked', '--tcp=80:8080']);
    const asked = await t.kubectl(
      ['apply', '--server-side', '--field-manager=pinner', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'picked' },
        spec: { ports: [{ port: 80, protocol: 'TCP', nodePort: 30555 }] },
      }),
    );
    assert.match(asked.stdout, /service\/picked serverside-applied/);
    assert.equal(((await spec(t, 'picked')) as { ports: { nodePort: number }[] }).ports[0]!.nodePort, 30555);
  });
});

describe('a small service range', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({ serviceClusterIPRange: '10.97.0.0/29' });
  });
  after(() => t.close());

  test('runs out with kube-apiserver’s error and recovers when a Service goes', async () => {
    // Six usable addresses; the kubernetes Service holds 10.97.0.1.
    for (const n of [1, 2, 3, 4, 5])
      await t.kubectl(['create', 'service', 'clusterip', `s${n}`, '--tcp=80:80']);
    const full = await t.kubectlResult(['create', 'service', 'clusterip', 's6', '--tcp=80:80']);
    assert.equal(
      full.stderr.trim(),
      'error: failed to create ClusterIP service: Internal error occurred: failed to allocate a serviceIP: range is full',
    );
    const freed = (await serviceRows(t, 's3')).get('s3')![1];
    await t.kubectl(['delete', 'service', 's3']);
    await t.kubectl(['create', 'service', 'clusterip', 's6', '--tcp=80:80']);
    assert.equal((await serviceRows(t, 's6')).get('s6')![1], freed);
  });
});

describe('a write hook that throws', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer({
      hooks: {
        afterWrite: (rt, type, obj) => {
          if (rt.resource === 'services' && type === 'ADDED' && obj.metadata.name === 'boom')
            throw new Error('boom');
        },
      },
    });
  });
  after(() => t.close());

  test('leaves a stored Service its node port', async () => {
    const create = (name: string) =>
      t.request('POST', '/api/v1/namespaces/default/services', {
        body: JSON.stringify({
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name },
          spec: { type: 'NodePort', ports: [{ port: 80, nodePort: 30400 }] },
        }),
      });
    assert.equal((await create('boom')).status, 500);
    const stored = await t.request('GET', '/api/v1/namespaces/default/services/boom');
    assert.equal((stored.json().spec as { ports: { nodePort: number }[] }).ports[0]!.nodePort, 30400);
    const again = await create('again');
    assert.equal(again.status, 422);
    assert.match(String(again.json().message), /provided port is already allocated/);
  });
});

test('a start that fails leaves nothing listening', async () => {
  const free = createServer();
  await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
  const { port } = free.address() as { port: number };
  await new Promise<void>((resolve) => free.close(() => resolve()));
  await assert.rejects(
    startApiServer({
      port,
      tls: false,
      hooks: {
        afterWrite: (rt, _type, obj) => {
          if (rt.resource === 'services' && obj.metadata.name === 'kubernetes') throw new Error('refused');
        },
      },
    }),
    /refused/,
  );
  // The port is free again.
  await new Promise<void>((resolve, reject) => {
    free.once('error', reject);
    free.listen(port, '127.0.0.1', resolve);
  });
  await new Promise<void>((resolve) => free.close(() => resolve()));
});
