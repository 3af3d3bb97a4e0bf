/**
 * Controller runtime figures for docs/benchmarks.md (issue 4):
 *  1. reaction latency of a controller (event observed → its patch accepted) against the
 *     floor measured in the same run, p50/p99;
 *  2. controller RSS with 10,000 and 100,000 pods cached: with the runtime's default
 *     transform, with a `compact` one (all fields kept, metadata rebuilt, repeated
 *     strings shared), with a `slim` one (only what the controller reads), and with the
 *     young generation capped (--max-semi-space-size=16).
 * Three processes: `troupe cluster` (API server), the controller under test
 * (bench/runtime-controller.ts) and this driver.
 * Run: node bench/runtime.ts [--pods 10000,100000] [--samples 1000] [--rate 25]
 * BENCH_HEAP_SNAPSHOT=<dir> also writes a heap snapshot of each measured controller.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { ControllerProcess } from './controller-support.ts';
import type { LatencyReport, MemoryReport, PodTransform } from './runtime-controller.ts';
import {
  type BenchServer,
  createNamespace,
  eachLimited,
  expectStatus,
  flag,
  Http,
  machine,
  percentiles,
  pod,
  startClusterProcess,
} from './support.ts';

const POD_COUNTS = flag('pods', '10000,100000').split(',').map(Number);
const SAMPLES = Number(flag('samples', '1000'));
/** Samples per second of each loop; the two loops alternate. */
const RATE = Number(flag('rate', '25'));
const WARMUP = 100;
const POD_NAMESPACES = 10;

const CONTROLLER = join(import.meta.dirname, 'runtime-controller.ts');
const MERGE = 'application/merge-patch+json';
const MiB = 2 ** 20;

// ---- helpers -----------------------------------------------------------------

function forkController(mode: string, rest: string[], nodeFlags: string[] = []): ControllerProcess {
  return ControllerProcess.fork(CONTROLLER, [mode, ...rest], ['--expose-gc', ...nodeFlags]);
}

const ms = (v: number) => v.toFixed(2);
const mib = (v: number) => (v / MiB).toFixed(0);

// ---- reaction latency --------------------------------------------------------

interface LatencyResult {
  floor: number[];
  controller: number[];
  floorInProcess: number[];
  controllerInProcess: number[];
}

/**
 * Both loops start when the driver sends its PATCH setting bench/seq=N and end when the
 * driver's watch shows bench/ack=N. In between, each has one more write and two watch
 * deliveries: seq=N delivered to the acker, the acker's PATCH, ack=N delivered to the
 * driver. The floor's acker is the driver itself (its raw watch and raw PATCH); the
 * controller loop's acker is a runtime controller in another process.
 */
async function reactionLatency(server: BenchServer, http: Http): Promise<LatencyResult> {
  const nsCtrl = 'bench-ctrl';
  const nsFloor = 'bench-floor';
  await createNamespace(http, nsCtrl);
  await createNamespace(http, nsFloor);
  const cmPath = (ns: string) => `/api/v1/namespaces/${ns}/configmaps/target`;
  const rvs: Record<string, string> = {};
  for (const [ns, label] of [
    [nsCtrl, '1'],
    [nsFloor, 'floor'],
  ] as const) {
    const r = await expectStatus(
      http.send('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'target', labels: { bench: label } },
        data: { k: 'v' },
      }),
      [201],
      'configmap',
    );
    rvs[ns] = (JSON.parse(r.text) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
  }

  const controller = forkController('latency', [server.kubeconfigPath, nsCtrl]);
  await controller.next('ready');

  const waiters = new Map<string, (t: number) => void>();
  const floorAcked = new Set<string>();
  const floorInProcess: number[] = [];
  const onLine = (ns: string) => (line: string) => {
    if (!line.trim()) return;
    const ev = JSON.parse(line) as {
      type: string;
      object: { metadata?: { annotations?: Record<string, string> } };
    };
    const now = performance.now();
    if (ev.type !== 'MODIFIED') return;
    const ann = ev.object.metadata?.annotations ?? {};
    const seq = ann['bench/seq'];
    const ack = ann['bench/ack'];
    if (ns === nsFloor && seq && ack !== seq && !floorAcked.has(seq)) {
      floorAcked.add(seq);
      void http
        .send('PATCH', cmPath(nsFloor), { metadata: { annotations: { 'bench/ack': seq } } }, MERGE)
        .then((r) => {
          if (r.status !== 200) throw new Error(`floor ack: ${r.status} ${r.text}`);
          floorInProcess.push(performance.now() - now);
        });
    }
    if (ack) {
      const w = waiters.get(`${ns}/${ack}`);
      if (w) {
        waiters.delete(`${ns}/${ack}`);
        w(now);
      }
    }
  };
  const stops = [nsCtrl, nsFloor].map((ns) =>
    http.watch(`/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=${rvs[ns]}`, onLine(ns)),
  );

  const sample = async (ns: string, seq: number): Promise<number> => {
    const key = `${ns}/${seq}`;
    const acked = new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ack for ${key} within 10 s`)), 10_000);
      waiters.set(key, (t) => {
        clearTimeout(timer);
        resolve(t);
      });
    });
    const t0 = performance.now();
    await expectStatus(
      http.send('PATCH', cmPath(ns), { metadata: { annotations: { 'bench/seq': String(seq) } } }, MERGE),
      [200],
      'seq patch',
    );
    return (await acked) - t0;
  };

  const result: LatencyResult = { floor: [], controller: [], floorInProcess: [], controllerInProcess: [] };
  const interval = 1000 / (2 * RATE);
  let seq = 0;
  let due = performance.now();
  for (let i = 0; i < 2 * (WARMUP + SAMPLES); i++) {
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    due += interval;
    const ctrl = i % 2 === 0;
    const dt = await sample(ctrl ? nsCtrl : nsFloor, seq++);
    if (i === 2 * WARMUP - 1) {
      // Warm-up over (connections, JIT): drop what the in-process timers collected so far.
      await controller.ask<LatencyReport>({ type: 'report' }, 'latency');
      floorInProcess.length = 0;
    }
    if (i < 2 * WARMUP) continue;
    (ctrl ? result.controller : result.floor).push(dt);
  }
  result.controllerInProcess = (await controller.ask<LatencyReport>({ type: 'report' }, 'latency')).inProcess;
  result.floorInProcess = floorInProcess;
  for (const stop of stops) stop();
  await controller.stop();
  return result;
}

// ---- memory with many pods cached --------------------------------------------

async function fillPods(http: Http, from: number, to: number): Promise<void> {
  await eachLimited(
    Array.from({ length: Math.max(0, to - from) }, (_, j) => from + j),
    32,
    async (i) => {
      await expectStatus(
        http.send(
          'POST',
          `/api/v1/namespaces/bench-${i % POD_NAMESPACES}/pods`,
          pod(`f-${i}`, { shard: `s${i % 100}` }),
        ),
        [201],
        'create pod',
      );
    },
  );
}

/**
 * With no nodes the scheduler marks every pod Unschedulable (a status write). It works
 * roughly in creation order, so the newest pod carrying the condition means it is idle.
 */
async function waitForScheduler(http: Http, lastIndex: number): Promise<void> {
  const path = `/api/v1/namespaces/bench-${lastIndex % POD_NAMESPACES}/pods/f-${lastIndex}`;
  const deadline = performance.now() + 120_000;
  while (performance.now() < deadline) {
    const r = await http.send('GET', path);
    const p = JSON.parse(r.text) as { status?: { conditions?: unknown[] } };
    if (p.status?.conditions?.length) return;
    await new Promise((res) => setTimeout(res, 200));
  }
  console.error('warning: the scheduler had not caught up after 120 s; measuring anyway');
}

interface Variant {
  transform: PodTransform;
  nodeFlags: string[];
}

const SEMI = '--max-semi-space-size=16';
const VARIANTS_SMALL: Variant[] = [
  { transform: 'default', nodeFlags: [] },
  { transform: 'slim', nodeFlags: [] },
];
const VARIANTS_LARGE: Variant[] = [
  { transform: 'default', nodeFlags: [] },
  { transform: 'slim', nodeFlags: [] },
  { transform: 'compact', nodeFlags: [SEMI] },
  { transform: 'slim', nodeFlags: [SEMI] },
];

async function measureController(server: BenchServer, v: Variant): Promise<MemoryReport> {
  const ctrl = forkController('rss', [server.kubeconfigPath, v.transform], v.nodeFlags);
  const report = await ctrl.next<MemoryReport>('memory');
  await ctrl.stop();
  return report;
}

// ---- main ----------------------------------------------------------------------

async function main(): Promise<void> {
  const started = performance.now();
  const loadStart = loadavg()[0]!.toFixed(1);
  // No nodes: pods stay Pending, so the data plane adds no work while we measure.
  const server = await startClusterProcess(['--nodes', '0']);
  const http = new Http(server);
  try {
    console.log(`machine: ${machine()}`);
    console.log('');

    const lat = await reactionLatency(server, http);
    const f = percentiles(lat.floor);
    const c = percentiles(lat.controller);
    const fi = percentiles(lat.floorInProcess);
    const ci = percentiles(lat.controllerInProcess);
    console.log(
      `Reaction latency, ${SAMPLES} samples per loop after ${WARMUP} warm-up, ${RATE}/s per loop (the two loops alternate, one sample at a time):`,
    );
    console.log('');
    console.log('| loop (driver PATCH seq=N → driver watch sees ack=N) | p50 | p99 | samples |');
    console.log('|---|---|---|---|');
    console.log(
      `| floor: the driver acks itself (raw watch + raw PATCH) | ${ms(f.p50)} ms | ${ms(f.p99)} ms | ${f.n} |`,
    );
    console.log(
      `| controller: a runtime controller in its own process acks | ${ms(c.p50)} ms | ${ms(c.p99)} ms | ${c.n} |`,
    );
    console.log(`| controller / floor | ${(c.p50 / f.p50).toFixed(2)}× | ${(c.p99 / f.p99).toFixed(2)}× | |`);
    console.log('');
    console.log('| segment: acker handed the event → its ack PATCH answered | p50 | p99 | samples |');
    console.log('|---|---|---|---|');
    console.log(
      `| floor: driver's watch line parsed → PATCH response | ${ms(fi.p50)} ms | ${ms(fi.p99)} ms | ${fi.n} |`,
    );
    console.log(
      `| controller: informer handler called → reconcile's PATCH answered | ${ms(ci.p50)} ms | ${ms(ci.p99)} ms | ${ci.n} |`,
    );
    console.log('');
    console.log(
      "Both loops time the same path: driver PATCH (seq=N) → API server → watch delivery to the acker → the acker's merge PATCH (ack=N) → API server → watch delivery to the driver's own watch: two writes and two watch deliveries over keep-alive HTTPS, with the API server, the acker and the driver each in its own process. The controller loop adds what the runtime does in between: informer decode, transform and store, event handler and predicate, work queue, a worker's reconcile reading the cache, and the fenced client's PATCH through undici. The segment table isolates that part: from the acker holding the decoded event to its PATCH being answered.",
    );
    console.log('');

    for (let ns = 0; ns < POD_NAMESPACES; ns++) await createNamespace(http, `bench-${ns}`);
    const rows: string[] = [];
    let filled = 0;
    for (const count of POD_COUNTS) {
      const t0 = performance.now();
      await fillPods(http, filled, count);
      const fillS = (performance.now() - t0) / 1000;
      filled = count;
      await waitForScheduler(http, count - 1);
      const variants = count === Math.max(...POD_COUNTS) ? VARIANTS_LARGE : VARIANTS_SMALL;
      for (const v of variants) {
        const m = await measureController(server, v);
        if (m.objects !== count) throw new Error(`controller cached ${m.objects} pods, expected ${count}`);
        const perPod = (m.heapUsed - m.baselineHeapUsed) / m.objects;
        const young = m.spaces.new_space?.[0] ?? 0;
        rows.push(
          `| ${count.toLocaleString('en-US')} | ${v.transform} | ${v.nodeFlags.join(' ') || '(none)'} | **${mib(m.rss)}** | ${mib(m.peakRss)} | ${mib(m.heapUsed)} / ${mib(m.heapTotal)} | ${mib(young)} | ${mib(m.mallocRss)} | ${mib(m.fileRss)} | ${perPod.toFixed(0)} B | ${m.avgCachedJsonBytes.toFixed(0)} B | ${(m.syncMs / 1000).toFixed(1)} s |`,
        );
        if (m.snapshot) console.error(`heap snapshot: ${m.snapshot}`);
      }
      console.error(`(filled to ${count} pods in ${fillS.toFixed(0)} s)`);
    }
    console.log(
      'Controller memory: one Manager with one controller on Pods, in its own process, measured after the cache synced, every key was reconciled, and forced GCs. Pods are Pending (no nodes) with an Unschedulable condition, spread over 10 namespaces. Sizes in MiB (target 400 MB = 381 MiB):',
    );
    console.log('');
    console.log(
      '| pods cached | transform | node flags | RSS | peak RSS | V8 heap used / committed | of which young gen | malloc heap | mapped files | heap per pod | cached JSON per pod | start → synced |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const r of rows) console.log(r);
    console.log('');
    console.log(
      "Transforms: default = the runtime's (drops managedFields and last-applied); compact = default, then metadata rebuilt as a fresh object and repeated string values shared (every field kept); slim = only what the controller reads (metadata without managedFields, spec.nodeName, status.phase, condition type/status). Heap per pod = (V8 heap used − heap used before the manager started) / pods. Malloc heap = glibc's brk heap; mapped files = the node binary and libraries.",
    );
    console.log(
      `Server RSS at the end: ${mib(await server.rssBytes())} MiB. Whole run: ${((performance.now() - started) / 1000).toFixed(0)} s. Load average (1 min) at start ${loadStart}, at end ${loadavg()[0]!.toFixed(1)} (the machine is shared).`,
    );
  } finally {
    http.close();
    await server.stop();
  }
}

await main();
