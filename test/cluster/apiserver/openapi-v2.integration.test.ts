/**
 * /openapi/v2 through the real clients: kubectl's client-side validation of `kind: List`
 * manifests and `explain --output plaintext-openapiv2` decode the protobuf document; raw
 * requests check negotiation and caching as kube-openapi's handler answers them.
 */
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { after, before, describe, test } from 'node:test';
import { BinaryReader } from '@bufbuild/protobuf/wire';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';

const PROTOBUF_ACCEPT = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

const LIST = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: listed-a, namespace: default}
  data: {x: "1"}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: listed-web, namespace: default}
  spec:
    selector: {matchLabels: {app: listed-web}}
    template:
      metadata: {labels: {app: listed-web}}
      spec: {containers: [{name: c, image: nginx}]}
`;

const LIST_UNKNOWN_FIELD = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: listed-bad, namespace: default}
  bogus: 1
`;

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.v2test.example.com}
spec:
  group: v2test.example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            description: The gadget's wishes.
            properties:
              size: {type: integer}
`;

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

describe('/openapi/v2', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(() => t.close());

  function get(headers: Record<string, string>): Promise<Raw> {
    return new Promise((resolve, reject) => {
      const r = httpsRequest(
        new URL('/openapi/v2', t.server.url),
        { headers: { Authorization: `Bearer ${t.server.token}`, ...headers }, ca: t.server.ca },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
          );
        },
      );
      r.on('error', reject);
      r.end();
    });
  }

  test('kubectl create -f of a kind: List creates every item', async () => {
    const out = await t.kubectl(['create', '-f', '-'], LIST);
    assert.match(out.stdout, /configmap\/listed-a created/);
    assert.match(out.stdout, /deployment.apps\/listed-web created/);
    const cm = await t.kubectl(['get', 'configmap', 'listed-a', '-o', 'jsonpath={.data.x}']);
    assert.equal(cm.stdout, '1');
  });

  test("kubectl validates a List's items against the v2 schemas it decoded", async () => {
    const r = await t.kubectlResult(['create', '-f', '-'], LIST_UNKNOWN_FIELD);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /unknown field "bogus" in io\.k8s\.api\.core\.v1\.ConfigMap/);
    const absent = await t.kubectlResult(['get', 'configmap', 'listed-bad']);
    assert.match(absent.stderr, /NotFound/);
  });

  test('kubectl explain --output plaintext-openapiv2 reads built-in and CRD schemas', async () => {
    const replicas = await t.kubectl([
      'explain',
      'deployments.spec.replicas',
      '--output',
      'plaintext-openapiv2',
    ]);
    assert.match(replicas.stdout, /FIELD: +replicas <integer>/);
    assert.match(replicas.stdout, /Number of desired pods/);
    await t.kubectl(['apply', '-f', '-'], CRD);
    // The CRD's schema is in the next rendering of the document (kubectl caches nothing here).
    const gadget = await t.kubectl(['explain', 'gadgets.spec', '--output', 'plaintext-openapiv2']);
    assert.match(gadget.stdout, /KIND: +Gadget/);
    assert.match(gadget.stdout, /The gadget's wishes/);
  });

  test('JSON by default, with an ETag and Last-Modified that answer 304', async () => {
    const r = await get({});
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.headers.vary, 'Accept');
    const doc = JSON.parse(r.body.toString('utf8'));
    assert.equal(doc.swagger, '2.0');
    assert.ok(doc.paths['/api/v1/namespaces/{namespace}/configmaps']?.post);
    assert.ok(doc.definitions['io.k8s.api.core.v1.ConfigMap']);
    const etag = r.headers.etag as string;
    assert.match(etag, /^"[0-9A-F]{128}"$/);
    const same = await get({ 'If-None-Match': etag });
    assert.equal(same.status, 304);
    assert.equal(same.body.length, 0);
    const since = await get({ 'If-Modified-Since': r.headers['last-modified'] as string });
    assert.equal(since.status, 304);
    const stale = await get({ 'If-None-Match': '"0"' });
    assert.equal(stale.status, 200);
  });

  test('protobuf as kubectl asks, same ETag, decodable as gnostic openapi.v2.Document', async () => {
    const json = await get({ Accept: 'application/json' });
    const r = await get({ Accept: PROTOBUF_ACCEPT });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    assert.equal(r.headers.etag, json.headers.etag);
    // Document.swagger (1) and the names of Document.definitions (9) entries.
    const reader = new BinaryReader(r.body);
    let swagger = '';
    const definitions: string[] = [];
    while (reader.pos < reader.len) {
      const [no, wt] = reader.tag();
      if (no === 1) swagger = reader.string();
      else if (no === 9) {
        const defs = new BinaryReader(reader.bytes());
        while (defs.pos < defs.len) {
          defs.tag();
          const named = new BinaryReader(defs.bytes());
          named.tag();
          definitions.push(named.string());
        }
      } else reader.skip(wt);
    }
    assert.equal(swagger, '2.0');
    assert.deepEqual(definitions, Object.keys(JSON.parse(json.body.toString('utf8')).definitions));
  });

  test('an Accept naming nothing served is 406', async () => {
    const r = await get({ Accept: 'text/plain' });
    assert.equal(r.status, 406);
    const q = await get({ Accept: `text/plain, ${PROTOBUF_ACCEPT};q=0.5, application/json;q=0.9` });
    assert.equal(q.headers['content-type'], 'application/json');
  });
});
