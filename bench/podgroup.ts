/**
 * Pod group figures for docs/benchmarks.md (issue 5), for 1,000 groups of 8 pods labelled
 * `podgroup.jhwagner.github.io/name`, each with a PodGroup of `minMember: 8` (so the gang is
 * complete as soon as its 8th member runs: no formation window):
 *  - the controller's API writes to pods per labelled pod (target: exactly one);
 *  - the time from the last member of a group becoming Running to the last ready label of
 *    that group, p50/p99, against the floor measured in the same run: the driver itself
 *    watching the same event and sending the same 8 label patches.
 *
 * Three processes: `troupe cluster --no-data-plane` (the API server alone: no scheduler,
 * kubelet or node simulator), the controller (a runtime Manager with podGroupControllers(),
 * default options, CRD from podGroupCrdManifests(); bench/controller-support.ts) and this
 * driver, which plays the kubelet (sets pods Running through the status subresource, group
 * by group) and times everything through its own watches.
 *
 * Run: node bench/podgroup.ts [--groups 1000] [--size 8] [--rate 10] [--warmup 50]
 * BENCH_CPU_PROF=<dir> writes V8 CPU profiles of the server and the controller there.
 */
import { join } from 'node:path';
import { GROUP_LABEL, READY_LABEL } from '../src/controllers/podgroup/index.ts';
import {
  ControllerProcess,
  controllerPodWrites,
  countBetween,
  sumOf,
  type Totals,
  totals,
} from './controller-support.ts';
import {
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

const GROUPS = Number(flag('groups', '1000'));
const SIZE = Number(flag('size', '8'));
/** Groups per second of each loop (controller, floor); the loops alternate, one group at a time. */
const RATE = Number(flag('rate', '10'));
/** Samples of each loop left out of the latency figures while connections and JIT warm up. */
const WARMUP = Number(flag('warmup', '50'));
const CREATE_CONCURRENCY = 32;

const NS = 'pg-bench';
const FLOOR_NS = 'pg-floor';
const MERGE = 'application/merge-patch+json';
const PODGROUPS = (ns: string) => `/apis/scheduling.incubator.k8s.io/v1alpha1/namespaces/${ns}/podgroups`;
const ROOT = join(import.meta.dirname, '..');

const groupName = (g: number, prefix: string) => `${prefix}${String(g).padStart(4, '0')}`;
const podName = (g: number, i: number, prefix: string) => `${groupName(g, prefix)}-${i}`;

// ---- the driver's view -------------------------------------------------------------

interface WatchedPod {
  metadata: { name: string; uid: string; labels?: Record<string, string> };
  status?: { phase?: string };
}

interface GroupState {
  running: number;
  labelled: number;
  /** performance.now() of the watch line that showed the last member Running. */
  allRunningAt: number;
  firstLabelAt: number;
  lastLabelAt: number;
}

/**
 * Every pod of one namespace as the driver's own watch shows it, grouped by name prefix
 * (`g0042-3` is in group `g0042`), timestamped as each line arrives.
 */
class GroupWatch {
  readonly pods = new Map<string, { uid: string; running: boolean; labelled: boolean; labels: string }>();
  readonly groups = new Map<string, GroupState>();
  /** Label changes seen on pods that existed (the driver itself never changes labels here). */
  labelChanges = 0;
  /** Ready labels that appeared while the driver saw fewer than SIZE members of the group Running. */
  early: string[] = [];
  /** Called when a group's last member is seen Running. */
  onAllRunning: ((group: string) => void) | undefined;
  private readonly waiters = new Set<() => void>();
  private stop: (() => void) | undefined;

  start(http: Http, ns: string, resourceVersion: string): void {
    this.stop = http.watch(
      `/api/v1/namespaces/${ns}/pods?watch=true&resourceVersion=${resourceVersion}&timeoutSeconds=3600`,
      (line) => this.onLine(line),
    );
  }

  private group(name: string): GroupState {
    let g = this.groups.get(name);
    if (!g) {
      g = { running: 0, labelled: 0, allRunningAt: 0, firstLabelAt: 0, lastLabelAt: 0 };
      this.groups.set(name, g);
    }
    return g;
  }

  private onLine(line: string): void {
    if (!line.trim()) return;
    const t = performance.now();
    const ev = JSON.parse(line) as { type: string; object: WatchedPod };
    if (ev.type === 'ERROR') throw new Error(`pod watch error: ${line.slice(0, 300)}`);
    if (ev.type !== 'ADDED' && ev.type !== 'MODIFIED') return;
    const { name, uid, labels } = ev.object.metadata;
    const gname = name.slice(0, name.lastIndexOf('-'));
    const g = this.group(gname);
    const before = this.pods.get(name);
    const after = {
      uid,
      running: ev.object.status?.phase === 'Running',
      labelled: labels?.[READY_LABEL] === 'true',
      labels: JSON.stringify(labels ?? {}),
    };
    this.pods.set(name, after);
    if (before && before.labels !== after.labels) this.labelChanges++;
    if (after.running && !before?.running && ++g.running === SIZE) {
      g.allRunningAt = t;
      this.onAllRunning?.(gname);
    }
    if (after.labelled && !before?.labelled) {
      if (g.running < SIZE) this.early.push(name);
      if (g.labelled++ === 0) g.firstLabelAt = t;
      g.lastLabelAt = t;
    }
    for (const w of this.waiters) w();
  }

  /** Resolves once `done` holds (checked now and after every line), or rejects after `timeoutMs`. */
  until(what: string, done: () => boolean, timeoutMs = 60_000): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      this.waiters.add(check);
    });
  }

  get labelled(): number {
    let n = 0;
    for (const p of this.pods.values()) if (p.labelled) n++;
    return n;
  }

  close(): void {
    this.stop?.();
  }
}

// ---- the kubelet's and the floor's writes --------------------------------------------

/** The kubelet's part: every member of group `g` Running, its status patches all in flight at once. */
async function markGroupRunning(http: Http, ns: string, g: number, prefix: string): Promise<void> {
  const now = new Date().toISOString();
  await Promise.all(
    Array.from({ length: SIZE }, (_, i) =>
      expectStatus(
        http.send(
          'PATCH',
          `/api/v1/namespaces/${ns}/pods/${podName(g, i, prefix)}/status`,
          {
            status: {
              phase: 'Running',
              conditions: [
                { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
                { type: 'Initialized', status: 'True', lastTransitionTime: now },
                { type: 'ContainersReady', status: 'True', lastTransitionTime: now },
                { type: 'Ready', status: 'True', lastTransitionTime: now },
              ],
              startTime: now,
            },
          },
          MERGE,
        ),
        [200],
        `running ${ns}/${podName(g, i, prefix)}`,
      ),
    ),
  );
}

/**
 * The floor: what the controller must do at the least. From the watch callback that shows a
 * floor group's last member Running, the driver sends the controller's own label patch (one
 * merge patch of the ready label, with the pod's uid) to every member, all in flight at once
 * as the controller sends them, and its watch shows the labels.
 */
class Floor {
  readonly patches = new Map<number, number>();
  private pending: Promise<void>[] = [];
  private readonly http: Http;
  private readonly watch: GroupWatch;

  constructor(http: Http, watch: GroupWatch) {
    this.http = http;
    this.watch = watch;
    watch.onAllRunning = (group) => {
      const sends = Array.from({ length: SIZE }, async (_, i) => {
        const name = `${group}-${i}`;
        const uid = this.watch.pods.get(name)!.uid;
        const r = await this.http.send(
          'PATCH',
          `/api/v1/namespaces/${FLOOR_NS}/pods/${name}`,
          { metadata: { uid, labels: { [READY_LABEL]: 'true' } } },
          MERGE,
        );
        this.patches.set(r.status, (this.patches.get(r.status) ?? 0) + 1);
        if (r.status !== 200) throw new Error(`floor label ${name}: ${r.status} ${r.text.slice(0, 200)}`);
      });
      this.pending.push(Promise.all(sends).then(() => undefined));
    };
  }

  async settled(): Promise<void> {
    const p = this.pending;
    this.pending = [];
    await Promise.all(p);
  }

  get count(): number {
    let n = 0;
    for (const v of this.patches.values()) n += v;
    return n;
  }
}

// ---- what the run records ----------------------------------------------------------------

/** The controller's writes to pods (not their status) by HTTP code: the API server's count minus the floor's. */
const podWrites = (before: Totals, after: Totals, floor: Floor) =>
  controllerPodWrites(before.requests, after.requests, floor.patches);

const statusWrites = (a: Totals, b: Totals) =>
  countBetween(a.requests, b.requests, 'PATCH podgroups/status *') +
  countBetween(a.requests, b.requests, 'UPDATE podgroups/status *');
const eventWrites = (a: Totals, b: Totals) =>
  countBetween(a.requests, b.requests, 'CREATE events *') +
  countBetween(a.requests, b.requests, 'PATCH events *');
const controllerPatches = (a: Totals, b: Totals) =>
  sumOf(b.controller.requests, (k) => k.startsWith('PATCH ')) -
  sumOf(a.controller.requests, (k) => k.startsWith('PATCH '));
const reconciles = (a: Totals, b: Totals) => sumOf(b.controller.reconciles) - sumOf(a.controller.reconciles);

const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));

// ---- main ------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = performance.now();
  const server = await startClusterProcess(['--no-data-plane']);
  const http = new Http(server);
  let ctrl: ControllerProcess | undefined;
  const watch = new GroupWatch();
  const floorWatch = new GroupWatch();
  try {
    ctrl = await ControllerProcess.start(
      {
        module: join(ROOT, 'src/controllers/podgroup/index.ts'),
        controllers: 'podGroupControllers',
        crds: 'podGroupCrdManifests',
        options: {},
      },
      server.kubeconfigPath,
    );
    await createNamespace(http, NS);
    await createNamespace(http, FLOOR_NS);
    watch.start(http, NS, await listRv(http, `/api/v1/namespaces/${NS}/pods`));
    floorWatch.start(http, FLOOR_NS, await listRv(http, `/api/v1/namespaces/${FLOOR_NS}/pods`));
    const floor = new Floor(http, floorWatch);

    // Setup: the PodGroups first (so the controller never auto-creates one), then the pods,
    // bound to a node as the kubelet would hold them, all Pending.
    const t0 = await totals(http, server, ctrl);
    const tc = performance.now();
    await eachLimited(
      Array.from({ length: GROUPS }, (_, g) => g),
      CREATE_CONCURRENCY,
      async (g) => {
        await expectStatus(
          http.send('POST', PODGROUPS(NS), {
            apiVersion: 'scheduling.incubator.k8s.io/v1alpha1',
            kind: 'PodGroup',
            metadata: { name: groupName(g, 'g') },
            spec: { minMember: SIZE },
          }),
          [201],
          'create PodGroup',
        );
      },
    );
    await ctrl.idle();
    const bodies: [string, Record<string, unknown>][] = [];
    for (let g = 0; g < GROUPS; g++) {
      for (let i = 0; i < SIZE; i++) {
        const p = pod(podName(g, i, 'g'), { [GROUP_LABEL]: groupName(g, 'g') }) as {
          spec: Record<string, unknown>;
        };
        p.spec.nodeName = 'bench-node';
        bodies.push([NS, p]);
        const f = pod(podName(g, i, 'f'), { floor: groupName(g, 'f') }) as { spec: Record<string, unknown> };
        f.spec.nodeName = 'bench-node';
        bodies.push([FLOOR_NS, f]);
      }
    }
    await eachLimited(bodies, CREATE_CONCURRENCY, async ([ns, body]) => {
      await expectStatus(
        http.send('POST', `/api/v1/namespaces/${ns}/pods`, body),
        [201],
        `create pod in ${ns}`,
      );
    });
    await watch.until('every pod seen', () => watch.pods.size === GROUPS * SIZE);
    await floorWatch.until('every floor pod seen', () => floorWatch.pods.size === GROUPS * SIZE);
    const setupS = (performance.now() - tc) / 1000;
    const t1 = await totals(http, server, ctrl);
    console.error(`created ${GROUPS} PodGroups and ${bodies.length} pods in ${setupS.toFixed(1)} s`);

    // The run: one group at a time, alternating with a floor group, RATE of each per second.
    const last: number[] = [];
    const first: number[] = [];
    const floorLast: number[] = [];
    const floorFirst: number[] = [];
    const interval = 1000 / (2 * RATE);
    let due = performance.now();
    const pace = async () => {
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      due = Math.max(due + interval, performance.now());
    };
    const tr = performance.now();
    for (let g = 0; g < GROUPS; g++) {
      for (const [w, prefix, ns, lastOut, firstOut] of [
        [watch, 'g', NS, last, first],
        [floorWatch, 'f', FLOOR_NS, floorLast, floorFirst],
      ] as const) {
        await pace();
        const name = groupName(g, prefix);
        await markGroupRunning(http, ns, g, prefix);
        await w.until(`${name} labelled`, () => w.groups.get(name)?.labelled === SIZE, 30_000);
        if (g < WARMUP) continue;
        const s = w.groups.get(name)!;
        lastOut.push(s.lastLabelAt - s.allRunningAt);
        firstOut.push(s.firstLabelAt - s.allRunningAt);
      }
    }
    await floor.settled();
    const runS = (performance.now() - tr) / 1000;
    const t2 = await totals(http, server, ctrl);

    const pgs = JSON.parse(
      (await expectStatus(http.send('GET', PODGROUPS(NS)), [200], 'list PodGroups')).text,
    ) as {
      items: { status?: { state?: { phase?: string }; running?: number } }[];
    };
    const phases = new Map<string, number>();
    for (const pg of pgs.items) {
      const k = `${pg.status?.state?.phase ?? 'none'} (${pg.status?.running ?? 0} running)`;
      phases.set(k, (phases.get(k) ?? 0) + 1);
    }

    // ---- report ----
    const writes = podWrites(t0, t2, floor);
    const labelled = watch.labelled;
    const ok = writes.get('200') ?? 0;
    const allWrites = [...writes.values()].reduce((s, v) => s + v, 0);
    const detail = [...writes].map(([code, n]) => `${n} × ${code}`).join(', ') || 'none';
    const setupWrites = [...podWrites(t0, t1, floor).values()].reduce((s, v) => s + v, 0);
    const createdByController = countBetween(t0.requests, t2.requests, 'CREATE podgroups *') - GROUPS;
    const c = percentiles(last);
    const f = percentiles(floorLast);
    const c1 = percentiles(first);
    const f1 = percentiles(floorFirst);
    const serverPatches =
      countBetween(t0.requests, t2.requests, 'PATCH pods *') -
      floor.count +
      countBetween(t0.requests, t2.requests, 'PATCH podgroups/status *') +
      countBetween(t0.requests, t2.requests, 'PATCH events *');
    const ctrlPatches = controllerPatches(t0, t2);

    console.log(`machine: ${machine()}`);
    console.log('');
    const rows: [string, string][] = [
      ['groups × pods (PodGroup minMember)', `${GROUPS.toLocaleString('en-US')} × ${SIZE} (${SIZE})`],
      ['pods labelled ready (driver watch)', labelled.toLocaleString('en-US')],
      [
        '**controller writes to pods per labelled pod** (target 1)',
        `**${(allWrites / labelled).toFixed(3)}** (${detail}; ${setupWrites} before any pod ran)`,
      ],
      ['label changes seen per labelled pod (driver watch)', (watch.labelChanges / labelled).toFixed(3)],
      ['ready labels before the whole group was Running', String(watch.early.length)],
      [
        'PodGroup status writes per group: pods created / pods Running',
        `${(statusWrites(t0, t1) / GROUPS).toFixed(2)} / ${(statusWrites(t1, t2) / GROUPS).toFixed(2)}`,
      ],
      [
        'Event writes per group; PodGroups created by the controller',
        `${(eventWrites(t0, t2) / GROUPS).toFixed(2)}; ${createdByController}`,
      ],
      ['reconciles per group', (reconciles(t0, t2) / GROUPS).toFixed(1)],
      ['PodGroups at the end', [...phases].map(([k, n]) => `${n} ${k}`).join(', ')],
      [
        'last member Running → last ready label of the group, p50 / p99',
        `${ms(c.p50)} / ${ms(c.p99)} ms (n=${c.n})`,
      ],
      [
        `floor p50 / p99: watch delivery + ${SIZE} label PATCHes in flight at once`,
        `${ms(f.p50)} / ${ms(f.p99)} ms (n=${f.n})`,
      ],
      ['**ratio to floor p50 / p99**', `**${(c.p50 / f.p50).toFixed(2)}× / ${(c.p99 / f.p99).toFixed(2)}×**`],
      [
        'last member Running → first ready label, p50 / p99 (floor)',
        `${ms(c1.p50)} / ${ms(c1.p99)} ms (${ms(f1.p50)} / ${ms(f1.p99)} ms): ${(c1.p50 / f1.p50).toFixed(2)}× / ${(c1.p99 / f1.p99).toFixed(2)}×`,
      ],
      [
        'CPU while pods ran: controller / API server',
        `${(t2.controller.cpuSeconds - t1.controller.cpuSeconds).toFixed(1)} s / ${(t2.serverCpu - t1.serverCpu).toFixed(1)} s`,
      ],
      ['wall time: setup / run', `${setupS.toFixed(0)} s / ${runS.toFixed(0)} s`],
    ];
    console.log('| | |');
    console.log('|---|---|');
    for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
    console.log('');
    console.log(
      `Three processes on one machine: \`troupe cluster --no-data-plane\` (API server), the controller (a runtime Manager with podGroupControllers(), default options, watching the whole cluster) and the driver, which plays the kubelet. Each group has a PodGroup with minMember ${SIZE}, created before its pods, so there is no formation window. Pods are created bound to a node and Pending; then, one group at a time, the driver sets the group's ${SIZE} members Running (${SIZE} status patches in flight at once) and waits for its ${SIZE} ready labels, alternating with a floor group in another namespace, ${RATE} groups/s per loop. Latency runs from the driver's watch line showing the last member Running to the one showing the last (or first) label; the floor's driver sends, from that watch callback, the controller's own label patch to the ${SIZE} members. The first ${WARMUP} groups of each loop are warm-up (their writes count, their latency does not). Controller pod writes = the API server's apiserver_request_total for patch/update/delete on pods (not pods/status), from before the PodGroups were created to the end, minus the floor's patches, which the driver counts. Whole run: ${((performance.now() - started) / 1000).toFixed(0)} s.`,
    );
    if (ok !== allWrites || allWrites !== labelled)
      console.error(`warning: pod writes ${detail} for ${labelled} labelled pods`);
    if (ctrlPatches !== serverPatches) {
      console.error(
        `warning: the controller counted ${ctrlPatches} PATCHes, the API server ${serverPatches} (pods minus the floor's, podgroups/status, events)`,
      );
    }
    for (const e of watch.early.slice(0, 5)) console.error(`early label: ${e}`);
  } finally {
    watch.close();
    floorWatch.close();
    await ctrl?.stop();
    http.close();
    await server.stop();
  }
}

await main();
