/** The RunPod REST v2 stand-in speaks RunPod's wire protocol. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createParser } from 'eventsource-parser';
import { type RunPodStandIn, startRunPodStandIn } from '../../../src/cluster/runpod/index.ts';
import { runProcess, splitArgs } from '../../../src/cluster/runpod/shell.ts';
import { waitFor } from '../../support/wait.ts';

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

describe('RunPod stand-in', () => {
  let rp: RunPodStandIn;
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    key: string | null = rp.apiKey,
  ): Promise<Answer> => {
    const res = await fetch(`${rp.url}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : {} };
  };
  const create = (extra: Record<string, unknown> = {}) =>
    call('POST', '/pods', { name: 'p', image: 'busybox', gpu: { id: 'NVIDIA RTX A4000' }, ...extra });

  before(async () => {
    rp = await startRunPodStandIn({
      timeScale: 50,
      readOnlyKeys: ['read-only-key'],
      capacity: { 'NVIDIA L4': 0 },
      forbiddenGpuTypes: ['NVIDIA H100 80GB HBM3'],
    });
  });
  after(async () => {
    await rp?.stop();
  });

  test('authentication: 401 without or with a wrong key, 403 for a key that may not write', async () => {
    const none = await call('GET', '/pods', undefined, null);
    assert.equal(none.status, 401);
    assert.equal(none.headers.get('content-type'), 'application/problem+json');
    assert.deepEqual(none.body, { title: 'Unauthorized', status: 401, detail: 'missing bearer token' });
    assert.equal((await call('GET', '/pods', undefined, 'nope')).status, 401);
    assert.equal((await call('GET', '/pods', undefined, 'read-only-key')).status, 200);
    const denied = await call(
      'POST',
      '/pods',
      { name: 'x', image: 'i', gpu: { id: 'NVIDIA RTX A4000' } },
      'read-only-key',
    );
    assert.equal(denied.status, 403);
  });

  test('the GPU catalog, with availability on request', async () => {
    const cat = await call('GET', '/catalog/gpus');
    const a4000 = (cat.body.gpus as Record<string, unknown>[]).find((g) => g.id === 'NVIDIA RTX A4000')!;
    assert.deepEqual(Object.keys(a4000).sort(), [
      'community',
      'id',
      'manufacturer',
      'maxCount',
      'memory',
      'name',
      'pool',
      'price',
      'secure',
    ]);
    assert.equal(a4000.memory, 16);
    const avail = await call('GET', '/catalog/gpus?include=AVAILABILITY&product=POD');
    const l4 = (avail.body.gpus as Record<string, unknown>[]).find((g) => g.id === 'NVIDIA L4')!;
    assert.equal(l4.availability, 'NONE');
    assert.equal(
      (await call('GET', '/catalog/gpus?include=AVAILABILITY')).status,
      400,
      'product is required with include',
    );
    assert.equal((await call('GET', `/catalog/gpus/${encodeURIComponent('NVIDIA A40')}`)).body.memory, 48);
  });

  test('create: 201 PROVISIONING → STARTING → RUNNING, billed per hour', async () => {
    const c = await create({ env: { A: '1' } });
    assert.equal(c.status, 201);
    assert.equal(c.body.status, 'PROVISIONING');
    assert.deepEqual(c.body.actions, ['stop', 'terminate']);
    assert.equal(c.body.cost, 0.25);
    assert.equal(c.body.startedAt, null);
    assert.match(String(c.body.id), /^[a-z0-9]{14}$/);
    const id = c.body.id as string;
    const seen = new Set<string>();
    await waitFor('RUNNING', async () => {
      const g = await call('GET', `/pods/${id}`);
      seen.add(g.body.status as string);
      return g.body.status === 'RUNNING' || undefined;
    });
    const running = await call('GET', `/pods/${id}`);
    assert.deepEqual(running.body.actions, ['stop', 'restart', 'terminate']);
    assert.ok(
      running.body.runtime && typeof (running.body.runtime as { uptime: number }).uptime === 'number',
    );
    assert.equal(((await call('GET', '/pods')).body.pods as unknown[]).length >= 1, true);
    // stop → EXITED, cost 0, GPUs returned; start → RUNNING again.
    const stopped = await call('POST', `/pods/${id}/action`, { action: 'stop' });
    assert.equal(stopped.status, 200);
    assert.equal(stopped.body.status, 'EXITED');
    assert.equal(stopped.body.cost, 0);
    assert.equal(
      (await call('POST', `/pods/${id}/action`, { action: 'restart' })).status,
      409,
      'restart needs RUNNING',
    );
    assert.equal((await call('POST', `/pods/${id}/action`, { action: 'start' })).status, 200);
    await waitFor(
      'RUNNING again',
      async () => (await call('GET', `/pods/${id}`)).body.status === 'RUNNING' || undefined,
    );
    const term = await call('POST', `/pods/${id}/action`, { action: 'terminate' });
    assert.equal(term.status, 204);
    assert.equal((await call('GET', `/pods/${id}`)).status, 404);
    assert.equal((await call('DELETE', `/pods/${id}`)).status, 404);
  });

  test('errors: 422 lists violations, 400 rule or no capacity, 403 forbidden pool, 402 balance, 405', async () => {
    const bad = await create({ gpu: { id: 'NVIDIA RTX A4000', count: 0 }, bogus: true });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.errors, [
      "$: additional properties 'bogus' not allowed",
      '$.gpu.count: must be >= 1',
    ]);
    const both = await call('POST', '/pods', {
      name: 'p',
      image: 'i',
      gpu: { id: 'NVIDIA RTX A4000' },
      cpu: { id: 'cpu5c', vcpuCount: 2 },
    });
    assert.equal(both.status, 400);
    assert.match(String(both.body.detail), /exactly one of gpu or cpu/);
    const full = await create({ gpu: { id: 'NVIDIA L4' } });
    assert.equal(full.status, 400);
    assert.match(String(full.body.detail), /no instances currently available/);
    assert.equal((await create({ gpu: { id: 'NVIDIA H100 80GB HBM3' } })).status, 403);
    rp.setBalance(0);
    assert.equal((await create()).status, 402);
    rp.setBalance(100);
    const na = await call('PUT', '/pods');
    assert.equal(na.status, 405);
    assert.equal(na.headers.get('allow'), 'GET, POST');
  });

  test('capacity is taken by pods and given back when they go', async () => {
    rp.setCapacity('NVIDIA RTX A5000', 1);
    const a = await create({ gpu: { id: 'NVIDIA RTX A5000' } });
    assert.equal(a.status, 201);
    assert.equal((await create({ gpu: { id: 'NVIDIA RTX A5000' } })).status, 400);
    await call('DELETE', `/pods/${a.body.id}`);
    assert.equal((await create({ gpu: { id: 'NVIDIA RTX A5000' } })).status, 201);
  });

  test('logs stream as server-sent events and resume with Last-Event-ID', async () => {
    const c = await create({ args: `sh -c 'echo one; echo two; sleep infinity'` });
    const id = c.body.id as string;
    await waitFor(
      'two lines',
      () =>
        rp
          .pods()
          .find((p) => p.id === id)
          ?.logs.some((l) => l.line === 'two') || undefined,
    );
    const read = async (headers: Record<string, string>, query: string) => {
      const ac = new AbortController();
      const res = await fetch(`${rp.url}/pods/${id}/logs${query}`, {
        headers: { authorization: `Bearer ${rp.apiKey}`, ...headers },
        signal: ac.signal,
      });
      assert.equal(res.headers.get('content-type'), 'text/event-stream');
      assert.equal(res.headers.get('cache-control'), 'no-cache');
      const events: { id?: string; data: { line: string; source: string; ts: string } }[] = [];
      const parser = createParser({ onEvent: (e) => events.push({ id: e.id, data: JSON.parse(e.data) }) });
      const reader = res.body!.getReader();
      const dec = new TextDecoder();
      const want = events.length;
      while (events.length === want || !events.some((e) => e.data.line === 'two')) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(dec.decode(value, { stream: true }));
      }
      ac.abort();
      return events;
    };
    const all = await read({}, '?source=container');
    assert.deepEqual(
      all.map((e) => e.data.line),
      ['one', 'two'],
    );
    assert.match(all[0]!.id!, /^\d{4}-\d\d-\d\dT.*Z\/\d{12}$/);
    assert.ok(all.every((e) => e.data.source === 'container'));
    // Resuming after the first event replays only what followed it.
    const rest = await read({ 'last-event-id': all[0]!.id! }, '?source=container');
    assert.deepEqual(
      rest.map((e) => e.data.line),
      ['two'],
    );
    await call('DELETE', `/pods/${id}`);
  });

  test('RunPod restarts a container whose entrypoint exits, and reports no exit code', async () => {
    const c = await create({ args: `sh -c 'echo ran; exit 5'` });
    const id = c.body.id as string;
    await waitFor('a restart', () => (rp.pods().find((p) => p.id === id)?.starts ?? 0) >= 2 || undefined);
    const pod = await call('GET', `/pods/${id}`);
    assert.equal(pod.body.status, 'RUNNING');
    assert.ok(!JSON.stringify(pod.body).includes('exitCode'));
    const lines = rp
      .pods()
      .find((p) => p.id === id)!
      .logs.map((l) => l.line);
    assert.ok(lines.filter((l) => l === 'ran').length >= 2);
    assert.ok(!lines.some((l) => /\b5\b/.test(l) && l.includes('exit')), 'no exit code in the logs either');
    await call('DELETE', `/pods/${id}`);
  });

  test('rate limits: RateLimit headers on every answer, 429 with Retry-After past the quota', async () => {
    const limited = await startRunPodStandIn({ rateLimitPerMinute: 2 });
    try {
      const h = { authorization: `Bearer ${limited.apiKey}` };
      const first = await fetch(`${limited.url}/pods`, { headers: h });
      assert.equal(first.headers.get('ratelimit'), '"minute";r=1;t=60');
      assert.equal(first.headers.get('ratelimit-policy'), '"minute";q=2;w=60');
      await fetch(`${limited.url}/pods`, { headers: h });
      const third = await fetch(`${limited.url}/pods`, { headers: h });
      assert.equal(third.status, 429);
      assert.ok(Number(third.headers.get('retry-after')) > 0);
      assert.equal(
        ((await third.json()) as { detail: string }).detail,
        'rate limit exceeded for the minute window',
      );
    } finally {
      await limited.stop();
    }
  });

  test('fault injection: errors with Retry-After, dropped connections, outages', async () => {
    const undo = rp.inject({ method: 'POST', path: '/v2/pods', status: 429, retryAfterSeconds: 3, times: 1 });
    const r = await create();
    assert.equal(r.status, 429);
    assert.equal(r.headers.get('retry-after'), '3');
    undo();
    rp.inject({ path: '/v2/pods', drop: true, times: 1 });
    await assert.rejects(() => call('GET', '/pods'));
    const end = rp.faults.outage();
    assert.equal((await call('GET', '/catalog/gpus')).status, 503);
    end();
    assert.equal((await call('GET', '/catalog/gpus')).status, 200);
    for (const p of rp.pods()) await call('DELETE', `/pods/${p.id}`);
  });

  test('a request held past the client timeout is still carried out, and recorded', async () => {
    const before = rp.requests().length;
    rp.inject({ method: 'POST', path: /^\/v2\/pods$/, delayMs: 300, times: 1 });
    await assert.rejects(() =>
      fetch(`${rp.url}/pods`, {
        method: 'POST',
        headers: { authorization: `Bearer ${rp.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'late', image: 'busybox', gpu: { id: 'NVIDIA RTX A4000' } }),
        signal: AbortSignal.timeout(50),
      }),
    );
    const late = await waitFor('the pod the timed-out create made', () =>
      rp.pods().find((p) => p.name === 'late'),
    );
    const seen = rp.requests().slice(before);
    assert.equal(seen[0]?.method, 'POST');
    assert.equal(seen[0]?.path, '/v2/pods');
    await call('DELETE', `/pods/${late.id}`);
    const h = rp.history().find((x) => x.id === late.id);
    assert.equal(
      h?.transitions.map((t) => t.status).at(-1),
      'TERMINATED',
      'history keeps terminated pods with their transitions',
    );
    assert.equal(h?.transitions[0]?.status, 'PROVISIONING');
  });
});

describe('the simulated container shell', () => {
  const run = async (argv: string[], env: Record<string, string> = {}) => {
    const lines: string[] = [];
    const code = await runProcess(argv, {
      env,
      write: (l) => lines.push(l),
      sleep: async () => {},
      signal: new AbortController().signal,
    });
    return { code, lines };
  };

  test('sh -c with "$@", $?, &&, ||, exit and exec', async () => {
    const r = await run(
      [
        'sh',
        '-c',
        '"$@"; code=$?; echo "m $code"; exit 0',
        'troupe',
        'sh',
        '-c',
        'echo hi $X && false || echo fallback; exit 9',
      ],
      { X: 'there' },
    );
    assert.deepEqual(r, { code: 0, lines: ['hi there', 'fallback', 'm 9'] });
    assert.equal((await run(['sh', '-c', 'exec sh -c "exit 4"'])).code, 4);
    assert.deepEqual((await run(['sh', '-c', 'echo a\n# note\necho "b\nc"'])).lines, ['a', 'b', 'c']);
    assert.deepEqual((await run(['nvidia-smi'])).lines, ['sh: nvidia-smi: not found']);
    assert.equal((await run(['nvidia-smi'])).code, 127);
  });

  test('args split as a shell would', () => {
    assert.deepEqual(splitArgs(`sh -c 'echo "$A"; exit 2' x "a b"`), [
      'sh',
      '-c',
      'echo "$A"; exit 2',
      'x',
      'a b',
    ]);
  });
});
