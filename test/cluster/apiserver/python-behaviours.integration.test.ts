/**
 * The behaviours of the default 1.32 API through the second official client, Debian's
 * python3-kubernetes (installed by scripts/ensure-python-client.sh): scenarios in
 * test/cluster/apiserver/python/behaviours.py.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';
import { pythonScenario } from '../../support/python.ts';

describe('default-API behaviours through the Python client', () => {
  let t: TestServer;
  let n = 0;
  const scenario = async (name: string): Promise<Record<string, unknown>> => {
    const ns = `pyb-${name}-${n++}`;
    await t.kubectl(['create', 'namespace', ns]);
    return pythonScenario(name, t.kubeconfigPath, ns);
  };
  before(async () => {
    t = await startTestServer();
  });
  after(() => t.close());

  test('Priority admission: class values, the system classes, 403 for an unknown class', async () => {
    const o = await scenario('priority');
    assert.equal(o.priority, 500);
    assert.equal(o.system, 2_000_000_000);
    assert.deepEqual(o.unknown, {
      status: 403,
      message: 'pods "x" is forbidden: no PriorityClass with name nope was found',
    });
    assert.ok((o.classes as string[]).includes('system-node-critical'));
  });

  test('ResourceQuota: the second pod exceeds the quota', async () => {
    const o = await scenario('quota');
    assert.deepEqual(o.second, {
      status: 403,
      message: 'pods "two" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1',
    });
  });

  test('a token from serviceaccounts/token passes TokenReview; SelfSubjectReview names the caller', async () => {
    const o = await scenario('token');
    assert.equal(o.authenticated, true);
    assert.match(String(o.username), /^system:serviceaccount:pyb-token-\d+:bot$/);
    assert.equal(o.expires, true);
    assert.equal(o.me, 'troupe-admin');
  });

  test('a CSR approved through /approval keeps its spec; Approved and Denied exclude each other', async () => {
    const o = await scenario('csr');
    assert.deepEqual(o, { usages: ['client auth'], conditions: ['Approved'], stamped: true, denied: 422 });
  });

  test('an HPA created at autoscaling/v1 reads at v2 with a cpu Utilization metric', async () => {
    const o = await scenario('hpa');
    assert.deepEqual(o, { type: 'Resource', name: 'cpu', utilization: 70 });
  });

  test('a ValidatingAdmissionPolicy denies with its message', async () => {
    const o = await scenario('policy');
    const bad = o.bad as { status: number; message: string };
    assert.equal(bad.status, 422);
    assert.match(
      bad.message,
      /denied request: failed expression: has\(object.data\) && 'owner' in object.data$/,
    );
  });
});
