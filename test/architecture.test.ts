import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { test } from 'node:test';

const SRC = resolve(import.meta.dirname, '../src');

async function* files(dir: string): AsyncGenerator<string> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else if (p.endsWith('.ts')) yield p;
  }
}

/**
 * Which top-level parts each part may import, as docs/architecture.md states. `lib` (the
 * shelf of plain mechanisms) imports nothing of the project, and everyone may import it;
 * `apis` (troupe's own API types, one file per group and version) only builds on `kube`.
 */
const ALLOWED: Record<string, string[]> = {
  lib: ['lib'],
  kube: ['kube', 'lib'],
  apis: ['apis', 'kube', 'lib'],
  runtime: ['runtime', 'kube', 'lib'],
  controllers: ['controllers', 'runtime', 'apis', 'kube', 'lib'],
  cluster: ['cluster', 'apis', 'kube', 'lib'],
  cli: ['cli', 'cluster', 'runtime', 'controllers', 'apis', 'kube', 'dashboard', 'simulate', 'lib'],
  // Scenarios, metrics, reports and traces: plain data over the API; the CLI composes the cluster.
  simulate: ['simulate', 'kube', 'lib'],
  dashboard: ['dashboard', 'runtime', 'apis', 'kube', 'lib'],
};

test('parts of the program only meet over the Kubernetes API', async () => {
  const violations: string[] = [];
  let checked = 0;
  for await (const file of files(SRC)) {
    const part = relative(SRC, file).split('/')[0]!;
    const allowed = ALLOWED[part];
    assert.ok(allowed, `unexpected top-level folder src/${part}`);
    const text = await readFile(file, 'utf8');
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)) {
      const target = relative(SRC, resolve(join(file, '..'), m[1]!)).split('/')[0]!;
      if (!allowed.includes(target))
        violations.push(`${relative(SRC, file)} imports ${m[1]} (${part} -> ${target})`);
    }
    checked++;
  }
  assert.ok(checked > 0);
  assert.deepEqual(violations, []);
});

/**
 * Parts that decide by time read it from an injected Clock (src/lib/clock.ts), so tests and
 * a simulation's virtual clock can move it. Real time on purpose (HTTP latencies, TLS
 * certificates, a shutdown bound) is written `realClock.now()`, which says so.
 */
const CLOCK_CHECKED = [
  'controllers',
  'runtime',
  'cluster/nodes',
  'cluster/scheduler',
  'cluster/kubelet',
  'cluster/workloads',
  'cluster/kueue',
  'cluster/runpod',
  'cluster/events.ts',
  'cluster/client.ts',
  'cluster/index.ts',
];

test('controllers, the runtime and the data plane read time from the injected Clock', async () => {
  const violations: string[] = [];
  let checked = 0;
  for await (const file of files(SRC)) {
    const rel = relative(SRC, file);
    if (!CLOCK_CHECKED.some((p) => rel === p || rel.startsWith(`${p}/`))) continue;
    const lines = (await readFile(file, 'utf8')).split('\n');
    lines.forEach((line, i) => {
      const code = line.replace(/\/\/.*$/, '');
      if (/^\s*(\/\*|\*)/.test(code)) return; // a comment line
      if (/\bDate\.now\b|new Date\(\)|\bperformance\.now\b/.test(code))
        violations.push(`${rel}:${i + 1}: ${line.trim()}`);
    });
    checked++;
  }
  assert.ok(checked > 100, `checked ${checked} files`);
  assert.deepEqual(violations, []);
});

/**
 * Timers that drive decisions (lease renewals, node health, evictions, scheduling backoff, the
 * RunPod stand-in's pod lifecycle) are set on the injected Clock (`clock.setTimer`,
 * `setRepeating`), so a ManualClock or a virtual clock fires them. Raw Node timers stay only
 * where they pace I/O or bound a shutdown, never a decision; each such file says why here.
 */
const RAW_TIMERS_ALLOWED: Record<string, string> = {
  'cluster/kubelet/engine.ts': 'stop() polls until in-flight API writes have returned',
  'cluster/kueue/standin.ts':
    'start-up polls until its CRDs are served; a CRD event is re-read after its write',
  'cluster/runpod/server.ts': 'HTTP: injected response latency and the event stream keep-alive',
  'cluster/apiserver/faults.ts': 'test fault injection: latency, watch cuts, history expiry on wall time',
  'cluster/apiserver/lifecycle/namespaces.ts': 'batches namespace finalization work off the write path',
  'cluster/apiserver/lifecycle/quota.ts': 'batches quota usage recomputation off the write path',
  'cluster/apiserver/lifecycle/crds.ts': 'batches CRD establishment off the write path',
  'cluster/apiserver/lifecycle/kubernetes-service.ts':
    'retries creating the default Service after a failed write',
  'controllers/offload/runpod.ts': 'reconnect delay of the RunPod log stream (HTTP)',
  'runtime/certs.ts': 'debounces certificate file changes (file system I/O)',
  'runtime/rest.ts': 'HTTP retry delays and the watch grace timeout',
  'runtime/controller.ts': 'bounds how long stop() waits for the queue to drain',
  'runtime/manager.ts': 'polls leadership to stop cache sync, and bounds shutdown',
};

test('controllers, the runtime and the data plane set their timers on the injected Clock', async () => {
  const violations: string[] = [];
  const used = new Set<string>();
  let checked = 0;
  for await (const file of files(SRC)) {
    const rel = relative(SRC, file);
    const part = rel.split('/')[0];
    if (part !== 'controllers' && part !== 'runtime' && part !== 'cluster') continue;
    if (rel.startsWith('cluster/apiserver/http/')) continue; // the HTTP server's own plumbing
    checked++;
    const lines = (await readFile(file, 'utf8')).split('\n');
    lines.forEach((line, i) => {
      const code = line.replace(/\/\/.*$/, '');
      if (/^\s*(\/\*|\*)/.test(code)) return; // a comment line
      if (!/\bset(?:Timeout|Interval)\b/.test(code)) return;
      if (RAW_TIMERS_ALLOWED[rel]) used.add(rel);
      else violations.push(`${rel}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.ok(checked > 100, `checked ${checked} files`);
  assert.deepEqual(violations, []);
  // An entry whose file no longer sets a raw timer is stale: drop it.
  assert.deepEqual(
    Object.keys(RAW_TIMERS_ALLOWED).filter((f) => !used.has(f)),
    [],
  );
});

const TEST = resolve(import.meta.dirname);
/** Test folders with no src/ counterpart: shared helpers, the tests of config/ and deploy/, and of the docs. */
const NOT_MIRRORED = ['support', 'packaging', 'docs'];

async function* dirs(dir: string): AsyncGenerator<string> {
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    yield join(dir, e.name);
    yield* dirs(join(dir, e.name));
  }
}

test('the test tree mirrors src/: test/<path>/ holds the tests of src/<path>/', async () => {
  const strays: string[] = [];
  for await (const dir of dirs(TEST)) {
    const rel = relative(TEST, dir);
    if (NOT_MIRRORED.includes(rel.split('/')[0]!)) continue;
    // Folders of data or of another language's scripts that the tests beside them use.
    if (!(await readdir(dir)).some((f) => f.endsWith('.ts'))) continue;
    try {
      await readdir(join(SRC, rel));
    } catch {
      strays.push(`test/${rel}/ has no src/${rel}/: move its tests beside the tests of the code they test`);
    }
  }
  assert.deepEqual(strays, []);
});

/** Past this many lines a source file says at its top why it is one file ("~500", with slack). */
const LONG_FILE_LINES = 600;

test('a source file over ~500 lines says at its top why it is one file', async () => {
  const unexplained: string[] = [];
  for await (const file of files(SRC)) {
    const text = await readFile(file, 'utf8');
    const lines = text.split('\n').length;
    if (lines <= LONG_FILE_LINES) continue;
    const header = text.startsWith('/**') ? text.slice(0, text.indexOf('*/')) : '';
    if (!header.includes('Why one file:'))
      unexplained.push(
        `${relative(SRC, file)} (${lines} lines): split it, or add "Why one file: …" to its top comment`,
      );
  }
  assert.deepEqual(unexplained, []);
});
