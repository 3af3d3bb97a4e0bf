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
import { join } from 'node:path';
import { DEFAULT_GATE } from '../src/apis/scheduling.example.com/v1alpha1.ts';
import { DEFAULT_OPTIONS, releasePatch } from '../src/controllers/podsequence/index.ts';
import type { Pod } from '../src/controllers/podsequence/objects.ts';
import {
  ControllerProcess,
  controllerPodWrites,
  countBetween,
  sumOf,
  type Totals,
  totals,
} from './controller-support.ts';
import type { Trace, TraceSample } from './podsequence-controller.ts';
import { type PodChange, PodWatch, podSequencesPath, SequenceWatch } from './podsequence-watch.ts';
import {
  type BenchServer,
  cpuProfileFlags,
  createNamespace,
  eachLimited,
  expectStatus,
  flag,
  Http,
  listRv,
  machine,
  percentiles,
  pod,
  startClusterProcess,
} from './support.ts';

const TIERS = Number(flag('tiers', '100'));
const TIER_SIZE = Number(flag('tier-size', '100'));
const NODES = Number(flag('nodes', '1000'));
/** Node scope: samples per second of each loop (controller, floor); the loops alternate. */
const RATE = Number(flag('rate', '25'));
const ONLY = flag('only', '');
/** Node scope: samples of each loop dropped while connections and JIT warm up. */
const WARMUP = 50;
/** The controller's default releaseConcurrency: the floor sends its patches as many at a time. */
const RELEASE_CONCURRENCY = DEFAULT_OPTIONS.releaseConcurrency;
/** Status patches in flight while the driver marks a tier Ready, as kubelets on many nodes would. */
const KUBELET_CONCURRENCY = 16;
const CREATE_CONCURRENCY = 32;

const CONTROLLER = join(import.meta.dirname, 'podsequence-controller.ts');
const MERGE = 'application/merge-patch+json';

// ---- helpers -----------------------------------------------------------------

function gatedPod(name: string, labels: Record<string, string>, node?: string): Record<string, unknown> {
  const p = pod(name, labels) as { spec: Record<string, unknown> };
  p.spec.schedulingGates = [{ name: DEFAULT_GATE }];
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
          const patch = releasePatch({
            pod: state.pod as Pod,
            gate: DEFAULT_GATE,
            releasedBy: `${this.ns}/floor`,
          });
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

// ---- what a scenario records ----------------------------------------------------

async function statusBytes(http: Http, ns: string, name: string): Promise<number> {
  const r = await expectStatus(http.send('GET', `${podSequencesPath(ns)}/${name}`), [200], 'get PodSequence');
  return JSON.stringify((JSON.parse(r.text) as { status?: unknown }).status ?? {}).length;
}

/** What both scopes record the same way once their sequence has Completed (see finish). */
interface Recorded {
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
  trace: Trace;
  /** Bytes of the sequence's status (JSON) once Completed: what each status write carries. */
  statusBytes: number;
  controllerCpu: number;
  serverCpu: number;
  wallS: number;
}

interface Result extends Recorded {
  title: string;
  pods: number;
  tiers: number;
  releasedPods: number;
  firstTierMs: number;
  firstTierPods: number;
  latencyFirst: number[];
  latencyLast: number[];
  floorFirst: number[];
  floorLast: number[];
  violations: string[];
}

/** The driver's own watches of a scenario: its pods, its floor's pods and its sequence. */
interface Watches {
  watch: PodWatch;
  floorWatch: PodWatch;
  seqWatch: SequenceWatch;
}

/** Creates the scenario's namespace and its floor's, and watches them from before anything is in them. */
async function startWatches(http: Http, ns: string, floorNs: string): Promise<Watches> {
  await createNamespace(http, ns);
  await createNamespace(http, floorNs);
  const w: Watches = { watch: new PodWatch(), floorWatch: new PodWatch(), seqWatch: new SequenceWatch() };
  w.watch.start(http, ns, await listRv(http, `/api/v1/namespaces/${ns}/pods`));
  w.floorWatch.start(http, floorNs, await listRv(http, `/api/v1/namespaces/${floorNs}/pods`));
  w.seqWatch.start(http, ns, await listRv(http, podSequencesPath(ns)));
  return w;
}

/** What a scenario has in hand once its sequence has Completed. */
interface Ending {
  ns: string;
  /** The PodSequence's name. */
  sequence: string;
  watches: Watches;
  floor: Floor;
  /** Totals taken just before the sequence was created. */
  before: Totals;
  /** The latency samples, for the controller's trace. */
  samples: TraceSample[];
  /** performance.now() when the scenario started. */
  started: number;
}

/**
 * Ends a scenario the same way for both scopes: totals once the controller is idle, the
 * controller's trace, and what the API server's counters say the controller wrote between
 * `before` and then. Verbs as kube-apiserver counts them (CREATE, UPDATE, PATCH, APPLY,
 * DELETE); the driver writes pods only by CREATE and through the status subresource, except
 * the floor's release patches, which it counts itself.
 */
async function finish(
  http: Http,
  server: BenchServer,
  ctrl: ControllerProcess,
  e: Ending,
): Promise<Recorded> {
  const { before, floor } = e;
  const after = await totals(http, server, ctrl);
  const trace = await ctrl.ask<Trace>({ type: 'trace', samples: e.samples });
  e.watches.watch.close();
  e.watches.floorWatch.close();
  e.watches.seqWatch.close();
  const between = (pattern: string) => countBetween(before.requests, after.requests, pattern);
  return {
    podWrites: controllerPodWrites(before.requests, after.requests, floor.patches),
    podShapeChanges: e.watches.watch.shapeChanges,
    statusWrites:
      between('PATCH podsequences/status *') +
      between('UPDATE podsequences/status *') +
      between('APPLY podsequences/status *'),
    statusChanges: e.watches.seqWatch.statusChanges,
    eventWrites: between('CREATE events *') + between('PATCH events *'),
    sequenceReads: between('GET podsequences *'),
    reconciles: sumOf(after.controller.reconciles) - sumOf(before.controller.reconciles),
    controllerPatches:
      sumOf(after.controller.requests, (k) => k.startsWith('PATCH ')) -
      sumOf(before.controller.requests, (k) => k.startsWith('PATCH ')),
    serverPatches:
      between('PATCH pods *') -
      floor.count +
      between('PATCH podsequences/status *') +
      between('PATCH events *'),
    trace,
    statusBytes: await statusBytes(http, e.ns, e.sequence),
    controllerCpu: after.controller.cpuSeconds - before.controller.cpuSeconds,
    serverCpu: after.serverCpu - before.serverCpu,
    wallS: (performance.now() - e.started) / 1000,
  };
}

// ---- (a) cluster scope ------------------------------------------------------------

async function clusterScenario(http: Http, server: BenchServer, ctrl: ControllerProcess): Promise<Result> {
  const started = performance.now();
  const ns = 'ps-cluster';
  const floorNs = 'ps-cluster-floor';
  const tierOf = (name: string) => Number(name.slice(1, name.indexOf('-')));
  const watches = await startWatches(http, ns, floorNs);
  const { watch, floorWatch, seqWatch } = watches;

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
  const before = await totals(http, server, ctrl);
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
  await expectStatus(http.send('POST', podSequencesPath(ns), seq), [201], 'create PodSequence');
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
      await ctrl.idle();
      const f = await floor.sample(
        `trig-${k}`,
        Array.from({ length: TIER_SIZE }, (_, i) => `f${k}-${i}`),
      );
      floorFirst.push(f.first);
      floorLast.push(f.last);
      await ctrl.idle();
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
  const samples = Array.from({ length: TIERS - 1 }, (_, k) => ({
    ready: lastReadyName[k]!,
    released: firstRelName[k + 1]!,
  }));
  return {
    title: `(a) cluster scope: ${TIERS} tiers × ${TIER_SIZE} pods`,
    pods: bodies.length,
    tiers: TIERS,
    releasedPods: rel.reduce((s, v) => s + v, 0),
    firstTierMs,
    firstTierPods: TIER_SIZE,
    latencyFirst,
    latencyLast,
    floorFirst,
    floorLast,
    violations,
    ...(await finish(http, server, ctrl, {
      ns,
      sequence: 'tiers',
      watches,
      floor,
      before,
      samples,
      started,
    })),
  };
}

// ---- (b) node scope -----------------------------------------------------------------

async function nodeScenario(http: Http, server: BenchServer, ctrl: ControllerProcess): Promise<Result> {
  const started = performance.now();
  const ns = 'ps-node';
  const floorNs = 'ps-node-floor';
  const nodeName = (i: number) => `node-${String(i).padStart(4, '0')}`;
  const watches = await startWatches(http, ns, floorNs);
  const { watch, floorWatch, seqWatch } = watches;

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
  let lastDriverRelease = 0;
  watch.on((c) => {
    const name = c.after.name;
    if (becameReady(c)) readyAt.set(name, c.t);
    if (!released(c)) return;
    releasedAt.set(name, c.t);
    if (name.startsWith('drv-')) {
      releasedDrivers++;
      lastDriverRelease = c.t;
    } else if (!watch.pods.get(`drv-${name.slice(4)}`)?.ready) {
      violations.push(`${name} released before drv-${name.slice(4)} was Ready`);
    }
  });

  const floor = new Floor(http, floorNs, floorWatch);
  const before = await totals(http, server, ctrl);
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
  await expectStatus(http.send('POST', podSequencesPath(ns), seq), [201], 'create PodSequence');
  await watch.until('every driver pod released', () => releasedDrivers === NODES);
  const firstTierMs = lastDriverRelease - t0;
  await ctrl.idle();

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
  const samples = Array.from({ length: NODES - WARMUP }, (_, j) => ({
    ready: `drv-${j + WARMUP}`,
    released: `app-${j + WARMUP}`,
  }));
  return {
    title: `(b) node scope: ${NODES} nodes × 2 tiers`,
    pods: bodies.length,
    tiers: 2,
    releasedPods: releasedAt.size,
    firstTierMs,
    firstTierPods: NODES,
    latencyFirst: latency,
    latencyLast: latency,
    floorFirst: floorLat,
    floorLast: floorLat,
    violations,
    ...(await finish(http, server, ctrl, {
      ns,
      sequence: 'per-node',
      watches,
      floor,
      before,
      samples,
      started,
    })),
  };
}

// ---- report -------------------------------------------------------------------------

const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));

/** Which of `n` samples `percentile` takes for p99, counted from the slowest. */
function slowest(n: number): string {
  const fromTop = n - 1 - Math.min(n - 1, Math.floor(0.99 * n));
  return fromTop === 0 ? 'the slowest' : `the slowest but ${fromTop}`;
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
      const c = percentiles(pick(r));
      return `${ms(c.p50)} / ${ms(c.p99)} ms (n=${c.n})`;
    },
    (r: Result) => {
      if (scope && r.tiers === 2) return '—';
      const f = percentiles(floorPick(r));
      return `${ms(f.p50)} / ${ms(f.p99)} ms (n=${f.n})`;
    },
    (r: Result) => {
      if (scope && r.tiers === 2) return '—';
      const c = percentiles(pick(r));
      const f = percentiles(floorPick(r));
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
    const s = percentiles(pick(r.trace));
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
  const ctrl = ControllerProcess.fork(
    CONTROLLER,
    [server.kubeconfigPath],
    [...cpuProfileFlags(), '--max-old-space-size=4096'],
  );
  try {
    await ctrl.next('ready');
    const results: Result[] = [];
    if (ONLY !== 'node') results.push(await clusterScenario(http, server, ctrl));
    if (ONLY !== 'cluster') results.push(await nodeScenario(http, server, ctrl));

    console.log(`machine: ${machine()}`);
    console.log('');
    table(results);
    console.log('');
    traceTable(results);
    console.log('');
    console.log(
      `Three processes on one machine: \`troupe cluster --no-data-plane\` (API server), the controller (a runtime Manager with podSequenceControllers(), lite mode, default options, watching the whole cluster) and the driver, which plays the kubelet (marks pods Ready by status patch) and times everything through its own watches. Controller pod writes = the API server's apiserver_request_total for PATCH/UPDATE/APPLY/DELETE on pods, minus the floor's release patches, which the driver counts (the driver otherwise writes pods only by create and through /status). Cluster scope: one sample per tier transition; the driver marks a tier Ready (${KUBELET_CONCURRENCY} status patches in flight) once the controller is idle, and the latency runs from the watch event of the tier's last Ready pod; one floor sample per transition, just before it. Node scope: one node at a time, ${RATE}/s per loop, alternating with a floor sample; the first ${WARMUP} of each loop are warm-up. p99 of the cluster scope's ${TIERS - 1} samples is ${slowest(TIERS - 1)}. Whole run: ${((performance.now() - started) / 1000).toFixed(0)} s.`,
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
    await ctrl.stop();
    http.close();
    await server.stop();
  }
}

await main();
