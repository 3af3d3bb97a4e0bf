/**
 * API server figures for docs/benchmarks.md (issue: embedded API server):
 *  1. sustained writes/s (pod creates over HTTP keep-alive, 32 in flight)
 *  2. p50/p99 write latency at a paced 1,000 writes/s with 10 watchers attached
 *  3. time to list 100,000 pods with a label selector
 *  4. server RSS holding 100,000 pods
 *  5. sustained writes with the SQLite store (the default of `troupe cluster`) against the
 *     in-memory store (`--ephemeral`), fresh servers alternating in the same run
 *  6. with `--compare <checkout>`: only sustained writes, this tree against another checkout
 *     (the tree before a change) and the HTTPS floor, fresh servers alternating in the same
 *     run, `--rounds` times (default 5) for `--seconds` each (default 5); each server writes
 *     for 3 s first (JIT, TLS sessions). Ratios to each round's floor, and the server's CPU per
 *     write, which moves least with other load on the machine.
 *  7. with `--compare <checkout> --instructions <N>`: the server's instructions per pod create,
 *     counted by valgrind's callgrind (repeatable whatever else the machine does): each tree's
 *     server runs under callgrind with V8 on one thread, takes N creates to warm up, then the
 *     counters are zeroed and N more creates counted, 8 in flight; `--rounds` (default 1) runs
 *     per tree. Slow (about 50× under valgrind): N = 2000 takes a few minutes per run.
 * Run: node bench/apiserver.ts [--pods 100000] [--store-only] [--compare DIR [--rounds 5] [--seconds 5] [--instructions N]]
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  createNamespace,
  eachLimited,
  expectStatus,
  flag,
  Http,
  machine,
  percentile,
  pod,
  startClusterProcess,
} from './support.ts';

const args = process.argv.slice(2);
const TOTAL_PODS = Number(args[args.indexOf('--pods') + 1] || 100_000) || 100_000;
const STORE_ONLY = args.includes('--store-only');
const COMPARE = flag('compare', '');
const ROUNDS = Number(flag('rounds', '5'));
const SECONDS = Number(flag('seconds', '5'));
const INSTRUCTIONS = Number(flag('instructions', '0'));

/** The same client loop against bench/https-floor.ts: what TLS + HTTP alone cost here. */
async function floorWrites(seconds: number): Promise<number> {
  const child = spawn(process.execPath, [join(import.meta.dirname, 'https-floor.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve) =>
    child.stdout.once('data', (d: Buffer) => resolve(d.toString())),
  );
  const { url, ca } = JSON.parse(line) as { url: string; ca: string };
  const http = new Http({ url, token: 'floor', ca });
  try {
    return await writeLoop(http, '/floor', seconds);
  } finally {
    http.close();
    child.kill('SIGTERM');
  }
}

async function writeLoop(http: Http, path: string, seconds: number, prefix = 's'): Promise<number> {
  const deadline = Date.now() + seconds * 1000;
  let done = 0;
  let next = 0;
  const worker = async () => {
    while (Date.now() < deadline) {
      const r = await http.send('POST', path, pod(`${prefix}-${next++}`));
      if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
      done++;
    }
  };
  const start = Date.now();
  await Promise.all(Array.from({ length: 32 }, worker));
  return done / ((Date.now() - start) / 1000);
}

async function sustainedWrites(http: Http, seconds: number): Promise<number> {
  await createNamespace(http, 'bench-sustained');
  return writeLoop(http, '/api/v1/namespaces/bench-sustained/pods', seconds);
}

async function pacedLatency(
  http: Http,
  rate: number,
  seconds: number,
  watchers: number,
): Promise<{ p50: number; p99: number; delivered: number }> {
  await createNamespace(http, 'bench-paced');
  let delivered = 0;
  const stops = Array.from({ length: watchers }, () =>
    http.watch('/api/v1/namespaces/bench-paced/pods?watch=true&resourceVersion=0', () => {
      delivered++;
    }),
  );
  // Warm up first: TLS handshakes of the pooled sockets and JIT compilation are not what
  // a steady 1,000 writes/s costs.
  for (let w = 0; w < 3000; w += 50) {
    await Promise.all(
      Array.from({ length: 50 }, (_, j) =>
        http.send('POST', '/api/v1/namespaces/bench-paced/pods', pod(`w-${w + j}`)),
      ),
    );
  }
  const latencies: number[] = [];
  const total = rate * seconds;
  const start = performance.now();
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inflight.push(
      (async () => {
        const t0 = performance.now();
        const r = await http.send('POST', '/api/v1/namespaces/bench-paced/pods', pod(`p-${i}`));
        latencies.push(performance.now() - t0);
        if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
      })(),
    );
  }
  await Promise.all(inflight);
  for (const stop of stops) stop();
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), delivered };
}

async function fill(http: Http, ns: string, count: number): Promise<void> {
  await createNamespace(http, ns);
  await eachLimited(
    Array.from({ length: count }, (_, i) => i),
    32,
    async (i) => {
      await expectStatus(
        http.send('POST', `/api/v1/namespaces/${ns}/pods`, pod(`f-${i}`, { shard: `s${i % 100}` })),
        [201],
        'create',
      );
    },
  );
}

/**
 * Sustained writes on a fresh server with the SQLite store and one in memory, alternating
 * (memory, SQLite, memory, SQLite, …) so both see the same machine; the ratio of medians.
 */
async function storeComparison(rounds: number, seconds: number): Promise<void> {
  const rates = {
    memory: [] as number[],
    sqlite: [] as number[],
    memCpu: [] as number[],
    sqlCpu: [] as number[],
  };
  for (let i = 0; i < rounds; i++) {
    for (const durable of [false, true]) {
      const server = await startClusterProcess(['--no-data-plane'], { durable });
      const http = new Http(server);
      try {
        const cpu0 = await server.cpuSeconds();
        const wps = await sustainedWrites(http, seconds);
        const cpuPerWrite = ((await server.cpuSeconds()) - cpu0) / (wps * seconds);
        (durable ? rates.sqlite : rates.memory).push(wps);
        (durable ? rates.sqlCpu : rates.memCpu).push(cpuPerWrite * 1e6);
      } finally {
        http.close();
        await server.stop();
      }
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const fmt = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
  // Each round's two runs are back to back: their ratio sees the least machine drift.
  const pairs = rates.sqlite.map((s, i) => s / rates.memory[i]!);
  console.log(
    `sustained writes, SQLite store vs in memory (${rounds} rounds of ${seconds} s each, alternating): ` +
      `SQLite ${fmt(rates.sqlite)}/s, memory ${fmt(rates.memory)}/s; per-round ratios ${pairs.map((r) => r.toFixed(2)).join(', ')}, ` +
      `median ${median(pairs).toFixed(2)}; ratio of medians ${(median(rates.sqlite) / median(rates.memory)).toFixed(2)}; ` +
      `server CPU per write ${median(rates.sqlCpu).toFixed(0)} µs vs ${median(rates.memCpu).toFixed(0)} µs (ratio ${(median(rates.memCpu) / median(rates.sqlCpu)).toFixed(2)})`,
  );
}

/** Sustained writes on a fresh server of one tree: writes/s and the server's CPU µs per write. */
async function treeWrites(root: string | undefined, seconds: number): Promise<{ wps: number; cpu: number }> {
  const server = await startClusterProcess(['--no-data-plane'], { root });
  const http = new Http(server);
  try {
    await createNamespace(http, 'bench-sustained');
    await writeLoop(http, '/api/v1/namespaces/bench-sustained/pods', 3, 'warm');
    const cpu0 = await server.cpuSeconds();
    const wps = await writeLoop(http, '/api/v1/namespaces/bench-sustained/pods', seconds);
    const cpu = (((await server.cpuSeconds()) - cpu0) / (wps * seconds)) * 1e6;
    return { wps, cpu };
  } finally {
    http.close();
    await server.stop();
  }
}

/** This tree against another checkout, each round's order alternating, with the floor between. */
async function compareTrees(other: string, rounds: number, seconds: number): Promise<void> {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const rows = {
    ratioThis: [] as number[],
    ratioOther: [] as number[],
    cpuThis: [] as number[],
    cpuOther: [] as number[],
  };
  for (let i = 0; i < rounds; i++) {
    const floor = await floorWrites(seconds);
    const first = i % 2 === 0 ? 'this' : 'other';
    const a = await treeWrites(first === 'this' ? undefined : other, seconds);
    const b = await treeWrites(first === 'this' ? other : undefined, seconds);
    const mine = first === 'this' ? a : b;
    const theirs = first === 'this' ? b : a;
    rows.ratioThis.push(mine.wps / floor);
    rows.ratioOther.push(theirs.wps / floor);
    rows.cpuThis.push(mine.cpu);
    rows.cpuOther.push(theirs.cpu);
    console.log(
      `round ${i + 1}: floor ${floor.toFixed(0)}/s; this ${mine.wps.toFixed(0)}/s (ratio ${(mine.wps / floor).toFixed(2)}, CPU ${mine.cpu.toFixed(0)} µs/write); ` +
        `${other} ${theirs.wps.toFixed(0)}/s (ratio ${(theirs.wps / floor).toFixed(2)}, CPU ${theirs.cpu.toFixed(0)} µs/write)`,
    );
  }
  const pairs = rows.ratioThis.map((r, i) => r / rows.ratioOther[i]!);
  const cpuPairs = rows.cpuOther.map((c, i) => c / rows.cpuThis[i]!);
  console.log(
    `median ratio to floor: this ${median(rows.ratioThis).toFixed(2)}, ${other} ${median(rows.ratioOther).toFixed(2)}; ` +
      `throughput this ÷ other per round ${pairs.map((r) => r.toFixed(2)).join(', ')} (median ${median(pairs).toFixed(2)}); ` +
      `CPU per write other ÷ this per round ${cpuPairs.map((r) => r.toFixed(2)).join(', ')} (median ${median(cpuPairs).toFixed(2)}); ` +
      `median CPU per write this ${median(rows.cpuThis).toFixed(0)} µs, ${other} ${median(rows.cpuOther).toFixed(0)} µs`,
  );
}

/** Creates `count` pods, `inFlight` at a time, names `<prefix>-<i>`. */
async function createPods(
  http: Http,
  path: string,
  prefix: string,
  count: number,
  inFlight: number,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const r = await http.send('POST', path, pod(`${prefix}-${next++}`));
      if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

/** Instructions the server of one tree runs per pod create, counted by callgrind. */
async function treeInstructions(root: string | undefined, count: number): Promise<number> {
  const out = await mkdtemp(join(tmpdir(), 'troupe-callgrind-'));
  const server = await startClusterProcess(['--no-data-plane'], {
    root,
    wrapper: ['valgrind', '--tool=callgrind', `--callgrind-out-file=${join(out, 'callgrind.out.%p')}`],
    nodeFlags: ['--single-threaded'],
  });
  const http = new Http(server);
  const control = promisify(execFile);
  try {
    const path = '/api/v1/namespaces/bench-sustained/pods';
    await createNamespace(http, 'bench-sustained');
    await createPods(http, path, 'warm', count, 8);
    // Dumping zeroes the counters: the next dump holds the measured creates alone.
    await control('callgrind_control', ['--dump=warm', String(server.child.pid)]);
    await createPods(http, path, 'measured', count, 8);
    await control('callgrind_control', ['--dump=measured', String(server.child.pid)]);
  } finally {
    http.close();
    await server.stop();
  }
  for (const f of await readdir(out)) {
    const text = await readFile(join(out, f), 'utf8');
    if (!/^desc: Trigger: .*measured/m.test(text)) continue;
    const total = /^(?:summary|totals): (\d+)/m.exec(text);
    if (total) return Number(total[1]) / count;
  }
  throw new Error(`no callgrind dump of the measured creates in ${out}`);
}

async function compareInstructions(other: string, rounds: number, count: number): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    const mine = await treeInstructions(undefined, count);
    const theirs = await treeInstructions(other, count);
    console.log(
      `round ${i + 1}: instructions per pod create (${count} counted after ${count} to warm up): this ${(mine / 1e6).toFixed(3)} M, ` +
        `${other} ${(theirs / 1e6).toFixed(3)} M; this ÷ other ${(mine / theirs).toFixed(3)}`,
    );
  }
}

async function main(): Promise<void> {
  if (COMPARE && INSTRUCTIONS > 0) {
    console.log(`machine: ${machine()}`);
    await compareInstructions(COMPARE, Number(flag('rounds', '1')), INSTRUCTIONS);
    return;
  }
  if (COMPARE) {
    console.log(`machine: ${machine()}`);
    await compareTrees(COMPARE, ROUNDS, SECONDS);
    return;
  }
  if (STORE_ONLY) {
    console.log(`machine: ${machine()}`);
    await storeComparison(7, 5);
    return;
  }
  // The API server alone: no scheduler or kubelet writing back to every pod.
  const server = await startClusterProcess(['--no-data-plane']);
  const http = new Http(server);
  try {
    console.log(`machine: ${machine()}`);
    // Latency first, on a fresh server: a steady 1,000 writes/s, not the aftermath of a burst.
    const paced = await pacedLatency(http, 1000, 10, 10);
    const floor = await floorWrites(10);
    const wps = await sustainedWrites(http, 10);
    console.log(
      `sustained writes: ${wps.toFixed(0)} pod creates/s (32 in flight, 10 s); floor (HTTPS server that only parses and answers) ${floor.toFixed(0)}/s; ratio ${(wps / floor).toFixed(2)}`,
    );
    console.log(
      `paced 1,000 writes/s with 10 watchers: p50 ${paced.p50.toFixed(2)} ms, p99 ${paced.p99.toFixed(2)} ms (${paced.delivered} watch events delivered)`,
    );
    const already = await http.send('GET', '/api/v1/pods?limit=1');
    const existing =
      (JSON.parse(already.text) as { metadata: { remainingItemCount?: number } }).metadata
        .remainingItemCount ?? 0;
    await fill(http, 'bench-list', Math.max(0, TOTAL_PODS - existing - 1));
    const lists: number[] = [];
    let matched = 0;
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const r = await http.send('GET', '/api/v1/pods?labelSelector=shard%3Ds7');
      lists.push(performance.now() - t0);
      matched = (JSON.parse(r.text) as { items: unknown[] }).items.length;
    }
    const t0 = performance.now();
    const all = await http.send('GET', '/api/v1/pods');
    const fullList = performance.now() - t0;
    const count = (JSON.parse(all.text) as { items: unknown[] }).items.length;
    lists.sort((a, b) => a - b);
    console.log(
      `list ${count} pods with a label selector (${matched} match): median ${percentile(lists, 50).toFixed(0)} ms; full list ${fullList.toFixed(0)} ms (${(all.text.length / 1e6).toFixed(0)} MB)`,
    );
    const rss = await server.rssBytes();
    console.log(`server RSS holding ${count} pods: ${(rss / 2 ** 20).toFixed(0)} MiB`);
    await storeComparison(7, 5);
  } finally {
    http.close();
    await server.stop();
  }
}

await main();
