import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';

describe('bad input gets the Status kube-apiserver returns', () => {
  let t: TestServer;
  const send = async (method: string, path: string, body?: string, contentType = 'application/json') => {
    const res = await t.request(method, path, { body, contentType });
    const json = res.json() as {
      kind: string;
      reason?: string;
      message?: string;
      code?: number;
      details?: { causes?: { field: string }[] };
    };
    return { status: res.status, json };
  };
  before(async () => {
    t = await startTestServer();
  });
  after(() => t.close());

  test('malformed JSON is 400 BadRequest', async () => {
    const r = await send('POST', '/api/v1/namespaces/default/configmaps', '{"metadata": ');
    assert.equal(r.status, 400);
    assert.equal(r.json.kind, 'Status');
    assert.equal(r.json.reason, 'BadRequest');
  });

  test('malformed YAML apply is 400 BadRequest', async () => {
    const r = await send(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/x?fieldManager=t',
      'a: [',
      'application/apply-patch+yaml',
    );
    assert.equal(r.status, 400);
  });

  test('a body of the wrong kind is 400', async () => {
    const r = await send(
      'POST',
      '/api/v1/namespaces/default/configmaps',
      JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } }),
    );
    assert.equal(r.status, 400);
    // transformDecodeError: the codec decodes a Secret, then cannot convert it to a ConfigMap.
    assert.equal(
      r.json.message,
      'Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion',
    );
  });

  test('a missing name is 422 with a cause', async () => {
    const r = await send('POST', '/api/v1/namespaces/default/configmaps', JSON.stringify({ metadata: {} }));
    assert.equal(r.status, 422);
    assert.equal(r.json.reason, 'Invalid');
    assert.equal(r.json.details?.causes?.[0]?.field, 'metadata.name');
  });

  test('an unknown patch type is 415', async () => {
    await send('POST', '/api/v1/namespaces/default/configmaps', JSON.stringify({ metadata: { name: 'p' } }));
    const r = await send('PATCH', '/api/v1/namespaces/default/configmaps/p', '{}', 'text/plain');
    assert.equal(r.status, 415);
    assert.equal(r.json.reason, 'UnsupportedMediaType');
  });

  test('oversized bodies are 413', async () => {
    const big = JSON.stringify({ metadata: { name: 'big' }, data: { x: 'a'.repeat(4 * 1024 * 1024) } });
    const r = await send('POST', '/api/v1/namespaces/default/configmaps', big);
    assert.equal(r.status, 413);
    const stored = await send('GET', '/api/v1/namespaces/default/configmaps/big');
    assert.equal(stored.status, 404);
  });

  test('bad selectors and unknown paths', async () => {
    assert.equal((await send('GET', '/api/v1/pods?labelSelector=a%20in%20(')).status, 400);
    // limit is an int64 parsed by strconv.ParseInt; a negative one means no limit upstream.
    const bad = await send('GET', '/api/v1/pods?limit=abc');
    assert.equal(bad.status, 400);
    assert.equal(bad.json.message, 'strconv.ParseInt: parsing "abc": invalid syntax');
    assert.equal((await send('GET', '/api/v1/pods?limit=-1')).status, 200);
    assert.equal((await send('GET', '/api/v1/nonsense')).status, 404);
    assert.equal((await send('GET', '/apis/nope.example.com/v1/things')).status, 404);
  });

  test('a JSON patch whose test fails is rejected and nothing is stored', async () => {
    await send(
      'POST',
      '/api/v1/namespaces/default/configmaps',
      JSON.stringify({ metadata: { name: 'jp' }, data: { a: '1' } }),
    );
    const r = await send(
      'PATCH',
      '/api/v1/namespaces/default/configmaps/jp',
      JSON.stringify([
        { op: 'test', path: '/data/a', value: '2' },
        { op: 'replace', path: '/data/a', value: '3' },
      ]),
      'application/json-patch+json',
    );
    assert.ok(r.status === 422 || r.status === 400, `status ${r.status}`);
    const got = await send('GET', '/api/v1/namespaces/default/configmaps/jp');
    assert.equal((got.json as unknown as { data: { a: string } }).data.a, '1');
  });

  test('patches of the wrong JSON type are named with Go’s type names', async () => {
    await send(
      'POST',
      '/api/v1/namespaces/default/configmaps',
      JSON.stringify({ metadata: { name: 'typed' } }),
    );
    const patch = (body: string, type: string, query = '') =>
      send('PATCH', `/api/v1/namespaces/default/configmaps/typed${query}`, body, `application/${type}`);
    const smp = await patch('true', 'strategic-merge-patch+json');
    assert.equal(smp.status, 400);
    assert.equal(
      smp.json.message,
      'json: cannot unmarshal bool into Go value of type map[string]interface {}',
    );
    const ops = await patch('{"op":"add"}', 'json-patch+json');
    assert.equal(ops.status, 400);
    assert.equal(
      ops.json.message,
      'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp',
    );
    const ignored = await patch('{"op":"add"}', 'json-patch+json', '?fieldValidation=Ignore');
    assert.equal(ignored.json.message, 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
    const order = await patch(
      '{"metadata":{"$setElementOrder/finalizers":false}}',
      'strategic-merge-patch+json',
    );
    assert.equal(order.status, 500);
    assert.equal(order.json.message, 'expected a []interface {}, but received a bool');
  });
});
