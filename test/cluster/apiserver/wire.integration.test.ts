/**
 * The wire contract as other clients see it: query parameters parsed as apimachinery's
 * conversions, Status bytes, paginated lists as a consistent snapshot, dry run on every write
 * path, patches that may not change kind or name, strategic merge on subresources, and no 5xx
 * for client mistakes. Each case states what kube-apiserver answers (see docs/api-conformance.md).
 */
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../support/apiserver.ts';

describe('the wire contract of kube-apiserver', () => {
  let t: TestServer;
  const send = async (method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const res = await t.request(method, path, {
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      contentType,
    });
    return { status: res.status, text: res.text, json: () => res.json() as Record<string, any> };
  };
  const cm = (name: string, data: Record<string, string> = { a: '1' }) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name },
    data,
  });
  /** The first line of a watch stream, then the connection is dropped. */
  const firstWatchLine = (path: string): Promise<{ status: number; line: string }> =>
    new Promise((resolve, reject) => {
      const url = new URL(path, t.server.url);
      const r = httpsRequest(
        url,
        { headers: { Authorization: `Bearer ${t.server.token}` }, ca: t.server.ca },
        (res) => {
          let buf = '';
          res.on('data', (c: Buffer) => {
            buf += c.toString('utf8');
            const nl = buf.indexOf('\n');
            if (nl >= 0) {
              resolve({ status: res.statusCode ?? 0, line: buf.slice(0, nl) });
              r.destroy();
            }
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, line: buf }));
        },
      );
      r.on('error', (err) => {
        if (!(err as NodeJS.ErrnoException).code?.includes('ECONNRESET')) reject(err);
      });
      r.end();
    });

  before(async () => {
    t = await startTestServer();
    await send('POST', '/api/v1/namespaces', { metadata: { name: 'wire' } });
  });
  after(() => t.close());

  test('boolean parameters: every spelling but 0 and false (any case) is true, as Convert_Slice_string_To_bool', async () => {
    await send('POST', '/api/v1/namespaces/wire/configmaps', cm('watched'));
    for (const v of ['true', 'True', 'TRUE', '1', 'yes', '']) {
      const w = await firstWatchLine(`/api/v1/namespaces/wire/configmaps?watch=${v}&timeoutSeconds=1`);
      assert.equal(w.status, 200);
      assert.match(w.line, /^\{"type":"ADDED"/, `watch=${v} is a watch`);
    }
    for (const v of ['false', 'False', 'FALSE', '0']) {
      const r = await send('GET', `/api/v1/namespaces/wire/configmaps?watch=${v}`);
      assert.equal(r.json().kind, 'ConfigMapList', `watch=${v} is a list`);
    }
  });

  test('integer parameters are strconv.ParseInt: bad ones are a 400 with its words', async () => {
    for (const [param, value] of [
      ['timeoutSeconds', 'abc'],
      ['limit', '1.5'],
      ['limit', '99999999999999999999'],
    ] as const) {
      const r = await send('GET', `/api/v1/namespaces/wire/configmaps?${param}=${value}`);
      assert.equal(r.status, 400, `${param}=${value}`);
      const why = value.length > 18 ? 'value out of range' : 'invalid syntax';
      assert.equal(r.json().message, `strconv.ParseInt: parsing "${value}": ${why}`);
    }
    const w = await send('GET', '/api/v1/namespaces/wire/configmaps?watch=1&timeoutSeconds=abc');
    assert.equal(w.status, 400);
    const grace = await send('DELETE', '/api/v1/namespaces/wire/configmaps/none?gracePeriodSeconds=x');
    assert.equal(grace.status, 400);
    assert.equal(grace.json().message, 'strconv.ParseInt: parsing "x": invalid syntax');
  });

  test('write options are validated as ValidateCreateOptions/ValidatePatchOptions: 422 on the options kind', async () => {
    const dry = await send('POST', '/api/v1/namespaces/wire/configmaps?dryRun=Some', cm('opt'));
    assert.equal(dry.status, 422);
    assert.equal(
      dry.json().message,
      'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Some"}: supported values: "All"',
    );
    await send('POST', '/api/v1/namespaces/wire/configmaps', cm('opt'));
    const force = await send(
      'PATCH',
      '/api/v1/namespaces/wire/configmaps/opt?force=false',
      { data: { b: '2' } },
      'application/merge-patch+json',
    );
    assert.equal(force.status, 422);
    assert.equal(
      force.json().message,
      'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch',
    );
    const manager = await send(
      'PATCH',
      '/api/v1/namespaces/wire/configmaps/opt',
      'apiVersion: v1\nkind: ConfigMap\n',
      'application/apply-patch+yaml',
    );
    assert.equal(manager.status, 422);
    assert.equal(
      manager.json().message,
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    );
    const forced = await send(
      'PATCH',
      '/api/v1/namespaces/wire/configmaps/opt?fieldManager=m&force=True',
      'apiVersion: v1\nkind: ConfigMap\ndata:\n  a: "9"\n',
      'application/apply-patch+yaml',
    );
    assert.equal(forced.status, 200);
  });

  test('Status bodies are byte-identical to kube-apiserver’s', async () => {
    const nf = await send('GET', '/api/v1/namespaces/wire/configmaps/missing');
    assert.equal(
      nf.text,
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \\"missing\\" not found","reason":"NotFound","details":{"name":"missing","kind":"configmaps"},"code":404}\n',
    );
    const apps = await send('GET', '/apis/apps/v1/namespaces/wire/deployments/missing');
    assert.equal(
      apps.text,
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"deployments.apps \\"missing\\" not found","reason":"NotFound","details":{"name":"missing","group":"apps","kind":"deployments"},"code":404}\n',
    );
    await send('POST', '/api/v1/namespaces/wire/configmaps', cm('gone'));
    const del = await send('DELETE', '/api/v1/namespaces/wire/configmaps/gone');
    assert.match(
      del.text,
      /^\{"kind":"Status","apiVersion":"v1","metadata":\{\},"status":"Success","details":\{"name":"gone","kind":"configmaps","uid":"[0-9a-f-]+"\}\}\n$/,
    );
  });

  test('a continued list is the snapshot of its first page; remainingItemCount for namespaced lists', async () => {
    for (let i = 0; i < 5; i++)
      await send('POST', '/api/v1/namespaces/wire/secrets', { metadata: { name: `s${i}` } });
    const first = (await send('GET', '/api/v1/namespaces/wire/secrets?limit=2')).json();
    assert.deepEqual(
      first.items.map((s: { metadata: { name: string } }) => s.metadata.name),
      ['s0', 's1'],
    );
    assert.equal(first.metadata.remainingItemCount, 3);
    // Changes after the first page: s2 deleted, s3 changed, s25 added.
    await send('DELETE', '/api/v1/namespaces/wire/secrets/s2');
    await send(
      'PATCH',
      '/api/v1/namespaces/wire/secrets/s3',
      { data: { x: 'eQ==' } },
      'application/merge-patch+json',
    );
    await send('POST', '/api/v1/namespaces/wire/secrets', { metadata: { name: 's25' } });
    const second = (
      await send('GET', `/api/v1/namespaces/wire/secrets?limit=10&continue=${first.metadata.continue}`)
    ).json();
    assert.deepEqual(
      second.items.map((s: { metadata: { name: string } }) => s.metadata.name),
      ['s2', 's3', 's4'],
    );
    assert.equal(second.items[1].data, undefined, 's3 as it was at the first page');
    assert.equal(second.metadata.resourceVersion, first.metadata.resourceVersion);
    const withRv = await send(
      'GET',
      `/api/v1/namespaces/wire/secrets?limit=1&resourceVersion=5&continue=${first.metadata.continue}`,
    );
    assert.equal(withRv.status, 400);
    assert.equal(withRv.json().message, 'specifying resource version is not allowed when using continue');
  });

  test('a continue token whose version left the history is 410 Expired with a token to go on', async () => {
    const first = (await send('GET', '/api/v1/namespaces/wire/secrets?limit=1')).json();
    await send('POST', '/api/v1/namespaces/wire/secrets', { metadata: { name: 'later' } });
    t.server.api.store.expireHistory();
    const r = await send(
      'GET',
      `/api/v1/namespaces/wire/secrets?limit=1&continue=${first.metadata.continue}`,
    );
    assert.equal(r.status, 410);
    const body = r.json();
    assert.equal(body.reason, 'Expired');
    assert.match(
      body.message,
      /^The provided continue parameter is too old to display a consistent list result\./,
    );
    assert.ok(body.metadata.continue, 'a token to continue inconsistently');
    const next = await send(
      'GET',
      `/api/v1/namespaces/wire/secrets?limit=1&continue=${body.metadata.continue}`,
    );
    assert.equal(next.status, 200);
    assert.equal(next.json().items.length, 1);
  });

  test('dryRun=All on every write path stores nothing and sends no event', async () => {
    await send('POST', '/api/v1/namespaces/wire/pods', {
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    await send('POST', '/apis/apps/v1/namespaces/wire/deployments', {
      metadata: { name: 'd' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'd' } },
        template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
      },
    });
    const rv = (await send('GET', '/api/v1/namespaces/wire/pods')).json().metadata.resourceVersion;
    const evict = await send('POST', '/api/v1/namespaces/wire/pods/p/eviction?dryRun=All', {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: 'p' },
    });
    assert.equal(evict.status, 201);
    const evictBody = await send('POST', '/api/v1/namespaces/wire/pods/p/eviction', {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: 'p' },
      deleteOptions: { dryRun: ['All'] },
    });
    assert.equal(evictBody.status, 201);
    const scale = await send(
      'PATCH',
      '/apis/apps/v1/namespaces/wire/deployments/d/scale?dryRun=All',
      { spec: { replicas: 5 } },
      'application/merge-patch+json',
    );
    assert.equal(scale.status, 200);
    assert.equal(scale.json().spec.replicas, 5);
    const bind = await send('POST', '/api/v1/namespaces/wire/pods/p/binding?dryRun=All', {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name: 'p' },
      target: { kind: 'Node', name: 'n1' },
    });
    assert.equal(bind.status, 201);
    const status = await send(
      'PATCH',
      '/api/v1/namespaces/wire/pods/p/status?dryRun=All',
      { status: { phase: 'Running' } },
      'application/merge-patch+json',
    );
    assert.equal(status.status, 200);
    assert.equal((await send('DELETE', '/api/v1/namespaces/wire/pods?dryRun=All')).status, 200);
    const pod = (await send('GET', '/api/v1/namespaces/wire/pods/p')).json();
    assert.equal(pod.spec.nodeName, undefined);
    assert.equal(pod.metadata.deletionTimestamp, undefined);
    assert.notEqual(pod.status?.phase, 'Running');
    assert.equal((await send('GET', '/apis/apps/v1/namespaces/wire/deployments/d')).json().spec.replicas, 1);
    // Nothing was written: a watch from before the dry runs has no event for them.
    const w = await firstWatchLine(
      `/api/v1/namespaces/wire/pods?watch=1&resourceVersion=${rv}&timeoutSeconds=1`,
    );
    assert.equal(w.line, '');
  });

  test('no patch type may change the stored kind or apiVersion: 422', async () => {
    await send('POST', '/api/v1/namespaces/wire/configmaps', cm('kind'));
    const patches: [string, unknown][] = [
      ['application/json-patch+json', [{ op: 'replace', path: '/kind', value: 'Pod' }]],
      ['application/merge-patch+json', { kind: 'Service' }],
      ['application/strategic-merge-patch+json', { apiVersion: 'v2' }],
    ];
    for (const [type, body] of patches) {
      const r = await send('PATCH', '/api/v1/namespaces/wire/configmaps/kind', body, type);
      assert.equal(r.status, 422, type);
      assert.match(r.json().message, /^ "" is invalid: patch: Invalid value: /);
    }
    const list = (await send('GET', '/api/v1/namespaces/wire/configmaps')).json();
    assert.ok(list.items.every((i: { kind?: string }) => i.kind === undefined || i.kind === 'ConfigMap'));
    assert.equal((await send('GET', '/api/v1/namespaces/wire/configmaps/kind')).json().kind, 'ConfigMap');
  });

  test('a patch that renames the object is a 400', async () => {
    await send('POST', '/api/v1/namespaces/wire/configmaps', cm('named'));
    const r = await send(
      'PATCH',
      '/api/v1/namespaces/wire/configmaps/named',
      { metadata: { name: 'other' } },
      'application/merge-patch+json',
    );
    assert.equal(r.status, 400);
    assert.equal(
      r.json().message,
      'the name of the object (other) does not match the name on the URL (named)',
    );
  });

  test('strategic merge patch of deployments/scale is accepted; custom resources’ scale is not', async () => {
    const r = await send(
      'PATCH',
      '/apis/apps/v1/namespaces/wire/deployments/d/scale',
      { spec: { replicas: 3 } },
      'application/strategic-merge-patch+json',
    );
    assert.equal(r.status, 200);
    assert.equal(r.json().kind, 'Scale');
    assert.equal((await send('GET', '/apis/apps/v1/namespaces/wire/deployments/d')).json().spec.replicas, 3);
  });

  test('client mistakes are never a 5xx', async () => {
    await send('POST', '/api/v1/namespaces/wire/configmaps', cm('move'));
    const move = await send(
      'PATCH',
      '/api/v1/namespaces/wire/configmaps/move',
      [{ op: 'move', from: '/data', path: '/data/inner' }],
      'application/json-patch+json',
    );
    assert.equal(move.status, 422);
    let deep = '"x"';
    for (let i = 0; i < 10_001; i++) deep = `{"a":${deep}}`;
    const nested = await send(
      'POST',
      '/api/v1/namespaces/wire/configmaps',
      `{"metadata":{"name":"deep"},"data":${deep}}`,
    );
    assert.equal(nested.status, 400);
    assert.match(nested.json().message, /exceeded max nesting depth/);
    const badRv = await send('GET', '/api/v1/namespaces/wire/configmaps?watch=1&resourceVersion=abc');
    assert.equal(badRv.status, 422);
    assert.equal(
      badRv.json().message,
      'configmaps "" is invalid: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
    );
    const longUrl = await send(
      'GET',
      `/api/v1/namespaces/wire/configmaps?labelSelector=a%20in%20(${'x'.repeat(100_000)})`,
    );
    assert.ok(longUrl.status >= 400 && longUrl.status < 500, `status ${longUrl.status}`);
  });

  test('undecodable bodies and bodies of another kind get transformDecodeError’s wording', async () => {
    const yaml = await send(
      'POST',
      '/api/v1/namespaces',
      'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: y\n',
    );
    assert.equal(yaml.status, 400);
    assert.equal(
      yaml.json().message,
      `the object provided is unrecognized (must be of type Namespace): couldn't get version/kind; json parse error: invalid character 'a' looking for beginning of value (${Buffer.from('apiVersion: v1\nkind: Namespace\nmetadata:\n  name: y\n').subarray(0, 30).toString('hex')} ...)`,
    );
    const truncated = await send('POST', '/api/v1/namespaces', '{"metadata": ');
    assert.equal(
      truncated.json().message,
      'the object provided is unrecognized (must be of type Namespace): couldn\'t get version/kind; json parse error: unexpected end of JSON input ({"metadata": )',
    );
    const array = await send('POST', '/api/v1/namespaces', '[]');
    assert.match(
      array.json().message,
      /json: cannot unmarshal array into Go value of type struct \{ APIVersion string/,
    );
    const pod = await send('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'x' },
    });
    assert.equal(pod.status, 400);
    assert.equal(
      pod.json().message,
      'Pod in version "v1" cannot be handled as a Namespace: converting (v1.Pod) to (core.Namespace): unknown conversion',
    );
  });

  test('list and watch options are validated as ValidateListOptions: 422 on ListOptions', async () => {
    const cases: [string, string][] = [
      [
        'resourceVersionMatch=Exact',
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
      ],
      [
        'resourceVersion=1&resourceVersionMatch=Newest',
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""',
      ],
      [
        'sendInitialEvents=true',
        'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list',
      ],
      [
        'watch=1&sendInitialEvents=true',
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      ],
    ];
    for (const [query, message] of cases) {
      const r = await send('GET', `/api/v1/namespaces/wire/configmaps?${query}`);
      assert.equal(r.status, 422, query);
      assert.equal(r.json().message, message);
    }
  });
});
