/**
 * Figures of the embedded cluster's durable state (issue 16), each against real `troupe
 * cluster` processes on a data directory:
 *
 *   node bench/persistence.ts reliability [rounds=20] [writes=1000]
 *     random writes, SIGKILL at a random moment, restart: every acknowledged write present,
 *     nothing half-present (bench/crash-round.ts; the test suite runs a smaller round).
 *   node --max-old-space-size=6144 bench/persistence.ts restart [nodes=1000] [pods=100000]
 *     a cluster holding that many nodes and Running pods is stopped and started again: time
 *     until the API server serves, until every node is Ready, and until `kubectl get pods`
 *     shows every pod Running.
 *   node --max-old-space-size=6144 bench/persistence.ts restart-from FILE [nodes=1000]
 *     the restart half alone, from a copy of a state.db the restart mode filled (filling
 *     100,000 pods takes long on a loaded machine; keep one with `sqlite3 … ".backup FILE"`).
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { promisify } from 'node:util';
import { kubeconfigYaml } from '../src/cluster/apiserver/kubeconfig.ts';
import { crashRound } from './crash-round.ts';
import {
  createNamespace,
  eachLimited,
  expectStatus,
  Http,
  machine,
  pod,
  startClusterProcess,
} from './support.ts';

const run = promisify(execFile);
const [mode = 'reliability', a, b] = process.argv.slice(2);

async function reliability(rounds: number, writes: number): Promise<void> {
  let acked = 0;
  let unknown = 0;
  let failed = 0;
  for (let i = 0; i < rounds; i++) {
    const dir = await mkdtemp(join(tmpdir(), 'troupe-crash-'));
    try {
      const r = await crashRound({ seed: 1000 + i, writes, dataDir: dir });
      acked += r.acknowledged;
      unknown += r.inFlight;
      if (r.violations.length) failed++;
      console.log(
        `round ${i + 1}: ${r.attempted} writes sent, ${r.acknowledged} acknowledged before the SIGKILL, ` +
          `${r.inFlight} in flight; rv ${r.rvBefore} -> ${r.rvAfter}; ${r.violations.length ? `FAILED: ${r.violations.join('; ')}` : 'ok'}`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  console.log(
    `reliability: ${rounds} rounds, ${acked} acknowledged writes all present, ${unknown} in flight at the kill; ${failed} rounds failed`,
  );
  if (failed) process.exitCode = 1;
}

async function kubectl(kubeconfig: string, args: string[]): Promise<string> {
  const { stdout } = await run('kubectl', ['--kubeconfig', kubeconfig, ...args], { maxBuffer: 1 << 30 });
  return stdout;
}

async function until(what: string, check: () => Promise<boolean>, limitMs: number): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    try {
      if (await check()) return performance.now() - t0;
    } catch {
      // not serving yet
    }
    if (performance.now() - t0 > limitMs) throw new Error(`${what}: not within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function restart(nodes: number, pods: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-restart-'));
  const args = ['--nodes', String(nodes)];
  try {
    const first = await startClusterProcess(args, { dataDir: dir, durable: true });
    const http = new Http(first);
    const t0 = performance.now();
    await createNamespace(http, 'bench');
    await eachLimited(
      Array.from({ length: pods }, (_, i) => i),
      32,
      async (i) => {
        await expectStatus(
          http.send('POST', '/api/v1/namespaces/bench/pods', pod(`p-${i}`)),
          [201],
          'create',
        );
      },
    );
    const notRunning = async (h: Http) => {
      const r = await h.send('GET', '/api/v1/pods?fieldSelector=status.phase%21%3DRunning&limit=1');
      return r.status === 200 && (JSON.parse(r.text) as { items: unknown[] }).items.length === 0;
    };
    await until('all pods Running before the restart', () => notRunning(http), 30 * 60_000);
    const filled = (performance.now() - t0) / 1000;
    const rss = await first.rssBytes();
    http.close();
    await first.stop();
    const size = (await stat(join(dir, 'state.db'))).size;
    console.log(
      `filled ${nodes} nodes / ${pods} pods, all Running, in ${filled.toFixed(0)} s (RSS ${(rss / 2 ** 20).toFixed(0)} MiB); state.db ${(size / 2 ** 20).toFixed(0)} MiB; stopped`,
    );

    await measureRestart(dir, nodes);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Starts a cluster on a filled data directory and times it until it serves and shows every pod Running. */
async function measureRestart(dir: string, nodes: number): Promise<void> {
  const args = ['--nodes', String(nodes)];
  const t1 = performance.now();
  const second = startClusterProcess(args, { dataDir: dir, durable: true });
  const kubeconfig = join(dir, 'kubeconfig');
  // Serving: kubectl gets an answer (the kubeconfig of the first run still holds).
  const serving = await until(
    'serving',
    async () => (await kubectl(kubeconfig, ['get', '--raw', '/readyz'])) === 'ok',
    60_000,
  );
  const listOk = async () =>
    (
      await kubectl(kubeconfig, ['get', 'pods', '-A', '--field-selector=status.phase!=Running', '-o', 'name'])
    ).trim() === '';
  await until('every pod Running', listOk, 120_000);
  const runningAt = performance.now() - t1;
  const server = await second;
  const http2 = new Http(server);
  const nodesReady = await until(
    'every node Ready',
    async () => {
      const r = await http2.send('GET', '/api/v1/nodes');
      const items = (
        JSON.parse(r.text) as { items: { status: { conditions: { type: string; status: string }[] } }[] }
      ).items;
      return (
        items.length === nodes &&
        items.every((n) => n.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True'))
      );
    },
    120_000,
  );
  const all = (await kubectl(kubeconfig, ['get', 'pods', '-A', '--no-headers'])).trim().split('\n');
  const running = all.filter((l) => /\sRunning\s/.test(l)).length;
  console.log(
    `restart: serving after ${(serving / 1000).toFixed(1)} s; every pod Running (kubectl) after ${(runningAt / 1000).toFixed(1)} s; ` +
      `every node Ready ${(nodesReady / 1000).toFixed(1)} s after that; kubectl get pods -A: ${running}/${all.length} Running`,
  );
  http2.close();
  await server.stop();
}

async function restartFrom(file: string, nodes: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'troupe-restart-'));
  try {
    await copyFile(file, join(dir, 'state.db'));
    // The kubeconfig the first run wrote, rebuilt from the stored port, token and certificate.
    const db = new DatabaseSync(join(dir, 'state.db'), { readOnly: true });
    const setting = (name: string) =>
      (db.prepare('SELECT value FROM settings WHERE name = ?').get(name) as { value: string }).value;
    const yaml = kubeconfigYaml({
      server: `https://127.0.0.1:${setting('port')}`,
      token: setting('token'),
      caPem: (JSON.parse(setting('tls')) as { ca: string }).ca,
    });
    db.close();
    await writeFile(join(dir, 'kubeconfig'), yaml, { mode: 0o600 });
    await measureRestart(dir, nodes);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

console.log(`machine: ${machine()}`);
if (mode === 'reliability') await reliability(Number(a ?? 20), Number(b ?? 1000));
else if (mode === 'restart') await restart(Number(a ?? 1000), Number(b ?? 100_000));
else if (mode === 'restart-from' && a) await restartFrom(a, Number(b ?? 1000));
else throw new Error(`unknown mode ${mode}: reliability, restart or restart-from FILE`);
