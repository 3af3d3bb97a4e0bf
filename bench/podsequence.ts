/**
 * PodSequence figures for docs/benchmarks.md (issue 6):
 *  (a) a cluster-scoped sequence of 10,000 pods in 100 tiers of 100;
 *  (b) a node-scoped sequence over 1,000 nodes: per node a DaemonSet-like pod, then an app
 *      pod, both pinned to the node by required node affinity (as DaemonSet pods are);
 * recording for each: the controller's API writes per released pod (target exactly 1),
 * its status writes per tier, and the release latency (last pod of tier k Ready → tier
 * k+1 released) p50/p99 against the floor measured in the same run (targets ≤ 1.5× p50,
 * ≤ 3× p99).
 *
 * Three processes: `troupe cluster --no-data-plane` (the API server alone: no scheduler,
 * kubelet or node simulator, so nothing but this driver makes pods Ready), the controller
 * (bench/podsequence-controller.ts: a runtime Manager with podSequenceControllers()) and
 * this driver, which plays the kubelet: it marks pods Ready with a status patch and
 * timestamps everything through its own watches.
 *
 * Run: node bench/podsequence.ts [--tiers 100] [--tier-size 100] [--nodes 1000] [--rate 25]
 *      [--only cluster|node]
 * BENCH_CPU_PROF=<dir> writes V8 CPU profiles of the server and the controller there.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { releasePatch } from '../src/controllers/podsequence/index.ts';
import type { Pod } from '../src/controllers/podsequence/types.ts';
import type { ControllerReport, Trace, TraceSample } from './podsequence-controller.ts';
import {
  countBetween,
  GATE,
  type PodChange,
  PodWatch,
  type RequestCounts,
  requestCounts,
  SequenceWatch,
} from './podsequence-watch.ts';
import { type BenchServer, Http, machine, percentile, pod, startClusterProcess } from './support.ts';

const args = process.argv.slice(2);
function flag(name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : fallback;
}
const TIERS = Number(flag('tiers', '100'));
const TIER_SIZE = Number(flag('tier-size', '100'));
const NODES = Number(flag('nodes', '1000'));
/** Node scope: samples per second of each loop (controller, floor); the loops alternate. */
const RATE = Number(flag('rate', '25'));
const ONLY = flag('only', '');
/** Node scope: samples of each loop dropped while connections and JIT warm up. */
const WARMUP = 50;
/** The controller's default releaseConcurrency: the floor sends its patches as many at a time. */
const RELEASE_CONCURRENCY = 16;
/** Status patches in flight while the driver marks a tier Ready, as kubelets on many nodes would. */
const KUBELET_CONCURRENCY = 16;
const CREATE_CONCURRENCY = 32;

const CONTROLLER = join(import.meta.dirname, 'podsequence-controller.ts');
const MERGE = 'application/merge-patch+json';
const PODSEQ_PATH = (ns: string) => `/apis/scheduling.example.com/v1alpha1/namespaces/${ns}/podsequences`;

// ---- helpers -----------------------------------------------------------------

async function expectStatus(p: Promise<{ status: number; text: string }>, ok: number[], what: string) {
  const r = await p;
  if (!ok.includes(r.status)) throw new Error(`${what}: ${r.status} ${r.text.slice(0, 300)}`);
  return r;
}

async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

async function createNamespace(http: Http, name: string): Promise<void> {
  await expectStatus(
    http.send('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }),
    [201],
    `namespace ${name}`,
  );
}

async function listRv(http: Http, path: string): Promise<string> {
  const r = await expectStatus(http.send('GET', `${path}?limit=1`), [200], `list ${path}`);
  return (JSON.parse(r.text) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
}

function gatedPod(name: string, labels: Record<string, string>, node?: string): Record<string, unknown> {
  const p = pod(name, labels) as { spec: Record<string, unknown> };
  p.spec.schedulingGates = [{ name: GATE }];
  if (node) {
    // How the DaemonSet controller pins its pods (spec.nodeName is forbidden on gated pods).
    p.spec.affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }],
        },
      },
    };
  }
  return p;
}

async function createAll(http: Http, path: string, bodies: Record<string, unknown>[]): Promise<void> {
  await eachLimited(bodies, CREATE_CONCURRENCY, async (b) => {
    await expectStatus(http.send('POST', path, b), [201], `create in ${path}`);
  });
}

/** The kubelet's part: the pod is Running and Ready. */
function markReady(http: Http, ns: string, name: string): Promise<unknown> {
  return expectStatus(
    http.send(
      'PATCH',
      `/api/v1/namespaces/${ns}/pods/${name}/status`,
      {
        status: {
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString() }],
        },
      },
      MERGE,
    ),
    [200],
    `ready ${ns}/${name}`,
  );
}

const becameReady = (c: PodChange) => c.after.ready && !c.before?.ready;
const released = (c: PodChange) => !!c.before?.gated && !c.after.gated;

/**
 * The floor: the driver does the least a controller must. Its watch shows `trigger`
 * becoming Ready; from that watch callback it sends the release patch (the controller's
 * own `releasePatch`) of each pod of `batch`, RELEASE_CONCURRENCY at a time, and its watch
 * shows the gates gone. Returns ms from the trigger's Ready to the first and the last
 * release seen.
 */
class Floor {
  patches = new Map<number, number>();
  private readonly http: Http;
  private readonly ns: string;
  private readonly watch: PodWatch;

  constructor(http: Http, ns: string, watch: PodWatch) {
    this.http = http;
    this.ns = ns;
    this.watch = watch;
  }

  async sample(trigger: string, batch: string[]): Promise<{ first: number; last: number }> {
    let t0 = 0;
    let first = 0;
    let last = 0;
    let seen = 0;
    const inBatch = new Set(batch);
    let sending: Promise<void> | undefined;
    const off = this.watch.on((c) => {
      if (c.after.name === trigger && becameReady(c)) {
        t0 = c.t;
        sending = eachLimited(batch, RELEASE_CONCURRENCY, async (name) => {
          const state = this.watch.pods.get(name)!;
          const patch = releasePatch({ pod: state.pod as Pod, gate: GATE, releasedBy: `${this.ns}/floor` });
          const r = await this.http.send('PATCH', `/api/v1/namespaces/${this.ns}/pods/${name}`, patch, MERGE);
          this.patches.set(r.status, (this.patches.get(r.status) ?? 0) + 1);
          if (r.status !== 200) throw new Error(`floor release ${name}: ${r.status} ${r.text.slice(0, 200)}`);
        });
      } else if (inBatch.has(c.after.name) && released(c)) {
        if (seen++ === 0) first = c.t;
        last = c.t;
      }
    });
    try {
      await markReady(this.http, this.ns, trigger);
      await this.watch.until(`floor batch of ${trigger}`, () => seen === batch.length, 30_000);
      await sending;
    } finally {
      off();
    }
    return { first: first - t0, last: last - t0 };
  }

  get count(): number {
    let n = 0;
    for (const v of this.patches.values()) n += v;
    return n;
  }
}

// ---- the controller process ---------------------------------------------------

function forkController(server: BenchServer): ChildProcess {
  const prof = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
    : [];
  return fork(CONTROLLER, [server.kubeconfigPath], {
    execArgv: [...prof, '--max-old-space-size=4096'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

function nextMessage<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: { type?: string }) => {
      if (m.type !== type) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(m as T);
    };
    const onExit = (code: number | null) => reject(new Error(`controller exited with ${code}`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

async function controllerIdle(child: ChildProcess): Promise<void> {
  child.send({ type: 'idle' });
  await nextMessage(child, 'idle');
}

async function controllerTrace(child: ChildProcess, samples: TraceSample[]): Promise<Trace> {
  child.send({ type: 'trace', samples });
  return nextMessage<Trace>(child, 'trace');
}

async function controllerReport(child: ChildProcess): Promise<ControllerReport> {
  child.send({ type: 'report' });
  return nextMessage<ControllerReport>(child, 'report');
}

// ---- what a scenario records ----------------------------------------------------

interface Totals {
  requests: RequestCounts;
  controller: ControllerReport;
  serverCpu: number;
}

async function statusBytes(http: Http, ns: string, name: string): Promise<number> {
  const r = await expectStatus(http.send('GET', `${PODSEQ_PATH(ns)}/${name}`), [200], 'get PodSequence');
  return JSON.stringify((JSON.parse(r.text) as { status?: unknown }).status ?? {}).length;
}

async function totals(http: Http, server: BenchServer, child: ChildProcess): Promise<Totals> {
  await controllerIdle(child);
  return {
    requests: await requestCounts(http),
    controller: await controllerReport(child),
    serverCpu: await server.cpuSeconds(),
  };
}

interface Result {
  title: string;
  pods: number;
  tiers: number;
  releasedPods: number;
  /** Tier transitions (cluster) or nodes (node) the latency was measured on. */
  transitions: number;
  /** Controller writes to pods by HTTP code, from the API server's counters minus the floor's. */
  podWrites: Map<string, number>;
  /** Changes to pods' labels/annotations/spec the driver's watch saw (the driver only writes status). */
  podShapeChanges: number;
  statusWrites: number;
  statusChanges: number;
  eventWrites: number;
  sequenceReads: number;
  reconciles: number;
  /** The controller's own count of its PATCHes, to check the server-side attribution. */
  controllerPatches: number;
  /** PATCHes of pods (minus the floor's), sequence status and events, by the API server's count. */
  serverPatches: number;
  firstTierMs: number;
  firstTierPods: number;
  latencyFirst: number[];
  latencyLast: number[];
  floorFirst: number[];
  floorLast: number[];
  violations: string[];
  trace: Trace;
  /** Bytes of the sequence's status (JSON) once Completed: what each status write carries. */
  statusBytes: number;
  controllerCpu: number;
  serverCpu: number;
  wallS: number;
}

function attribute(
  before: Totals,
  after: Totals,
  floor: Floor,
): Pick<
  Result,
  | 'podWrites'
  | 'statusWrites'
  | 'eventWrites'
  | 'sequenceReads'
  | 'reconciles'
  | 'controllerPatches'
  | 'serverPatches'
> {
  // Verbs as kube-apiserver counts them (CREATE, UPDATE, PATCH, APPLY, DELETE). The driver
  // writes pods only by CREATE and through the status subresource, except the floor's
  // release patches, which it counts itself: every other write to a pod itself (PATCH,
  // UPDATE, APPLY, DELETE) is the controller's.
  const podWrites = new Map<string, number>();
  for (const [key, v] of after.requests) {
    const [verb, resource, code] = key.split(' ');
    if (resource !== 'pods' || !['PATCH', 'UPDATE', 'APPLY', 'DELETE'].includes(verb!)) continue;
    let n = v - (before.requests.get(key) ?? 0);
    if (verb === 'PATCH') n -= floor.patches.get(Number(code)) ?? 0;
    if (n !== 0) podWrites.set(code!, (podWrites.get(code!) ?? 0) + n);
  }
  const statusWrites =
    countBetween(before.requests, after.requests, 'PATCH podsequences/status *') +
    countBetween(before.requests, after.requests, 'UPDATE podsequences/status *') +
    countBetween(before.requests, after.requests, 'APPLY podsequences/status *');
  const eventWrites =
    countBetween(before.requests, after.requests, 'CREATE events *') +
    countBetween(before.requests, after.requests, 'PATCH events *');
  const sequenceReads = countBetween(before.requests, after.requests, 'GET podsequences *');
  const sum = (r: Record<string, number>, pred: (k: string) => boolean) =>
    Object.entries(r).reduce((s, [k, v]) => s + (pred(k) ? v : 0), 0);
  const reconciles =
    sum(after.controller.reconciles, () => true) - sum(before.controller.reconciles, () => true);
  const controllerPatches =
    sum(after.controller.requests, (k) => k.startsWith('PATCH ')) -
    sum(before.controller.requests, (k) => k.startsWith('PATCH '));
  const serverPatches =
    countBetween(before.requests, after.requests, 'PATCH pods *') -
    floor.count +
    countBetween(before.requests, after.requests, 'PATCH podsequences/status *') +
    countBetween(before.requests, after.requests, 'PATCH events *');
  return {
    podWrites,
    statusWrites,
    eventWrites,
    sequenceReads,
    reconciles,
    controllerPatches,
    serverPatches,
  };
}

// ---- (a) cluster scope ------------------------------------------------------------

async function clusterScenario(http: Http, server: BenchServer, child: ChildProcess): Promise<Result> {
  const started = performance.now();
  const ns = 'ps-cluster';
  const floorNs = 'ps-cluster-floor';
  const tierOf = (name: string) => Number(name.slice(1, name.indexOf('-')));
  await createNamespace(http, ns);
  await createNamespace(http, floorNs);
  const watch = new PodWatch();
  const floorWatch = new PodWatch();
  const seqWatch = new SequenceWatch();
  watch.start(http, ns, await listRv(http, `/api/v1/namespaces/${ns}/pods`));
  floorWatch.start(http, floorNs, await listRv(http, `/api/v1/namespaces/${floorNs}/pods`));
  seqWatch.start(http, ns, await listRv(http, PODSEQ_PATH(ns)));

  const bodies: Record<string, unknown>[] = [];
  for (let k = 0; k < TIERS; k++)
    for (let i = 0; i < TIER_SIZE; i++) bodies.push(gatedPod(`t${k}-${i}`, { tier: `t${k}` }));
  // One floor sample per tier transition: a trigger pod and a batch of TIER_SIZE gated pods.
  const floorBodies: Record<string, unknown>[] = [];
  for (let k = 0; k < TIERS - 1; k++) {
    floorBodies.push(pod(`trig-${k}`));
    for (let i = 0; i < TIER_SIZE; i++) floorBodies.push(gatedPod(`f${k}-${i}`, {}));
  }
  const tc = performance.now();
  await createAll(http, `/api/v1/namespaces/${ns}/pods`, bodies);
  await createAll(http, `/api/v1/namespaces/${floorNs}/pods`, floorBodies);
  await watch.until('every pod seen', () => watch.pods.size === bodies.length);
  await floorWatch.until('every floor pod seen', () => floorWatch.pods.size === floorBodies.length);
  console.error(
    `(a) created ${bodies.length + floorBodies.length} pods in ${((performance.now() - tc) / 1000).toFixed(1)} s`,
  );

  // Per tier: pods Ready, pods released, when the tier became all Ready and when releases were seen.
  const ready = Array.from({ length: TIERS }, () => 0);
  const rel = Array.from({ length: TIERS }, () => 0);
  const allReadyAt = Array.from({ length: TIERS }, () => 0);
  const firstRel = Array.from({ length: TIERS }, () => 0);
  const lastRel = Array.from({ length: TIERS }, () => 0);
  const lastReadyName: string[] = [];
  const firstRelName: string[] = [];
  const violations: string[] = [];
  watch.on((c) => {
    const k = tierOf(c.after.name);
    if (becameReady(c) && ++ready[k]! === TIER_SIZE) {
      allReadyAt[k] = c.t;
      lastReadyName[k] = c.after.name;
    }
    if (released(c)) {
      if (rel[k]!++ === 0) {
        firstRel[k] = c.t;
        firstRelName[k] = c.after.name;
      }
      lastRel[k] = c.t;
      // Order check: every pod of every earlier tier is Ready when this one is released.
      for (let j = 0; j < k; j++) {
        if (ready[j]! < TIER_SIZE) {
          violations.push(`${c.after.name} released with tier ${j} at ${ready[j]}/${TIER_SIZE} Ready`);
          break;
        }
      }
    }
  });

  const floor = new Floor(http, floorNs, floorWatch);
  const before = await totals(http, server, child);
  const seq = {
    apiVersion: 'scheduling.example.com/v1alpha1',
    kind: 'PodSequence',
    metadata: { name: 'tiers', namespace: ns },
    spec: {
      podGroups: Array.from({ length: TIERS }, (_, k) => ({
        name: `tier-${k}`,
        podSelector: { matchLabels: { tier: `t${k}` } },
      })),
    },
  };
  const t0 = performance.now();
  await expectStatus(http.send('POST', PODSEQ_PATH(ns), seq), [201], 'create PodSequence');
  await watch.until('tier 0 released', () => rel[0] === TIER_SIZE);
  const firstTierMs = lastRel[0]! - t0;

  const latencyFirst: number[] = [];
  const latencyLast: number[] = [];
  const floorFirst: number[] = [];
  const floorLast: number[] = [];
  const tierNames = (k: number) => Array.from({ length: TIER_SIZE }, (_, i) => `t${k}-${i}`);
  for (let k = 0; k < TIERS; k++) {
    if (k < TIERS - 1) {
      // The floor, with the controller idle and tier k released but not Ready yet.
      await controllerIdle(child);
      const f = await floor.sample(
        `trig-${k}`,
        Array.from({ length: TIER_SIZE }, (_, i) => `f${k}-${i}`),
      );
      floorFirst.push(f.first);
      floorLast.push(f.last);
      await controllerIdle(child);
    }
    // The kubelet's part: tier k's pods become Ready, KUBELET_CONCURRENCY status patches at a time.
    await eachLimited(tierNames(k), KUBELET_CONCURRENCY, async (name) => {
      await markReady(http, ns, name);
    });
    await watch.until(`tier ${k} Ready`, () => ready[k] === TIER_SIZE);
    if (k === TIERS - 1) break;
    await watch.until(`tier ${k + 1} released`, () => rel[k + 1] === TIER_SIZE);
    latencyFirst.push(firstRel[k + 1]! - allReadyAt[k]!);
    latencyLast.push(lastRel[k + 1]! - allReadyAt[k]!);
  }
  await seqWatch.until('the sequence Completed', (s) => s.phase === 'Completed');
  const after = await totals(http, server, child);
  const trace = await controllerTrace(
    child,
    Array.from({ length: TIERS - 1 }, (_, k) => ({
      ready: lastReadyName[k]!,
      released: firstRelName[k + 1]!,
    })),
  );
  watch.close();
  floorWatch.close();
  seqWatch.close();
  return {
    title: `(a) cluster scope: ${TIERS} tiers × ${TIER_SIZE} pods`,
    pods: bodies.length,
    tiers: TIERS,
    releasedPods: rel.reduce((s, v) => s + v, 0),
    transitions: TIERS - 1,
    ...attribute(before, after, floor),
    podShapeChanges: watch.shapeChanges,
    statusChanges: seqWatch.statusChanges,
    firstTierMs,
    firstTierPods: TIER_SIZE,
    latencyFirst,
    latencyLast,
    floorFirst,
    floorLast,
    violations,
    trace,
    statusBytes: await statusBytes(http, ns, 'tiers'),
    controllerCpu: after.controller.cpuSeconds - before.controller.cpuSeconds,
    serverCpu: after.serverCpu - before.serverCpu,
    wallS: (performance.now() - started) / 1000,
  };
}

// ---- (b) node scope -----------------------------------------------------------------

async function nodeScenario(http: Http, server: BenchServer, child: ChildProcess): Promise<Result> {
  const started = performance.now();
  const ns = 'ps-node';
  const floorNs = 'ps-node-floor';
  const nodeName = (i: number) => `node-${String(i).padStart(4, '0')}`;
  await createNamespace(http, ns);
  await createNamespace(http, floorNs);
  const watch = new PodWatch();
  const floorWatch = new PodWatch();
  const seqWatch = new SequenceWatch();
  watch.start(http, ns, await listRv(http, `/api/v1/namespaces/${ns}/pods`));
  floorWatch.start(http, floorNs, await listRv(http, `/api/v1/namespaces/${floorNs}/pods`));
  seqWatch.start(http, ns, await listRv(http, PODSEQ_PATH(ns)));

  const tc = performance.now();
  await createAll(
    http,
    '/api/v1/nodes',
    Array.from({ length: NODES }, (_, i) => ({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: nodeName(i), labels: { 'kubernetes.io/hostname': nodeName(i) } },
      spec: {},
    })),
  );
  const bodies: Record<string, unknown>[] = [];
  for (let i = 0; i < NODES; i++) {
    bodies.push(gatedPod(`drv-${i}`, { role: 'driver' }, nodeName(i)));
    bodies.push(gatedPod(`app-${i}`, { role: 'app' }, nodeName(i)));
  }
  const floorBodies: Record<string, unknown>[] = [];
  for (let i = 0; i < NODES; i++) floorBodies.push(pod(`trig-${i}`), gatedPod(`fl-${i}`, {}));
  await createAll(http, `/api/v1/namespaces/${ns}/pods`, bodies);
  await createAll(http, `/api/v1/namespaces/${floorNs}/pods`, floorBodies);
  await watch.until('every pod seen', () => watch.pods.size === bodies.length);
  await floorWatch.until('every floor pod seen', () => floorWatch.pods.size === floorBodies.length);
  console.error(
    `(b) created ${NODES} nodes and ${bodies.length + floorBodies.length} pods in ${((performance.now() - tc) / 1000).toFixed(1)} s`,
  );

  const readyAt = new Map<string, number>();
  const releasedAt = new Map<string, number>();
  const violations: string[] = [];
  let releasedDrivers = 0;
  let firstDriverRelease = 0;
  let lastDriverRelease = 0;
  watch.on((c) => {
    const name = c.after.name;
    if (becameReady(c)) readyAt.set(name, c.t);
    if (!released(c)) return;
    releasedAt.set(name, c.t);
    if (name.startsWith('drv-')) {
      if (releasedDrivers++ === 0) firstDriverRelease = c.t;
      lastDriverRelease = c.t;
    } else if (!watch.pods.get(`drv-${name.slice(4)}`)?.ready) {
      violations.push(`${name} released before drv-${name.slice(4)} was Ready`);
    }
  });

  const floor = new Floor(http, floorNs, floorWatch);
  const before = await totals(http, server, child);
  const seq = {
    apiVersion: 'scheduling.example.com/v1alpha1',
    kind: 'PodSequence',
    metadata: { name: 'per-node', namespace: ns },
    spec: {
      scope: 'Node',
      podGroups: [
        { name: 'driver', podSelector: { matchLabels: { role: 'driver' } } },
        { name: 'app', podSelector: { matchLabels: { role: 'app' } } },
      ],
    },
  };
  const t0 = performance.now();
  await expectStatus(http.send('POST', PODSEQ_PATH(ns), seq), [201], 'create PodSequence');
  await watch.until('every driver pod released', () => releasedDrivers === NODES);
  const firstTierMs = lastDriverRelease - t0;
  void firstDriverRelease;
  await controllerIdle(child);

  const latency: number[] = [];
  const floorLat: number[] = [];
  const interval = 1000 / (2 * RATE);
  let due = performance.now();
  const pace = async () => {
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    due += interval;
  };
  for (let i = 0; i < NODES; i++) {
    await pace();
    await markReady(http, ns, `drv-${i}`);
    await watch.until(`app-${i} released`, () => releasedAt.has(`app-${i}`), 30_000);
    if (i >= WARMUP) latency.push(releasedAt.get(`app-${i}`)! - readyAt.get(`drv-${i}`)!);
    await pace();
    const f = await floor.sample(`trig-${i}`, [`fl-${i}`]);
    if (i >= WARMUP) floorLat.push(f.first);
  }
  await eachLimited(
    Array.from({ length: NODES }, (_, i) => `app-${i}`),
    KUBELET_CONCURRENCY,
    async (name) => {
      await markReady(http, ns, name);
    },
  );
  await seqWatch.until('the sequence Completed', (s) => s.phase === 'Completed', 120_000);
  const after = await totals(http, server, child);
  const trace = await controllerTrace(
    child,
    Array.from({ length: NODES - WARMUP }, (_, j) => ({
      ready: `drv-${j + WARMUP}`,
      released: `app-${j + WARMUP}`,
    })),
  );
  watch.close();
  floorWatch.close();
  seqWatch.close();
  return {
    title: `(b) node scope: ${NODES} nodes × 2 tiers`,
    pods: bodies.length,
    tiers: 2,
    releasedPods: releasedAt.size,
    transitions: latency.length,
    ...attribute(before, after, floor),
    podShapeChanges: watch.shapeChanges,
    statusChanges: seqWatch.statusChanges,
    firstTierMs,
    firstTierPods: NODES,
    latencyFirst: latency,
    latencyLast: latency,
    floorFirst: floorLat,
    floorLast: floorLat,
    violations,
    trace,
    statusBytes: await statusBytes(http, ns, 'per-node'),
    controllerCpu: after.controller.cpuSeconds - before.controller.cpuSeconds,
    serverCpu: after.serverCpu - before.serverCpu,
    wallS: (performance.now() - started) / 1000,
  };
}

// ---- report -------------------------------------------------------------------------

const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));

function stats(samples: number[]): { p50: number; p99: number; n: number } {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99), n: s.length };
}

function table(results: Result[]): void {
  const rows: [string, (r: Result) => string][] = [];
  const ok = (r: Result) => r.podWrites.get('200') ?? 0;
  const writesDetail = (r: Result) =>
    [...r.podWrites].map(([code, n]) => `${n} × ${code}`).join(', ') || 'none';
  rows.push(['pods in the sequence / tiers', (r) => `${r.pods.toLocaleString('en-US')} / ${r.tiers}`]);
  rows.push([
    'pods released (gate removal seen by the driver)',
    (r) => r.releasedPods.toLocaleString('en-US'),
  ]);
  rows.push([
    '**controller writes to pods per released pod** (target 1)',
    (r) => `**${(ok(r) / r.releasedPods).toFixed(3)}** (${writesDetail(r)})`,
  ]);
  rows.push([
    'pod changes outside status per released pod (driver watch)',
    (r) => (r.podShapeChanges / r.releasedPods).toFixed(3),
  ]);
  rows.push([
    '**status writes per tier** (total)',
    (r) =>
      `**${(r.statusWrites / r.tiers).toFixed(1)}** (${r.statusWrites}; ${r.statusChanges} changes seen)`,
  ]);
  rows.push(['status writes per released pod', (r) => (r.statusWrites / r.releasedPods).toFixed(3)]);
  rows.push(['size of the status once Completed (JSON)', (r) => `${(r.statusBytes / 1024).toFixed(0)} KiB`]);
  rows.push(['Event writes; live GETs of the sequence', (r) => `${r.eventWrites}; ${r.sequenceReads}`]);
  rows.push(['reconciles', (r) => r.reconciles.toLocaleString('en-US')]);
  rows.push([
    'sequence created → first tier released',
    (r) => `${ms(r.firstTierMs)} ms (${r.firstTierPods.toLocaleString('en-US')} pods)`,
  ]);
  const lat = (pick: (r: Result) => number[], floorPick: (r: Result) => number[], scope?: 'Cluster') => [
    (r: Result) => {
      if (scope && r.tiers === 2) return '—';
      const c = stats(pick(r));
      return `${ms(c.p50)} / ${ms(c.p99)} ms (n=${c.n})`;
    },
    (r: Result) => {
      if (scope && r.tiers === 2) return '—';
      const f = stats(floorPick(r));
      return `${ms(f.p50)} / ${ms(f.p99)} ms (n=${f.n})`;
    },
    (r: Result) => {
      if (scope && r.tiers === 2) return '—';
      const c = stats(pick(r));
      const f = stats(floorPick(r));
      return `**${(c.p50 / f.p50).toFixed(2)}× / ${(c.p99 / f.p99).toFixed(2)}×**`;
    },
  ];
  const [l1, f1, x1] = lat(
    (r) => r.latencyFirst,
    (r) => r.floorFirst,
  );
  rows.push(['release latency p50 / p99: last Ready of tier k → first pod of k+1 released', l1!]);
  rows.push(['floor p50 / p99: watch delivery + one release PATCH', f1!]);
  rows.push(['**ratio to floor p50 / p99** (targets ≤ 1.5× / ≤ 3×)', x1!]);
  const [l2, f2, x2] = lat(
    (r) => r.latencyLast,
    (r) => r.floorLast,
    'Cluster',
  );
  rows.push([`release latency p50 / p99: … → all ${TIER_SIZE} pods of k+1 released`, l2!]);
  rows.push([
    `floor p50 / p99: watch delivery + ${TIER_SIZE} release PATCHes, ${RELEASE_CONCURRENCY} in flight`,
    f2!,
  ]);
  rows.push(['**ratio to floor p50 / p99** (targets ≤ 1.5× / ≤ 3×)', x2!]);
  rows.push(['order violations seen', (r) => String(r.violations.length)]);
  rows.push([
    'CPU: controller / API server',
    (r) => `${r.controllerCpu.toFixed(1)} s / ${r.serverCpu.toFixed(1)} s`,
  ]);
  rows.push(['wall time of the scenario', (r) => `${r.wallS.toFixed(0)} s`]);

  console.log(`| | ${results.map((r) => r.title).join(' | ')} |`);
  console.log(`|---|${results.map(() => '---').join('|')}|`);
  for (const [label, cell] of rows) console.log(`| ${label} | ${results.map(cell).join(' | ')} |`);
}

/** Where the controller's time goes between a sample's Ready event and its release, in its own clock. */
function traceTable(results: Result[]): void {
  const cell = (pick: (t: Trace) => number[]) => (r: Result) => {
    const s = stats(pick(r.trace));
    return `${ms(s.p50)} / ${ms(s.p99)} ms`;
  };
  const rows: [string, (r: Result) => string][] = [
    ['Ready event in the informer → the reconcile acting on it starts', cell((t) => t.queued)],
    ['reconcile start → release PATCH of the first pod sent (cache reads + decide)', cell((t) => t.decide)],
    ['release PATCH of the first pod (round trip)', cell((t) => t.patch)],
    [
      'samples with a status write in flight at the Ready event',
      (r) =>
        `${r.trace.statusInFlight} of ${r.trace.queued.length}${r.trace.missing ? ` (${r.trace.missing} not traced)` : ''}`,
    ],
  ];
  console.log(`| controller segment, p50 / p99 | ${results.map((r) => r.title).join(' | ')} |`);
  console.log(`|---|${results.map(() => '---').join('|')}|`);
  for (const [label, c] of rows) console.log(`| ${label} | ${results.map(c).join(' | ')} |`);
}

// ---- main ---------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = performance.now();
  const server = await startClusterProcess(['--no-data-plane']);
  const http = new Http(server);
  const child = forkController(server);
  try {
    await nextMessage(child, 'ready');
    const results: Result[] = [];
    if (ONLY !== 'node') results.push(await clusterScenario(http, server, child));
    if (ONLY !== 'cluster') results.push(await nodeScenario(http, server, child));

    console.log(`machine: ${machine()}`);
    console.log('');
    table(results);
    console.log('');
    traceTable(results);
    console.log('');
    console.log(
      `Three processes on one machine: \`troupe cluster --no-data-plane\` (API server), the controller (a runtime Manager with podSequenceControllers(), lite mode, default options, watching the whole cluster) and the driver, which plays the kubelet (marks pods Ready by status patch) and times everything through its own watches. Controller pod writes = the API server's apiserver_request_total for PATCH/UPDATE/APPLY/DELETE on pods, minus the floor's release patches, which the driver counts (the driver otherwise writes pods only by create and through /status). Cluster scope: one sample per tier transition; the driver marks a tier Ready (${KUBELET_CONCURRENCY} status patches in flight) once the controller is idle, and the latency runs from the watch event of the tier's last Ready pod; one floor sample per transition, just before it. Node scope: one node at a time, ${RATE}/s per loop, alternating with a floor sample; the first ${WARMUP} of each loop are warm-up. p99 of 99 samples is the slowest but one. Whole run: ${((performance.now() - started) / 1000).toFixed(0)} s.`,
    );
    for (const r of results) {
      if (r.controllerPatches !== r.serverPatches) {
        console.error(
          `warning: ${r.title}: the controller counted ${r.controllerPatches} PATCHes, the API server ${r.serverPatches} (pods minus the floor's, status, events)`,
        );
      }
      for (const v of r.violations.slice(0, 5)) console.error(`order violation: ${v}`);
    }
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    if (child.connected) child.disconnect();
    await exited;
    http.close();
    await server.stop();
  }
}

await main();
