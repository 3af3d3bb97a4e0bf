/**
 * Burst offloading figure for docs/benchmarks.md (issue 8): the delay from a Job's offload
 * condition becoming true to troupe's remote create call arriving at the RunPod stand-in,
 * p50 / p99 over ≥ 100 Jobs per scenario, against the seed's 30 s polling (target ≤ 1 s).
 *
 * Scenarios (managed Jobs on a cluster with no local GPU, so their pods are unschedulable):
 *  - requested: created with `runpod.io/offload: "true"`; the condition is true once the Job
 *    exists, timed from just before the driver sends the create (so the figure includes the
 *    API server's create, an upper bound);
 *  - pending, `--max-pending-time 0` (the seed's default): timed from the moment the driver's
 *    own watch sees the Job's pod reported Unschedulable;
 *  - pending, `--max-pending-time 2`: timed from the pod's PodScheduled=False
 *    lastTransitionTime plus 2 s, the moment the condition holds as the API records it (the
 *    API keeps whole seconds, which is also what troupe reads).
 * The arrival is the stand-in's own timestamp of the accepted create (no faults injected,
 * so the first create of each Job is accepted).
 *
 * Three processes: `troupe cluster` (API server and simulated data plane, 1 node without
 * GPUs, time scale 20), `troupe run --controllers offload,offload-node` (the shipped entry
 * point with the seed's flags, RUNPOD_KEY in its environment), and this driver, which also
 * serves the RunPod stand-in.
 *
 * Run: node bench/offload.ts [--jobs 120] [--rate 20]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { type RunPodStandIn, startRunPodStandIn } from '../src/cluster/runpod/index.ts';
import {
  type BenchServer,
  createNamespace,
  expectStatus,
  flag,
  Http,
  machine,
  percentile,
  startClusterProcess,
} from './support.ts';

const JOBS = Number(flag('jobs', '120'));
/** Jobs created per second (paced, so the figure is the reaction time, not a queue). */
const RATE = Number(flag('rate', '20'));
const SEED_POLL_S = 30;
const CLI = join(import.meta.dirname, '..', 'src', 'cli', 'main.ts');

interface Sample {
  name: string;
  /** Epoch ms the offload condition became true. */
  condition: number;
}

function job(name: string, requested: boolean): Record<string, unknown> {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      annotations: {
        'runpod.io/managed': 'true',
        'runpod.io/required-gpu-memory': '16',
        ...(requested ? { 'runpod.io/offload': 'true' } : {}),
      },
    },
    spec: {
      backoffLimit: 0,
      template: {
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'c',
              image: 'trainer:1',
              command: ['sh', '-c', 'exit 0'],
              resources: { requests: { 'nvidia.com/gpu': '1' }, limits: { 'nvidia.com/gpu': '1' } },
            },
          ],
        },
      },
    },
  };
}

/** `troupe run` with the offload controllers only, pointed at the stand-in. */
async function startTroupe(
  server: BenchServer,
  runpod: RunPodStandIn,
  maxPendingTime: number,
): Promise<ChildProcess> {
  const spawned = Date.now();
  const child = spawn(
    process.execPath,
    [
      CLI,
      'run',
      '--kubeconfig',
      server.kubeconfigPath,
      '--controllers',
      'offload,offload-node',
      '--runpod-base-url',
      runpod.url,
      '--max-pending-time',
      String(maxPendingTime),
      // Only the pending time decides in this bench, not the count of pending Jobs.
      '--pending-job-threshold',
      '100000',
      '--health-probe-bind-address',
      '127.0.0.1:0',
      '--metrics-bind-address',
      '0',
      '--log-level',
      'warn',
    ],
    { env: { ...process.env, RUNPOD_KEY: runpod.apiKey }, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  // Ready once its controllers run: their first acts are the orphan sweep (GET /v2/pods) and
  // the virtual node's readiness probe (GET /v2/catalog/gpus).
  for (;;) {
    if (child.exitCode !== null) throw new Error(`troupe run exited with ${child.exitCode}`);
    if (runpod.requests().some((r) => r.at >= spawned && r.path === '/v2/pods')) return child;
    await new Promise((res) => setTimeout(res, 50));
  }
}

async function stopTroupe(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
}

/** Creates the Jobs at RATE per second; `onSend` records the moment before each create. */
async function createPaced(
  http: Http,
  ns: string,
  requested: boolean,
  onSend: (name: string, at: number) => void,
): Promise<string[]> {
  const names: string[] = [];
  const start = performance.now();
  const pending: Promise<unknown>[] = [];
  for (let i = 0; i < JOBS; i++) {
    const due = start + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const name = `j-${String(i).padStart(4, '0')}`;
    names.push(name);
    onSend(name, Date.now());
    pending.push(
      expectStatus(
        http.send('POST', `/apis/batch/v1/namespaces/${ns}/jobs`, job(name, requested)),
        [201],
        `job ${name}`,
      ),
    );
  }
  await Promise.all(pending);
  return names;
}

/** Epoch ms of the accepted create of each Job of `ns`, waiting until every Job has one. */
async function arrivals(runpod: RunPodStandIn, ns: string, names: string[]): Promise<Map<string, number>> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const got = new Map<string, number>();
    for (const h of runpod.history()) {
      if (h.env.TROUPE_NAMESPACE !== ns) continue;
      const job = h.env.TROUPE_JOB ?? '';
      if (!got.has(job)) got.set(job, h.createdMs);
    }
    if (names.every((n) => got.has(n))) return got;
    if (Date.now() > deadline) {
      throw new Error(`${ns}: ${names.filter((n) => !got.has(n)).length} Jobs never reached the stand-in`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface PodEvent {
  type: string;
  object: {
    metadata: { labels?: Record<string, string> };
    status?: {
      conditions?: { type: string; status: string; reason?: string; lastTransitionTime?: string }[];
    };
  };
}

/** Watches a namespace's pods: per Job, when its pod was first seen Unschedulable, and the API's transition time. */
function watchUnschedulable(http: Http, ns: string) {
  const seen = new Map<string, { observed: number; transition: number }>();
  const stop = http.watch(`/api/v1/namespaces/${ns}/pods?watch=true&timeoutSeconds=3600`, (line) => {
    if (!line.trim()) return;
    const at = Date.now();
    const ev = JSON.parse(line) as PodEvent;
    const jobName = ev.object.metadata.labels?.['batch.kubernetes.io/job-name'];
    if (!jobName || seen.has(jobName)) return;
    const c = ev.object.status?.conditions?.find(
      (x) => x.type === 'PodScheduled' && x.status === 'False' && x.reason === 'Unschedulable',
    );
    if (!c) return;
    seen.set(jobName, { observed: at, transition: Date.parse(c.lastTransitionTime ?? '') });
  });
  return { seen, stop };
}

interface Result {
  title: string;
  delays: number[];
  note?: string;
}

async function scenario(
  title: string,
  http: Http,
  runpod: RunPodStandIn,
  ns: string,
  kind: 'requested' | 'pending',
  maxPendingTime: number,
): Promise<Result> {
  await createNamespace(http, ns);
  const samples: Sample[] = [];
  const sent = new Map<string, number>();
  const watch = kind === 'pending' ? watchUnschedulable(http, ns) : undefined;
  await new Promise((r) => setTimeout(r, 200)); // the watch is open before the first create
  const names = await createPaced(http, ns, kind === 'requested', (name, at) => sent.set(name, at));
  const got = await arrivals(runpod, ns, names);
  watch?.stop();
  let early = 0;
  for (const name of names) {
    if (kind === 'requested') samples.push({ name, condition: sent.get(name)! });
    else {
      const s = watch!.seen.get(name);
      if (!s) throw new Error(`${ns}/${name}: its pod was never seen Unschedulable`);
      if (maxPendingTime === 0) samples.push({ name, condition: s.observed });
      else {
        samples.push({ name, condition: s.transition + maxPendingTime * 1000 });
        if (got.get(name)! < s.observed + maxPendingTime * 1000) early++;
      }
    }
  }
  const delays = samples.map((s) => got.get(s.name)! - s.condition).sort((a, b) => a - b);
  return {
    title,
    delays,
    note:
      early > 0
        ? `${early} of ${names.length} offloaded less than ${maxPendingTime} s after the driver saw them pending (the API's whole-second timestamps)`
        : undefined,
  };
}

function fmt(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`;
}

async function main() {
  const server = await startClusterProcess(['--nodes', '1', '--time-scale', '20']);
  const http = new Http(server);
  // A rate limit far above this bench's traffic: the figure is troupe's reaction, not RunPod's quota.
  const runpod = await startRunPodStandIn({
    timeScale: 20,
    defaultCapacity: 100_000,
    rateLimitPerMinute: 100_000,
  });
  const results: Result[] = [];
  let troupe: ChildProcess | undefined;
  try {
    troupe = await startTroupe(server, runpod, 0);
    results.push(
      await scenario('requested (`runpod.io/offload: "true"`)', http, runpod, 'bench-req', 'requested', 0),
    );
    results.push(
      await scenario('pending, `--max-pending-time 0`', http, runpod, 'bench-pend0', 'pending', 0),
    );
    await stopTroupe(troupe);
    troupe = await startTroupe(server, runpod, 2);
    results.push(
      await scenario('pending, `--max-pending-time 2`', http, runpod, 'bench-pend2', 'pending', 2),
    );
  } finally {
    if (troupe) await stopTroupe(troupe);
    await runpod.stop();
    http.close();
    await server.stop();
  }

  // The seed decides on a 30 s tick: a condition that becomes true at a uniformly random
  // moment of the tick waits uniform(0, 30 s) for it (before its own API calls).
  const seedP = (p: number) => fmt((p / 100) * SEED_POLL_S * 1000);
  console.log(`machine: ${machine()}; load average (1 min) ${loadavg()[0]!.toFixed(2)} at the end`);
  console.log(`${JOBS} Jobs per scenario, created ${RATE}/s`);
  console.log('');
  console.log('| condition → remote create arrives | Jobs | p50 | p99 | max | seed (30 s poll) p50 / p99 |');
  console.log('|---|---|---|---|---|---|');
  for (const r of results) {
    console.log(
      `| ${r.title} | ${r.delays.length} | ${fmt(percentile(r.delays, 50))} | ${fmt(percentile(r.delays, 99))} | ${fmt(r.delays.at(-1)!)} | ${seedP(50)} / ${seedP(99)} |`,
    );
  }
  for (const r of results) if (r.note) console.log(`\n${r.title}: ${r.note}`);
}

await main();
